// Unit values as every scenario key and option takes them: sizes, rates, times.
#include "core/units.hpp"
#include "fuzz_target.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    std::string expected;
    podnet::Bytes b = 0;
    podnet::Bandwidth bw;
    podnet::Time t;
    if (podnet::parse_bytes(in, b, expected)) (void)podnet::format_bytes(b);
    if (podnet::parse_bandwidth(in, bw, expected)) (void)podnet::format_bandwidth(bw);
    if (podnet::parse_time(in, t, expected)) (void)podnet::format_time(t);
  });
}
