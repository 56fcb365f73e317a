#include "reliability/checkpoint.hpp"

#include <cmath>
#include <limits>

namespace podnet::reliability {

namespace {
constexpr double kInf = std::numeric_limits<double>::infinity();
}

double young_interval(double c, double m) {
  if (std::isinf(m)) return kInf;
  return std::sqrt(2.0 * c * m);
}

double daly_interval(double d, double m) {
  if (std::isinf(m)) return kInf;
  if (d >= 2.0 * m) return m;
  const double x = d / (2.0 * m);
  return std::sqrt(2.0 * d * m) * (1.0 + std::sqrt(x) / 3.0 + x / 9.0) - d;
}

double expected_segment_time(double work, double d, double r, double m) {
  if (std::isinf(m)) return work + d;
  // expm1 keeps precision when (work + d) << M.
  return m * std::exp(r / m) * std::expm1((work + d) / m);
}

double goodput(double tau, double d, double r, double m) {
  if (std::isinf(m)) return std::isinf(tau) ? 1.0 : tau / (tau + d);
  if (!(tau > 0)) return 0.0;
  return tau / expected_segment_time(tau, d, r, m);
}

double goodput_first_order(double tau, double d, double r, double m) {
  if (std::isinf(m)) return std::isinf(tau) ? 1.0 : tau / (tau + d);
  return tau / (tau + d) * (1.0 - (r + (tau + d) / 2.0) / m);
}

}  // namespace podnet::reliability
