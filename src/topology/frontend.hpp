// The frontend and storage network (scenario section `frontend:`): the servers' frontend NICs, the storage
// nodes, and the leaf-spine fabric between them. An AI cluster has two networks: the back end (GPU to GPU,
// the rest of podnet) and this one, which carries checkpoints, data loading and the cluster's north-south
// traffic. `podnet design` shows its bill of materials, cost and power beside the back end's; the checkpoint
// study (study/frontend_io.hpp) simulates writes and reads on it.
//
// Structure. Every frontend NIC port is one endpoint of the fabric: the servers' ports first (server s,
// NIC i is port s x nics + i), then the storage nodes' (node n, NIC j is port servers x nics + n x
// storage_nics + j). The builder attaches consecutive GPU ranks to a leaf (its down-ports). Single-homed
// (frontend.homing: single), port p is rank p: a server's NICs share a leaf. Dual-homed (the default: NVIDIA's
// DGX SuperPOD reference architectures give each system a pair of storage ports as parallel pathways, against
// single-port failures; docs.nvidia.com/dgx-superpod, "Network Fabrics"), the ranks go NIC-major: every device's
// NIC 0 (servers, then storage nodes), then every NIC 1, and so on. A device's NICs are as many ranks apart
// as there are devices with that NIC, so on different leaves once the devices outnumber a leaf's ports (NIC
// i's leaves form plane i); `design` says how many devices keep NICs on one leaf. Cable lengths count a
// leaf's ports as that many devices at the back end's servers a rack (dual) or that many NICs at its NICs a
// rack (single).
// The leaves, spines and (past what two tiers reach) cores are the fat_tree
// family's folded Clos (clos.hpp) with the frontend's own switch, oversubscription and tiers; its
// switches are named "fe-..." apart from the back end's. In the built Topology each port is a `Gpu` node
// (its host's share of the port, named ".../fe0-host") linked over PCIe to its `Nic` node (".../fe0"),
// so the engines route and time traffic between ports as they do between GPUs.
//
// Defaults and sources:
// - 2 x 400G NICs per server: a DGX B200's two BlueField-3 ports for storage and the frontend (NVIDIA DGX
//   B200 datasheet); DDN measured a DGX B200 reading and writing at up to 96 % of those 800 Gb/s
//   (ddn.com blog, "DDN's AI storage optimized for NVIDIA DGX B200", 2025).
// - the switch: 64 x 400G, 600 ns, 2 kW at 51.2 Tb/s scaled as the back end's (topology/power.hpp).
// - storage nodes: 2 NICs each at frontend.nic_speed; their media bandwidth unbounded unless given
//   (storage_write_bandwidth, storage_read_bandwidth per node: then the node's NICs share it evenly).
// Racks and cables: the servers stand in the back end's racks (its servers a rack, each with its frontend
// ports), the storage nodes' ports in racks after them at the same density. A NIC cable is as long as the
// back end's rule makes it (cabling.server_to_leaf to the leaf's rack and the racks beside it, cabling.rack_width
// more a rack farther), so far ones are optical. The switches go into network racks of their own after the
// back end's, packed as the back end's are (topology::network_racks); `design` counts them.
// ASSUMPTIONS: one NIC speed for servers and storage nodes; a frontend leaf serves consecutive ports
// (single-homed: a server's NICs on one leaf); leaf-to-spine and spine-to-core cables as the back end's.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "topology/bom.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

std::vector<ParamSpec> frontend_params();

struct FrontendConfig {
  int32_t nics = 0;  // per server; 0 = no frontend network modelled
  Bandwidth nic_speed{400e9};
  int32_t radix = 64;
  Bandwidth port_speed{400e9};
  Time switch_latency{600000};   // 600 ns
  double switch_power_w = 2000;  // at 51.2 Tb/s, scaled by capacity as the back end's (power.hpp)
  double oversubscription = 1;   // leaf down:up
  int32_t tiers = 0;             // 0: the fewest that fit
  int32_t storage_nodes = 0;
  int32_t storage_nics = 2;      // per storage node
  bool dual_homed = true;        // a device's NICs on different leaves (frontend.homing)
  double storage_write_Bps = 0;  // per node, bytes/s; 0: the node's NICs bound it
  double storage_read_Bps = 0;   // per node, bytes/s; 0: the node's NICs bound it
  int32_t stripes = 8;           // storage ports each client NIC writes to at once
  double sample_bytes = 0;       // the data loader's bytes per sample; 0: the sequence's token ids (4 B each)
  bool converged = false;        // the storage nodes on the back end (build_converged)
  bool present() const { return nics > 0; }
  // Checkpoints and data loading are simulated: storage nodes on the frontend or the back end.
  bool has_storage() const { return storage_nodes > 0 && (present() || converged); }
  // Converged: the first of the back end's `servers` slots that holds a storage node (they take the last ones);
  // -1 when not converged or when they would take every slot.
  int32_t first_storage_slot(int32_t servers) const {
    return converged && storage_nodes > 0 && storage_nodes < servers ? servers - storage_nodes : -1;
  }
};

// From a validated `frontend:` section; ParamError naming the key for values that contradict each other.
FrontendConfig frontend_from(const Params& p);

struct FrontendFabric {
  FrontendConfig config;
  Topology topology;  // ports are its GPUs (see above)
  int32_t servers = 0;
  int32_t server_ports() const { return servers * config.nics; }
  int32_t storage_ports() const { return config.storage_nodes * config.storage_nics; }
  int32_t ports() const { return server_ports() + storage_ports(); }
  int32_t server_port(int32_t server, int32_t nic) const { return server * config.nics + nic; }
  int32_t storage_port(int32_t node, int32_t nic) const { return server_ports() + node * config.storage_nics + nic; }
  // The hardware the fabric was built with (the back end's cabling; the frontend's switch and NICs).
  Hardware hardware;
  // Converged (build_converged): the topology is the back end's and port p is its GPU rank port_rank[p];
  // otherwise port p is the topology's GPU rank p.
  bool converged = false;
  // Dual-homed (config.dual_homed): port p is the topology's GPU rank port_rank[p], so that a device's NICs land
  // on different leaves.
  std::vector<int32_t> port_rank;
  int32_t rank_of(int32_t port) const { return port_rank.empty() ? port : port_rank[static_cast<size_t>(port)]; }
  // Ports out of service (by port; empty: none): a NIC whose leaf is drained. Storage traffic leaves them out:
  // a device's bytes go over its other NICs, and clients stripe over the storage ports left.
  std::vector<char> port_down;
  bool down(int32_t port) const { return !port_down.empty() && port_down[static_cast<size_t>(port)] != 0; }
  // The switch port `port`'s NIC is cabled to (its leaf), or kNone.
  NodeId leaf_of_port(int32_t port) const;
  // Devices whose NICs all sit on one leaf (single-homed: frontend.homing single, or a last leaf's remainder).
  int32_t single_homed_servers = 0, single_homed_storage_nodes = 0;
};

// Builds the frontend for `servers` servers of the back end. ParamError naming a frontend.* key when the
// frontend's switch cannot carry it (a NIC faster than a port, more ports than its tiers reach).
// `named_servers`: the back end's server count its servers' names are padded for (0: `servers`), when the
// frontend serves only the first `servers` of them (the others hold storage nodes: frontend.converged).
FrontendFabric build_frontend(const FrontendConfig& c, int32_t servers, const Hardware& backend,
                              int32_t named_servers = 0);

// Storage on the back end (frontend.converged): the storage nodes take the back end's last storage_nodes
// server slots, whose NICs (the back end's, nics_per_server each) are their ports; the servers before them
// reach storage over their own back-end NICs. The fabric's topology is the back end itself, so checkpoints
// and data loading share its links with training. Port (s, i) is the first GPU of server slot s that uses
// its NIC i (port_rank). config.nics and config.storage_nics become the back end's NICs per server and
// config.nic_speed their line rate. ParamError when the back end has no NICs, or too few servers.
// ASSUMPTIONS: a storage node has the server slot's NICs and leaf ports (its GPUs, power and cost are still
// counted in the back end's bill: `design` says so); its media sit behind its PCIe links.
FrontendFabric build_converged(const FrontendConfig& c, const Topology& backend);

// The site: the back end and its frontend as one Topology, for the exports that describe a whole site (the
// NetBox set, the cabling plan, the configuration plan). The back end's nodes and links come first,
// unchanged, so its GPUs, NICs and link ids stay; the frontend's follow with Node::network = 1: its switches
// (tiers as in the frontend, named in frontend_tier_names), the servers' frontend ports (a server's ports
// belong to the back end's server of that index) and the storage nodes (servers backend.servers + n, named
// by device_names). Link classes gain a "frontend-" prefix. The frontend's switches take no rack here: the
// bill of materials packs them into network racks after the back end's. The two networks share no link.
Topology site_topology(const Topology& backend, const FrontendFabric& f);

}  // namespace podnet::topology
