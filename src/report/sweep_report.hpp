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

// `columns`: the ones to show (empty = default_columns); InputError naming an unknown one.
void write_sweep_results_table(const study::ResultTable& t, const std::vector<std::string>& columns, std::ostream& out);
void write_sweep_results_csv(const study::ResultTable& t, std::ostream& out);
// {"study", "axes", "points": [{column: value, ...}, ...]} (nulls kept).
void write_sweep_results_json(const study::ResultTable& t, std::ostream& out);

}  // namespace podnet::report
