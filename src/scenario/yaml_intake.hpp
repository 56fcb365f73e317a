// One bounded way in for every YAML text a user gives podnet: scenario files,
// --config-add fragments, --set values, sweep files, dashboard uploads.
//
// yaml-cpp builds an alias as a second handle on its anchor's node. That is
// cheap to parse, but a walk over the tree (podnet's duplicate-key check, the
// scenario loader, JSON conversion) visits an alias once per use, so
//   - an anchor holding its own alias (`x: &a [*a]`) makes a cycle: the walk
//     never ends and overflows the stack;
//   - nested aliases ("billion laughs": a: &a [x,x], b: &b [*a,*a], ...) make
//     a 400-byte file expand to 10^9 nodes.
// parse_yaml() reads the event stream first (yaml-cpp's Parser with an
// EventHandler) and counts what a full walk would visit, alias expansion
// included, in time linear in the text. It refuses, with file:line:column,
//   - an alias inside its own anchor,
//   - more than `max_nodes` nodes after expansion,
//   - nesting deeper than `max_depth`,
//   - a second document (`---`), when `documents` is 1.
// Only then does it build the tree with YAML::Load.
#pragma once

#include <cstddef>
#include <string>
#include <yaml-cpp/yaml.h>

namespace podnet::scenario {

struct YamlLimits {
  size_t max_nodes = 200'000;  // a 16K-GPU scenario with every key given has under 2,000
  int max_depth = 64;          // a scenario nests 4 deep; a sweep file 5
  bool one_document = true;
};

// Parses `text` (named `source` in messages); throws InputError.
YAML::Node parse_yaml(const std::string& text, const std::string& source, const YamlLimits& limits = {});

}  // namespace podnet::scenario
