// The YAML scenario: schema, defaults, strict validation, `--set` overrides,
// and the resolved scenario echoed beside results.
//
// A scenario file is a YAML map:
//   schema_version: 1          (required)
//   name: aipod-16k            (default: file name without .yaml)
//   description: "..."
//   seed: 1                    (default 1)
//   topology: {family: <builder>, <builder parameters>}   (required)
//   server: {...}  switch: {...}  cabling: {...}           (hardware, all defaulted)
// Every value is checked against a ParamSpec: an unknown key, a missing
// required key, a bad unit or an out-of-range value raises InputError whose
// message starts "FILE:LINE: KEY.PATH: " and says what was expected. Values
// given with --set name no line ("--set topology.gpus").
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::scenario {

// A section with a fixed schema (server, switch, cabling, ...).
struct SectionInfo {
  const char* name;
  const char* description;
  std::vector<ParamSpec> (*params)();
};
const std::vector<SectionInfo>& sections();

class Scenario {
 public:
  std::string source;       // the path, or "built-in <name>"
  std::string name;
  std::string description;
  uint64_t seed = 1;
  std::string family;
  Params topology;
  std::map<std::string, Params> section_params;  // by section name

  const Params& section(const std::string& name) const;
  topology::Hardware hardware() const;
  // Builds the topology; a ParamError from the builder becomes an InputError
  // located at the key's line.
  topology::Topology build_topology() const;
  // "FILE:LINE: key" for a key given in the file, "--set key" for an override,
  // "FILE: key (default)" otherwise.
  std::string where(const std::string& key) const;
  // The scenario with every default filled in, as YAML (deterministic).
  std::string resolved_yaml() const;

  std::map<std::string, int> lines;       // key path -> 1-based line in the file
  std::map<std::string, bool> from_set;   // key path -> given with --set
};

// Loads a scenario from a path, or a built-in example name, applying
// `overrides` ("a.b=value", YAML value syntax) before validation.
Scenario load(const std::string& path_or_name, const std::vector<std::string>& overrides = {});
Scenario load_text(const std::string& text, const std::string& source, const std::string& default_name,
                   const std::vector<std::string>& overrides = {});

// Closest candidate by edit distance (for "did you mean"), or "" if none is close.
std::string closest(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace podnet::scenario
