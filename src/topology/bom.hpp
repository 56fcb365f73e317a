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
//   network racks = ceil((switch + optics power) / rack_power).
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

}  // namespace podnet::topology
