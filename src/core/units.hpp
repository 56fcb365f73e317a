// Strong units used everywhere in podnet.
//
// Time is an integer count of picoseconds (int64: ±106 days), so event order
// never depends on floating-point rounding. Bandwidth is bits per second as a
// double (rates are divided and shared, never compared for equality). Bytes is
// an integer count. Length is metres, Power watts.
//
// Text forms (scenario values, CLI options) always carry a unit:
//   time       ps ns us ms s            ("1us", "2.5ms")
//   bandwidth  bps Kbps Mbps Gbps Tbps  (bits/s, SI)  and B/s KB/s MB/s GB/s TB/s (bytes/s, SI)
//   bytes      B KB MB GB TB (SI, 1e3) and KiB MiB GiB TiB (binary)
//   length     mm cm m km
//   power      W kW MW
//
// Limits (the parsers refuse values outside them, so no input can overflow the
// picosecond clock, divide by zero or produce infinity):
//   time       0 .. kMaxTime = 1000 h (3.6e18 ps: twice it still fits in int64's
//              9.22e18 ps, so a sum of two parsed times cannot wrap)
//   bandwidth  kMinBandwidth = 1 Mbps .. kMaxBandwidth = 1 Pbps (the slowest
//              Ethernet still sold is 10 Mbps, the fastest switch ASIC 102.4 Tbps)
//   bytes      0 .. kMaxBytes = 1 PiB (2^50: a message 10^4 times an H100's HBM,
//              exact in a double)
//   length     0 .. 40,000 km; power 0 .. 1 GW; ratios finite
#pragma once

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

namespace podnet {

struct Time {
  int64_t ps = 0;
  constexpr Time() = default;
  constexpr explicit Time(int64_t p) : ps(p) {}
  static constexpr Time from_seconds(double s) { return Time(static_cast<int64_t>(s * 1e12 + (s >= 0 ? 0.5 : -0.5))); }
  constexpr double seconds() const { return static_cast<double>(ps) * 1e-12; }
  constexpr double us() const { return static_cast<double>(ps) * 1e-6; }
  constexpr double ms() const { return static_cast<double>(ps) * 1e-9; }
  constexpr Time operator+(Time o) const { return Time(ps + o.ps); }
  constexpr Time operator-(Time o) const { return Time(ps - o.ps); }
  constexpr Time& operator+=(Time o) {
    ps += o.ps;
    return *this;
  }
  constexpr Time operator*(int64_t k) const { return Time(ps * k); }
  constexpr auto operator<=>(const Time&) const = default;
  static constexpr Time max() { return Time(INT64_MAX); }
};

struct Bandwidth {
  double bps = 0;  // bits per second
  constexpr Bandwidth() = default;
  constexpr explicit Bandwidth(double b) : bps(b) {}
  constexpr double bytes_per_second() const { return bps / 8.0; }
  constexpr double gbps() const { return bps * 1e-9; }
  constexpr Bandwidth operator*(double k) const { return Bandwidth(bps * k); }
  constexpr Bandwidth operator/(double k) const { return Bandwidth(bps / k); }
  constexpr Bandwidth operator+(Bandwidth o) const { return Bandwidth(bps + o.bps); }
  constexpr auto operator<=>(const Bandwidth&) const = default;
};

using Bytes = int64_t;

inline constexpr Time kMaxTime{int64_t{3600} * 1000 * 1000000000000};  // 1000 h in ps
inline constexpr Bandwidth kMinBandwidth{1e6};                         // 1 Mbps
inline constexpr Bandwidth kMaxBandwidth{1e15};                        // 1 Pbps
inline constexpr Bytes kMaxBytes = Bytes{1} << 50;                     // 1 PiB
inline constexpr double kMaxLengthMetres = 4e7;                        // 40,000 km
inline constexpr double kMaxPowerWatts = 1e9;                          // 1 GW

// Time to serialize `bytes` at `bw` (rounded to the nearest picosecond).
Time transmit_time(Bytes bytes, Bandwidth bw);

namespace literals {
constexpr Time operator""_ps(unsigned long long v) { return Time(static_cast<int64_t>(v)); }
constexpr Time operator""_ns(unsigned long long v) { return Time(static_cast<int64_t>(v) * 1000); }
constexpr Time operator""_us(unsigned long long v) { return Time(static_cast<int64_t>(v) * 1000000); }
constexpr Time operator""_ms(unsigned long long v) { return Time(static_cast<int64_t>(v) * 1000000000); }
constexpr Bandwidth operator""_Gbps(unsigned long long v) { return Bandwidth(static_cast<double>(v) * 1e9); }
constexpr Bandwidth operator""_GBps(unsigned long long v) { return Bandwidth(static_cast<double>(v) * 8e9); }
constexpr Bytes operator""_KiB(unsigned long long v) { return static_cast<Bytes>(v) << 10; }
constexpr Bytes operator""_MiB(unsigned long long v) { return static_cast<Bytes>(v) << 20; }
constexpr Bytes operator""_GiB(unsigned long long v) { return static_cast<Bytes>(v) << 30; }
}  // namespace literals

// Parsers: return true and set `out` on success; on failure return false and
// leave a one-line description of the accepted form in `expected`.
bool parse_time(std::string_view text, Time& out, std::string& expected);
bool parse_bandwidth(std::string_view text, Bandwidth& out, std::string& expected);
bool parse_bytes(std::string_view text, Bytes& out, std::string& expected);
bool parse_length(std::string_view text, double& metres, std::string& expected);
bool parse_power(std::string_view text, double& watts, std::string& expected);
// "3:1" or "3" or "1.5" -> 3.0 / 1.5 (down:up ratio)
bool parse_ratio(std::string_view text, double& out, std::string& expected);

// Canonical text forms (deterministic, shortest unit that keeps the value readable).
std::string format_time(Time t);
std::string format_bandwidth(Bandwidth bw);
// The same in bytes per second (B/s, KB/s, MB/s, GB/s, TB/s): "450GB/s".
std::string format_bandwidth_bytes(Bandwidth bw);
std::string format_bytes(Bytes b);
std::string format_length(double metres);
std::string format_power(double watts);
// A number with up to `digits` significant decimals and no trailing zeros.
std::string format_number(double v, int max_decimals = 6);
// 16384 -> "16,384" (digits grouped by thousands).
std::string thousands(int64_t v);
// A count and its noun: "1 pod", "8 pods", "1,024 links".
std::string plural(int64_t n, std::string_view one, std::string_view many);
// A switch tier's name in the plural: leaf -> leaves, access -> accesses, spine -> spines.
std::string tier_plural(std::string_view one);

}  // namespace podnet
