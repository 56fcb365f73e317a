// The `podnet reliability` result (study::reliability): its JSON document,
// and a console summary: the risk table (one row per component class of the
// job) and the checkpoint advice.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/reliability.hpp"

namespace podnet::report {

nlohmann::json reliability_document(const scenario::Setup& s, const study::ReliabilityResult& r);
void write_reliability_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
