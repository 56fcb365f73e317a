// The scenario loader: a YAML file, then --set overrides taken from the
// input's lines after a "---set" line (one KEY=VALUE per line); validation
// and the resolved scenario.
#include <sstream>

#include "fuzz_target.hpp"
#include "scenario/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  std::string yaml = in;
  std::vector<std::string> sets;
  const auto marker = in.find("\n---set\n");
  if (marker != std::string::npos) {
    yaml = in.substr(0, marker);
    std::istringstream rest(in.substr(marker + 8));
    for (std::string l; std::getline(rest, l);)
      if (!l.empty()) sets.push_back(l);
  }
  return podnet::fuzz::guarded([&] {
    const podnet::scenario::Scenario sc = podnet::scenario::load_text(yaml, "fuzz.yaml", "fuzz", sets);
    (void)sc.resolved_yaml();
  });
}
