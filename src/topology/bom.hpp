// Bill of materials, counted from a built Topology (never from formulas), so
// it reports what the builder actually made.
//
// - links: network links by class (NIC-leaf, leaf-spine, ...); NVLink and
//   PCIe links inside servers are counted apart as internal links.
// - cables: every network link is one cable, copper when its length is at
//   most cabling.copper_max_length, else optical with two transceivers.
// - power: servers x server.power + switches x switch.power + transceivers x
//   cabling.transceiver_power.
// - racks: server racks hold floor(rack_power / server.power) servers;
//   network racks hold the switches the builder did not place with servers
//   (a Clos's tiers; a dragonfly's routers sit in their servers' racks, a
//   torus has none), packed in node order (tier by tier, group by group)
//   into racks of at most rack_power watts and kSwitchesPerRack switches
//   (42 U of 2 U switches), a switch drawing switch.power plus one
//   transceiver per optical link it terminates (network_racks(), which the
//   NetBox export places them by). A rail group's leaves start a rack of
//   their own: the rack in the middle of the group's row that its NIC
//   cables are measured to (hardware.hpp); the next tier's first switches
//   may join the last group's rack, and leaves past one rack spill into the
//   next. A ToR leaf is measured to from its servers' middle rack but
//   counted in the network racks too (not placed among the servers). The transceivers at servers and chips sit
//   in their racks; the power total still counts every transceiver.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

struct Bom {
  int64_t gpus = 0, servers = 0, nics = 0, nvlink_domains = 0;
  int64_t servers_per_rack = 0, server_racks = 0, network_racks = 0, racks = 0;
  std::vector<std::pair<std::string, int64_t>> switches;  // by tier name, tier order
  int64_t switches_total = 0;
  std::vector<std::pair<std::string, int64_t>> links;  // network links by class, build order
  int64_t links_total = 0;
  std::vector<std::pair<std::string, int64_t>> internal_links;  // nvlink, pcie
  int64_t cables_copper = 0, cables_optical = 0, transceivers = 0;
  double power_servers_w = 0, power_switches_w = 0, power_optics_w = 0, power_total_w = 0;
};

Bom compute_bom(const Topology& t, const Hardware& hw);

inline constexpr int kSwitchesPerRack = 21;  // 42 U of 2 U switches
// For every node, its network rack (numbered after the t.racks server racks)
// when it is a switch the builder left unplaced, else kNone (see above).
std::vector<int32_t> network_racks(const Topology& t, const Hardware& hw);

}  // namespace podnet::topology
