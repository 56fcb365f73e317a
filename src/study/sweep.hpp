// The sweep study (`podnet sweep`): a study run at every point of a
// cartesian product of scenario overrides, on N threads, with every point's
// result stored in an SQLite database as it completes.
//
// Axes: `KEY=V1,V2,...` (values in scenario syntax, e.g.
// `network.routing=ecmp,adaptive`), or integer ranges `KEY=LO..HI` (step 1),
// `KEY=LO..HI+STEP` (arithmetic) and `KEY=LO..HI*F` (geometric: LO, LO*F, ...
// up to HI). Points are numbered 0.. in row-major order: the last axis
// varies fastest. Each point is the sweep's own --set overrides followed by
// `KEY=VALUE` for each axis.
//
// The database (schema: docs/commands/sweep.md) has one row per finished point in
// table `points`: id, one column per axis, status ("ok" | "error"), error,
// wall_seconds, then every result field as a column (added as fields first
// appear). Each point is committed in its own transaction as it finishes,
// so a sweep killed at any moment (even SIGKILL) loses at most the points
// under way; started again with the same definition on the same database,
// it runs only the missing points. A database holding a different
// definition (study, scenario, overrides, axes) is refused.
//
// Determinism: a point's result depends only on its overrides (each point
// resolves its own Setup; the scenario's seed is the point's seed), so the
// table read back in id order (read_results) is identical whatever the
// thread count or the order points finished in; only wall_seconds differs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

namespace podnet::study {

struct Axis {
  std::string key;
  std::vector<std::string> values;
  // Axes with the same non-empty `zip` name advance together (one dimension of
  // the grid, their i-th values paired); they must have as many values.
  std::string zip;
  // Where the axis was given, for errors about its values: "FILE:LINE" of a sweep file, or "" (--vary); not
  // part of the sweep's definition.
  std::string origin;
  // How errors about its values name it: "FILE:LINE: KEY" or "--vary KEY".
  std::string label() const;
};
// InputError naming the argument for a bad axis (no '=', empty values, a bad range).
Axis parse_axis(const std::string& text);

struct SweepPoint {
  int64_t id = 0;
  std::vector<std::string> values;  // one per axis
};
// Row-major over the dimensions (an axis, or a zip group at its first axis's
// place): the last varies fastest. InputError past kMaxPoints or for zipped
// axes of unequal lengths.
inline constexpr int64_t kMaxPoints = 1000000;
std::vector<SweepPoint> cartesian(const std::vector<Axis>& axes);
// The overrides ("KEY=VALUE", one per axis) of points that between them hold every one of the first
// `max_values` values of every axis (the others at their first value, a zip group together): loading each
// checks every value before anything runs.
std::vector<std::vector<std::string>> value_check_overrides(const std::vector<Axis>& axes, size_t max_values);

// A sweep file (`podnet sweep SCENARIO --sweep-file FILE`), YAML:
//   study: train                       (optional: else --study)
//   vary:                              (each its own dimension)
//     workload.tp: [4, 8]
//     workload.dp: "8..128*2"          (a string: the --vary syntax)
//   zip:                               (each list entry one dimension whose keys advance together)
//     - {server.nic_speed: [200Gbps, 400Gbps], switch.port_speed: [200Gbps, 400Gbps]}
// InputError "FILE:LINE: ..." for anything else.
struct SweepFile {
  std::string study;  // "" when the file does not say
  std::vector<Axis> axes;
};
SweepFile load_sweep_file(const std::string& path);

// A result field's value: NULL, an integer, a real or text (SQLite's types).
using Value = std::variant<std::monostate, int64_t, double, std::string>;
struct Field {
  std::string name;
  Value value;
};

struct Outcome {
  bool ok = true;
  std::string error;          // when !ok
  std::vector<Field> fields;  // when ok
};

struct SweepSpec {
  std::string study;                    // design | bench | train | reliability
  std::string scenario;                 // path or built-in name
  std::vector<std::string> sets;        // --set applied to every point, before the axes
  std::vector<std::string> fragments;   // --config-add files
  std::vector<std::string> study_args;  // the study's own options, as given (part of the definition)
  std::vector<Axis> axes;
  // What the refusal of a database holding another sweep tells the user to do (not part of the definition).
  std::string refusal_hint = "use another --results file to keep both";
  // The definition as one text (stored in the database to refuse a different sweep): the study, the
  // scenario, fragments, sets, study options and axes as given, and for each of them that names a file its
  // size and FNV-1a hash, so that a file edited between two runs makes another sweep.
  std::string definition() const;
  // The overrides of one point: sets, then KEY=VALUE per axis.
  std::vector<std::string> overrides(const SweepPoint& p) const;
};

// Runs one point; exceptions it throws are recorded as the point's error.
using Evaluate = std::function<Outcome(const SweepPoint& p)>;

struct SweepProgress {
  // After each point: (finished this run, to run this run, failed this run, seconds elapsed).
  std::function<void(int64_t done, int64_t total, int64_t failed, double elapsed)> point;
};

struct SweepStats {
  int64_t points = 0;    // in the sweep
  int64_t already = 0;   // found finished in the database
  int64_t ran = 0;       // run now
  int64_t failed = 0;    // of those, with an error
  int ranks = 1;         // MPI processes (1 without mpirun)
  bool reporter = true;  // this process holds the results (false on MPI ranks other than 0)
};

// Processes of the MPI job this one belongs to (Open MPI's OMPI_COMM_WORLD_SIZE; 1 outside mpirun).
int mpi_ranks();
// Whether a sweep's points share the machine's cores (-j above 1, or several MPI ranks): each point's
// flow engine then runs on one thread (network.threads 1; no effect on results).
inline bool points_share_cores(int jobs) { return jobs > 1 || mpi_ranks() > 1; }

// Opens (or creates) `db_path`, runs the points it does not hold on `jobs`
// threads (>= 1) and stores each as it finishes.
//
// Under `mpirun -n N` (N >= 2), rank 0 owns the database and hands out one
// point at a time to whichever rank asks next (long and short points mix
// well); ranks 1..N-1 evaluate and send back each result, its values
// bit-exact; `jobs` is then ignored. Only rank 0 returns reporter = true.
SweepStats run_sweep(const SweepSpec& spec, const std::string& db_path, const Evaluate& evaluate, int jobs,
                     const SweepProgress& progress = {});

struct ResultTable {
  std::string study;  // the sweep's study
  std::vector<std::string> axes;
  std::vector<std::string> columns;
  std::vector<std::vector<Value>> rows;
};
// The points of a sweep database in id order: id, the axes, status, error,
// then the result fields sorted by name (wall_seconds only with `timing`).
// InputError if the file is not a podnet sweep database.
ResultTable read_results(const std::string& db_path, bool timing = false);

}  // namespace podnet::study
