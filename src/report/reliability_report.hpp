// The `podnet reliability` result as a console summary: the risk table (one
// row per component class of the job) and the checkpoint advice. The
// document itself is built by the command (src/cli/cmd_reliability.cpp)
// from the model in src/reliability/; this reads only its JSON.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

namespace podnet::report {

void write_reliability_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
