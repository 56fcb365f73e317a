// The `podnet inference` result (study::inference): its JSON document, and a
// console summary: the layout and its memory, one request alone, and the
// request stream's latency percentiles and throughput.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/inference.hpp"

namespace podnet::report {

nlohmann::json inference_document(const scenario::Setup& s, const study::InferenceStudy& r);
void write_inference_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
