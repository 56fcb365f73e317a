// The frontend and storage network: a small one counted by hand, its names, and its errors.
#include "topology/frontend.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/error.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"

namespace podnet::topology {
namespace {

FrontendConfig small_config() {
  FrontendConfig c;
  c.nics = 2;
  c.nic_speed = Bandwidth(400e9);
  c.radix = 16;
  c.port_speed = Bandwidth(400e9);
  c.storage_nodes = 2;
  c.storage_nics = 4;
  return c;
}

TEST(Frontend, ALeafSpineCountedByHand) {
  // 10 servers x 2 NICs + 2 storage nodes x 4 NICs = 28 ports. A radix-16 leaf at 1:1 has 8 down-ports
  // and 8 up: ceil(28 / 8) = 4 leaves. Two tiers: the 4 leaves share one spine domain; each leaf sends
  // p parallel links to every spine, p the largest divisor of 8 with 4 p <= 16: p = 4, 8 / 4 = 2 spines.
  // Single-homed: a leaf's 8 ports are 4 servers' NICs, all within the racks beside it.
  FrontendConfig c = small_config();
  c.dual_homed = false;
  const FrontendFabric f = build_frontend(c, 10, default_hardware());
  const Topology& t = f.topology;
  EXPECT_EQ(f.ports(), 28);
  EXPECT_EQ(f.server_ports(), 20);
  EXPECT_EQ(f.storage_port(1, 3), 27);
  const Bom b = compute_bom(t, f.hardware);
  ASSERT_EQ(b.switches.size(), 2u);
  EXPECT_EQ(b.switches[0], (std::pair<std::string, int64_t>{"leaf", 4}));
  EXPECT_EQ(b.switches[1], (std::pair<std::string, int64_t>{"spine", 2}));
  // 28 NIC cables (3 m: copper) and 4 x 8 leaf uplinks (30 m: optical, two transceivers each).
  EXPECT_EQ(b.links_total, 28 + 32);
  EXPECT_EQ(b.cables_copper, 28);
  EXPECT_EQ(b.cables_optical, 32);
  EXPECT_EQ(b.transceivers, 64);
  // No server power: the servers are the back end's.
  EXPECT_EQ(b.power_servers_w, 0);
}

TEST(Frontend, PortsAreNamedAfterTheirServersAndStorageNodes) {
  const FrontendFabric f = build_frontend(small_config(), 10, default_hardware());
  const Topology& t = f.topology;
  EXPECT_EQ(t.nodes[t.nics[f.rank_of(f.server_port(3, 1))]].name, "gpu-node-003/fe1");
  EXPECT_EQ(t.nodes[t.gpus[f.rank_of(f.server_port(3, 1))]].name, "gpu-node-003/fe1-host");
  EXPECT_EQ(t.nodes[t.nics[f.rank_of(f.storage_port(1, 2))]].name, "storage-001/fe2");
  for (const auto& n : t.nodes)
    if (n.kind == NodeKind::Switch) EXPECT_EQ(n.name.rfind("fe-", 0), 0u) << n.name;
  // Every port's NIC cable runs at the frontend NIC speed.
  for (const NodeId nic : t.nics) {
    const auto [first, last] = t.incident(nic);
    for (const LinkId* l = first; l != last; ++l)
      if (t.links[*l].media != Media::Pcie) EXPECT_EQ(t.links[*l].capacity.bps, 400e9);
  }
}

TEST(Frontend, ASiteHoldsBothNetworksApart) {
  // A 2-tier back end of 10 servers (80 GPUs) and the small frontend above: the site keeps every back-end
  // node and link where it was and appends the frontend's, which no link joins to the back end.
  const Hardware hw = default_hardware();
  const Topology back = build_with("fat_tree", {{"gpus", "80"}}, hw);
  const FrontendFabric f = build_frontend(small_config(), back.servers, hw);
  ASSERT_EQ(back.servers, 10);
  const Topology site = site_topology(back, f);
  ASSERT_EQ(site.nodes.size(), back.nodes.size() + f.topology.nodes.size());
  ASSERT_EQ(site.links.size(), back.links.size() + f.topology.links.size());
  EXPECT_EQ(site.gpus, back.gpus);
  EXPECT_EQ(site.nics, back.nics);
  const auto base = static_cast<NodeId>(back.nodes.size());
  for (size_t i = 0; i < back.nodes.size(); ++i) {
    EXPECT_EQ(site.nodes[i].network, 0);
    EXPECT_EQ(site.device_name(static_cast<NodeId>(i)), back.device_name(static_cast<NodeId>(i)));
  }
  for (size_t l = 0; l < site.links.size(); ++l)  // no link joins the networks
    EXPECT_EQ(site.nodes[site.links[l].a].network, site.nodes[site.links[l].b].network) << l;
  // Server 3's frontend port 1 belongs to the back end's gpu-node-003; storage node 1 follows the servers.
  const NodeId fe_nic = base + f.topology.nics[f.rank_of(f.server_port(3, 1))];
  EXPECT_EQ(site.device_name(fe_nic), "gpu-node-003");
  EXPECT_EQ(site.port_name(fe_nic, 0), "fe1");
  EXPECT_EQ(site.port_name(back.nics[3 * 8 + 1], 0), "gpu1_eth");  // the back end's names stay
  const NodeId storage = base + f.topology.nics[f.rank_of(f.storage_port(1, 2))];
  EXPECT_EQ(site.nodes[storage].server, 11);
  EXPECT_EQ(site.device_name(storage), "storage-001");
  EXPECT_EQ(site.link_classes[site.links[back.links.size()].cls].rfind("frontend-", 0), 0u);
}

// The leaf a port's NIC is cabled to.
NodeId leaf_of(const FrontendFabric& f, int32_t port) {
  const Topology& t = f.topology;
  const NodeId nic = t.nics[static_cast<size_t>(f.rank_of(port))];
  const auto [first, last] = t.incident(nic);
  for (const LinkId* l = first; l != last; ++l) {
    const NodeId o = t.links[*l].a == nic ? t.links[*l].b : t.links[*l].a;
    if (t.nodes[o].kind == NodeKind::Switch) return o;
  }
  return kNone;
}

TEST(Frontend, DualHomedDevicesHaveTheirNicsOnDifferentLeaves) {
  // 28 ports on leaves of 8, 8, 8 and 4 ranks, NIC-major: NIC 0 of servers 0-9 (ranks 0-9) and of the 2
  // storage nodes (10-11), then NIC 1 of the servers (12-21) and of the storage nodes (22-23), then their NICs
  // 2 (24-25) and 3 (26-27). Server s: ranks s and 12 + s, 12 apart, on different leaves (0 and 1, 0 and 2,
  // 1 and 2). Storage node n: ranks 10 + n, 22 + n, 24 + n, 26 + n (leaves 1, 2, 3, 3).
  const FrontendFabric f = build_frontend(small_config(), 10, default_hardware());
  for (int32_t s = 0; s < 10; ++s) EXPECT_NE(leaf_of(f, f.server_port(s, 0)), leaf_of(f, f.server_port(s, 1))) << s;
  EXPECT_EQ(f.single_homed_servers, 0);
  EXPECT_EQ(f.single_homed_storage_nodes, 0);
  EXPECT_NE(leaf_of(f, f.storage_port(0, 0)), leaf_of(f, f.storage_port(0, 2)));
  // Every rank taken once.
  std::vector<int32_t> ranks = f.port_rank;
  std::sort(ranks.begin(), ranks.end());
  for (int32_t p = 0; p < f.ports(); ++p) EXPECT_EQ(ranks[static_cast<size_t>(p)], p);
  // Single-homed: a server's NICs share a leaf.
  FrontendConfig c = small_config();
  c.dual_homed = false;
  const FrontendFabric g = build_frontend(c, 10, default_hardware());
  EXPECT_EQ(leaf_of(g, g.server_port(0, 0)), leaf_of(g, g.server_port(0, 1)));
  EXPECT_EQ(g.single_homed_servers, 10);
}

TEST(Frontend, NoNicsBuildsNothing) {
  FrontendConfig c;
  const FrontendFabric f = build_frontend(c, 10, default_hardware());
  EXPECT_TRUE(f.topology.nodes.empty());
  EXPECT_EQ(f.ports(), 0);
}

TEST(Frontend, ErrorsNameTheFrontendKey) {
  FrontendConfig c = small_config();
  c.tiers = 2;
  c.radix = 8;  // 4 down-ports a leaf: 28 ports need 7 leaves; radix-8 spines reach 8 leaves: fits
  EXPECT_NO_THROW(build_frontend(c, 10, default_hardware()));
  try {
    build_frontend(c, 100, default_hardware());  // 208 ports: 52 leaves, more than 8 spine ports reach
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "frontend.tiers");
    EXPECT_STREQ(e.what(),
                 "the frontend's 208 ports (100 servers x 2 NICs + 2 storage nodes x 4 NICs) need 52 leaves of 4 "
                 "down-ports; two tiers of radix-8 switches join at most 8 leaves (32 ports); expected "
                 "frontend.tiers: 3 (or left out), or a larger frontend.radix");
  }
  // Three tiers of radix 8 reach 8 x 4 x 4 = 128 ports: 208 do not fit.
  c.tiers = 0;
  try {
    build_frontend(c, 100, default_hardware());
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "frontend.radix");
  }
}

TEST(Frontend, SettingsAreChecked) {
  Params p = defaults_of(frontend_params());
  p.set("storage_nodes", int64_t{4}, "4");
  try {
    frontend_from(p);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "frontend.storage_nodes");
  }
  p.set("nics", int64_t{2}, "2");
  p.set("nic_speed", Bandwidth(800e9), "800Gbps");
  try {
    frontend_from(p);
    FAIL() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "frontend.nic_speed");
  }
}

}  // namespace
}  // namespace podnet::topology
