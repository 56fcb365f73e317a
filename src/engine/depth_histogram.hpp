// Queue-depth histogram of a port: how long its data queue held each depth.
//
// Buckets are log-linear (the HdrHistogram layout with 3 sub-bucket bits:
// Tene, HdrHistogram, github.com/HdrHistogram/HdrHistogram): depths 1..15
// bytes have a bucket each; from 16 B on, each power of two [2^e, 2^(e+1))
// is cut into 8 equal sub-buckets of width 2^(e-3), so
//   bucket(q) = q                                   (q < 16)
//             = 16 + 8 (e - 4) + floor(q / 2^(e-3)) - 8,  e = floor(log2 q)  (q >= 16)
//   lower(b)  = the smallest depth in bucket b (exact inverse of the above).
// A depth read back as lower(bucket(q)) is q rounded down by less than 1/8
// (12.5 %) of q. The empty queue has no bucket: its time is the run's length
// minus the histogram's total, so a port that never queues allocates nothing.
//
// The port adds dt (ps) to the bucket of the depth it held during dt at every
// enqueue and dequeue (port.hpp); quantiles are then time-weighted:
//   quantile(p) = the smallest bucket floor x with  time(depth <= x) >= p T.
#pragma once

#include <bit>
#include <cstdint>
#include <vector>

namespace podnet::engine::depth {

inline constexpr int kSubBits = 3;
inline constexpr int64_t kLinear = int64_t{2} << kSubBits;  // 16: depths below have a bucket each

inline int32_t bucket(int64_t q) {
  if (q < kLinear) return static_cast<int32_t>(q);
  const int e = std::bit_width(static_cast<uint64_t>(q)) - 1;  // e >= 4
  const int64_t sub = (q >> (e - kSubBits)) - (int64_t{1} << kSubBits);
  return static_cast<int32_t>(kLinear + (int64_t{e} - (kSubBits + 1)) * (int64_t{1} << kSubBits) + sub);
}

inline int64_t lower(int32_t b) {
  if (b < kLinear) return b;
  const int64_t k = b - kLinear;
  const int e = static_cast<int>(k >> kSubBits) + kSubBits + 1;
  const int64_t sub = k & ((int64_t{1} << kSubBits) - 1);
  return ((int64_t{1} << kSubBits) + sub) << (e - kSubBits);
}

// Adds `dt_ps` at depth q (> 0) to hist, growing it to the bucket (a port's
// histogram grows at most once per bucket it ever reaches).
inline void add(std::vector<double>& hist, int64_t q, double dt_ps) {
  if (q <= 0 || dt_ps <= 0) return;
  const auto b = static_cast<size_t>(bucket(q));
  if (b >= hist.size()) hist.resize(b + 1, 0.0);
  hist[b] += dt_ps;
}

// The time-weighted p-quantile (0 < p <= 1) of the depth over a run of
// total_ps, as a bucket floor (above).
inline int64_t quantile(const std::vector<double>& hist, double total_ps, double p) {
  double in_hist = 0;
  for (double t : hist) in_hist += t;
  double cum = total_ps - in_hist;  // time empty
  const double want = p * total_ps;
  if (cum >= want) return 0;
  for (size_t b = 0; b < hist.size(); ++b) {
    cum += hist[b];
    if (cum >= want * (1 - 1e-12)) return lower(static_cast<int32_t>(b));
  }
  return hist.empty() ? 0 : lower(static_cast<int32_t>(hist.size() - 1));
}

}  // namespace podnet::engine::depth
