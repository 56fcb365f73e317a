#include "topology/bom.hpp"

#include "topology/power.hpp"

#include <algorithm>
#include <cmath>

namespace podnet::topology {

double switch_power(const Hardware& hw) {
  const double capacity = static_cast<double>(hw.radix) * hw.port_speed.bps;
  if (capacity <= 0) return hw.switch_power_w;
  return hw.switch_power_w * std::pow(capacity / kSwitchPowerReferenceBps, kSwitchPowerExponent);
}

double optic_power(const Hardware& hw, Bandwidth speed) {
  if (speed.bps <= 0) return hw.optic_power_w;
  return hw.optic_power_w * std::pow(speed.bps / kOpticPowerReferenceBps, kOpticPowerExponent);
}

Bom compute_bom(const Topology& t, const Hardware& hw) {
  Bom b;
  b.gpus = static_cast<int64_t>(t.gpus.size());
  b.servers = t.servers;
  b.nics = static_cast<int64_t>(t.nics.size());
  std::vector<int64_t> per_tier(t.tier_names.size(), 0);
  for (const auto& n : t.nodes) {
    if (n.kind == NodeKind::Switch) ++per_tier[n.tier];
    if (n.kind == NodeKind::NvSwitch) ++b.nvlink_domains;
  }
  for (size_t i = 1; i < t.tier_names.size(); ++i) {
    b.switches.emplace_back(t.tier_names[i], per_tier[i]);
    b.switches_total += per_tier[i];
  }
  std::vector<int64_t> per_class(t.link_classes.size(), 0);
  std::vector<bool> internal(t.link_classes.size(), false);
  for (const auto& l : t.links) {
    ++per_class[l.cls];
    if (l.media == Media::NvLink || l.media == Media::Pcie) {
      internal[l.cls] = true;
    } else if (l.media == Media::Copper) {
      ++b.cables_copper;
    } else {
      ++b.cables_optical;
      b.power_optics_w += 2 * optic_power(hw, l.capacity);  // a transceiver at each end, at the link's speed
    }
  }
  for (size_t c = 0; c < t.link_classes.size(); ++c) {
    if (internal[c]) {
      b.internal_links.emplace_back(t.link_classes[c], per_class[c]);
    } else if (per_class[c] > 0) {
      b.links.emplace_back(t.link_classes[c], per_class[c]);
      b.links_total += per_class[c];
    }
  }
  b.transceivers = 2 * b.cables_optical;
  b.power_servers_w = static_cast<double>(b.servers) * hw.server_power_w;
  b.power_switches_w = static_cast<double>(b.switches_total) * switch_power(hw);
  b.power_total_w = b.power_servers_w + b.power_switches_w + b.power_optics_w;
  b.servers_per_rack = servers_per_rack(hw);
  b.server_racks = (b.servers + b.servers_per_rack - 1) / b.servers_per_rack;
  int32_t last = kNone;
  for (int32_t r : network_racks(t, hw)) last = std::max(last, r);
  b.network_racks = last == kNone ? 0 : last + 1 - t.racks;
  b.racks = b.server_racks + b.network_racks;
  return b;
}

std::vector<int32_t> network_racks(const Topology& t, const Hardware& hw) {
  std::vector<int32_t> rack(t.nodes.size(), kNone);
  int32_t current = t.racks - 1;
  double used_w = 0;
  int in_rack = kSwitchesPerRack;  // forces a first rack
  int32_t rail_group = kNone;      // the group of the rail leaves in the current rack
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    if (n.kind != NodeKind::Switch || n.rack != kNone) continue;
    double w = switch_power(hw);
    auto [b, e] = t.incident(static_cast<NodeId>(i));
    for (auto it = b; it != e; ++it)
      if (t.links[*it].media == Media::Optical) w += optic_power(hw, t.links[*it].capacity);
    // A rail group's leaves stand in a network rack of their own, in the middle of the group's row (the layout
    // its NIC cables are measured on, hardware.hpp).
    const bool rail_leaf = n.tier == 1 && n.rail != kNone;
    const bool new_group = rail_leaf && n.group != rail_group;
    if (rail_leaf) rail_group = n.group;
    if (in_rack >= kSwitchesPerRack || (in_rack > 0 && used_w + w > hw.rack_power_w + 1e-9) || new_group) {
      ++current;
      used_w = 0;
      in_rack = 0;
    }
    rack[i] = current;
    used_w += w;
    ++in_rack;
  }
  return rack;
}

}  // namespace podnet::topology
