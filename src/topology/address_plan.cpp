#include "topology/address_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "core/append.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::topology {

std::vector<ParamSpec> addressing_params() {
  return {
      {"family", ParamType::String, "ipv4", "address family of links and loopbacks", -1e300, 1e300, {"ipv4", "ipv6"}},
      {"link_pool_v4", ParamType::Ipv4Prefix, "10.0.0.0/9", "pool of /31 point-to-point subnets, one per cable"},
      {"loopback_pool_v4", ParamType::Ipv4Prefix, "10.255.0.0/16",
       "pool of switch loopbacks (/32) and BGP router-ids (used for router-ids with family ipv6 too)"},
      {"link_pool_v6", ParamType::Ipv6Prefix, "fd00:0:0:2::/64", "pool of /127 point-to-point subnets (family ipv6)"},
      {"loopback_pool_v6", ParamType::Ipv6Prefix, "fd00:0:0:1::/64", "pool of switch loopbacks /128 (family ipv6)"},
      {"asn_base", ParamType::Int, "4200000000",
       "first ASN; ASNs count up from it (RFC 6996 private 4-byte range, RFC 7938 allocation)",
       static_cast<double>(kPrivateAsnFirst), static_cast<double>(kPrivateAsnLast)},
      {"bgp",
       ParamType::String,
       "numbered",
       "numbered (sessions between the /31 or /127 ends) or unnumbered (switch-to-switch cables without subnets, "
       "sessions on IPv6 link-local, RFC 5549)",
       -1e300,
       1e300,
       {"numbered", "unnumbered"}},
  };
}

namespace {

IpPrefix prefix_of(const Params& p, const std::string& key) {
  std::string why;
  auto v = parse_prefix(p.get_string(key), why);
  if (!v) throw ParamError("addressing." + key, why);  // the loader checked it already
  return *v;
}

}  // namespace

AddressingOptions addressing_from(const Params& p) {
  AddressingOptions o;
  o.v6 = p.get_string("family") == "ipv6";
  o.unnumbered = p.get_string("bgp") == "unnumbered";
  o.asn_base = p.get_int("asn_base");
  const IpPrefix link4 = prefix_of(p, "link_pool_v4"), lo4 = prefix_of(p, "loopback_pool_v4");
  const IpPrefix link6 = prefix_of(p, "link_pool_v6"), lo6 = prefix_of(p, "loopback_pool_v6");
  if (link4.overlaps(lo4))
    throw ParamError("addressing.loopback_pool_v4",
                     fmt::format("{} overlaps link_pool_v4 {}; expected pools that share no address", lo4.text(),
                                 link4.text()));
  if (link6.overlaps(lo6))
    throw ParamError("addressing.loopback_pool_v6",
                     fmt::format("{} overlaps link_pool_v6 {}; expected pools that share no address", lo6.text(),
                                 link6.text()));
  o.link_pool = o.v6 ? link6 : link4;
  o.loopback_pool = o.v6 ? lo6 : lo4;
  o.router_id_pool = lo4;
  return o;
}

std::string device_port_name(int32_t port) {
  std::string s;
  append_device_port_name(s, port);
  return s;
}

void append_device_port_name(std::string& out, int32_t port) {
  out += "Ethernet";
  append_decimal(out, int64_t{kLanesPerPort} * port);
}

const char* sonic_device_type(int tier, bool frontend) {
  if (tier <= 1) return frontend ? "ToRRouter" : "BackEndToRRouter";
  if (tier == 2) return frontend ? "LeafRouter" : "BackEndLeafRouter";
  return "SpineRouter";
}

namespace {

int level(const Node& n) { return n.kind == NodeKind::Switch ? static_cast<int>(n.tier) : 0; }

std::string pool_key(const AddressingOptions& o, bool loopback) {
  return fmt::format("addressing.{}_pool_{}", loopback ? "loopback" : "link", o.v6 ? "v6" : "v4");
}

}  // namespace

AddressPlan plan_addresses(const Topology& t, const AddressingOptions& o) {
  AddressPlan plan;
  plan.options = o;
  plan.switch_of_node.assign(t.nodes.size(), kNone);
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (t.nodes[i].kind != NodeKind::Switch) continue;
    plan.switch_of_node[i] = static_cast<int32_t>(plan.switches.size());
    PlanSwitch s;
    s.node = static_cast<NodeId>(i);
    plan.switches.push_back(s);
  }

  // Loopbacks and router-ids: the pool's second address onwards (the first names the network).
  const uint64_t nsw = plan.switches.size();
  if (nsw > 0) {
    if (o.loopback_pool.size() - 1 < nsw)
      throw ParamError(pool_key(o, true), fmt::format("{} holds {} loopbacks, the fabric has {} switches; expected a "
                                                      "larger pool",
                                                      o.loopback_pool.text(), o.loopback_pool.size() - 1, nsw));
    if (o.router_id_pool.size() - 1 < nsw)
      throw ParamError("addressing.loopback_pool_v4",
                       fmt::format("{} holds {} router-ids, the fabric has {} switches; expected a larger pool",
                                   o.router_id_pool.text(), o.router_id_pool.size() - 1, nsw));
  }
  for (uint64_t k = 0; k < nsw; ++k) {
    plan.switches[k].loopback = o.loopback_pool.at(k + 1);
    plan.switches[k].router_id = o.router_id_pool.at(k + 1);
  }

  // ASNs (see the header): top tier first, node order within a tier; a tier-1 switch alone, others by pod/group.
  std::vector<size_t> order(nsw);
  for (size_t k = 0; k < nsw; ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return t.nodes[plan.switches[a].node].tier > t.nodes[plan.switches[b].node].tier;
  });
  // (network, tier, 0 pod / 1 group / 3 zone / 2 none, label, rail or kNone) -> ASN
  std::map<std::tuple<int, int, int, int32_t, int32_t>, int64_t> shared;
  int64_t next = o.asn_base;
  for (size_t k : order) {
    const Node& n = t.nodes[plan.switches[k].node];
    int64_t asn = 0;
    if (n.tier <= 1) {
      asn = next++;
    } else {
      const int net = n.network, tier = n.tier;
      const auto key = n.pod != kNone     ? std::make_tuple(net, tier, 0, n.pod, n.rail)
                       : n.group != kNone ? std::make_tuple(net, tier, 1, n.group, n.rail)
                       : n.zone != kNone  ? std::make_tuple(net, tier, 3, n.zone, n.rail)
                                          : std::make_tuple(net, tier, 2, kNone, n.rail);
      auto [it, added] = shared.emplace(key, next);
      if (added) ++next;
      asn = it->second;
    }
    plan.switches[k].asn = asn;
  }
  plan.asns = next - o.asn_base;
  if (nsw > 0 && next - 1 > kPrivateAsnLast)
    throw ParamError(
        "addressing.asn_base",
        fmt::format("{} + {} ASNs ends at {}, past the private range's last ASN {}; expected asn_base <= {}",
                    o.asn_base, plan.asns, next - 1, kPrivateAsnLast, kPrivateAsnLast + 1 - plan.asns));

  // Subnets the fabric needs: every cable with a switch end, but unnumbered switch-to-switch ones.
  uint64_t needed = 0;
  for (const Link& l : t.links) {
    if (l.media != Media::Copper && l.media != Media::Optical) continue;
    const bool sa = t.nodes[l.a].kind == NodeKind::Switch, sb = t.nodes[l.b].kind == NodeKind::Switch;
    needed += (sa || sb) && !(sa && sb && o.unnumbered) ? 1 : 0;
  }
  if (needed > o.link_pool.size() / 2) {
    int len = o.link_pool.bits() - 1;  // the longest prefix holding `needed` /31s (/127s)
    while (len > 0 && (uint64_t{1} << (o.link_pool.bits() - 1 - len)) < needed) --len;
    throw ParamError(pool_key(o, false),
                     fmt::format("{} holds {} point-to-point subnets, the fabric needs {} (one per cable with a switch "
                                 "end); expected a pool of at least /{}",
                                 o.link_pool.text(), thousands(static_cast<int64_t>(o.link_pool.size() / 2)),
                                 thousands(static_cast<int64_t>(needed)), len));
  }

  // Cables with a switch end, in cable order.
  int64_t cable = 0;
  uint64_t subnets = 0;
  for (size_t li = 0; li < t.links.size(); ++li) {
    const Link& l = t.links[li];
    if (l.media != Media::Copper && l.media != Media::Optical) continue;
    ++cable;
    const bool sa = t.nodes[l.a].kind == NodeKind::Switch, sb = t.nodes[l.b].kind == NodeKind::Switch;
    if (!sa && !sb) continue;
    PlanLink pl;
    pl.link = static_cast<LinkId>(li);
    pl.cable = cable;
    const bool flip = level(t.nodes[l.b]) < level(t.nodes[l.a]);
    pl.lower = flip ? l.b : l.a;
    pl.lower_port = flip ? l.port_b : l.port_a;
    pl.upper = flip ? l.a : l.b;
    pl.upper_port = flip ? l.port_a : l.port_b;
    pl.session = sa && sb;
    pl.numbered = !(pl.session && o.unnumbered);
    if (pl.numbered) {
      pl.upper_addr = o.link_pool.at(2 * subnets);
      pl.lower_addr = o.link_pool.at(2 * subnets + 1);
      ++subnets;
    }
    if (pl.session) {
      const int64_t asn_a = plan.find(l.a)->asn, asn_b = plan.find(l.b)->asn;
      if (asn_a == asn_b)
        throw Error(fmt::format("internal: cable C{} joins {} and {}, both in AS {} (an iBGP session the RFC 7938 "
                                "design never makes)",
                                cable, t.nodes[l.a].name, t.nodes[l.b].name, asn_a));
      ++plan.sessions;
    }
    const auto idx = static_cast<int32_t>(plan.links.size());
    for (NodeId end : {pl.lower, pl.upper})
      if (int32_t s = plan.switch_of_node[static_cast<size_t>(end)]; s != kNone) {
        plan.switches[static_cast<size_t>(s)].links.push_back(idx);
        if (pl.session) ++plan.switches[static_cast<size_t>(s)].sessions;
      }
    plan.links.push_back(pl);
  }
  plan.cables = cable;
  return plan;
}

}  // namespace podnet::topology
