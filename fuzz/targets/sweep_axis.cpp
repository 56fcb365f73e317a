// `podnet sweep --vary` axes and the grid they make.
#include "fuzz_target.hpp"
#include "study/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    const podnet::study::Axis a = podnet::study::parse_axis(in);
    // The grid of the axis with itself: built up to 10,000 points, refused past kMaxPoints. Between the two,
    // building 10^4..10^6 points runs the same loop for up to a second per input (a 10^6-point grid is
    // sweep_test's); skipping them let the fuzzer reach 10^6 inputs.
    const double n = static_cast<double>(a.values.size());
    if (n * n <= 1e4 || n * n > static_cast<double>(podnet::study::kMaxPoints)) (void)podnet::study::cartesian({a, a});
  });
}
