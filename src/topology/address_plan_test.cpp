// The address plan: addresses, ASNs and sessions derived by hand (arithmetic in comments).
#include "topology/address_plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "topology/test_util.hpp"

namespace podnet::topology {
namespace {

using namespace podnet::topology::testing;
using namespace podnet::literals;

// 2 servers x 2 NICs on leaf-0 (4 copper cables), leaf-0 <-> spine-0 twice (cables 5: spine->leaf, 6: leaf->spine).
Topology tiny() {
  Topology t;
  t.family = "tiny";
  add_servers(t, hw_with(2, 2, 8), 2);
  t.tier_names = {"", "leaf", "spine"};
  Node leaf;
  leaf.kind = NodeKind::Switch;
  leaf.tier = 1;
  leaf.group = 0;
  leaf.name = "leaf-0";
  const auto l = t.add_node(leaf);
  Node spine;
  spine.kind = NodeKind::Switch;
  spine.tier = 2;
  spine.name = "spine-0";
  const auto s = t.add_node(spine);
  for (auto nic : t.nics) t.connect(nic, l, 400_Gbps, 15_ns, 3, Media::Copper, t.link_class("nic-leaf"));
  t.connect(s, l, 400_Gbps, 150_ns, 30, Media::Optical, t.link_class("leaf-spine"));
  t.connect(l, s, 400_Gbps, 150_ns, 30, Media::Optical, t.link_class("leaf-spine"));
  t.finalize();
  return t;
}

AddressingOptions options(std::initializer_list<std::pair<std::string, std::string>> set = {}) {
  Params p = defaults_of(addressing_params());
  for (const auto& [k, v] : set) {
    std::string canonical, expected;
    const auto spec = [&] {
      for (const auto& s : addressing_params())
        if (s.name == k) return s;
      throw Error("no key " + k);
    }();
    auto value = parse_param(spec, v, canonical, expected);
    if (!value) throw Error(k + ": " + expected);
    p.set(k, *value, canonical);
  }
  return addressing_from(p);
}

std::string ip(Uint128 a, bool v6 = false) { return format_ip(a, v6); }

TEST(AddressPlan, TinyNumberedIpv4) {
  const Topology t = tiny();
  const AddressPlan p = plan_addresses(t, options());
  ASSERT_EQ(p.switches.size(), 2u);
  const PlanSwitch& leaf = p.switches[0];
  const PlanSwitch& spine = p.switches[1];
  EXPECT_EQ(t.nodes[leaf.node].name, "leaf-0");
  // ASNs from the top tier down: spine-0 (tier 2, no pod or group) 4200000000, then leaf-0 4200000001.
  EXPECT_EQ(spine.asn, 4200000000LL);
  EXPECT_EQ(leaf.asn, 4200000001LL);
  EXPECT_EQ(p.asns, 2);
  // Loopbacks and router-ids from the pool's second address, in node order: leaf .1, spine .2.
  EXPECT_EQ(ip(leaf.loopback), "10.255.0.1");
  EXPECT_EQ(ip(spine.router_id), "10.255.0.2");
  // 6 cables, all with a switch end; cable i (1-based) takes 10.0.0.(2(i-1)) upper and +1 lower.
  ASSERT_EQ(p.links.size(), 6u);
  EXPECT_EQ(p.cables, 6);
  EXPECT_EQ(ip(p.links[0].upper_addr), "10.0.0.0");  // leaf end of NIC 0's cable
  EXPECT_EQ(ip(p.links[0].lower_addr), "10.0.0.1");  // server 0's nic0
  EXPECT_EQ(t.nodes[p.links[0].lower].kind, NodeKind::Nic);
  // Cable 5 was connected spine -> leaf: oriented leaf (lower) first, leaf 10.0.0.9, spine 10.0.0.8.
  EXPECT_EQ(p.links[4].lower, leaf.node);
  EXPECT_EQ(ip(p.links[4].upper_addr), "10.0.0.8");
  EXPECT_EQ(ip(p.links[4].lower_addr), "10.0.0.9");
  EXPECT_EQ(ip(p.links[5].upper_addr), "10.0.0.10");
  // Sessions: the 2 switch-to-switch cables; each switch has both; leaf-0 lists all 6 of its cables.
  EXPECT_EQ(p.sessions, 2);
  EXPECT_FALSE(p.links[0].session);
  EXPECT_TRUE(p.links[4].session && p.links[5].session);
  EXPECT_EQ(leaf.sessions, 2);
  EXPECT_EQ(spine.sessions, 2);
  EXPECT_EQ(leaf.links.size(), 6u);
  EXPECT_EQ(spine.links, (std::vector<int32_t>{4, 5}));
}

TEST(AddressPlan, UnnumberedLeavesSwitchCablesWithoutSubnets) {
  const AddressPlan p = plan_addresses(tiny(), options({{"bgp", "unnumbered"}}));
  // NIC-leaf cables stay numbered (10.0.0.0/31 .. 10.0.0.6/31); the two leaf-spine cables take no subnet.
  EXPECT_TRUE(p.links[3].numbered);
  EXPECT_EQ(ip(p.links[3].upper_addr), "10.0.0.6");
  EXPECT_FALSE(p.links[4].numbered);
  EXPECT_FALSE(p.links[5].numbered);
  EXPECT_EQ(p.sessions, 2);
}

TEST(AddressPlan, Ipv6Slash127AndRouterIdsFromTheIpv4Pool) {
  const AddressPlan p = plan_addresses(tiny(), options({{"family", "ipv6"}}));
  // Cable 1: fd00:0:0:2:: (leaf) and fd00:0:0:2::1 (NIC); cable 6: addresses 10 and 11 = ::a and ::b.
  EXPECT_EQ(ip(p.links[0].upper_addr, true), "fd00:0:0:2::");
  EXPECT_EQ(ip(p.links[0].lower_addr, true), "fd00:0:0:2::1");
  EXPECT_EQ(ip(p.links[5].lower_addr, true), "fd00:0:0:2::b");
  EXPECT_EQ(ip(p.switches[1].loopback, true), "fd00:0:0:1::2");
  EXPECT_EQ(ip(p.switches[1].router_id), "10.255.0.2");  // BGP identifiers stay 32-bit
}

TEST(AddressPlan, PoolsAndAsnRangeTooSmallNameTheirKey) {
  // 10.0.0.0/29 = 8 addresses = 4 /31s; the tiny fabric needs 6.
  try {
    (void)plan_addresses(tiny(), options({{"link_pool_v4", "10.0.0.0/29"}}));
    FAIL() << "no error";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "addressing.link_pool_v4");
    // 6 subnets: 8 = 2^3 >= 6 /31s of 2 addresses fit in 2^4 addresses, a /28.
    EXPECT_NE(std::string(e.what()).find("holds 4 point-to-point subnets, the fabric needs 6"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("at least /28"), std::string::npos) << e.what();
  }
  // 10.255.0.0/31 holds 1 loopback after its network address; 2 switches.
  EXPECT_THROW((void)plan_addresses(tiny(), options({{"loopback_pool_v4", "10.255.0.0/31"}})), ParamError);
  // 2 ASNs from 4294967294 end at 4294967295, past RFC 6996's last private ASN.
  try {
    (void)plan_addresses(tiny(), options({{"asn_base", "4294967294"}}));
    FAIL() << "no error";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "addressing.asn_base");
  }
  // Overlapping pools: 10.0.0.0/8 holds 10.255.0.0/16.
  try {
    (void)options({{"link_pool_v4", "10.0.0.0/8"}});
    FAIL() << "no error";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "addressing.loopback_pool_v4");
  }
}

TEST(AddressPlan, FatTreeFollowsRfc7938) {
  // k = 4 fat tree, one NIC per server: 16 hosts; 8 edge (leaf), 8 aggregation (spine, 2 per pod), 4 cores.
  const Topology t = build_with("fat_tree", {{"k", "4"}}, hw_with(1, 1, 4));
  const AddressPlan p = plan_addresses(t, options());
  // ASNs: cores share 1, aggregation 1 per pod (4), leaves 1 each (8): 13.
  EXPECT_EQ(p.asns, 1 + 4 + 8);
  // Sessions = switch-to-switch cables: 16 leaf-spine + 16 spine-core.
  EXPECT_EQ(p.sessions, 32);
  std::set<int64_t> leaf_asns;
  for (const auto& s : p.switches) {
    const Node& n = t.nodes[s.node];
    if (n.tier == 1) leaf_asns.insert(s.asn);
    if (n.tier == 3) {
      EXPECT_EQ(s.asn, 4200000000LL) << n.name;
    }
    if (n.tier == 2) {
      EXPECT_EQ(s.asn, 4200000001LL + n.pod) << n.name;  // pods 0..3 -> base + 1 .. base + 4
    }
  }
  EXPECT_EQ(leaf_asns.size(), 8u);
  // No session joins two switches of one AS (plan_addresses refuses it; checked here explicitly).
  for (const auto& l : p.links)
    if (l.session) {
      EXPECT_NE(p.find(l.lower)->asn, p.find(l.upper)->asn);
    }
  // Every address once: 48 cables x 2.
  std::set<std::string> addrs;
  for (const auto& l : p.links) addrs.insert({ip(l.lower_addr), ip(l.upper_addr)});
  EXPECT_EQ(addrs.size(), 96u);
}

// Which leaves each leaf's routes reach when every switch runs eBGP with the plan's ASNs over its sessions:
// path-vector propagation of best (shortest AS path, then lowest sender) routes until nothing changes, a
// switch refusing any route whose AS path holds its own ASN (RFC 4271 9.1.2). Returns the unreachable
// (origin, leaf) pairs.
int64_t unreachable_leaf_pairs(const Topology& t, const AddressPlan& p) {
  const size_t n = p.switches.size();
  std::vector<std::vector<size_t>> peers(n);
  for (const auto& l : p.links)
    if (l.session) {
      const auto a = static_cast<size_t>(p.switch_of_node[static_cast<size_t>(l.lower)]);
      const auto b = static_cast<size_t>(p.switch_of_node[static_cast<size_t>(l.upper)]);
      peers[a].push_back(b);
      peers[b].push_back(a);
    }
  int64_t missing = 0;
  for (size_t o = 0; o < n; ++o) {
    if (t.nodes[p.switches[o].node].tier != 1) continue;
    // best[s]: the AS path s holds for o's prefix (o's own: empty), or none.
    std::vector<std::optional<std::vector<int64_t>>> best(n);
    best[o] = std::vector<int64_t>{};
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t u = 0; u < n; ++u) {
        if (!best[u]) continue;
        std::vector<int64_t> sent{p.switches[u].asn};  // u prepends its ASN
        sent.insert(sent.end(), best[u]->begin(), best[u]->end());
        for (size_t v : peers[u]) {
          if (v == o || std::find(sent.begin(), sent.end(), p.switches[v].asn) != sent.end()) continue;
          if (!best[v] || sent.size() < best[v]->size()) {
            best[v] = sent;
            changed = true;
          }
        }
      }
    }
    for (size_t v = 0; v < n; ++v)
      if (v != o && t.nodes[p.switches[v].node].tier == 1 && !best[v]) ++missing;
  }
  return missing;
}

TEST(AddressPlan, RailOptimizedLeavesAllReachEachOtherUnderBgp) {
  // A 3-tier rail-optimized Clos: 8 servers of 2 GPUs and 2 NICs (2 rails), radix-4 switches, 2 groups per
  // pod: 8 leaves (4 groups x 2 rails), spines per (pod, rail) reaching only that rail's leaves of their pod.
  // With one ASN per pod's spines, a route from a rail-1 leaf to a rail-0 leaf of the same pod crosses that
  // ASN twice (up through rail 1's spines, down through rail 0's) and is dropped: every such pair was
  // unreachable. With one ASN per (pod, rail) every leaf reaches every other.
  const Topology t =
      build_with("rail_clos", {{"gpus", "16"}, {"tiers", "3"}, {"groups_per_pod", "2"}}, hw_with(2, 2, 4));
  const AddressPlan p = plan_addresses(t, options());
  std::set<int32_t> pods;
  int64_t leaves = 0;
  for (const auto& s : p.switches) {
    const Node& n = t.nodes[s.node];
    leaves += n.tier == 1;
    if (n.tier == 2) pods.insert(n.pod);
  }
  ASSERT_GE(leaves, 8);
  ASSERT_GE(pods.size(), 2u);  // some routes go through the super-spines, some stay in a pod
  // Spines of one pod and different rails: different ASNs; of one pod and one rail: one ASN.
  for (const auto& a : p.switches)
    for (const auto& b : p.switches) {
      const Node &x = t.nodes[a.node], &y = t.nodes[b.node];
      if (x.tier != 2 || y.tier != 2 || x.pod != y.pod) continue;
      EXPECT_EQ(a.asn == b.asn, x.rail == y.rail) << x.name << " " << y.name;
    }
  EXPECT_EQ(unreachable_leaf_pairs(t, p), 0);
}

TEST(AddressPlan, FourTierZonesEachHaveTheirSuperSpineAsn) {
  // A 4-tier rail Clos (2 GPUs and 2 rails a server, radix 8, 256 GPUs: 4 zones of 2 pods). Super-spines carry
  // a zone and no pod: one ASN per zone. With one ASN for every super-spine, a route between zones (up to a
  // core, down into the other zone's super-spines) would cross it twice and BGP would drop it.
  const Topology t = build_with("rail_clos", {{"gpus", "256"}}, hw_with(2, 2, 8));
  ASSERT_EQ(t.switch_tiers(), 4);
  const AddressPlan p = plan_addresses(t, options());
  std::map<int32_t, std::set<int64_t>> asns_of_zone;
  std::set<int64_t> core_asns;
  for (const auto& s : p.switches) {
    const Node& n = t.nodes[s.node];
    if (n.tier == 3) asns_of_zone[n.zone].insert(s.asn);
    if (n.tier == 4) core_asns.insert(s.asn);
  }
  ASSERT_EQ(asns_of_zone.size(), 4u);
  std::set<int64_t> all;
  for (const auto& [zone, asns] : asns_of_zone) {
    EXPECT_EQ(asns.size(), 1u) << "zone " << zone;
    all.insert(asns.begin(), asns.end());
  }
  EXPECT_EQ(all.size(), 4u);
  EXPECT_EQ(core_asns.size(), 1u);
  EXPECT_EQ(unreachable_leaf_pairs(t, p), 0);
}

TEST(AddressPlan, DragonflyRoutersEachHaveAnAsn) {
  // Dragonfly routers are all tier 1: one ASN each, whatever their group.
  const Topology t = build_with("dragonfly", {{"p", "2"}, {"a", "4"}, {"h", "2"}}, hw_with(1, 1, 16));
  const AddressPlan p = plan_addresses(t, options());
  EXPECT_EQ(p.asns, static_cast<int64_t>(p.switches.size()));
  EXPECT_EQ(device_port_name(0), "Ethernet0");
  EXPECT_EQ(device_port_name(64), "Ethernet512");  // 8 lanes per port
  EXPECT_STREQ(sonic_device_type(1), "BackEndToRRouter");
  EXPECT_STREQ(sonic_device_type(3), "SpineRouter");
  EXPECT_STREQ(sonic_device_type(1, true), "ToRRouter");
  EXPECT_STREQ(sonic_device_type(2, true), "LeafRouter");
}

}  // namespace
}  // namespace podnet::topology
