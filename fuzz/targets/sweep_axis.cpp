// `podnet sweep --vary` axes and the grid they make.
#include "fuzz_target.hpp"
#include "study/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    const podnet::study::Axis a = podnet::study::parse_axis(in);
    (void)podnet::study::cartesian({a, a});
  });
}
