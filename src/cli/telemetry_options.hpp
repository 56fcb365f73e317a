// --telemetry-all (podnet bench and train): the metrics files of --telemetry DIR with every port of the
// fabric instead of those that carried traffic (telemetry/metrics.hpp), and the telemetry report that says how
// many ports it left out. The other telemetry options are in common.hpp.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "study/study.hpp"

namespace podnet::cli {

void add_telemetry_all_option(CLI::App* cmd, bool& all_ports);
// report_telemetry (common.hpp), the metrics files with every port when `all_ports`.
void report_telemetry(const study::TelemetryResult& t, const std::string& dir, bool all_ports);

}  // namespace podnet::cli
