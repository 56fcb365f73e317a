// Reporters: one result document (nlohmann::json, keys sorted) rendered as
// JSON, flat CSV (key,value rows) or a human table. Every document carries
// `schema_version` and a `run` context (podnet version, git sha, command,
// scenario, seed). Output is diff-stable: sorted keys, numbers rounded to a
// fixed number of decimals, no wall-clock times.
#pragma once

#include <array>

#include <cstdint>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.hpp"

namespace podnet::report {

// 2: unit suffixes say their unit (gbyte_per_s = 1e9 B/s, gbps = 1e9 bit/s, gbyte = 1e9 B).
inline constexpr int kSchemaVersion = 2;

enum class Format { Table, Json, Csv };

struct RunContext {
  std::string command;   // "design", "bench", ...
  std::string scenario;  // scenario name
  std::string source;    // file or built-in
  uint64_t seed = 1;
  std::vector<std::string> overrides;  // --set, as given (so the run can be repeated)
  std::vector<std::string> fragments;  // --config-add files
};

// The context of a run of `command` on `sc`.
RunContext context_of(const scenario::Scenario& sc, const std::string& command);
nlohmann::json run_json(const RunContext& ctx);
// A new document: {"schema_version": 2, "run": {...}}.
nlohmann::json new_document(const RunContext& ctx);

// Rounds to `decimals` decimal places (so JSON numbers are stable and short).
double round_to(double v, int decimals = 6);

void write_json(const nlohmann::json& doc, std::ostream& out);
// One CSV cell (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or newline.
std::string csv_cell(const std::string& v);
// Flattens nested objects to dotted keys: "key,value" rows (arrays indexed key.0, key.1).
void write_flat_csv(const nlohmann::json& doc, std::ostream& out);
// Tidy CSV (one row per observation, one column per variable, as pandas and
// gnuplot read it) of the table `key` of `doc`: an array of objects (one row
// each), or an object of objects (one row each, its key in the first column
// named `key_column`). Columns: `key_column` first (for an array, when the
// rows have that field), then those of `first` the rows have, in that order (the console table's), then
// the rest of the rows' fields, nested objects flattened with dots, sorted by name; a list is written
// as its JSON text (but a distribution, a field ending in cdf_us, is left to the JSON), a missing field as
// an empty cell. Falls back to
// write_flat_csv when `doc` has no such table.
void write_tidy_csv(const nlohmann::json& doc, const std::string& key, const std::string& key_column, std::ostream& out,
                    const std::vector<std::string>& first = {});

// A console report's prose lines (notes, limits, warnings: a line with no two spaces in a row after its indent,
// which no table row is) wider than Table::kTableWidth, wrapped at spaces with a hanging indent two spaces deeper.
// A word longer than the width stays whole. Table rows and shorter lines are left as they are.
std::string wrap_prose(const std::string& text);
// One line appended to `out` in lines of at most Table::kTableWidth characters: breaks at spaces past column `keep`
// on the first line, the others indented by `hang_width` spaces; never between a number and its unit.
void append_wrapped(std::string& out, std::string_view line, size_t keep, size_t hang_width);

// A console table: left-aligned first column, right-aligned numbers. A table wider than kTableWidth characters
// wraps its widest text columns at spaces (each down to kWrapWidth), then the headers wider than their column's
// cells, then a first column wider than half of kTableWidth (down to that half or its longest word), so that long
// descriptions and labels stay readable; a row of several lines stands between blank lines.
class Table {
 public:
  static constexpr size_t kTableWidth = 120, kWrapWidth = 24;
  explicit Table(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  void write(std::ostream& out, const std::string& indent = "") const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// 16384 -> "16,384"; 1234.5 with decimals -> "1,234.5"
std::string thousands(int64_t v);
// Failure events a table lists before "... and N more" (a share of a tier can be hundreds of links).
inline constexpr size_t kEventsShown = 12;
// A failure event's text as a list shows it: the share it belongs to, "(leaf-spine links, 20 of 1,024, 2% of 1,024 =
// 20.48, rounded down to 20)", is said once, at the first of its events; `before` is the event listed above.
std::string event_text(const std::string& what, const std::string& before);
std::string fixed(double v, int decimals);
// An oversubscription as every command and the dashboard print it: up to three decimals, trailing zeros
// dropped, then ":1" ("1:1", "2.125:1", "1.977:1"). Documents keep four decimals.
inline constexpr int kRatioDecimals = 3;
std::string ratio_text(double v);
// A bench size as diff and sweep headers name it: "4 MiB", "1001 B" (format_bytes with a space before the unit).
std::string size_text(Bytes b);
// A part of a training iteration's breakdown (breakdown_ms.KEY) as every report and the dashboard label it:
// "compute", "TP (exposed)", "optimizer step", "bubble", ...
std::string breakdown_label(const std::string& key);
// A training iteration's breakdown parts (breakdown_ms.KEY) in the order the tables list them; they add up to
// the iteration time (workload/training.hpp, Breakdown).
inline constexpr std::array<const char*, 11> kTrainingParts = {
    "compute", "tp", "pp", "dp", "ep", "cp", "optimizer", "grad_norm", "loss", "step_overhead", "bubble"};
// fixed() below 1e15 in magnitude; from 1e15 on three significant digits in e-notation ("1.38e+288"), for
// figures that an extreme input can make astronomically large (days to train when restarts outrun the
// MTBI): 289 grouped digits say no more and would widen a table past any terminal.
std::string fixed_or_exp(double v, int decimals);
// Minutes as a person reads them: "45.0 min" up to two hours, then hours ("11.36 h"; 681.6 min read poorly).
std::string minutes_text(double minutes);
// A checkpoint's cost the same way, and under a minute in seconds ("30.0 s", "0.60 s": an asynchronous
// checkpoint's copy to host memory).
std::string checkpoint_minutes_text(double minutes);

}  // namespace podnet::report
