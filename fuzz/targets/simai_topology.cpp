// SimAI .topo files (`podnet train --simai-topology`).
#include <sstream>

#include "fuzz_target.hpp"
#include "workload/simai.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(podnet::fuzz::text(data, size));
  return podnet::fuzz::guarded([&] { (void)podnet::workload::simai::parse_topology(in, "fuzz.topo"); });
}
