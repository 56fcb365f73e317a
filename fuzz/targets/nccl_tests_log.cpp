// nccl-tests logs (`podnet calibrate --nccl-tests`).
#include "study/nccl_tests_log.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    for (const auto& log : podnet::study::parse_nccl_tests(in, "fuzz.log")) {
      (void)log.nranks();
      (void)log.ranks_per_host();
    }
  });
}
