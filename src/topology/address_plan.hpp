// The fabric's IP and BGP plan: addresses per cable, a loopback and an ASN
// per switch, and the eBGP sessions, from the scenario's `addressing:` pools.
//
// Addressing. Every cable with a switch at one end or both (NIC-leaf,
// leaf-spine, ..., dragonfly local/global) gets a point-to-point subnet from
// `link_pool_v4` (a /31, RFC 3021) or `link_pool_v6` (a /127, RFC 6164), in
// cable order (the cabling plan's C000001, C000002, ...): cable i takes the
// pool's addresses 2i and 2i+1, the upper-tier end (leaf of a NIC-leaf cable,
// spine of a leaf-spine cable; side B of the cabling plan) the even one, the
// lower-tier end (side A) the odd one. Chip-to-chip torus links are not IP
// links and get none. With `bgp: unnumbered`, switch-to-switch cables get no
// subnet (BGP runs over IPv6 link-local addresses, RFC 5549 next hops; FRR's
// "neighbor IFACE interface"), so they use none of the pool; NIC-leaf cables
// are numbered either way (servers run no BGP). Each switch, in node order,
// takes the loopback pool's next address starting at the pool's second
// (`loopback_pool_v4` /32 or `loopback_pool_v6` /128); its BGP router-id is
// its address in `loopback_pool_v4` whatever the family (BGP identifiers are
// 32-bit, RFC 6286).
//
// ASNs follow RFC 7938 section 5.2 (eBGP only; ASNs from the private 4-byte
// range 4200000000-4294967294 of RFC 6996, counted up from `asn_base`):
// - every tier-1 switch (leaf / ToR / dragonfly router) has its own ASN;
// - the switches of a higher tier share one ASN per pod (per group when they
//   carry a group but no pod, as dragonfly+ spines do), so a path can never
//   go down to a leaf and back up through the same pod's spines (BGP's AS-path
//   loop check does it, RFC 7938 5.2.1 and 5.2.4);
// - the frontend's switches of a site topology (frontend.hpp) never share an ASN with the back end's;
// - a 4-tier Clos's super-spines carry no pod but a zone: one ASN per zone, so
//   a path from one zone to another (up to a core, down into the other
//   zone's super-spines) never crosses one ASN twice;
// - a tier whose switches carry neither (super-spines, fat-tree cores) shares
//   one ASN;
// - a switch bound to a rail (a rail-optimized fabric's spines, which reach
//   only that rail's leaves of their pod) shares its ASN only with the same
//   rail's: one ASN per (pod, rail). With one per pod, a route from a leaf of
//   rail 4 to a leaf of rail 0 of the same pod must cross that pod's spine
//   ASN twice (up through rail 4's spines, down through rail 0's), and BGP's
//   loop check drops it (RFC 4271 9.1.2): leaves of different rails of one pod
//   could not reach each other (found with FRR on a small aipod by a user
//   audit; `AddressPlan.RailOptimizedLeavesAllReachEachOtherUnderBgp`).
// Allocation runs from the top tier down, in node order within a tier:
// aipod's super-spines take asn_base, pod p's spines of rail r the next ASN in
// node order, then the leaves one each. The plan refuses (Error) a cable between two switches
// of one ASN, which would be an iBGP session this design never intends.
//
// Sessions: one eBGP session per switch-to-switch cable (parallel cables
// between two switches are parallel sessions, as on real fabrics), so
// sessions = switch-to-switch cables. ECMP: FRR's `maximum-paths` is the
// switch's session count capped at kMaxEcmpPaths.
//
// Port names: podnet's switch port p is "Ethernet1/<p+1>" in the cabling plan
// and NetBox; the device configs use SONiC's Linux name "Ethernet<8p>"
// (kLanesPerPort lanes per port, as 400G/800G OSFP ports are numbered on
// 8-lane SONiC platforms) with the NetBox name as alias.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/ip.hpp"
#include "core/params.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

inline constexpr int kLanesPerPort = 8;
// FRR's largest `maximum-paths` (MULTIPATH_NUM of Debian 12's frr 8.4: 256 accepted, 257 refused by vtysh).
inline constexpr int kMaxEcmpPaths = 256;
// RFC 6996's private 4-byte ASN range.
inline constexpr int64_t kPrivateAsnFirst = 4200000000LL;
inline constexpr int64_t kPrivateAsnLast = 4294967294LL;

std::vector<ParamSpec> addressing_params();

struct AddressingOptions {
  bool v6 = false;
  bool unnumbered = false;
  IpPrefix link_pool;       // of the chosen family
  IpPrefix loopback_pool;   // of the chosen family
  IpPrefix router_id_pool;  // loopback_pool_v4, whatever the family
  int64_t asn_base = kPrivateAsnFirst;
};
// Reads the `addressing:` section; ParamError (key "addressing.<key>") when
// the pools of one family overlap.
AddressingOptions addressing_from(const Params& p);

// One addressed cable, oriented lower tier (side A) first.
struct PlanLink {
  LinkId link = kNone;
  int64_t cable = 0;  // 1-based cable ordinal, as the cabling plan's label
  NodeId lower = kNone, upper = kNone;
  int32_t lower_port = 0, upper_port = 0;
  bool numbered = false;  // has a subnet
  Uint128 lower_addr = 0, upper_addr = 0;
  bool session = false;  // switch-to-switch: one eBGP session
};

struct PlanSwitch {
  NodeId node = kNone;
  int64_t asn = 0;
  Uint128 loopback = 0;
  Uint128 router_id = 0;
  std::vector<int32_t> links;  // indices into AddressPlan::links, in cable order
  int32_t sessions = 0;
};

struct AddressPlan {
  AddressingOptions options;
  std::vector<PlanSwitch> switches;     // in node order
  std::vector<int32_t> switch_of_node;  // node -> index into switches, or kNone
  std::vector<PlanLink> links;          // addressed cables, in cable order
  int64_t cables = 0;                   // physical cables of the fabric (the cabling plan's rows)
  int64_t sessions = 0;                 // eBGP sessions = switch-to-switch cables
  int64_t asns = 0;                     // distinct ASNs used

  const PlanSwitch* find(NodeId n) const {
    const int32_t i = switch_of_node[static_cast<size_t>(n)];
    return i == kNone ? nullptr : &switches[static_cast<size_t>(i)];
  }
};

// The plan for a built topology. ParamError (key addressing.<pool> or
// addressing.asn_base) when a pool or the ASN range is too small, naming how
// much the fabric needs.
AddressPlan plan_addresses(const Topology& t, const AddressingOptions& o);

// "Ethernet<8p>": the SONiC/Linux name of podnet switch port p.
std::string device_port_name(int32_t port);
void append_device_port_name(std::string& out, int32_t port);  // the same, appended to `out`
// DEVICE_METADATA type of a switch tier in SONiC's terms: on the back end tier 1 BackEndToRRouter, tier 2
// BackEndLeafRouter; on the frontend ToRRouter and LeafRouter; higher tiers SpineRouter.
const char* sonic_device_type(int tier, bool frontend = false);

}  // namespace podnet::topology
