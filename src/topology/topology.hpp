// The fabric as plain data.
//
// A Topology is nodes (GPUs, NICs, NVSwitch domains, switches by tier) and
// full-duplex links (capacity per direction, latency, length, media). Every
// node carries the labels later layers ask about: server, rack, rail,
// aggregation group and pod (kNone where a label does not apply). GPUs are
// numbered 0..N-1 by global rank (`gpus[rank]` is the node), servers 0..S-1.
//
// Builders (one per family, see builders.hpp) fill a Topology and its Facts;
// the bill of materials (bom.hpp) is computed from the Topology alone, so it
// counts what was actually built.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/units.hpp"

namespace podnet::topology {

using NodeId = int32_t;
using LinkId = int32_t;
inline constexpr int32_t kNone = -1;
// The largest fabric podnet builds: 2^20 = 1,048,576 GPUs (every family and the SimAI importer). At
// this size `podnet design` takes 7 s and 0.55 GB (rail_clos, radix 4096); the limit keeps a typo
// (`gpus: 1e8`) from exhausting the machine and node and link ids far inside int32.
inline constexpr int64_t kMaxGpus = int64_t{1} << 20;

enum class NodeKind : uint8_t { Gpu, Nic, NvSwitch, Switch };
enum class Media : uint8_t { NvLink, Pcie, Copper, Optical };

const char* kind_name(NodeKind k);
const char* media_name(Media m);

struct Node {
  NodeKind kind = NodeKind::Gpu;
  uint8_t tier = 0;        // switches: 1 = leaf/access/router, 2 = spine/aggregation, 3 = super-spine/core, 4 = core
  uint8_t network = 0;     // 0: the back end; 1: the frontend and storage network (topology/frontend.hpp)
  int32_t server = kNone;  // GPU, NIC, NVSwitch: the server (or NVLink domain's first server)
  int32_t local = kNone;   // GPU/NIC: index inside its server; switch: index inside its tier
  int32_t rack = kNone;
  int32_t rail = kNone;   // NIC and its GPU: rail = NIC index in the server; rail-bound switches: their rail
  int32_t group = kNone;  // aggregation group (scalable unit) / dragonfly group / torus cube
  int32_t pod = kNone;
  int32_t zone = kNone;   // a 4-tier Clos: the zone of pods joined by one set of super-spines (else kNone)
  int32_t plane = kNone;  // a multi-plane fabric (Topology::nic_planes > 1): the switch's plane
  int32_t ports = 0;      // ports in use (next free port index)
  std::string name;       // unique: "gpu-node-017/gpu3", "gpu-node-017/nic3", "su1-leaf-r3", ...
};

struct Link {
  NodeId a = kNone;
  NodeId b = kNone;
  int32_t port_a = 0;  // port index on a (0-based)
  int32_t port_b = 0;
  Bandwidth capacity;  // per direction
  Time latency;        // propagation (length) + fixed latency of the medium
  float length_m = 0;
  Media media = Media::Copper;
  uint8_t cls = 0;  // index into Topology::link_classes
};

// Figures a builder derives from its family's structure (documented per builder).
struct Facts {
  int64_t max_gpus = 0;          // largest GPU count this radix/tier choice reaches
  std::string max_gpus_reason;   // what bounds it
  int diameter_hops = 0;         // switch-to-switch (or chip-to-chip) links on the longest shortest path
  double bisection_bps = 0;      // per direction, across the family's canonical halving cut
  std::string bisection_method;  // how it was computed
  std::vector<std::pair<std::string, double>> oversubscription;  // per tier boundary: "leaf" -> 1.0
  std::vector<std::string> notes;                                // assumptions worth printing
  // Layers a Clos builds whole for a part-filled last pod or zone (its spines or super-spines and their
  // uplinks); the design report prices the share only a full pod or zone would use.
  struct Spare {
    std::string what;          // "pod 1's spine layer"
    std::string tier;          // tier name of its switches
    std::string uplink_class;  // link class of their uplinks
    int64_t switches = 0, uplinks = 0;
    double in_use = 1;  // the share of the pod's groups (the zone's pods) present
    std::string share;  // the same in words: "4 of 16 groups"
  };
  std::vector<Spare> spare;
};

struct Topology {
  std::string family;
  std::vector<Node> nodes;
  std::vector<Link> links;
  std::vector<std::string> tier_names{""};  // [tier] -> "leaf", "spine", "super_spine", "router", ...
  std::vector<std::string> link_classes;    // [cls] -> "nvlink", "pcie", "nic-leaf", "leaf-spine", ...

  std::vector<NodeId> gpus;     // by global rank
  std::vector<NodeId> gpu_nic;  // by global rank: the NIC the GPU uses (kNone if none, e.g. torus)
  std::vector<NodeId> nics;     // all NICs, by (server, local)
  int32_t servers = 0;
  int32_t gpus_per_server = 0;
  int32_t nics_per_server = 0;
  int32_t racks = 0;
  int32_t groups = 0;
  int32_t pods = 0;
  int32_t zones = 0;  // a 4-tier Clos: zones of pods under the core tier (else 0)
  int32_t rails = 0;
  bool rail_optimized = false;  // a Clos whose NIC r of a server goes to its group's rail-r leaf
  // Planes of a multi-plane fabric (topology/planes.hpp): every NIC has this many switch links, link p into
  // plane p (its p-th switch link in link-id order), and the planes share no switch. 1: one switch link per NIC.
  int32_t nic_planes = 1;
  Time switch_latency;  // port-to-port latency of every switch (engines add it per hop)
  // The switches reduce in the network (SHARP on InfiniBand Quantum switches: scenario
  // switch.in_network_reduction: sharp): NCCL's CollNet algorithms may run (collective/collnet.hpp).
  bool sharp = false;
  // Paths stay minimal across groups (dragonfly, dragonfly+): routing tables let a path leave the
  // source's group or enter the target's, never cross a third group (router.hpp). Set by the builder.
  bool group_minimal = false;
  // Devices a builder names itself, by Node::server (the frontend network: its servers, then its storage
  // nodes); empty: server_name(server, servers). Then a NIC's port is its node name after the device's
  // ("gpu-node-003/fe1": port fe1, for the nodes of network 1), and with gpus_are_host_ports the Gpu nodes stand for a
  // host's share of one port (exports call them "host").
  std::vector<std::string> device_names;
  bool gpus_are_host_ports = false;
  // A site topology (site_topology in frontend.hpp): the frontend's tier names ([tier] as tier_names); its
  // switches are the nodes with network 1.
  std::vector<std::string> frontend_tier_names;
  std::vector<int32_t> torus_dims;  // torus only: dimension sizes; GPU rank r has x fastest: r = x + X*(y + Y*z)
  Facts facts;

  // Incident links per node (CSR), valid after finalize().
  std::vector<int32_t> adj_offset;
  std::vector<LinkId> adj_links;

  NodeId add_node(Node n);
  // Adds a link a<->b on the next free port of each; returns its id.
  LinkId connect(NodeId a, NodeId b, Bandwidth capacity, Time latency, double length_m, Media media, uint8_t cls);
  uint8_t link_class(const std::string& name);  // index of a class, added if new
  void finalize();                              // builds adjacency

  NodeId other_end(LinkId l, NodeId n) const { return links[l].a == n ? links[l].b : links[l].a; }
  std::pair<const LinkId*, const LinkId*> incident(NodeId n) const {
    return {adj_links.data() + adj_offset[n], adj_links.data() + adj_offset[n + 1]};
  }
  int switch_tiers() const { return static_cast<int>(tier_names.size()) - 1; }

  // Physical naming for cabling plans and exports.
  std::string device_name(NodeId n) const;              // server name for GPU/NIC/NVSwitch, else node name
  std::string port_name(NodeId n, int32_t port) const;  // "Ethernet1/12", "gpu3_eth", ...
  // The same names appended to `out` (exports and config plans write millions of them).
  void append_device_name(std::string& out, NodeId n) const;
  void append_port_name(std::string& out, NodeId n, int32_t port) const;
};

// Zero-padded names: server_name(17, 2048) == "gpu-node-0017".
std::string padded(int64_t value, int64_t count);
std::string server_name(int32_t server, int32_t servers);
// A tier's name in a hostname and in prose: letters, digits and hyphens only (RFC 1123 section 2.1), so its `_`
// becomes `-` ("super_spine" -> "super-spine").
std::string host_label(const std::string& tier_name);
// padded and server_name appended to `out`.
void append_padded(std::string& out, int64_t value, int64_t count);
void append_server_name(std::string& out, int32_t server, int32_t servers);

}  // namespace podnet::topology
