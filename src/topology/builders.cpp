#include "topology/builders.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/clos.hpp"
#include "topology/dragonfly.hpp"
#include "topology/torus.hpp"

namespace podnet::topology {

const std::vector<BuilderInfo>& builders() {
  static const std::vector<BuilderInfo> k = {
      fat_tree_builder(), rail_clos_builder(), tree3_builder(),
      torus_builder(),    dragonfly_builder(), dragonfly_plus_builder(),
  };
  return k;
}

const BuilderInfo* find_builder(std::string_view name) {
  for (const auto& b : builders())
    if (name == b.name) return &b;
  return nullptr;
}

Topology build(const BuilderInfo& b, const Params& params, const Hardware& hw) {
  Topology t = b.build(params, hw);
  if (hw.sharp) {
    bool switches = false;
    for (const auto& n : t.nodes) switches = switches || n.kind == NodeKind::Switch;
    if (!switches)
      throw ParamError("switch.in_network_reduction",
                       fmt::format("switch.in_network_reduction = sharp: the {} fabric has no switches to reduce in "
                                   "(expected none)",
                                   b.name));
    t.sharp = true;
  }
  return t;
}

Hardware default_hardware() {
  return hardware_from(defaults_of(server_params()), defaults_of(switch_params()), defaults_of(cabling_params()));
}

Topology build_with(std::string_view family, const std::vector<std::pair<std::string, std::string>>& overrides,
                    const Hardware& hw) {
  const BuilderInfo* b = find_builder(family);
  if (!b) throw Error(fmt::format("no topology family '{}'", family));
  auto specs = b->params();
  Params p = defaults_of(specs);
  for (const auto& [key, text] : overrides) {
    const ParamSpec* spec = nullptr;
    for (const auto& s : specs)
      if (s.name == key) spec = &s;
    if (!spec) throw Error(fmt::format("{} has no parameter '{}'", family, key));
    std::string canonical, expected;
    auto v = parse_param(*spec, text, canonical, expected);
    if (!v) throw Error(fmt::format("{}.{} = {}: expected {}", family, key, text, expected));
    p.set(key, *v, canonical);
  }
  return build(*b, p, hw);
}

}  // namespace podnet::topology
