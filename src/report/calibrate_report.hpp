// The `podnet calibrate` result as a console table: fitted keys, then the
// residual per size of every log (study/calibrate.hpp).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

namespace podnet::report {

void write_calibrate_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
