// A YAML document as JSON, as podnet's JSON outputs carry scenario values: a plain number or boolean as such,
// anything else (units, names, a quoted value) as text, maps and sequences as objects and arrays.
#pragma once

#include <nlohmann/json.hpp>
#include <yaml-cpp/yaml.h>

namespace podnet::report {

nlohmann::json yaml_json(const YAML::Node& n);

}  // namespace podnet::report
