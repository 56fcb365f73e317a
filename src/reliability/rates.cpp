#include "reliability/rates.hpp"

#include <cmath>
#include <cstdlib>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::reliability {

namespace {
constexpr double kGpuHours = Llama3::kGpus * Llama3::kHours;        // 21,233,664
constexpr double kServerHours = Llama3::kServers * Llama3::kHours;  // 2,654,208
}  // namespace

const std::vector<Preset>& presets() {
  static const std::vector<Preset> k = {
      {Part::Gpu, "gpu", "GPU", kGpuHours / Llama3::kGpu, "Llama 3: 268 GPU interruptions in 16,384 GPUs x 54 days"},
      {Part::Software, "software", "GPU", kGpuHours / Llama3::kSoftware,
       "Llama 3: 63 software interruptions in 16,384 GPUs x 54 days"},
      {Part::Host, "host", "server", kServerHours / Llama3::kHost,
       "Llama 3: 46 host interruptions in 2,048 servers x 54 days"},
      {Part::Nic, "nic", "NIC", kGpuHours / Llama3::kNic, "Llama 3: 7 NIC interruptions in 16,384 NICs x 54 days"},
      {Part::Switch, "switch", "switch", 250000.0, "assumed: the order of vendor-predicted switch MTBFs"},
      {Part::Optic, "optic", "transceiver", 1e6, "pluggable optics field data, 0.5-1 M h (Meta, ECOC 2025): upper end"},
      {Part::CopperCable, "copper_cable", "cable", kGpuHours / Llama3::kSwitchCable,
       "Llama 3: 35 switch/cable interruptions in 16,384 access links x 54 days"},
      {Part::OpticalCable, "optical_cable", "cable", kGpuHours / Llama3::kSwitchCable,
       "as copper_cable_mtbf (transceivers counted apart)"},
  };
  return k;
}

const Preset& preset(Part p) {
  for (const auto& x : presets())
    if (x.part == p) return x;
  throw Error("internal: no preset for a part");
}

std::string mtbf_text(double hours) { return fmt::format("{:.0f}h", hours); }

namespace {
// `expected` is replaced where the text is a rate of the wrong kind rather than no rate at all.
std::optional<double> parse_rate_unbounded(std::string_view text, std::string& expected) {
  std::string s(text);
  while (!s.empty() && s.front() == ' ') s.erase(s.begin());
  while (!s.empty() && s.back() == ' ') s.pop_back();
  if (s.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
  std::string unit(end);
  while (!unit.empty() && unit.front() == ' ') unit.erase(unit.begin());
  if (unit == "FIT") return v / kFitHours;
  if (unit == "%/y" || unit == "%/year" || unit == "% AFR" || unit == "%AFR") {  // annualized failure rate
    if (v <= 0 || v >= 100) return std::nullopt;
    return -std::log(1 - v / 100.0) / 8760.0;  // the fraction of units that fail within a year, at a constant rate
  }
  if (unit == "%") {
    // A bare percentage is a monthly availability; one below 50 % is almost surely an AFR written without its "/y".
    if (v > 0 && v < 50) {
      const std::string number = s.substr(0, static_cast<size_t>(end - s.c_str()));
      expected = fmt::format(
          "a monthly availability of at least 50% (\"{}\" reads as a part that is up {}% of each month); an "
          "annualized failure rate is written with its period: \"{}/y\"",
          s, number, s);
      return std::nullopt;
    }
    if (v <= 0 || v > 100) return std::nullopt;
    return -std::log(v / 100.0) / kHoursPerMonth;
  }
  double hours_per_unit = 0;
  if (unit == "h") hours_per_unit = 1;
  else if (unit == "d") hours_per_unit = 24;
  else if (unit == "y") hours_per_unit = 8760;
  else return std::nullopt;
  if (v <= 0) return std::nullopt;
  return 1.0 / (v * hours_per_unit);
}
}  // namespace

std::optional<double> parse_rate(std::string_view text, std::string& expected) {
  expected =
      "a failure rate: an MTBF with a unit h, d or y (e.g. \"50000h\"), FIT (failures per 1e9 h, e.g. "
      "\"1000FIT\"), an annualized failure rate (AFR: the share of units that fail in a year, e.g. \"2%/y\") or a "
      "monthly availability in percent (e.g. \"99.9%\"), at most one failure per minute and at least one per 10^12 h "
      "(0FIT: never fails)";
  const std::optional<double> rate = parse_rate_unbounded(text, expected);
  if (!rate || !std::isfinite(*rate) || *rate > kMaxRatePerHour) return std::nullopt;
  if (*rate > 0 && *rate < kMinRatePerHour) return std::nullopt;  // an MTBF beyond 10^12 h: mistyped, not meant
  return rate;
}

}  // namespace podnet::reliability
