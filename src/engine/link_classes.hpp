// Link classes: what each kind of link really carries and what it adds in
// latency, applied by every engine (scenario section `links:`).
//
// Classes. A link's class follows from its media, its ends and the transport:
//   nvlink      NVLink media (GPU <-> NVSwitch)
//   pcie        PCIe media (GPU <-> NIC)
//   ethernet    copper/optical link with a NIC or a switch at an end, transport rocev2 or tcp
//   infiniband  the same with transport infiniband
//   ici         copper/optical link between two accelerators (a torus, TPU ICI style): no NIC,
//               no transport stack, no Ethernet/IB header
// Model. Payload capacity of a directed link of raw capacity R:
//   C = R x efficiency(class) x h,   h = MTU / (MTU + header) on ethernet/infiniband, 1 otherwise
// (h is the transport's per-packet wire overhead, network.hpp). Every traversal of a link costs
// its own latency (the topology's: cable propagation, NVLink/PCIe latency, a torus chip's
// router time) + latency(class); the transport's endpoint stack latency is paid once per hop
// whose route crosses a NIC (a chip-to-chip torus hop never does).
//
// Defaults and their sources (docs/contributing/validation/links-analytical.md, "Link classes"):
// - nvlink 0.824: NCCL's topology model prices an NVLink of an sm90 GPU (H100, NVLink 4) at
//   20.6 GB/s per direction (NVIDIA/nccl src/graph/topo.h, SM90_NVLINK_BW; sm80 20.0) against the
//   25 GB/s per link per direction NVIDIA specifies (18 links, 450 GB/s per direction: H100
//   datasheet): 20.6 / 25 = 0.824, i.e. 370.8 GB/s per H100.
// - pcie 0.894: PCIe protocol overhead at Gen3 and later: 128b/130b line coding and, per
//   transaction layer packet of 256 payload bytes (the usual max payload size), 26 bytes of
//   framing, sequence number, 16-byte header and LCRC (PCI Express Base Specification; worked
//   in Xilinx WP350 "Understanding Performance of PCI Express Systems"):
//   128/130 x 256/282 = 0.8938. NCCL's model is more conservative (src/graph/topo.cc: width x
//   speed / 80 per link, 0.75 of the raw rate: 48 GB/s for Gen5 x16); set pcie_efficiency:
//   0.75 to follow it.
// - ethernet, infiniband 1.0 beyond the transport's header overhead: NCCL prices a NIC at its
//   port speed (src/graph/topo.cc: net bw = speed / 8000), and podnet already removes the
//   per-packet wire overhead (RoCEv2 4096 / 4178 = 0.980, IB 4096 / 4122 = 0.994).
// - ici 1.0: no published per-link derating for TPU ICI; the per-hop router time is the torus
//   builder's hop_latency (100 ns).
// - latency 0 for every class: the built topology already holds each link's latency (server
//   nvlink_latency / pcie_latency, cables at 5 ns/m, switch latency, torus hop_latency); the
//   key exists so that a measured per-hop figure can be added (calibration).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

enum class LinkClass : uint8_t { NvLink, Pcie, Ethernet, InfiniBand, Ici };
inline constexpr int kLinkClassCount = 5;
const char* link_class_name(LinkClass c);

struct LinkClassModel {
  double efficiency = 1.0;  // payload share of the raw rate (before the transport's header overhead)
  Time latency;             // added to every traversal of a link of this class
};

struct LinkClassOptions {
  std::array<LinkClassModel, kLinkClassCount> classes = defaults();
  LinkClassModel& operator[](LinkClass c) { return classes[static_cast<size_t>(c)]; }
  const LinkClassModel& operator[](LinkClass c) const { return classes[static_cast<size_t>(c)]; }
  static std::array<LinkClassModel, kLinkClassCount> defaults();
};

// The class of link `l`; a NIC-to-switch or switch-to-switch link is `nic_links`, the transport's
// (Transport::nic_links).
LinkClass link_class_of(const topology::Topology& t, topology::LinkId l, LinkClass nic_links);
// Ethernet and InfiniBand links carry the transport's packets (header overhead).
inline bool carries_transport(LinkClass c) { return c == LinkClass::Ethernet || c == LinkClass::InfiniBand; }

// Scenario section `links:` (<class>_efficiency, <class>_latency per class).
std::vector<ParamSpec> link_class_params();
LinkClassOptions link_classes_from(const Params& p);

}  // namespace podnet::engine
