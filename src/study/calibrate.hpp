// Calibration: fit numeric scenario keys (link speeds, latencies,
// efficiencies) so that podnet's bench reproduces measured nccl-tests logs.
//
// Model. For each log (report/nccl_tests.hpp) podnet runs the same
// collective (the log's test) on a group laid out as the log's ranks: H
// hosts x G ranks per host become the first G GPUs of servers 0..H-1, so the
// NVLink / NIC split of every ring or tree matches, timed as `podnet bench`
// times it: the scenario resolved (links: included) with its collective
// options (NCCL's tuner and auto channels by default, algorithm "auto"; the
// plain default algorithm when collective.nccl_model is false). Before
// 2026-11 every row was a plain ring on one channel whatever the scenario
// said, so a log bench wrote with the defaults could not be fitted. For each size s of the
// log, with knob values x, the residual is
//     r_s(x) = t_log(s) / t_podnet(s; x) - 1  =  busbw_podnet / busbw_log - 1
// (the relative busbw error; busbw = size / time x the same bus factor on
// both sides, so times are compared: they keep their precision at small
// sizes where nccl-tests prints busbw 0.00). The fit minimises
//     F(x) = sum over logs and sizes of r_s(x)^2.
//
// Optimiser: cyclic coordinate descent with a golden-section line search per
// key over its bounds (in log space when the lower bound is positive, else
// linear), 24 section steps per search (the bracket shrinks by 0.618^24 =
// 1e-5 of its width), whole sweeps repeated until no key moves by more than
// 1e-4 of its range or after 8 sweeps. Deterministic: no random start; the
// same logs and scenario give the same values. Golden section finds the
// minimum of a unimodal function; F along one key is unimodal for the alpha-
// beta and max-min models (time is monotone in each bandwidth and latency),
// but two keys that trade off (an efficiency and the speed it scales) have a
// valley of equal minima: fit one of them.
//
// A key is "section.name" of a scenario key of type bandwidth, time or real
// (`podnet list`); its bounds default to [start/8, 2 x start] for a
// bandwidth, [start/20, 20 x start] for a time (0 .. 50 us when the start is
// 0) and [start/4, 4 x start] for a real, clipped to the key's valid range;
// `KEY=LO:HI` sets them (with units: `server.nic_speed=100Gbps:800Gbps`).
// The start is the scenario's value (network.stack_latency: the transport's).
// Values the scenario refuses (server.nic_speed above switch.port_speed)
// count as F = infinity: the search stays where the scenario is valid.
//
// The algorithm. A log that says which algorithms NCCL was held to
// (NCCL_ALGO in it: nccl_tests_log.hpp) is timed with those
// (collective.algorithms for that log, NCCL_PROTO likewise), unless the
// scenario or --set chose them: a two-node log taken with NCCL_ALGO=RING, as
// NCCL's maintainers advise for two nodes, was timed as the tuner's NVLS tree
// on aipod-16k. Every size records what podnet timed (algorithm / protocol)
// beside what the log ran, when the log says.
//
// Trust. A fit is not a calibration when its keys all end on their bounds
// (the logs want values the bounds exclude) or when its rms residual exceeds
// kMaxTrustedRms (25 %: a quarter of the busbw unexplained at a typical size;
// every fit of docs/contributing/validation/calibration.md that matched podnet's algorithm to the log's
// is below 12 %, the mismatched ones 50 % and more). Calibration::doubts then
// says why, naming the likely causes (the algorithm podnet timed is not the
// log's, or the log does not say; ranks per host not the scenario's GPUs per
// server; the keys at their bounds); `podnet calibrate` prints the fit but
// writes no fragment and exits 2 unless --force.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "scenario/scenario.hpp"
#include "study/nccl_tests_log.hpp"

namespace podnet::study {

struct CalibrationInput {
  std::string scenario;                // path or built-in name
  std::vector<std::string> sets;       // --set overrides (applied to every evaluation)
  std::vector<std::string> fragments;  // --config-add files
  std::vector<NcclTestsLog> logs;
  std::vector<std::string> fit;  // "KEY" or "KEY=LO:HI"; empty: the default keys (default_fit_keys)
  std::string engine;            // analytical | flow; "" = the scenario's network.engine
  std::string op;                // the collective of logs that do not name their test ("" = none)
  // Called after every evaluation with (evaluations so far, best rms residual so far, the key being searched).
  std::function<void(int, double, const std::string&)> progress;
};

struct FittedKey {
  std::string key;  // "server.nic_speed"
  ParamType type = ParamType::Real;
  double start = 0;       // SI: bits/s, seconds, or the number
  double lo = 0, hi = 0;  // bounds
  double value = 0;       // fitted
  std::string text;       // the fitted value in scenario syntax ("360.000000Gbps")
  std::string start_text;
  std::string lo_text, hi_text;  // the bounds in scenario syntax
  bool hi_is_limit = false;      // the upper bound is the largest value the key takes (an efficiency's 1)
};

// Below this rms residual a fit matches its logs: a key on a bound there is where the logs put it, not a value
// the bounds cut short.
inline constexpr double kExactFitRms = 0.001;

struct SizeResidual {
  size_t log = 0;  // index in CalibrationInput::logs
  int line = 0;    // the row's line in the log
  int64_t bytes = 0;
  double log_time_us = 0, log_busbw = 0;  // busbw = size / time x bus factor (from the log's time)
  double start_time_us = 0, fit_time_us = 0;
  double fit_busbw = 0;
  double ratio = 0;                 // fit_busbw / log_busbw
  std::string algorithm, protocol;  // what podnet timed at the fitted values ("ring", "simple")
};

struct LogSetup {
  std::string source;
  std::string op;  // podnet op name
  int hosts = 0, ranks_per_host = 0;
  std::vector<int32_t> gpus;
  // NCCL_ALGO / NCCL_PROTO as the log says ("" = it does not), and whether podnet timed this log with them
  // (false when the scenario or --set chose the algorithms, or NCCL's model is off).
  std::string log_algo, log_proto;
  bool log_algo_applied = false, log_proto_applied = false;
};

// The most log rows one fit takes (a 2,000-row fit took 17 s; each row is timed at every evaluation).
inline constexpr size_t kMaxCalibrationRows = 512;
// Above this rms residual a fit is not trusted (Calibration::doubts).
inline constexpr double kMaxTrustedRms = 0.25;

struct Calibration {
  std::vector<FittedKey> keys;
  std::vector<LogSetup> logs;
  std::vector<SizeResidual> rows;
  std::string engine;
  double rms_start = 0;    // sqrt(mean r^2) at the start values
  double rms_fit = 0;      // and at the fitted ones
  double max_abs_fit = 0;  // max |r| at the fitted values
  int evaluations = 0;
  int refused = 0;  // evaluations at values the scenario refuses (e.g. a NIC faster than its switch port)
  int sweeps = 0;
  // What the fit cannot support, in words (printed, in the JSON and in the fragment's comments): a key
  // fitted at one of its bounds (the logs want a value beyond it), a key that changed no time (left at its
  // start: it is not fitted), more keys than sizes.
  std::vector<std::string> notes;
  // Why this fit should not be used, when it should not (its keys all at their bounds, or rms above
  // kMaxTrustedRms), then the likely causes; empty when the fit is trusted.
  std::vector<std::string> doubts;
};

// A key to fit from --fit's "KEY" or "KEY=LO:HI": its type, bounds (defaults around the start: see the
// header) and start, the scenario's value or else `start` (a value the scenario derives, such as a GPU
// preset's workload.sustained_fraction). InputError for an unknown or non-numeric key, a bad bound, or a
// key without a start or bounds.
FittedKey fit_key(const std::string& fit, const scenario::Scenario& sc, std::optional<double> start = {});
// A value of the key in scenario syntax ("360.000000Gbps", "12.500000us", "0.83").
std::string fit_value_text(const FittedKey& k, double v);
// A key's value in the space its search moves in (ln v when its lower bound is positive, else v), and back.
double to_u(const FittedKey& k, double v);
double from_u(const FittedKey& k, double u);
// The schema of scenario key "section.name", or nullptr.
const ParamSpec* find_param_spec(const std::string& key);

// The keys fitted when --fit is not given. Under NCCL's model (collective.nccl_model, the default):
// links.nvlink_efficiency, and for logs across servers first the NIC class's efficiency
// (links.ethernet_efficiency, or links.infiniband_efficiency with transport infiniband), plus
// network.stack_latency when a log is alltoall or sendrecv (`op`: the test of logs that do not name
// theirs). With nccl_model false (the plain algorithm): within one server server.nvlink_bandwidth and
// server.nvlink_latency; across servers server.nic_speed and network.stack_latency.
std::vector<std::string> default_fit_keys(const std::vector<NcclTestsLog>& logs, const scenario::Scenario& sc,
                                          const std::string& op);

// Runs the fit. InputError for a bad key or bound, a log podnet cannot lay
// out on the scenario (more ranks per host than server.gpus, more hosts
// than servers, uneven hosts), or a log that does not say its collective.
Calibration calibrate(const CalibrationInput& in);

// The fitted keys as a scenario fragment (`--config-add FILE`), with a
// comment saying what it was fitted to.
std::string fragment_yaml(const Calibration& c, const CalibrationInput& in);

}  // namespace podnet::study
