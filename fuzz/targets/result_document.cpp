// A saved result document (`podnet diff a.json b.json`, POST /api/compare):
// the bounded JSON intake, then the diff of the document with itself and its
// table, as `podnet diff` draws it.
#include <sstream>

#include "fuzz_target.hpp"
#include "report/diff.hpp"
#include "report/json_intake.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    const nlohmann::json doc = podnet::report::parse_json(in, "fuzz.json");
    const podnet::report::DiffSide side = podnet::report::document_side("fuzz.json", doc);
    std::ostringstream out;
    podnet::report::write_diff_table(podnet::report::diff_document(side, side), out);
  });
}
