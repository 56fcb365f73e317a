#include "core/units.hpp"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string>
#include <vector>

namespace podnet {

Time transmit_time(Bytes bytes, Bandwidth bw) { return Time::from_seconds(static_cast<double>(bytes) * 8.0 / bw.bps); }

namespace {

struct Unit {
  std::string_view suffix;
  double factor;
};

// Splits "12.5Gbps" into 12.5 and "Gbps". Accepts an optional space between.
bool split_number(std::string_view text, double& value, std::string_view& unit) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  size_t i = 0;
  if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
  bool digits = false;
  while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
    digits = digits || std::isdigit(static_cast<unsigned char>(text[i]));
    ++i;
  }
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E') && i + 1 < text.size() &&
      (std::isdigit(static_cast<unsigned char>(text[i + 1])) || text[i + 1] == '-' || text[i + 1] == '+')) {
    ++i;
    if (text[i] == '-' || text[i] == '+') ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
  }
  if (!digits) return false;
  std::string num(text.substr(0, i));
  char* end = nullptr;
  value = std::strtod(num.c_str(), &end);
  if (end != num.c_str() + num.size() || !std::isfinite(value)) return false;
  unit = text.substr(i);
  while (!unit.empty() && unit.front() == ' ') unit.remove_prefix(1);
  return true;
}

template <size_t N>
bool parse_with(std::string_view text, const Unit (&units)[N], double& out) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit)) return false;
  for (const auto& u : units) {
    if (unit == u.suffix) {
      out = v * u.factor;
      return std::isfinite(out);  // 1e308Tbps overflows to infinity
    }
  }
  return false;
}

// A unit written in another case ("800gbps", "2US"): the spellings it could mean, as a hint to append to an
// error ("; did you mean '800Gbps'?"), or nothing. Two that differ only in case are told apart (Gb/s, GB/s).
template <size_t N>
std::string case_hint(std::string_view text, const Unit (&units)[N]) {
  double v = 0;
  std::string_view unit;
  if (!split_number(text, v, unit) || unit.empty()) return {};
  const auto lower = [](std::string_view s) {
    std::string l(s);
    for (char& c : l) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return l;
  };
  std::vector<std::string> near;
  for (const auto& u : units)
    if (u.suffix != unit && lower(u.suffix) == lower(unit)) {
      std::string_view number = text;
      while (!number.empty() && number.front() == ' ') number.remove_prefix(1);
      number = number.substr(0, number.find(unit));
      while (!number.empty() && number.back() == ' ') number.remove_suffix(1);
      near.push_back(fmt::format("'{}{}'", number, u.suffix));
    }
  if (near.empty()) return {};
  return fmt::format("; did you mean {}?", fmt::join(near, " or "));
}

constexpr Unit kTimeUnits[] = {{"ps", 1},   {"ns", 1e3}, {"us", 1e6},    {"µs", 1e6},
                               {"ms", 1e9}, {"s", 1e12}, {"min", 60e12}, {"h", 3600e12}};
constexpr Unit kBandwidthUnits[] = {{"bps", 1},
                                    {"Kbps", 1e3},
                                    {"Mbps", 1e6},
                                    {"Gbps", 1e9},
                                    {"Tbps", 1e12},
                                    {"Gb/s", 1e9},
                                    {"Tb/s", 1e12},
                                    {"Mb/s", 1e6},
                                    {"B/s", 8},
                                    {"KB/s", 8e3},
                                    {"MB/s", 8e6},
                                    {"GB/s", 8e9},
                                    {"TB/s", 8e12},
                                    {"GiB/s", 8.0 * 1073741824.0},
                                    // A port's speed as vendors and podnet's tables write it: 400G, 1.6T (bits/s).
                                    {"M", 1e6},
                                    {"G", 1e9},
                                    {"T", 1e12}};
constexpr Unit kByteUnits[] = {{"B", 1},           {"KB", 1e3},           {"MB", 1e6},
                               {"GB", 1e9},        {"TB", 1e12},          {"KiB", 1024.0},
                               {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"TiB", 1099511627776.0}};
constexpr Unit kLengthUnits[] = {{"mm", 1e-3}, {"cm", 1e-2}, {"m", 1}, {"km", 1e3}};
constexpr Unit kPowerUnits[] = {{"W", 1}, {"kW", 1e3}, {"MW", 1e6}};

}  // namespace

bool parse_time(std::string_view text, Time& out, std::string& expected) {
  double ps = 0;
  if (!parse_with(text, kTimeUnits, ps) || ps < 0 || ps > static_cast<double>(kMaxTime.ps)) {
    expected = "a non-negative time with a unit: ps, ns, us, ms, s, min or h, at most 1000h (e.g. \"2us\")" +
               case_hint(text, kTimeUnits);
    return false;
  }
  out = Time(static_cast<int64_t>(std::llround(ps)));
  return true;
}

bool parse_bandwidth(std::string_view text, Bandwidth& out, std::string& expected) {
  double bps = 0;
  if (!parse_with(text, kBandwidthUnits, bps) || bps < kMinBandwidth.bps || bps > kMaxBandwidth.bps) {
    expected =
        "a positive bandwidth from 1Mbps to 1000Tbps with a unit: bps, Mbps, Gbps, Tbps (bits/s; or a port's M, G, "
        "T: 400G) or MB/s, GB/s, TB/s (bytes/s) (e.g. \"400Gbps\", \"50GB/s\")" +
        case_hint(text, kBandwidthUnits);
    return false;
  }
  out = Bandwidth(bps);
  return true;
}

bool parse_bytes(std::string_view text, Bytes& out, std::string& expected) {
  double b = 0;
  if (!parse_with(text, kByteUnits, b) || b < 0 || b > static_cast<double>(kMaxBytes) || b != std::floor(b)) {
    expected = "a whole number of bytes up to 1024TiB with a unit: B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, "
               "GiB, TiB (powers of 1024) (e.g. \"64MiB\")" +
               case_hint(text, kByteUnits);
    // A bare K, M, G or T (nccl-tests' -b 4M): both readings, so the user picks one.
    if (!text.empty() && std::string_view("KMGT").find(text.back()) != std::string_view::npos) {
      const std::string n(text.substr(0, text.size() - 1));
      expected += fmt::format("; for '{}' write {}{}iB (powers of 1024, as nccl-tests reads it) or {}{}B", text, n,
                              text.back(), n, text.back());
    }
    return false;
  }
  out = static_cast<Bytes>(b);
  return true;
}

bool parse_length(std::string_view text, double& metres, std::string& expected) {
  if (!parse_with(text, kLengthUnits, metres) || metres < 0 || metres > kMaxLengthMetres) {
    expected = "a non-negative length up to 40000km with a unit: mm, cm, m or km (e.g. \"3m\")" +
               case_hint(text, kLengthUnits);
    return false;
  }
  return true;
}

bool parse_power(std::string_view text, double& watts, std::string& expected) {
  if (!parse_with(text, kPowerUnits, watts) || watts < 0 || watts > kMaxPowerWatts) {
    expected =
        "a non-negative power up to 1000MW with a unit: W, kW or MW (e.g. \"10.2kW\")" + case_hint(text, kPowerUnits);
    return false;
  }
  return true;
}

bool parse_ratio(std::string_view text, double& out, std::string& expected) {
  expected = "a ratio down:up such as \"1:1\" or \"3:1\" (or a number >= 1)";
  auto colon = text.find(':');
  double a = 0, b = 1;
  std::string_view unit;
  if (colon == std::string_view::npos) {
    if (!split_number(text, a, unit) || !unit.empty()) return false;
  } else {
    if (!split_number(text.substr(0, colon), a, unit) || !unit.empty()) return false;
    if (!split_number(text.substr(colon + 1), b, unit) || !unit.empty()) return false;
  }
  if (a <= 0 || b <= 0 || !std::isfinite(a / b) || a / b < 1.0) return false;  // 1e308:1e-308 overflows
  out = a / b;
  return true;
}

std::string format_number(double v, int max_decimals) {
  // Past int64's range fixed notation prints hundreds of digits (1e300): the shortest exact form instead.
  if (!std::isfinite(v) || std::fabs(v) >= 1e21) return fmt::format("{}", v);
  std::string s = fmt::format("{:.{}f}", v, max_decimals);
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  if (s == "-0") s = "0";
  return s;
}

namespace {
template <size_t N>
std::string format_scaled(double v, const Unit (&units)[N], std::initializer_list<int> order) {
  // pick the largest unit (from `order`, ascending) whose factor <= |v|
  const Unit* best = &units[*order.begin()];
  for (int idx : order) {
    if (std::fabs(v) >= units[idx].factor) best = &units[idx];
  }
  return format_number(v / best->factor, 4) + std::string(best->suffix);
}
}  // namespace

std::string format_time(Time t) {
  // A whole number of hours or minutes in that unit ("5min", not "300s"): as a user writes such a time.
  constexpr int64_t kMinute = 60'000'000'000'000, kHour = 60 * kMinute;
  if (t.ps == 0) return "0s";  // no time at all reads in seconds, as the keys' defaults are written ("0ps" was)
  if (t.ps >= kHour && t.ps % kHour == 0) return std::to_string(t.ps / kHour) + "h";
  if (t.ps >= kMinute && t.ps % kMinute == 0) return std::to_string(t.ps / kMinute) + "min";
  return format_scaled(static_cast<double>(t.ps), kTimeUnits, {0, 1, 2, 4, 5});
}
std::string format_bandwidth(Bandwidth bw) { return format_scaled(bw.bps, kBandwidthUnits, {0, 1, 2, 3, 4}); }
std::string format_bandwidth_bytes(Bandwidth bw) { return format_scaled(bw.bps, kBandwidthUnits, {8, 9, 10, 11, 12}); }
std::string format_bytes(Bytes b) {
  // The exact unit (binary or SI) that gives the smallest whole number.
  static constexpr Unit units[] = {{"TiB", 1099511627776.0}, {"TB", 1e12}, {"GiB", 1073741824.0}, {"GB", 1e9},
                                   {"MiB", 1048576.0},       {"MB", 1e6},  {"KiB", 1024.0},       {"KB", 1e3}};
  Bytes best_value = b;
  std::string_view best_unit = "B";
  for (const auto& u : units) {
    auto f = static_cast<Bytes>(u.factor);
    if (b >= f && b % f == 0 && b / f < best_value) {
      best_value = b / f;
      best_unit = u.suffix;
    }
  }
  return std::to_string(best_value) + std::string(best_unit);
}
std::string format_length(double m) { return format_number(m, 3) + "m"; }
std::string format_power(double w) {
  return w >= 1e6   ? format_number(w / 1e6, 4) + "MW"
         : w >= 1e3 ? format_number(w / 1e3, 4) + "kW"
                    : format_number(w, 3) + "W";
}

std::string thousands(int64_t v) {
  std::string s = std::to_string(v < 0 ? -v : v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return v < 0 ? "-" + out : out;
}

std::string plural(int64_t n, std::string_view one, std::string_view many) {
  return thousands(n) + " " + std::string(n == 1 ? one : many);
}

std::string tier_plural(std::string_view one) {
  const std::string s(one);
  return s == "leaf" ? "leaves" : s.ends_with("s") ? s + "es" : s + "s";
}

}  // namespace podnet
