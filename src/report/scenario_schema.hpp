// The scenario file's JSON Schema (draft 2020-12), generated from the same
// ParamSpec lists the loader validates against (scenario::sections(),
// topology::builders(), scenario::top_keys() and the failures:/faults:
// entry keys), so it cannot drift from what podnet accepts. Editors that
// read JSON Schema for YAML (e.g. the YAML language server, with a
// `# yaml-language-server: $schema=podnet-scenario.schema.json` line)
// then complete keys, show each key's help and flag unknown keys.
//
// Per ParamType: Int -> integer (or one of its words, e.g. "auto"), Real
// and Ratio -> number (a ratio may also be "N:M"), Bool -> boolean, String
// -> string (enum when it has choices), IntList -> a list of integers or
// text ("4x4x4"), unit types (bandwidth, time, bytes, length, power) ->
// a string "number + unit"; every property's description is the key's
// help, its type and default. `topology` is one of the families, each with
// its own parameters (family is the discriminator). The schema checks
// shape and types; ranges, units and cross-key rules are still the
// loader's (podnet resolve reports them with file and line).
#pragma once

#include <nlohmann/json.hpp>

namespace podnet::report {

nlohmann::json scenario_json_schema();

}  // namespace podnet::report
