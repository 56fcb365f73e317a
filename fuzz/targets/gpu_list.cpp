// `--gpus` lists (0-511, 0-4095:8, 0,8,16, combinations) on a 16,384-GPU fabric.
#include "collective/gpu_list.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] { (void)podnet::collective::parse_gpu_list(in, 16384); });
}
