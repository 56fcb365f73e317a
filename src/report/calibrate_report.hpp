// The `podnet calibrate` result as a console table: fitted keys, then the
// residual per size of every log (study/calibrate.hpp).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "study/calibrate.hpp"
#include "study/calibrate_training.hpp"

namespace podnet::report {

// The result document part: {"engine", "keys": [...], "logs": [...], "rows": [...], "rms_start", "rms_fit", ...}.
nlohmann::json calibrate_json(const study::Calibration& c);
void write_calibrate_table(const nlohmann::json& doc, std::ostream& out);

// `podnet calibrate --training`: {"source", "format", "engine", "steps": {...}, "key": {...}, "log_s",
// "start_s", "fit_s", ...} under the document's "calibrate_training".
nlohmann::json calibrate_training_json(const study::TrainingCalibration& c);
void write_calibrate_training_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
