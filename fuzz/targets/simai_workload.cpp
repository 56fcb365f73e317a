// SimAI/AICB workload files (`podnet train --simai-workload`): the file, then
// the job its header makes on a 16,384-GPU fabric.
#include <sstream>

#include "fuzz_target.hpp"
#include "workload/simai.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::istringstream in(podnet::fuzz::text(data, size));
  return podnet::fuzz::guarded([&] {
    const auto w = podnet::workload::simai::parse_workload(in, "fuzz.txt");
    (void)podnet::workload::simai::job_of(w, 16384, 16384);
  });
}
