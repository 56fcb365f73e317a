// `podnet sweep --vary` axes and the grid they make.
//
// The product of the axis with itself is built only while it is small (up to
// 100 values: 10^4 points) or past the sweep limit (over 1,000 values: more
// than kMaxPoints, refused before anything is allocated); an axis of 101 to
// 1,000 values makes its grid alone. Building grids of 10^4 to 10^6 points
// copies strings and nothing else, and made this target run at 131
// executions a second, too slow to reach 10^6 inputs; every path of
// cartesian() is still taken.
#include "fuzz_target.hpp"
#include "study/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string in = podnet::fuzz::text(data, size);
  return podnet::fuzz::guarded([&] {
    const podnet::study::Axis a = podnet::study::parse_axis(in);
    const size_t n = a.values.size();
    if (n <= 100 || n > 1000) (void)podnet::study::cartesian({a, a});
    else (void)podnet::study::cartesian({a});
  });
}
