#include "topology/hardware.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::topology {

std::vector<ParamSpec> server_params() {
  return {
      {"gpus", ParamType::Int, "8", "GPUs per server", 1, 72},
      {"nics", ParamType::Int, "8", "back-end NICs per server (rails); 0 for NIC-less fabrics (torus)", 0, 64},
      {"nic_speed", ParamType::Bandwidth, "400Gbps", "back-end NIC port speed"},
      {"nic_planes", ParamType::Int, "1",
       "planes each back-end NIC is split into (a multi-plane fabric, as MRC runs on GB200 clusters: an 800G NIC as "
       "8 ports of 100G, port p on plane p, every plane its own copy of the switch fabric at nic_speed / planes per "
       "NIC); 1: one port per NIC",
       1, 16},
      {"nvlink_domain",
       ParamType::Int,
       "",
       "GPUs per NVLink/NVSwitch domain (a multiple of server.gpus, up to 72 "
       "for rack-scale domains); default: server.gpus",
       1,
       576,
       {},
       true},
      {"nvlink_bandwidth", ParamType::Bandwidth, "450GB/s",
       "NVLink bandwidth per GPU per direction; left out, the GPU preset's (workload.gpu: a100 300GB/s, h100 and "
       "h200 450GB/s, b200 900GB/s)"},
      {"nvlink_latency", ParamType::Time, "500ns",
       "latency of each GPU<->NVSwitch link (a GPU-to-GPU hop crosses two)"},
      {"pcie_bandwidth", ParamType::Bandwidth, "64GB/s", "GPU<->NIC PCIe bandwidth per direction (Gen5 x16)"},
      {"pcie_latency", ParamType::Time, "500ns", "GPU<->NIC PCIe latency"},
      {"power", ParamType::Power, "10.2kW",
       "power per server (GPUs, CPUs, NICs, fans); an 8-GPU server left out takes workload.gpu's DGX maximum "
       "(a100 6.5kW, h100 and h200 10.2kW, b200 14.3kW)"},
  };
}

std::vector<ParamSpec> switch_params() {
  return {
      {"radix", ParamType::Int, "128", "ports per switch at port_speed", 4, 4096},
      {"port_speed", ParamType::Bandwidth, "400Gbps", "switch port speed"},
      {"latency", ParamType::Time, "600ns", "port-to-port forwarding latency"},
      {"power", ParamType::Power, "2kW",
       "power per switch (without optics) at 51.2 Tbps (radix x port_speed); other capacities scale by "
       "(capacity / 51.2 Tbps)^0.14"},
      {"in_network_reduction",
       ParamType::String,
       "none",
       "reductions in the switches: none, or sharp (SHARP aggregation trees in InfiniBand switches, NVIDIA "
       "Quantum; enables NCCL's CollNet algorithms collnet_direct and collnet_chain; needs network.transport: "
       "infiniband)",
       -1e300,
       1e300,
       {"none", "sharp"}},
  };
}

std::vector<ParamSpec> cabling_params() {
  return {
      {"copper_max_length", ParamType::Length, "3m", "longest copper (DAC) cable; longer links are optical"},
      {"server_to_leaf", ParamType::Length, "3m",
       "cable length NIC -> leaf/access switch/router; in a Clos to the leaf's rack or a rack beside it (a rail "
       "group's leaves stand in a network rack in the middle of its row, a ToR leaf in the middle rack of its "
       "servers), each rack farther adding cabling.rack_width"},
      {"rack_width", ParamType::Length, "600mm",
       "width of a rack in the row (a Clos NIC cable grows by it for each rack between its server and its leaf "
       "beyond the one beside the leaf's; 0: every NIC cable is server_to_leaf)"},
      {"leaf_to_spine", ParamType::Length, "30m", "cable length leaf -> spine (and dragonfly local links)"},
      {"spine_to_super_spine", ParamType::Length, "100m", "cable length spine -> super-spine/core (and global links)"},
      {"super_spine_to_core", ParamType::Length, "500m",
       "cable length super-spine -> core in a 4-tier Clos (its zones often stand in separate halls)"},
      {"propagation", ParamType::Time, "5ns", "signal propagation delay per metre of cable"},
      {"transceiver_power", ParamType::Power, "12W",
       "power per optical transceiver (two per optical link) at 400 Gbps; other link speeds scale by "
       "(speed / 400 Gbps)^0.83"},
      {"rack_power", ParamType::Power, "40kW", "power budget per rack (sets servers per rack)"},
  };
}

Hardware hardware_from(const Params& server, const Params& sw, const Params& cabling) {
  Hardware hw;
  hw.gpus_per_server = static_cast<int>(server.get_int("gpus"));
  hw.nics_per_server = static_cast<int>(server.get_int("nics"));
  hw.nvlink_domain = server.has("nvlink_domain") ? static_cast<int>(server.get_int("nvlink_domain"))
                                                 : hw.gpus_per_server;
  hw.nvlink_bw = server.get_bandwidth("nvlink_bandwidth");
  hw.nvlink_latency = server.get_time("nvlink_latency");
  hw.pcie_bw = server.get_bandwidth("pcie_bandwidth");
  hw.pcie_latency = server.get_time("pcie_latency");
  hw.nic_speed = server.get_bandwidth("nic_speed");
  hw.nic_planes = static_cast<int>(server.get_int("nic_planes"));
  hw.server_power_w = server.get_real("power");
  hw.radix = static_cast<int>(sw.get_int("radix"));
  hw.port_speed = sw.get_bandwidth("port_speed");
  hw.switch_latency = sw.get_time("latency");
  hw.switch_power_w = sw.get_real("power");
  hw.sharp = sw.has("in_network_reduction") && sw.get_string("in_network_reduction") == "sharp";
  hw.copper_max_m = cabling.get_real("copper_max_length");
  hw.server_to_leaf_m = cabling.get_real("server_to_leaf");
  hw.rack_width_m = cabling.get_real("rack_width");
  hw.leaf_to_spine_m = cabling.get_real("leaf_to_spine");
  hw.spine_to_super_m = cabling.get_real("spine_to_super_spine");
  hw.super_to_core_m = cabling.get_real("super_spine_to_core");
  hw.ns_per_m = static_cast<double>(cabling.get_time("propagation").ps) / 1000.0;
  hw.optic_power_w = cabling.get_real("transceiver_power");
  hw.rack_power_w = cabling.get_real("rack_power");

  if (hw.nics_per_server > 0 && hw.gpus_per_server % hw.nics_per_server != 0 &&
      hw.nics_per_server % hw.gpus_per_server != 0)
    throw ParamError("server.nics", fmt::format("server.nics = {} does not divide evenly among server.gpus = {}: "
                                                "expected a divisor or a multiple of server.gpus",
                                                hw.nics_per_server, hw.gpus_per_server));
  if (hw.nvlink_domain % hw.gpus_per_server != 0)
    throw ParamError("server.nvlink_domain",
                     fmt::format("server.nvlink_domain = {} is not a multiple of server.gpus = {}", hw.nvlink_domain,
                                 hw.gpus_per_server));
  if (hw.rack_power_w < hw.server_power_w)
    throw ParamError("cabling.rack_power", fmt::format("cabling.rack_power = {} cannot hold one server of {}",
                                                       format_power(hw.rack_power_w), format_power(hw.server_power_w)));
  return hw;
}

Media media_for(const Hardware& hw, double length_m) {
  return length_m <= hw.copper_max_m ? Media::Copper : Media::Optical;
}

Time cable_latency(const Hardware& hw, double length_m) { return Time::from_seconds(length_m * hw.ns_per_m * 1e-9); }

int servers_per_rack(const Hardware& hw) {
  int n = static_cast<int>(hw.rack_power_w / hw.server_power_w + 1e-9);
  return n < 1 ? 1 : n;
}

void add_servers(Topology& t, const Hardware& hw, int32_t servers) {
  const int g = hw.gpus_per_server;
  const int n = hw.nics_per_server;
  const int per_rack = servers_per_rack(hw);
  const int servers_per_domain = hw.nvlink_domain / g;
  const uint8_t nvlink_cls = t.link_class("nvlink");
  const uint8_t pcie_cls = n > 0 ? t.link_class("pcie") : 0;
  t.servers = servers;
  t.gpus_per_server = g;
  t.nics_per_server = n;
  t.racks = (servers + per_rack - 1) / per_rack;
  t.rails = n;
  t.gpus.reserve(static_cast<size_t>(servers) * g);
  t.gpu_nic.reserve(static_cast<size_t>(servers) * g);
  t.nics.reserve(static_cast<size_t>(servers) * n);
  NodeId nvswitch = kNone;
  for (int32_t s = 0; s < servers; ++s) {
    const std::string sname = server_name(s, servers);
    const int32_t rack = s / per_rack;
    if (hw.nvlink_bw.bps > 0 && (g > 1 || servers_per_domain > 1) && s % servers_per_domain == 0) {
      Node sw;
      sw.kind = NodeKind::NvSwitch;
      sw.server = s;
      sw.rack = rack;
      sw.local = s / servers_per_domain;
      sw.name =
          servers_per_domain == 1
              ? sname + "/nvswitch"
              : fmt::format("nvl-domain-{}", padded(sw.local, (servers + servers_per_domain - 1) / servers_per_domain));
      nvswitch = t.add_node(std::move(sw));
    }
    std::vector<NodeId> nic_ids;
    for (int i = 0; i < n; ++i) {
      Node nic;
      nic.kind = NodeKind::Nic;
      nic.server = s;
      nic.local = i;
      nic.rack = rack;
      nic.rail = i;
      nic.name = fmt::format("{}/nic{}", sname, i);
      nic_ids.push_back(t.add_node(std::move(nic)));
      t.nics.push_back(nic_ids.back());
    }
    for (int i = 0; i < g; ++i) {
      Node gpu;
      gpu.kind = NodeKind::Gpu;
      gpu.server = s;
      gpu.local = i;
      gpu.rack = rack;
      gpu.name = fmt::format("{}/gpu{}", sname, i);
      NodeId nic = kNone;
      if (n > 0) {
        int idx = n >= g ? i * (n / g) : i / (g / n);
        nic = nic_ids[idx];
        gpu.rail = idx;
      }
      NodeId id = t.add_node(std::move(gpu));
      t.gpus.push_back(id);
      t.gpu_nic.push_back(nic);
      if (nvswitch != kNone) t.connect(id, nvswitch, hw.nvlink_bw, hw.nvlink_latency, 0, Media::NvLink, nvlink_cls);
      // PCIe to every NIC this GPU owns (n/g of them when there are more NICs than GPUs).
      if (nic != kNone) {
        const int owned = n > g ? n / g : 1;
        for (int k = 0; k < owned; ++k)
          t.connect(id, nic_ids[(n >= g ? i * owned : i / (g / n)) + k], hw.pcie_bw, hw.pcie_latency, 0, Media::Pcie,
                    pcie_cls);
      }
    }
  }
}

}  // namespace podnet::topology
