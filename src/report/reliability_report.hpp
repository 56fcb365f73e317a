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

// A checkpoint's write and read over the storage network (storage:), as JSON and as one line of text:
// "checkpoint of 5.68 TB: written in 3.6 min (the storage nodes bound it), read in 1.8 min".
nlohmann::json checkpoint_io_json(const reliability::CheckpointIo& io);
std::string checkpoint_io_text(const nlohmann::json& io);
// Hours as a person reads them: minutes below an hour, hours below two days, else days ("27.6 min").
std::string duration_text(double hours);

}  // namespace podnet::report
