// `podnet diff`: two scenarios (or two result documents) side by side.
//
// Each side is flattened to named fields (sweep_fields: scalars outside
// arrays, bench rows per size); a field differs when its values differ
// (numbers: by more than 1e-9 relative). The inputs are compared on the
// resolved scenarios (every default filled in), key by key. Attribution:
// the training iteration's change is split over its breakdown
// (breakdown_ms.{compute,tp,pp,dp,ep,cp,bubble} add up to the iteration
// time, so their changes add up to its change); a design's switch, link,
// cable and power changes are already per tier in their names
// (bom.switches.leaf, bom.links.leaf-spine, ...).
#pragma once

#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "report/studies.hpp"

namespace podnet::report {

struct DiffSide {
  std::string label;          // what the user named (file, built-in name, result document)
  std::string resolved_yaml;  // the scenario with every default (empty for a result document)
  // One result document per study, by study name ("design", "train", ...).
  std::vector<std::pair<std::string, nlohmann::json>> documents;
  // Keys a preset set rather than the scenario: key -> what set it ("workload.gpu", "network.preset uec").
  std::map<std::string, std::string> set_by_preset;
  // A result document's inputs as its run block records them: "scenario", "seed" and each --set KEY=VALUE
  // (empty for a scenario, whose resolved_yaml says more).
  std::map<std::string, std::string> run_inputs;
};

// A side holding one result document (what `--format json` writes: an
// object with run.command, which names its study), labelled `label`.
// InputError naming `label` when `doc` is not such a document.
DiffSide document_side(const std::string& label, const nlohmann::json& doc);

// {"a", "b", "inputs": [{key, a, b}], "studies": {STUDY: {"changed": [{field, a, b, delta, ratio}],
//  "same": N, "only_a": [...], "only_b": [...]}}, "attribution": {"train": {...}}}
nlohmann::json diff_document(const DiffSide& a, const DiffSide& b);
// `limit`: changed fields shown per study (the largest relative changes first; 0 = all).
void write_diff_table(const nlohmann::json& doc, std::ostream& out, size_t limit = 25);

// A result a study does not declare, labelled from its key as diff's rows label it ("bom.switches.leaf" ->
// "switches, leaf"), with the unit its suffix gives.
ResultField inferred_field(const std::string& key);

// The resolved YAML as "section.key" -> value lines (nested lists kept as one text per key).
std::vector<std::pair<std::string, std::string>> flatten_resolved(const std::string& yaml);

}  // namespace podnet::report
