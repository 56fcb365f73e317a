// The `podnet diagnose` result (study::diagnose): its JSON document and a
// console summary (probing, suspects, evaluation scores, deadlock check).
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/diagnose.hpp"

namespace podnet::report {

nlohmann::json diagnose_document(const scenario::Setup& s, const study::DiagnoseResult& r);
void write_diagnose_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
