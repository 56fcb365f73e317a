// Sweep results: a study's result document as the fields of one database
// row (sweep_fields), and a sweep database read back (study::read_results)
// as a table, CSV or JSON.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/sweep.hpp"

namespace podnet::report {
struct StudyDef;
}

namespace podnet::report {

// Every scalar of `doc` outside arrays, by dotted name ("breakdown_ms.tp"),
// but the run context, schema_version and the prose (definitions, notes,
// units, descriptions of methods). A bench document's rows become
// "time_us@BYTES", "busbw_gbyte_per_s@BYTES", "algbw_gbyte_per_s@BYTES", "algorithm@BYTES",
// "protocol@BYTES" (BYTES zero-padded to 16 digits, so names sort by size).
std::vector<study::Field> sweep_fields(const nlohmann::json& doc);

// A field's value as JSON (NULL -> null).
nlohmann::json json_of(const study::Value& v);

// The columns a console table shows by default for a study's sweep: id, the
// axes, the GPU count (the study's gpus_field), status, then the study's
// headline fields present in `t` (report/studies.hpp).
std::vector<std::string> default_columns(const study::ResultTable& t);

// A warning when the ok points ran on different GPU counts (the study's gpus_field), naming the axes that
// change it; "" when they all ran on one.
std::string gpu_count_warning(const study::ResultTable& t);

// Before a sweep runs: an InputError for a --columns name that no column of its results could match: not
// id, status, error, wall_seconds, an axis, nor a field the study declares (by key, label or the header the
// table shows). A name written as a key (lower case, digits, '.', '_', '@') that the study does not declare
// may still be in its documents (bom.switches.core): it is returned, for after_first_point.
std::vector<std::string> check_sweep_columns(const StudyDef& study, const std::vector<std::string>& axes,
                                             const std::vector<std::string>& columns);
// The names of `undeclared` (check_sweep_columns) missing from one point's fields: a warning for stderr that
// the table at the end will refuse them unless a later point has them; "" when every name is there.
std::string columns_missing_from_point(const std::vector<std::string>& undeclared,
                                       const std::vector<study::Field>& fields);

// The stored points whose status is not ok (they hold an error and no results).
int64_t failed_points(const study::ResultTable& t);

// `columns`: the ones to show (empty = default_columns); InputError naming an unknown one.
void write_sweep_results_table(const study::ResultTable& t, const std::vector<std::string>& columns, std::ostream& out);
void write_sweep_results_csv(const study::ResultTable& t, std::ostream& out);
// {"study", "axes", "points": [{column: value, ...}, ...]} (nulls kept).
void write_sweep_results_json(const study::ResultTable& t, std::ostream& out);

}  // namespace podnet::report
