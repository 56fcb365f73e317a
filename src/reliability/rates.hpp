// Component failure rates: how they are written in a scenario, and the
// preset table they default to (with the derivation of every default).
//
// A failure rate is written one of three ways (per component, per hour of
// operation; components are replaced on failure, so each component is a
// Poisson process of constant rate λ):
//   MTBF        "79230h", "3300d", "9.0y"  λ = 1 / MTBF       (d = 24 h, y = 8,760 h)
//   FIT         "1000FIT"                  λ = FIT / 1e9 h    (failures per 1e9 device-hours)
//   monthly     "99.9%"                    λ = −ln(A) / 720 h (A = probability that the
//   availability                           component does not fail in a 30-day month)
// "0FIT" and "100%" mean "never fails". The availability form is exact for
// the exponential model: P(no failure in a month) = exp(−λ·720 h) = A, so N
// such components over a month give P(at least one failure) = 1 − A^N
// (1,000 GPUs at 99.9 %: 1 − 0.999^1000 = 0.632).
//
// Defaults. Llama 3 405B pre-training (Llama 3 paper
// §3.3.4, Table 5): 54 days on 16,384 H100 GPUs (2,048 servers of 8 GPUs, one
// 400G back-end NIC per GPU), 419 unexpected interruptions. Table 5's counts
// (which sum to 419; its printed 30.1 % for "Faulty GPU" does not match
// 148/419 = 35.3 %, so we use the counts) are attributed to the component
// classes below, and each rate is (interruptions) / (component-hours):
//   GPU-hours    = 16,384 × 54 × 24 h = 21,233,664
//   server-hours =  2,048 × 54 × 24 h =  2,654,208
//   gpu           faulty GPU 148 + HBM3 72 + SRAM 19 + GPU system processor 17
//                 + thermal interface/sensor 6 + silent data corruption 6 = 268
//                 → MTBF 21,233,664 / 268 = 79,230 h per GPU
//   software      software bug 54 + NCCL watchdog timeout 7 + dependency 2 = 63,
//                 counted per GPU (a hang anywhere stops the job; more ranks,
//                 more hangs) → 21,233,664 / 63 = 337,042 h per GPU
//   host          host maintenance 32 + SSD 3 + PSU 3 + chassis 2 + IO board 2
//                 + CPU 2 + system memory 2 = 46, per server
//                 → 2,654,208 / 46 = 57,700 h per server
//   nic           NIC 7, one NIC per GPU → 21,233,664 / 7 = 3,033,381 h per NIC
//   cable         network switch/cable 35: all attributed to the 16,384
//                 server-to-leaf links (one per GPU), the only network parts
//                 whose failure interrupts a job in this model; so this is
//                 the rate of a whole access link (cable and its two ports)
//                 → 21,233,664 / 35 = 606,676 h per cable, used for copper
//                 (DAC) and fibre cables alike
//   total         268 + 63 + 46 + 7 + 35 = 419: a 16,384-GPU job on a fabric
//                 with one copper access link per GPU reproduces Llama 3's
//                 MTBI of 54 × 24 / 419 = 3.09 h (plus its leaf switches).
//   optic         1,000,000 h per transceiver (1,000 FIT): the upper end of
//                 field data for conventional pluggable optics, 0.5–1 M
//                 device-hours (Meta, ECOC 2025, as reported [2nd]). Not the
//                 1e7 h of the "100k optics fail every 4.17 days" seed claim
//                 (10× better than the field data) nor CPO's 2.6 M h.
//   switch        250,000 h per switch [assumption]: the order of vendors'
//                 predicted (Telcordia SR-332) MTBFs for 1–2U data-centre
//                 switches; we found no published field measurement.
//                 Override with `switch_mtbf`.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace podnet::reliability {

inline constexpr double kHoursPerMonth = 720.0;  // 30 days, for monthly availability
inline constexpr double kFitHours = 1e9;         // FIT = failures per 1e9 device-hours
// The highest rate parse_rate accepts: one failure per minute per component (an MTBF of 1 min, 6e10
// FIT); faster ones are typos (`1e-300h`) whose counts and days overflow every printed figure.
inline constexpr double kMaxRatePerHour = 60.0;
// The lowest non-zero rate: an MTBF of 10^12 h (10^-3 FIT). Beyond it (`1e308h`) the MTBF printed as an
// integer overflowed ("-0"); a part that never fails is "0FIT".
inline constexpr double kMinRatePerHour = 1e-12;

// Llama 3 405B (Table 5) figures the defaults are derived from.
struct Llama3 {
  static constexpr double kGpus = 16384;
  static constexpr double kServers = 2048;
  static constexpr double kHours = 54 * 24;  // 1,296 h
  static constexpr double kInterruptions = 419;
  static constexpr double kGpu = 148 + 72 + 19 + 17 + 6 + 6;   // 268
  static constexpr double kSoftware = 54 + 7 + 2;              // 63
  static constexpr double kHost = 32 + 3 + 3 + 2 + 2 + 2 + 2;  // 46
  static constexpr double kNic = 7;
  static constexpr double kSwitchCable = 35;
};

// What a failure rate applies to (one scenario key `<name>_mtbf` each).
enum class Part { Gpu, Software, Host, Nic, Switch, Optic, CopperCable, OpticalCable };
inline constexpr int kParts = 8;

struct Preset {
  Part part;
  const char* name;    // "gpu" -> key "gpu_mtbf"
  const char* per;     // what one unit is: "GPU", "server", ...
  double mtbf_hours;   // default
  const char* source;  // one line
};
const std::vector<Preset>& presets();
const Preset& preset(Part p);

// Parses a failure rate (forms above). Returns failures per hour, or nullopt
// with `expected` describing the accepted forms.
std::optional<double> parse_rate(std::string_view text, std::string& expected);
// MTBF text of a default: "79230h".
std::string mtbf_text(double hours);

}  // namespace podnet::reliability
