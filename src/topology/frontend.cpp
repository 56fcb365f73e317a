#include "topology/frontend.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "topology/builders.hpp"

namespace podnet::topology {

std::vector<ParamSpec> frontend_params() {
  return {
      {"nics", ParamType::Int, "0",
       "frontend NICs per server, toward storage and the rest of the data centre (0: no frontend network)", 0, 16},
      {"nic_speed", ParamType::Bandwidth, "400Gbps",
       "line rate of one frontend NIC, servers' and storage nodes' alike (a DGX B200: 2 x 400G)"},
      {"radix", ParamType::Int, "64", "ports per frontend switch at port_speed", 4, 4096},
      {"port_speed", ParamType::Bandwidth, "400Gbps", "frontend switch port speed"},
      {"latency", ParamType::Time, "600ns", "frontend switch port-to-port latency"},
      {"switch_power", ParamType::Power, "2kW",
       "power per frontend switch (without optics) at 51.2 Tbps, scaled by capacity as switch.power is"},
      {"oversubscription", ParamType::Ratio, "1:1", "frontend leaf down:up port ratio"},
      {"tiers",
       ParamType::Int,
       "",
       "frontend switch tiers: 2 (leaf-spine) or 3 (leaf-spine-core); default: the fewest that fit",
       2,
       3,
       {},
       true},
      {"storage_nodes", ParamType::Int, "0",
       "storage nodes on the frontend (file system or object store servers); with none, checkpoints use the "
       "storage: section's closed form",
       0, 100000},
      {"storage_nics", ParamType::Int, "2", "frontend NICs per storage node", 1, 64},
      {"tenants",
       ParamType::String,
       "shared",
       "the tenants (tenants:) on the frontend: shared (one default VRF with the storage nodes) or isolated (each "
       "tenant's NICs in its VRF, the storage nodes in a storage VRF every tenant reaches; --config-plan)",
       -1e300,
       1e300,
       {"shared", "isolated"}},
      {"homing",
       ParamType::String,
       "dual",
       "how a server's (and a storage node's) frontend NICs meet the leaves: dual (each NIC on a different leaf, so "
       "a leaf's loss leaves the others) or single (all on one leaf)",
       -1e300,
       1e300,
       {"dual", "single"}},
      {"storage_write_bandwidth",
       ParamType::Bandwidth,
       "",
       "what one storage node's media absorb (e.g. 65GB/s); default: only its NICs bound it",
       -1e300,
       1e300,
       {},
       true},
      {"storage_read_bandwidth",
       ParamType::Bandwidth,
       "",
       "what one storage node's media deliver; default: only its NICs bound it",
       -1e300,
       1e300,
       {},
       true},
      {"converged", ParamType::Bool, "false",
       "the storage nodes sit on the back end, in its last server slots: checkpoints and data loading share its "
       "links with training (true), or they have the frontend to themselves (false)"},
      {"stripes", ParamType::Int, "8",
       "storage NIC ports each client NIC writes to and reads from at once (a file's stripe count)", 1, 4096},
      {"sample_size",
       ParamType::Bytes,
       "",
       "bytes the data loader reads per training sample (e.g. 600KB for an image); default: the sequence's "
       "token ids at 4 B each",
       1,
       1e15,
       {},
       true},
  };
}

FrontendConfig frontend_from(const Params& p) {
  FrontendConfig c;
  c.nics = static_cast<int32_t>(p.get_int("nics"));
  c.nic_speed = p.get_bandwidth("nic_speed");
  c.radix = static_cast<int32_t>(p.get_int("radix"));
  c.port_speed = p.get_bandwidth("port_speed");
  c.switch_latency = p.get_time("latency");
  c.switch_power_w = p.get_real("switch_power");
  c.oversubscription = p.get_real("oversubscription");
  c.tiers = p.has("tiers") ? static_cast<int32_t>(p.get_int("tiers")) : 0;
  c.storage_nodes = static_cast<int32_t>(p.get_int("storage_nodes"));
  c.storage_nics = static_cast<int32_t>(p.get_int("storage_nics"));
  c.dual_homed = p.get_string("homing") == "dual";
  if (p.has("storage_write_bandwidth")) c.storage_write_Bps = p.get_bandwidth("storage_write_bandwidth").bps / 8;
  if (p.has("storage_read_bandwidth")) c.storage_read_Bps = p.get_bandwidth("storage_read_bandwidth").bps / 8;
  c.stripes = static_cast<int32_t>(p.get_int("stripes"));
  c.converged = p.get_bool("converged");
  if (p.has("sample_size")) {
    c.sample_bytes = p.get_real("sample_size");
    if (c.sample_bytes <= 0)
      throw ParamError("frontend.sample_size", "expected a sample of at least 1 B (omit the key for token ids)");
  }
  if (c.present() && c.nic_speed > c.port_speed)
    throw ParamError("frontend.nic_speed",
                     fmt::format("frontend.nic_speed = {} exceeds frontend.port_speed = {}; expected at most the "
                                 "frontend switch's port speed",
                                 format_bandwidth(c.nic_speed), format_bandwidth(c.port_speed)));
  if (c.converged && c.storage_nodes < 1)
    throw ParamError("frontend.converged",
                     "frontend.converged puts the storage nodes on the back end, but there are none; expected "
                     "frontend.storage_nodes >= 1");
  if (!c.present() && c.storage_nodes > 0 && !c.converged)
    throw ParamError("frontend.storage_nodes",
                     fmt::format("frontend.storage_nodes = {} without frontend NICs on the servers; expected "
                                 "frontend.nics >= 1 (the servers reach storage through them), or "
                                 "frontend.converged: true (storage on the back end)",
                                 c.storage_nodes));
  return c;
}

namespace {

// The Clos builder's keys, as the frontend section names them.
std::string frontend_key(const std::string& key) {
  if (key == "topology.tiers") return "frontend.tiers";
  if (key == "topology.oversubscription") return "frontend.oversubscription";
  if (key == "switch.radix") return "frontend.radix";
  if (key == "server.nic_speed") return "frontend.nic_speed";
  return "frontend.nics";
}

}  // namespace

NodeId FrontendFabric::leaf_of_port(int32_t port) const {
  const NodeId nic = topology.nics[static_cast<size_t>(rank_of(port))];
  const auto [b, e] = topology.incident(nic);
  for (const LinkId* l = b; l != e; ++l) {
    const NodeId o = topology.links[*l].a == nic ? topology.links[*l].b : topology.links[*l].a;
    if (topology.nodes[o].kind == NodeKind::Switch) return o;
  }
  return kNone;
}

FrontendFabric build_frontend(const FrontendConfig& c, int32_t servers, const Hardware& backend,
                              int32_t named_servers) {
  FrontendFabric f;
  f.config = c;
  f.servers = servers;
  if (!c.present()) return f;
  // One endpoint per port: a one-GPU, one-NIC "server" per port, no NVLink; its host link never binds
  // (the engines' PCIe payload share of a few times the NIC's rate).
  Hardware hw = backend;
  hw.gpus_per_server = 1;
  hw.nics_per_server = 1;
  hw.nvlink_domain = 1;
  hw.nvlink_bw = Bandwidth(0);
  hw.pcie_bw = Bandwidth(std::max(hw.pcie_bw.bps, 4 * c.nic_speed.bps));
  hw.nic_speed = c.nic_speed;
  // The racks are the back end's: a rack holds its P servers' P x nics frontend ports (the builder packs
  // rack_power / server_power "servers" a rack), and a NIC cable's length counts the racks to its leaf.
  // Dual-homed, a leaf's ports are each another device's, so the builder's "servers" a rack are the back end's.
  hw.server_power_w =
      backend.rack_power_w / (static_cast<double>(servers_per_rack(backend)) * (c.dual_homed ? 1 : c.nics));
  hw.radix = c.radix;
  hw.port_speed = c.port_speed;
  hw.switch_latency = c.switch_latency;
  hw.switch_power_w = c.switch_power_w;
  hw.sharp = false;
  f.hardware = hw;
  f.hardware.server_power_w = 0;  // the servers are the back end's; the frontend draws switch and optics power
  std::vector<std::pair<std::string, std::string>> keys = {{"gpus", std::to_string(f.ports())},
                                                           {"oversubscription",
                                                            fmt::format("{}:1", format_number(c.oversubscription))}};
  if (c.tiers > 0) keys.emplace_back("tiers", std::to_string(c.tiers));
  // What the tiers reach, said in the frontend's words before the Clos builder says it in GPUs: a leaf has
  // d1 down-ports; two tiers join at most `radix` leaves, three (1:1 spines) radix x radix / 2.
  const auto ports = static_cast<int64_t>(f.ports());
  const int64_t d1 = static_cast<int64_t>(std::floor(c.radix * c.oversubscription / (c.oversubscription + 1) + 1e-9));
  const int64_t leaves = d1 > 0 ? (ports + d1 - 1) / d1 : 0;
  const int64_t max2 = int64_t{c.radix} * d1, max3 = int64_t{c.radix} * (c.radix / 2) * d1;
  const std::string what = fmt::format("the frontend's {} ports ({} servers x {} NICs + {} storage nodes x {} NICs)",
                                       thousands(ports), thousands(servers), c.nics, thousands(c.storage_nodes),
                                       c.storage_nics);
  if (d1 > 0 && c.tiers == 2 && ports > max2)
    throw ParamError("frontend.tiers", fmt::format("{} need {} leaves of {} down-ports; two tiers of radix-{} "
                                                   "switches join at most {} leaves ({} ports); expected "
                                                   "frontend.tiers: 3 (or left out), or a larger frontend.radix",
                                                   what, thousands(leaves), d1, c.radix, c.radix, thousands(max2)));
  if (d1 > 0 && ports > max3)
    throw ParamError("frontend.radix", fmt::format("{} exceed the {} ports three tiers of radix-{} switches reach at "
                                                   "{}:1; expected a larger frontend.radix",
                                                   what, thousands(max3), c.radix, format_number(c.oversubscription)));
  try {
    f.topology = build_with("fat_tree", keys, hw);
  } catch (const ParamError& e) {
    throw ParamError(frontend_key(e.key()), fmt::format("{}: {}", what, e.what()));
  }
  Topology& t = f.topology;
  t.family = "frontend";
  if (c.dual_homed && f.ports() > 0) {
    // NIC-major: every device's NIC 0 in device order (servers, then storage nodes), then every NIC 1, ...
    // A device's NICs are then as many ranks apart as there are devices with that NIC: on different leaves
    // once the devices outnumber a leaf's ports.
    f.port_rank.assign(static_cast<size_t>(f.ports()), -1);
    int32_t next = 0;
    for (int32_t i = 0; i < std::max(c.nics, c.storage_nodes > 0 ? c.storage_nics : 0); ++i) {
      for (int32_t s = 0; s < servers && i < c.nics; ++s)
        f.port_rank[static_cast<size_t>(f.server_port(s, i))] = next++;
      for (int32_t n = 0; n < c.storage_nodes && i < c.storage_nics; ++n)
        f.port_rank[static_cast<size_t>(f.storage_port(n, i))] = next++;
    }
  }
  // Devices whose NICs share one leaf.
  const auto single = [&](int32_t first, int32_t owners, int32_t nics) {
    int32_t n = 0;
    for (int32_t k = 0; k < owners && nics > 1; ++k) {
      const NodeId l0 = f.leaf_of_port(first + k * nics);
      bool same = true;
      for (int32_t i = 1; i < nics; ++i) same = same && f.leaf_of_port(first + k * nics + i) == l0;
      n += same ? 1 : 0;
    }
    return n;
  };
  f.single_homed_servers = single(0, servers, c.nics);
  f.single_homed_storage_nodes = single(f.server_ports(), c.storage_nodes, c.storage_nics);
  // The builder's notes in the frontend's words: its "servers" are NIC ports (dual-homed, a leaf's ports are
  // each another server's, so its servers a rack are the back end's), and it has no pod-size key.
  for (std::string& note : t.facts.notes) {
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"serves servers up to", "serves ports up to"},
                                   {"servers a rack", "frontend ports a rack"},
                                   {"the middle rack of its servers", "the middle rack of its ports"}})
      if (const size_t at = note.find(from); at != std::string::npos && !(c.dual_homed && c.nics > 1))
        note.replace(at, from.size(), to);
    if (const size_t at = note.find("; a topology.groups_per_pod"); at != std::string::npos) note.resize(at);
  }
  const int32_t server_ports = f.server_ports();
  for (int32_t s = 0; s < servers; ++s)
    t.device_names.push_back(server_name(s, named_servers > 0 ? named_servers : servers));
  for (int32_t n = 0; n < c.storage_nodes; ++n)
    t.device_names.push_back(fmt::format("storage-{}", padded(n, c.storage_nodes)));
  t.gpus_are_host_ports = true;
  for (int32_t p = 0; p < f.ports(); ++p) {
    const bool server = p < server_ports;
    const int32_t owner = server ? p / c.nics : servers + (p - server_ports) / c.storage_nics;
    const int32_t nic = server ? p % c.nics : (p - server_ports) % c.storage_nics;
    const auto rank = static_cast<size_t>(f.rank_of(p));
    for (const NodeId id : {t.gpus[rank], t.nics[rank]}) {
      Node& n = t.nodes[id];
      n.server = owner;
      n.local = nic;
      n.name = fmt::format("{}/fe{}{}", t.device_names[owner], nic, n.kind == NodeKind::Gpu ? "-host" : "");
    }
  }
  for (auto& n : t.nodes) {
    n.network = 1;
    if (n.kind == NodeKind::Switch) n.name = "fe-" + n.name;
  }
  return f;
}

FrontendFabric build_converged(const FrontendConfig& c, const Topology& backend) {
  FrontendFabric f;
  f.config = c;
  f.converged = true;
  const int32_t nics = backend.nics_per_server;
  if (nics < 1)
    throw ParamError("frontend.converged", "the back end's servers have no NICs (a NIC-less torus): nothing for "
                                           "storage nodes to attach to; expected frontend.converged: false");
  if (c.storage_nodes >= backend.servers)
    throw ParamError("frontend.storage_nodes",
                     fmt::format("frontend.storage_nodes = {} with frontend.converged: the storage nodes take the back "
                                 "end's last server slots, but it has {} servers; expected at most {}",
                                 thousands(c.storage_nodes), thousands(backend.servers),
                                 thousands(backend.servers - 1)));
  f.config.nics = nics;  // the servers reach storage over their back-end NICs
  f.config.storage_nics = nics;
  f.config.nic_speed = Bandwidth(0);  // the back end's NIC line rate, below
  f.servers = backend.servers - c.storage_nodes;
  f.topology = backend;
  f.hardware = Hardware{};
  // Port (s, i): the first GPU of server slot s that uses its NIC i.
  std::vector<int32_t> first(static_cast<size_t>(backend.servers) * static_cast<size_t>(nics), -1);
  for (size_t r = 0; r < backend.gpus.size(); ++r) {
    const NodeId nic = backend.gpu_nic[r];
    if (nic == kNone) continue;
    const Node& n = backend.nodes[nic];
    int32_t& slot = first[static_cast<size_t>(n.server) * static_cast<size_t>(nics) + static_cast<size_t>(n.local)];
    if (slot < 0) slot = static_cast<int32_t>(r);
  }
  const auto [b, e] = backend.incident(backend.nics.front());  // the NIC's cable: its line rate
  for (const LinkId* l = b; l != e; ++l)
    if (backend.links[*l].media != Media::Pcie && backend.links[*l].media != Media::NvLink)
      f.config.nic_speed = backend.links[*l].capacity;
  if (f.config.nic_speed.bps <= 0) f.config.nic_speed = c.nic_speed;
  for (size_t k = 0; k < first.size(); ++k)
    if (first[k] < 0)
      throw ParamError("frontend.converged", fmt::format("server slot {} has no GPU behind its NIC {}; expected every "
                                                         "NIC of the back end's servers to serve a GPU",
                                                         k / static_cast<size_t>(nics), k % static_cast<size_t>(nics)));
  f.port_rank = std::move(first);
  return f;
}

Topology site_topology(const Topology& backend, const FrontendFabric& f) {
  Topology m = backend;
  if (!f.config.present()) return m;
  const Topology& fe = f.topology;
  if (m.device_names.empty())
    for (int32_t s = 0; s < backend.servers; ++s) m.device_names.push_back(server_name(s, backend.servers));
  for (int32_t n = 0; n < f.config.storage_nodes; ++n)
    m.device_names.push_back(fe.device_names[static_cast<size_t>(f.servers + n)]);
  m.frontend_tier_names = fe.tier_names;
  const auto base = static_cast<NodeId>(m.nodes.size());
  m.nodes.reserve(m.nodes.size() + fe.nodes.size());
  for (Node n : fe.nodes) {  // network 1 already (build_frontend)
    n.rack = kNone;
    if (n.kind != NodeKind::Switch) {  // a host port: its device's labels are the back end's (or none)
      if (n.server >= f.servers) n.server = backend.servers + (n.server - f.servers);
      n.group = n.pod = n.rail = kNone;
    }
    m.nodes.push_back(std::move(n));
  }
  std::vector<uint8_t> cls(fe.link_classes.size());
  for (size_t k = 0; k < cls.size(); ++k) cls[k] = m.link_class("frontend-" + fe.link_classes[k]);
  m.links.reserve(m.links.size() + fe.links.size());
  for (Link l : fe.links) {
    l.a += base;
    l.b += base;
    l.cls = cls[l.cls];
    m.links.push_back(l);
  }
  m.finalize();
  return m;
}

}  // namespace podnet::topology
