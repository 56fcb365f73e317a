#include "topology/builders.hpp"

#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/clos.hpp"
#include "topology/dragonfly.hpp"
#include "topology/planes.hpp"
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

// The most one switch chip carries in 2025: 144 x 800 Gb/s (NVIDIA Quantum-X800, InfiniBand XDR); Ethernet's
// largest is 102.4 Tb/s (Broadcom Tomahawk 6, June 2025: 64 x 1.6T, 128 x 800G or 256 x 400G).
constexpr double kLargestSwitchChipBps = 144 * 800e9;

Topology build(const BuilderInfo& b, const Params& params, const Hardware& hw) {
  Topology t = b.build(params, plane_hardware(hw));
  split_planes(t, hw, b.name, b.planes);
  const double capacity = static_cast<double>(hw.radix) * hw.port_speed.bps;
  bool has_switches = false;
  for (const auto& n : t.nodes) has_switches = has_switches || n.kind == NodeKind::Switch;
  if (has_switches && capacity > kLargestSwitchChipBps * (1 + 1e-9))
    t.facts.notes.push_back(fmt::format(
        "a switch of {} x {} ports carries {} Tbps, more than one switch chip does today (115.2 Tbps: NVIDIA "
        "Quantum-X800, 144 x 800G; Ethernet 102.4 Tbps: Broadcom Tomahawk 6); a box this large is several chips "
        "cabled as a Clos inside, with more latency, power and cost than podnet gives one switch",
        hw.radix,
        hw.port_speed.gbps() < 1000 ? fmt::format("{}G", format_number(hw.port_speed.gbps()))
                                    : fmt::format("{}T", format_number(hw.port_speed.gbps() / 1000)),
        format_number(capacity / 1e12)));
  // A NIC slower than the switch port still takes a whole port (planes.cpp says the same of a plane's port).
  if (has_switches && !t.nics.empty() && hw.nic_planes <= 1 && hw.nic_speed.bps < hw.port_speed.bps * (1 - 1e-9))
    t.facts.notes.push_back(fmt::format(
        "each NIC runs at {} on a {} switch port and takes the whole port: the switches and their links are counted "
        "and priced at {}, and the oversubscription counts ports, not their speed; {}",
        format_bandwidth(hw.nic_speed), format_bandwidth(hw.port_speed), format_bandwidth(hw.port_speed),
        same_switch_with_ports_of(hw, hw.nic_speed)));
  if (hw.sharp) {
    if (!has_switches)
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
