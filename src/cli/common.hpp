// Shared pieces of every podnet subcommand: the scenario/--set/--format/--out
// options, the run context, and writing a result document in every format.
#pragma once

#include <CLI/CLI.hpp>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/options.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"
#include "scenario/scenario.hpp"
#include "scenario/setup.hpp"
#include "study/study.hpp"
#include "topology/address_plan.hpp"
#include "topology/tenants.hpp"

namespace podnet::cli {

inline constexpr const char* kDefaultScenario = "aipod-16k";

// `podnet design --config-plan DIR` (cmd_design.cpp): frr/<switch>.conf and sonic/<switch>.json of every switch,
// written on `workers` threads (0: the machine's cores, at most 16; the files are the same whatever the
// count), then switches.csv and ip-addresses.csv; a progress line every 5 s. With `only` (shell patterns on
// switch names, `su000-*`), the files of those switches alone, cut from the whole fabric's plan: the same
// addresses and ASNs as in the whole plan's files; the two CSVs stay whole.
void write_config_plan(const topology::Topology& t, const topology::AddressPlan& plan, const std::string& dir,
                       const std::vector<topology::Tenant>& tenants, const topology::Tenant* storage,
                       size_t workers = 0, const std::vector<std::string>& only = {});

struct Common {
  std::string scenario;
  std::vector<std::string> sets;
  // Scenario key -> the option of this command that set it through `sets` (collective.channels ->
  // "--channels"; see set_by()), so that a bad value is blamed on the option the user typed.
  std::map<std::string, std::string> set_flags;
  std::vector<std::string> adds;  // --config-add fragment files, merged before --set
  std::string format = "table";
  std::string out_dir;
  std::string max_memory;  // --max-memory SIZE (scenario/estimate.hpp); empty: half the machine's memory
  // The subcommand these options belong to (add_common): emit() records in the document's run block the
  // options given on it that change the result, so the document repeats the run (given_options).
  const CLI::App* app = nullptr;
};

// The options given on c.app that change what a command computes, as the command line took them
// ({"--min": "1MiB", "--allow-oom": true}): not --set and --config-add (the run block's overrides and
// config_add), not an option that only set a scenario key (c.set_flags: in the overrides already), not the
// ones that only choose where and how results are written (--format, --out, --html, --trace, ...) or how
// many threads compute them. Empty when nothing else was given.
nlohmann::json given_options(const Common& c);

// A command's option that is sugar for a scenario key: appends "KEY=VALUE" to c.sets (after the user's
// own --set, so it wins) and records OPTION as its name for errors.
void set_by(Common& c, const std::string& option, const std::string& key, const std::string& value);

// --fail-links CLASS=AMOUNT[@TIME] and --fail-switches TIER=AMOUNT[@TIME]: a share of one tier of the fabric
// down, appended to the scenario's failures: (bench, train, run).
void add_failure_options(CLI::App* cmd, Common& c);

// What a subcommand does once the command line is parsed.
using Action = std::function<int()>;

// `extra_formats`: --format values beyond table/json/csv this command writes itself (emit's `other`).
void add_common(CLI::App* cmd, Common& c, bool scenario_required, const std::vector<std::string>& extra_formats = {});
report::RunContext context_of(const scenario::Scenario& sc, const std::string& command);
// What a command's run is doing, for its progress lines: `what` names the run
// ("1,073,741,824 B", "iteration"); `expected`, when known, how long it
// should simulate (a model's estimate, e.g. NCCL's for a bench size).
struct RunLabel {
  std::string what;
  Time expected;
  std::vector<double> work;  // study::Progress::expect's: the network's share of the work over `expected`
};
// Engine progress printers on `network` (NetworkOptions::observers.progress and
// ::heartbeat) that print to stderr at most every 5 s, once a run has taken
// 5 s:
//   "COMMAND: LABEL: P% of N transfers done, simulated T (S s elapsed)"
// after a transfer completes, and between completions (a run of a few large
// transfers)
//   "COMMAND: LABEL: simulated T of about E (P%), S s elapsed, about R s left".
// With the label's work curve (a training iteration), P is the share of the
// traffic the estimate puts before T ("(P% of its traffic)"): compute costs
// nothing to simulate, so the time alone ran far ahead of the work.
// `label` is read at each call (update it between runs). `hint`, when not
// empty, is printed once after 10 s.
// The share of a run's traffic done when `time_share` of its estimated time is simulated: `work` (RunLabel::work)
// read between its points, the time clamped to [0, 1]; time_share itself when there is no curve.
double traffic_share(const std::vector<double>& work, double time_share);
void add_progress_printers(engine::NetworkOptions& network, std::string command, const RunLabel& label,
                           std::string hint = {});
// The hint for a slow run: on the packet engine, that the flow engine answers in seconds; on the flow engine with an
// exact quantum, the analytical engine and network.flow_quantum, unless `analytical` is false (a command that
// cannot take that engine, or a user who chose the flow engine: nothing then); else empty.
std::string slow_run_hint(const std::string& engine, const engine::NetworkOptions& o, bool analytical = true);
std::ofstream open_out(const std::string& path);
// Flushes and closes `f`, written to `path` for `option`; an InputError naming both when a write failed (a full
// disk, a quota), so that a truncated file is never reported as written.
void close_out(std::ofstream& f, const std::string& option, const std::string& path);
// open_out, write `text`, close_out.
void write_out(const std::string& option, const std::string& path, const std::string& text);
// Output paths are checked before anything runs, so that a typo fails in milliseconds instead of after a
// simulation of minutes. A FILE option (--html, --trace, --cabling-plan, ...) must not name a directory
// and its parent must be a directory podnet can create files in (created when missing); an existing file
// is opened for appending (which changes nothing) to check it may be overwritten. A DIR option (--out,
// --telemetry, --netbox, ...) must be a directory (created when missing) podnet can create files in.
// Otherwise InputError "OPTION PATH: cannot write there: WHY". An empty path (option not given) passes.
void check_output_file(const std::string& option, const std::string& path);
void check_output_dir(const std::string& option, const std::string& path);
// A study's telemetry on stderr (telemetry/export.hpp: totals, worst ports,
// PFC storms found), and its files in `dir` when given (--telemetry DIR).
void report_telemetry(const study::TelemetryResult& t, const std::string& dir);
// --telemetry DIR and --telemetry-interval on a command.
void add_telemetry_options(CLI::App* cmd, std::string& dir, std::string& interval);
study::TelemetryRequest telemetry_request(const std::string& dir, const std::string& interval);
// Sizes as nccl-tests takes them (-b/-e): a number with B/KB/MB/GB/KiB/..., or K/M/G/T meaning powers of
// 1024. InputError naming `option`.
Bytes parse_size(const std::string& text, const char* option);
// The sizes of --min/--max/--factor (study::size_series).
std::vector<Bytes> bench_sizes(const std::string& min, const std::string& max, double factor);
// "a, b,c" -> {"a", "b", "c"}: comma-separated items, spaces around each trimmed, empty items dropped.
std::vector<std::string> split_list(const std::string& s);
// Writes `doc` to stdout in c.format; with --out also DIR/<stem>.{json,csv,txt} and the resolved scenario.
// A format beyond table/json/csv (add_common's extra_formats) is written by `other`, and with --out also
// to DIR/<stem>.<format>.txt.
void emit(const Common& c, const scenario::Scenario& sc, const nlohmann::json& doc, const std::string& stem,
          const std::function<void(const nlohmann::json&, std::ostream&)>& table,
          const std::function<void(const nlohmann::json&, std::ostream&)>& other = {});

// The design result document (BOM, limits, ...) of a built topology (report/studies.hpp).
using report::design_document;

// One function per subcommand (cmd_<name>.cpp): adds it to `app` and, when
// it is the one invoked, sets `action`.
// The scenario with the fragments (--config-add) and overrides (--set) applied.
scenario::Scenario load_scenario(const Common& c);
// Applies --max-memory (the memory guard's limit, scenario::estimate); load_scenario calls it.
void apply_limits(const Common& c);
// The same, resolved (scenario::resolve), with `command`'s engine progress
// printers (add_progress_printers) reading `label`, which the study's Progress from
// study_progress keeps up to date. `fabric` replaces the scenario's topology.
scenario::Setup load_setup(const Common& c, const std::string& command, const RunLabel& label,
                           std::optional<topology::Topology> fabric = std::nullopt);
// Progress hooks for a study run by `command`: `label` follows the run under
// way; "COMMAND: [k/n] WHAT done (S s elapsed)" on stderr after each step
// when stderr is a terminal or the study has run for 2 s.
study::Progress study_progress(const std::string& command, RunLabel& label);

// The study options of a command that runs any registered study (sweep, diff): one CLI option per
// parameter the studies offer on the command line (report/studies.hpp), deduplicated by name, each
// remembered as given ("--min" -> "1MiB").
struct StudyOptions {
  std::map<std::string, std::string> given;  // option ("--min") -> text
};
void add_study_options(CLI::App* cmd, StudyOptions& o);
// The parameters of `st` from the options given; InputError for a given option `st` does not take (naming
// the studies that do), unless another study of `others` takes it.
report::StudyArgs study_args_from(const report::StudyDef& st, const StudyOptions& o,
                                  const std::vector<const report::StudyDef*>& others = {});

void add_list_command(CLI::App& app, Action& action);
void add_design_command(CLI::App& app, Action& action);
void add_run_command(CLI::App& app, Action& action);
void add_resolve_command(CLI::App& app, Action& action);
void add_bench_command(CLI::App& app, Action& action);
void add_train_command(CLI::App& app, Action& action);
void add_reliability_command(CLI::App& app, Action& action);
void add_inference_command(CLI::App& app, Action& action);
void add_plan_upgrade_command(CLI::App& app, Action& action);
void add_calibrate_command(CLI::App& app, Action& action);
void add_sweep_command(CLI::App& app, Action& action);
void add_diff_command(CLI::App& app, Action& action);
void add_optimize_command(CLI::App& app, Action& action);
void add_diagnose_command(CLI::App& app, Action& action);
void add_serve_command(CLI::App& app, Action& action);

}  // namespace podnet::cli
