// Hardware every family shares: the server (GPUs, NICs, NVLink, PCIe), the
// switch model, and the cabling and power rules. Each has a ParamSpec list
// (scenario sections `server:`, `switch:`, `cabling:`), validated and
// defaulted by the scenario layer.
//
// Assumptions (defaults, overridable):
// - 8 GPUs and 8 NICs per server, one NIC per GPU (rail i = NIC i), as in
//   DGX/HGX H100 systems; NVLink 450 GB/s per GPU per direction (NVLink 4:
//   900 GB/s bidirectional); PCIe Gen5 x16 64 GB/s per direction; 10.2 kW per
//   8-GPU server (DGX H100 max).
// - 51.2 Tb/s switch: 128 x 400G ports, 600 ns port-to-port, 2.0 kW; no
//   in-network reduction (switch.in_network_reduction: sharp declares
//   switches that aggregate reductions, as NVIDIA Quantum InfiniBand switches
//   do with SHARP; collective/collnet.hpp).
// - Cables: copper (DAC) up to 3 m, optical beyond with two transceivers per
//   link at 12 W each (400G-class module); propagation 5 ns/m.
// - Rack layout (Clos NIC cables): a rail-optimized group's leaves stand in
//   a network rack of their own in the middle of the group's row of server
//   racks (as a DGX SuperPOD scalable unit's leaf rack stands between its
//   server racks); a ToR leaf in the middle rack of its few servers. A NIC
//   cable to the leaf's rack or a rack beside it is cabling.server_to_leaf
//   long (3 m: copper), and each rack farther adds cabling.rack_width
//   (600 mm, the common cabinet width for 19-inch EIA-310 racks). So a rail
//   group of 64 servers at 3 a rack reaches 11 racks (9 m): its far NICs
//   need optics, as rail-optimized clusters use them (NVIDIA DGX SuperPOD
//   reference architecture for DGX H100, RA-11333-001, "Network Fabrics":
//   the compute-fabric ports take two-port transceivers). rack_width 0
//   gives every NIC cable server_to_leaf. The length decides a cable's
//   media, and so the BOM, cost, power and optics to fail; its propagation
//   delay stays server_to_leaf's (the few tens of ns more of a far rack, on
//   5 us network hops, are not simulated; exports show the layout's length
//   beside that latency).
#pragma once

#include <vector>

#include "core/params.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

struct Hardware {
  // server
  int gpus_per_server = 8;
  int nics_per_server = 8;
  int nvlink_domain = 8;  // GPUs sharing one NVLink/NVSwitch domain (multiple of gpus_per_server)
  Bandwidth nvlink_bw;    // per GPU, per direction; 0 = no NVLink
  Time nvlink_latency;
  Bandwidth pcie_bw;
  Time pcie_latency;
  Bandwidth nic_speed;
  int nic_planes = 1;  // each NIC's ports, each on its own copy of the switch fabric (topology/planes.hpp)
  double server_power_w = 0;
  // switch
  int radix = 128;
  Bandwidth port_speed;
  Time switch_latency;
  double switch_power_w = 0;
  bool sharp = false;  // in_network_reduction: sharp (the switches aggregate reductions)
  // cabling and facility
  double copper_max_m = 3;
  double server_to_leaf_m = 3;
  double rack_width_m = 0.6;
  double leaf_to_spine_m = 30;
  double spine_to_super_m = 100;
  double super_to_core_m = 500;  // a 4-tier Clos: super-spine -> core (zones in other halls)
  double ns_per_m = 5;
  double optic_power_w = 12;
  double rack_power_w = 40000;
};

std::vector<ParamSpec> server_params();
std::vector<ParamSpec> switch_params();
std::vector<ParamSpec> cabling_params();
Hardware hardware_from(const Params& server, const Params& sw, const Params& cabling);

Media media_for(const Hardware& hw, double length_m);
Time cable_latency(const Hardware& hw, double length_m);
int servers_per_rack(const Hardware& hw);

// Adds `servers` servers: per server its GPUs, its NICs (GPU i uses NIC
// i * nics / gpus), a PCIe link GPU<->NIC, and per NVLink domain one NVSwitch
// node with an NVLink per GPU. Fills t.gpus, t.gpu_nic, t.nics, t.servers,
// t.racks, per-server labels (rack) and per-NIC rail. With nics_per_server 0
// (torus) no NICs are made.
void add_servers(Topology& t, const Hardware& hw, int32_t servers);

}  // namespace podnet::topology
