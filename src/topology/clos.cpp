#include "topology/clos.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::topology {

namespace {

struct ClosSpec {
  const char* family;
  int64_t gpus = 0;
  int tiers = 0;              // 2 or 3; 0 = fewest that fit
  double o1 = 1, o2 = 1;      // oversubscription down:up at leaf, spine
  bool rail_attach = false;   // NIC r of a server -> the rail-r leaf of its group
  bool rail_domains = false;  // spines serve the leaves of one rail (per pod)
  int groups_per_pod = 0;     // 0 = as many as fit
  int spines_per_domain = 0;  // 0 = fewest (most parallel links)
  const char* tier_names[4] = {"", "leaf", "spine", "super_spine"};
  const char* tiers_key = "topology.tiers";
  const char* o1_key = "topology.oversubscription";
  const char* groups_per_pod_key = "topology.groups_per_pod";
};

// Largest divisor of n that is <= limit (>= 1 when limit >= 1).
int largest_divisor_at_most(int n, int limit) {
  for (int p = std::min(n, limit); p >= 1; --p)
    if (n % p == 0) return p;
  return 0;
}

// `up` uplinks spread over the switches of the tier above with `p` parallel links to each (at most
// `pmax`, what fills those switches' down-ports): `count` = used / p switches. Uniform: p = the
// largest divisor of `up` <= pmax, every uplink used. When `up` has no divisor near pmax (43 is
// prime: 43 switches with one link each, using 1/pmax of their down-ports), the largest multiple of
// pmax <= up needs far fewer switches; it is taken when it leaves at most 10 % of the uplinks idle
// (the design's oversubscription then counts only the uplinks used).
struct Spread {
  int p = 0, count = 0, used = 0;
};
Spread spread_uplinks(int up, int pmax) {
  Spread s;
  s.p = largest_divisor_at_most(up, pmax);
  s.used = up;
  s.count = up / s.p;
  if (s.p < pmax && pmax >= 1) {
    const int used = (up / pmax) * pmax;
    if (used >= 1 && used / pmax < s.count && 10 * (up - used) <= up) s = {pmax, used / pmax, used};
  }
  return s;
}

int down_ports(int radix, double o) { return static_cast<int>(std::floor(radix * o / (o + 1.0) + 1e-9)); }

std::string fmt_count(int64_t v) {
  std::string s = std::to_string(v), out;
  int n = 0;
  for (auto it = s.rbegin(); it != s.rend(); ++it) {
    if (n && n % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return out;
}

Topology build_clos(const ClosSpec& spec, const Hardware& hw) {
  const int g = hw.gpus_per_server;
  const int n = hw.nics_per_server;
  const int R = hw.radix;
  if (n < 1) throw ParamError("server.nics", fmt::format("{} needs NICs: server.nics = 0, expected >= 1", spec.family));
  if (spec.rail_attach && g % n != 0 && n % g != 0)
    throw ParamError("server.gpus", fmt::format("{} GPUs per server cannot spread evenly over {} rails (server.nics); "
                                                "expected a multiple or divisor of {}",
                                                g, n, n));
  if (hw.nic_speed > hw.port_speed)
    throw ParamError("server.nic_speed", fmt::format("server.nic_speed = {} exceeds switch.port_speed = {}; "
                                                     "expected at most the switch port speed",
                                                     format_bandwidth(hw.nic_speed), format_bandwidth(hw.port_speed)));
  if (spec.gpus < 1 || spec.gpus % g != 0)
    throw ParamError("topology.gpus", fmt::format("topology.gpus = {} is not a whole number of {}-GPU servers; "
                                                  "expected a positive multiple of server.gpus = {}",
                                                  spec.gpus, g, g));
  const int64_t servers = spec.gpus / g;

  const int d1 = down_ports(R, spec.o1);
  const int u1 = R - d1;
  if (d1 < 1 || u1 < 1)
    throw ParamError(spec.o1_key, fmt::format("oversubscription {}:1 leaves a {}-port leaf with {} down and {} up "
                                              "ports; expected at least one of each",
                                              format_number(spec.o1), R, d1, u1));

  // Tier 1: groups and leaves.
  int64_t servers_per_group = 0, leaves_per_group = 0;
  if (spec.rail_attach) {
    servers_per_group = d1;
    leaves_per_group = n;
  } else {
    servers_per_group = d1 / n;
    leaves_per_group = 1;
    if (servers_per_group < 1)
      throw ParamError("switch.radix", fmt::format("a leaf of radix {} has {} down-ports, fewer than the {} NICs of "
                                                   "one server; expected a larger radix or fewer server.nics",
                                                   R, d1, n));
  }
  const int64_t gpus_per_group = servers_per_group * g;
  const int64_t groups = (servers + servers_per_group - 1) / servers_per_group;
  // leaves of one group that share a spine domain
  const int64_t group_leaves_in_domain = spec.rail_domains ? 1 : leaves_per_group;
  const int64_t domains_per_pod = spec.rail_domains ? n : 1;

  // Tier choice.
  const int64_t max2_groups = R / group_leaves_in_domain;
  const int64_t max2 = max2_groups * gpus_per_group;
  int tiers = spec.tiers;
  if (tiers == 0) tiers = groups <= max2_groups ? 2 : 3;
  int d2 = R, u2 = 0;
  int64_t gp = 0, gp_max = 0, pods = 1, max3 = 0;
  if (tiers == 2) {
    if (groups > max2_groups)
      throw ParamError("topology.gpus",
                       fmt::format("topology.gpus = {} exceeds the {} GPUs a 2-tier {} of radix-{} switches reaches "
                                   "({} leaves per spine domain x {} GPUs each); expected at most {}, or set {}: 3 "
                                   "(or leave it out to let podnet choose)",
                                   fmt_count(spec.gpus), fmt_count(max2), spec.family, R, max2_groups,
                                   gpus_per_group / group_leaves_in_domain, fmt_count(max2), spec.tiers_key));
    gp = groups;
  } else {
    d2 = down_ports(R, spec.o2);
    u2 = R - d2;
    if (d2 < 1 || u2 < 1)
      throw ParamError("topology.spine_oversubscription",
                       fmt::format("spine oversubscription {}:1 leaves {} down and {} up ports", format_number(spec.o2),
                                   d2, u2));
    gp_max = d2 / group_leaves_in_domain;
    const int64_t pods_max = R / domains_per_pod;
    max3 = pods_max * gp_max * gpus_per_group;
    if (gp_max < 1)
      throw ParamError("switch.radix", fmt::format("a spine with {} down-ports cannot reach the {} leaves of one group",
                                                   d2, group_leaves_in_domain));
    gp = spec.groups_per_pod > 0 ? spec.groups_per_pod : std::min<int64_t>(gp_max, groups);
    // The third tier joins spine domains: with one pod of one domain its switches would each hang off one
    // spine and carry nothing (a 1,024-GPU tree3 built 4 cores, 128 optical links and a bisection from them).
    // Unless told otherwise, split the groups over two pods; a single group, or a groups_per_pod given that
    // makes one pod, is refused.
    if (domains_per_pod == 1 && gp >= groups) {
      if (spec.groups_per_pod > 0 || groups < 2)
        throw ParamError(spec.groups_per_pod > 0 ? spec.groups_per_pod_key : spec.tiers_key,
                         fmt::format("3 tiers with all {} GPUs in one pod: the third tier joins pods, so its switches "
                                     "would carry no traffic; expected 2 tiers{}",
                                     fmt_count(spec.gpus),
                                     groups < 2 ? std::string(" (the GPUs fit under one leaf's group)")
                                                : fmt::format(", or {} below {}", spec.groups_per_pod_key, groups)));
      gp = (groups + 1) / 2;
    }
    if (gp > gp_max)
      throw ParamError("topology.groups_per_pod",
                       fmt::format("topology.groups_per_pod = {} needs {} spine down-ports per domain but a spine has "
                                   "{}; expected at most {}",
                                   gp, gp * group_leaves_in_domain, d2, gp_max));
    pods = (groups + gp - 1) / gp;
    if (pods * domains_per_pod > R) {
      // With groups_per_pod given its pods bound the fabric first; a larger one reaches up to the spines' bound.
      const std::string given = spec.groups_per_pod > 0 && gp < gp_max
                                    ? fmt::format("with {} = {} it reaches {} GPUs ({} pods x {} groups x {} GPUs); ",
                                                  spec.groups_per_pod_key, gp,
                                                  fmt_count(pods_max * gp * gpus_per_group), pods_max, gp,
                                                  gpus_per_group)
                                    : std::string();
      throw ParamError("topology.gpus",
                       fmt::format("topology.gpus = {} needs {} pods x {} spine domains = {} spines per super-spine "
                                   "plane, more than the radix {}; {}the most a 3-tier {} of radix-{} switches "
                                   "reaches is {} GPUs ({} pods x {} groups x {} GPUs); expected at most {}, a larger "
                                   "switch.radix, or a larger topology.groups_per_pod",
                                   fmt_count(spec.gpus), pods, domains_per_pod, pods * domains_per_pod, R, given,
                                   spec.family, R, fmt_count(max3), pods_max, gp_max, gpus_per_group,
                                   given.empty() ? "that" : "the first"));
    }
  }
  const int64_t Ld = gp * group_leaves_in_domain;  // leaves per (full) spine domain
  const int spine_down = tiers == 2 ? R : d2;
  int p = 0, S = 0;
  int u1_used = u1;  // leaf uplinks cabled (spread_uplinks may leave a few idle)
  if (spec.spines_per_domain > 0) {
    S = spec.spines_per_domain;
    if (u1 % S != 0)
      throw ParamError("topology.spines_per_pod",
                       fmt::format("{} spines do not divide the {} leaf uplinks evenly", S, u1));
    p = u1 / S;
    if (Ld * p > spine_down)
      throw ParamError("topology.spines_per_pod",
                       fmt::format("{} spines per pod need {} down-ports each ({} leaves x {} links), more than {}", S,
                                   Ld * p, Ld, p, spine_down));
  } else {
    const Spread sp = spread_uplinks(u1, static_cast<int>(spine_down / Ld));
    p = sp.p;
    S = sp.count;
    u1_used = sp.used;
  }
  const int64_t D = pods * domains_per_pod;
  int q = 0, C = 0;
  int u2_used = u2;
  if (tiers == 3) {
    const Spread sp = spread_uplinks(u2, static_cast<int>(R / D));
    q = sp.p;
    C = sp.count;
    u2_used = sp.used;
  }

  // ---- build ----
  Topology t;
  t.family = spec.family;
  t.switch_latency = hw.switch_latency;
  for (int i = 1; i <= tiers; ++i) t.tier_names.push_back(spec.tier_names[i]);
  add_servers(t, hw, static_cast<int32_t>(servers));
  t.groups = static_cast<int32_t>(groups);
  t.pods = static_cast<int32_t>(pods);
  for (auto& node : t.nodes) {
    if (node.server == kNone) continue;
    node.group = static_cast<int32_t>(node.server / servers_per_group);
    node.pod = static_cast<int32_t>(node.group / gp);
  }
  const uint8_t cls_access = t.link_class(std::string("nic-") + spec.tier_names[1]);
  const uint8_t cls_12 = t.link_class(std::string(spec.tier_names[1]) + "-" + spec.tier_names[2]);
  const uint8_t cls_23 = tiers == 3 ? t.link_class(std::string(spec.tier_names[2]) + "-" + spec.tier_names[3]) : 0;

  // Leaves: index by (group, rail-or-0).
  const int64_t leaves = groups * leaves_per_group;
  std::vector<NodeId> leaf_ids(leaves);
  int32_t tier_index = 0;
  for (int64_t grp = 0; grp < groups; ++grp) {
    for (int64_t r = 0; r < leaves_per_group; ++r) {
      Node sw;
      sw.kind = NodeKind::Switch;
      sw.tier = 1;
      sw.group = static_cast<int32_t>(grp);
      sw.pod = static_cast<int32_t>(grp / gp);
      sw.local = tier_index++;
      if (spec.rail_attach) {
        sw.rail = static_cast<int32_t>(r);
        sw.name = fmt::format("su{}-{}-r{}", padded(grp, groups), spec.tier_names[1], r);
      } else {
        sw.name = fmt::format("{}-{}", spec.tier_names[1], padded(grp, groups));
      }
      leaf_ids[grp * leaves_per_group + r] = t.add_node(std::move(sw));
    }
  }
  // NIC cables by rack layout (hardware.hpp), in racks between the server and its leaf: a rail group's leaves stand
  // in a network rack in the middle of the group's server racks (between racks m and m + 1, m = the middle one), a
  // ToR leaf in the middle server rack m of its few servers; server_to_leaf reaches the leaf's rack and the racks
  // beside it, each rack farther adds rack_width (a group's leaves that need more than one network rack spill into
  // the next one: lengths still count the one between m and m + 1). The length decides the media (and so the BOM, cost,
  // power and optics); every NIC cable keeps server_to_leaf's propagation delay: a far rack's few tens of ns more on a
  // 5 us network hop would only stagger the flow engine's events (one iteration of the default job 2.1 -> 3.1 s of CPU
  // for a 0.0001 % change).
  const int per_rack = servers_per_rack(hw);
  const auto racks_away = [&](int64_t sv) -> int64_t {
    const int64_t grp = sv / servers_per_group;
    const int64_t first = grp * servers_per_group, last = std::min(servers, first + servers_per_group) - 1;
    const int64_t r = sv / per_rack, m = (first / per_rack + last / per_rack) / 2;
    if (!spec.rail_attach) return std::abs(r - m);
    return r <= m ? m - r + 1 : r - m;  // the network rack stands between racks m and m + 1
  };
  const auto access_length = [&](int64_t sv) {
    return hw.server_to_leaf_m + static_cast<double>(std::max<int64_t>(0, racks_away(sv) - 1)) * hw.rack_width_m;
  };
  const Time access_latency = cable_latency(hw, hw.server_to_leaf_m);
  for (NodeId nic : t.nics) {
    const Node& nn = t.nodes[nic];
    const int64_t grp = nn.server / servers_per_group;
    const NodeId leaf = leaf_ids[grp * leaves_per_group + (spec.rail_attach ? nn.local : 0)];
    const double len = access_length(nn.server);
    t.connect(nic, leaf, hw.nic_speed, access_latency, len, media_for(hw, len), cls_access);
  }

  // Spines: per pod, per domain (rail or 0), S spines.
  std::vector<NodeId> spine_ids(pods * domains_per_pod * S);
  tier_index = 0;
  const double ls_len = hw.leaf_to_spine_m;
  for (int64_t pod = 0; pod < pods; ++pod) {
    for (int64_t dom = 0; dom < domains_per_pod; ++dom) {
      for (int s = 0; s < S; ++s) {
        Node sw;
        sw.kind = NodeKind::Switch;
        sw.tier = 2;
        sw.pod = static_cast<int32_t>(pod);
        sw.local = tier_index++;
        if (spec.rail_domains) {
          sw.rail = static_cast<int32_t>(dom);
          sw.name = fmt::format("pod{}-{}-r{}-{}", padded(pod, pods), spec.tier_names[2], dom, padded(s, S));
        } else {
          sw.name = fmt::format("pod{}-{}-{}", padded(pod, pods), spec.tier_names[2], padded(s, S));
        }
        NodeId id = t.add_node(std::move(sw));
        spine_ids[(pod * domains_per_pod + dom) * S + s] = id;
      }
      // leaves of this domain: groups of the pod; rail `dom` (rail domains) or all rails
      for (int64_t grp = pod * gp; grp < std::min(groups, (pod + 1) * gp); ++grp) {
        for (int64_t r = 0; r < leaves_per_group; ++r) {
          if (spec.rail_domains && r != dom) continue;
          const NodeId leaf = leaf_ids[grp * leaves_per_group + r];
          for (int s = 0; s < S; ++s)
            for (int k = 0; k < p; ++k)
              t.connect(leaf, spine_ids[(pod * domains_per_pod + dom) * S + s], hw.port_speed,
                        cable_latency(hw, ls_len), ls_len, media_for(hw, ls_len), cls_12);
        }
      }
    }
  }

  // Super-spines: plane s joins spine s of every domain; C per plane.
  if (tiers == 3) {
    const double ss_len = hw.spine_to_super_m;
    // A switch's name is its hostname (config plan, NetBox): letters, digits and
    // hyphens only (RFC 1123 section 2.1), so the tier's `_` becomes `-`.
    std::string top_label = spec.tier_names[3];
    std::replace(top_label.begin(), top_label.end(), '_', '-');
    tier_index = 0;
    for (int s = 0; s < S; ++s) {
      std::vector<NodeId> plane;
      for (int c = 0; c < C; ++c) {
        Node sw;
        sw.kind = NodeKind::Switch;
        sw.tier = 3;
        sw.local = tier_index++;
        sw.name = fmt::format("{}-{}-{}", top_label, padded(s, S), padded(c, C));
        plane.push_back(t.add_node(std::move(sw)));
      }
      for (int64_t d = 0; d < D; ++d)
        for (int c = 0; c < C; ++c)
          for (int k = 0; k < q; ++k)
            t.connect(spine_ids[d * S + s], plane[c], hw.port_speed, cable_latency(hw, ss_len), ss_len,
                      media_for(hw, ss_len), cls_23);
    }
  }

  // ---- facts ----
  Facts& f = t.facts;
  if (tiers == 2) {
    f.max_gpus = max2;
    f.max_gpus_reason = fmt::format("2 tiers: a radix-{} spine reaches {} leaves per spine domain; {} GPUs per "
                                    "aggregation group; a third tier (topology.tiers: 3) goes further",
                                    R, max2_groups * group_leaves_in_domain, gpus_per_group);
  } else {
    // A groups_per_pod given bounds every pod (the scenario grows by pods of that size), not the spines' ports.
    const int64_t gp_bound = spec.groups_per_pod > 0 ? gp : gp_max;
    f.max_gpus = R / domains_per_pod * gp_bound * gpus_per_group;
    f.max_gpus_reason = fmt::format("3 tiers: {} pods x {} spine domains per pod <= radix {} super-spine ports; "
                                    "{} groups per pod x {} GPUs per group",
                                    R / domains_per_pod, domains_per_pod, R, gp_bound, gpus_per_group);
  }
  const bool multi_leaf_domain = Ld > 1 || (leaves > 1 && !spec.rail_domains);
  f.diameter_hops = tiers == 3 && D > 1 ? 4 : (multi_leaf_domain ? 2 : 0);
  double cap[3] = {0, 0, 0};
  for (const auto& l : t.links) {
    if (l.cls == cls_access) cap[0] += l.capacity.bps;
    else if (l.cls == cls_12) cap[1] += l.capacity.bps;
    else if (tiers == 3 && l.cls == cls_23) cap[2] += l.capacity.bps;
  }
  f.bisection_bps = std::min(cap[0], cap[1]) / 2;
  if (tiers == 3) f.bisection_bps = std::min(f.bisection_bps, cap[2] / 2);
  f.bisection_method = "half the smallest total capacity a tier offers upward (NIC, leaf uplinks, spine uplinks): "
                       "the standard bound for a folded Clos";
  f.oversubscription.emplace_back(spec.tier_names[1], static_cast<double>(d1) / u1_used);
  if (tiers == 3) f.oversubscription.emplace_back(spec.tier_names[2], static_cast<double>(d2) / u2_used);
  auto idle = [](int up, int used) {
    return up == used ? std::string()
                      : fmt::format(" ({} of them cabled: {} left idle so the rest spread evenly)", used, up - used);
  };
  f.notes.push_back(fmt::format("{}: {} down / {} up ports{}; {} {} per spine domain, {} parallel link(s) to each of "
                                "{} {}s per domain",
                                spec.tier_names[1], d1, u1, idle(u1, u1_used), Ld, spec.tier_names[1], p, S,
                                spec.tier_names[2]));
  if (tiers == 3)
    f.notes.push_back(fmt::format("{}: {} down / {} up ports{}; {} planes of {} {}s, {} parallel link(s) from each of "
                                  "{} spine domains",
                                  spec.tier_names[2], d2, u2, idle(u2, u2_used), S, C, spec.tier_names[3], q, D));
  if (tiers == 3 && groups % gp != 0)  // the last pod is partly filled, its spine layer built whole
    f.notes.push_back(fmt::format(
        "pod {} holds {} of the {} groups a pod takes: its {}s and their {} links are built for {}, so each {} "
        "there uses {} of its {} down-ports and cables all {} up, and capex counts them; a {} that divides the {} "
        "groups fills every pod",
        pods - 1, groups % gp, gp, spec.tier_names[2], spec.tier_names[3], gp, spec.tier_names[2],
        (groups % gp) * group_leaves_in_domain * p, d2, u2_used, spec.groups_per_pod_key, groups));
  if (spec.rail_domains && tiers == 2 && n > 1)
    f.notes.push_back("rails are separate 2-tier planes: NICs on different rails reach each other only through "
                      "NVLink inside a server (PXN); the diameter is within a rail");
  // Say how the NIC cables came out: how many run past the racks beside the leaf's, how long, in what.
  {
    int64_t far = 0, max_away = 0, optical = 0;
    for (int64_t sv = 0; sv < servers; ++sv) {
      const int64_t away = racks_away(sv);
      max_away = std::max(max_away, away);
      if (away > 1) far += n;  // every NIC of the server goes to this group's leaves
      if (media_for(hw, access_length(sv)) == Media::Optical) optical += n;
    }
    if (far > 0)
      f.notes.push_back(fmt::format(
          "NIC cables: a {} stands {} and serves servers up to {} racks away ({} servers a rack, "
          "cabling.rack_width {} m a rack); {} of the {} NIC cables run past the racks beside its own, up to {} m; "
          "{} of the {} are optical (longer than cabling.copper_max_length {} m)",
          spec.tier_names[1],
          spec.rail_attach ? "in a network rack in the middle of its group's row" : "in the middle rack of its servers",
          max_away, per_rack, format_number(hw.rack_width_m), fmt_count(far), fmt_count(servers * n),
          format_number(hw.server_to_leaf_m + static_cast<double>(max_away - 1) * hw.rack_width_m), fmt_count(optical),
          fmt_count(servers * n), format_number(hw.copper_max_m)));
  }
  t.finalize();
  return t;
}

int optional_int(const Params& p, const char* key) { return p.has(key) ? static_cast<int>(p.get_int(key)) : 0; }

std::vector<ParamSpec> fat_tree_params() {
  return {
      {"gpus", ParamType::Int, "1024", "GPUs in the fabric (a multiple of server.gpus)", 1,
       static_cast<double>(kMaxGpus)},
      {"tiers",
       ParamType::Int,
       "",
       "switch tiers: 2 (leaf-spine) or 3 (leaf-spine-core); default: the fewest that fit",
       2,
       3,
       {},
       true},
      {"oversubscription", ParamType::Ratio, "1:1", "leaf down:up port ratio"},
      {"spine_oversubscription", ParamType::Ratio, "1:1", "spine down:up port ratio (3 tiers)"},
      {"rail_optimized", ParamType::Bool, "false",
       "NIC r of each server goes to the rail-r leaf of its group (else all NICs of a server share one leaf)"},
      {"k",
       ParamType::Int,
       "",
       "classic k-ary fat-tree: switch radix k, 3 tiers, 1:1, k^3/4 NIC ports (sets "
       "switch.radix and topology.gpus)",
       2,
       256,
       {},
       true},
      {"groups_per_pod",
       ParamType::Int,
       "",
       "aggregation groups (leaves, or rail-leaf sets) per pod (3 tiers); "
       "default: as many as a spine reaches",
       1,
       1e6,
       {},
       true},
      {"spines_per_pod",
       ParamType::Int,
       "",
       "spines per pod (must divide the leaf uplinks); default: fewest",
       1,
       4096,
       {},
       true},
  };
}

Topology build_fat_tree(const Params& p, const Hardware& hw_in) {
  ClosSpec s;
  s.family = "fat_tree";
  Hardware hw = hw_in;
  s.gpus = p.get_int("gpus");
  s.tiers = optional_int(p, "tiers");
  s.o1 = p.get_real("oversubscription");
  s.o2 = p.get_real("spine_oversubscription");
  s.rail_attach = p.get_bool("rail_optimized");
  s.groups_per_pod = optional_int(p, "groups_per_pod");
  s.spines_per_domain = optional_int(p, "spines_per_pod");
  s.tier_names[3] = "core";
  if (p.has("k")) {
    const int k = static_cast<int>(p.get_int("k"));
    if (k % 2 != 0) throw ParamError("topology.k", fmt::format("topology.k = {} is odd; expected an even radix", k));
    if ((k / 2) % hw.nics_per_server != 0)
      throw ParamError("topology.k",
                       fmt::format("a k = {} edge switch has {} host ports, not a multiple of the {} NICs "
                                   "per server; expected server.nics dividing k/2",
                                   k, k / 2, hw.nics_per_server));
    hw.radix = k;
    s.tiers = 3;
    s.o1 = s.o2 = 1;
    s.rail_attach = false;
    s.groups_per_pod = k / 2;
    s.gpus = k_ary_fat_tree_gpus(k, hw.gpus_per_server, hw.nics_per_server);
  }
  return build_clos(s, hw);
}

std::vector<ParamSpec> rail_clos_params() {
  return {
      {"gpus", ParamType::Int, "16384", "GPUs in the fabric (a multiple of server.gpus)", 1,
       static_cast<double>(kMaxGpus)},
      {"rails",
       ParamType::Int,
       "",
       "rails (= server.nics: NIC r of every server goes to rail r); default server.nics",
       1,
       64,
       {},
       true},
      {"tiers",
       ParamType::Int,
       "",
       "2 = leaf + spine per rail; 3 = plus a super-spine joining rails and pods; "
       "default: the fewest that fit",
       2,
       3,
       {},
       true},
      {"oversubscription", ParamType::Ratio, "1:1", "leaf down:up port ratio"},
      {"spine_oversubscription", ParamType::Ratio, "1:1", "spine down:up port ratio (3 tiers)"},
      {"groups_per_pod",
       ParamType::Int,
       "",
       "aggregation groups per pod (3 tiers); default: as many as a spine "
       "reaches",
       1,
       1e6,
       {},
       true},
  };
}

Topology build_rail_clos(const Params& p, const Hardware& hw) {
  ClosSpec s;
  s.family = "rail_clos";
  s.gpus = p.get_int("gpus");
  if (p.has("rails") && p.get_int("rails") != hw.nics_per_server)
    throw ParamError("topology.rails",
                     fmt::format("topology.rails = {} but servers have {} NICs (server.nics); rail_clos puts NIC r on "
                                 "rail r, so expected server.nics = {}",
                                 p.get_int("rails"), hw.nics_per_server, p.get_int("rails")));
  if (hw.gpus_per_server % hw.nics_per_server != 0 && hw.nics_per_server % hw.gpus_per_server != 0)
    throw ParamError("server.gpus",
                     fmt::format("{} GPUs per server cannot spread over {} rails; expected a multiple or "
                                 "divisor of {}",
                                 hw.gpus_per_server, hw.nics_per_server, hw.nics_per_server));
  s.tiers = optional_int(p, "tiers");
  s.o1 = p.get_real("oversubscription");
  s.o2 = p.get_real("spine_oversubscription");
  s.rail_attach = true;
  s.rail_domains = true;
  s.groups_per_pod = optional_int(p, "groups_per_pod");
  return build_clos(s, hw);
}

std::vector<ParamSpec> tree3_params() {
  return {
      {"gpus", ParamType::Int, "1024", "GPUs in the fabric (a multiple of server.gpus)", 1,
       static_cast<double>(kMaxGpus)},
      {"access_oversubscription", ParamType::Ratio, "3:1", "access switch down:up port ratio"},
      {"aggregation_oversubscription", ParamType::Ratio, "3:1", "aggregation switch down:up port ratio"},
      {"access_per_pod",
       ParamType::Int,
       "",
       "access switches per pod; default: as many as an aggregation switch "
       "reaches",
       1,
       1e6,
       {},
       true},
      {"aggregation_per_pod",
       ParamType::Int,
       "",
       "aggregation switches per pod (divides the access uplinks); "
       "default: fewest",
       1,
       4096,
       {},
       true},
  };
}

Topology build_tree3(const Params& p, const Hardware& hw) {
  ClosSpec s;
  s.family = "tree3";
  s.gpus = p.get_int("gpus");
  s.tiers = 3;
  s.o1 = p.get_real("access_oversubscription");
  s.o2 = p.get_real("aggregation_oversubscription");
  s.o1_key = "topology.access_oversubscription";
  s.groups_per_pod = optional_int(p, "access_per_pod");
  s.groups_per_pod_key = "topology.access_per_pod";
  s.tiers_key = "topology.family";  // always 3 tiers: 2 is family fat_tree
  s.spines_per_domain = optional_int(p, "aggregation_per_pod");
  s.tier_names[1] = "access";
  s.tier_names[2] = "aggregation";
  s.tier_names[3] = "core";
  return build_clos(s, hw);
}

}  // namespace

int64_t k_ary_fat_tree_gpus(int64_t k, int64_t gpus_per_server, int64_t nics_per_server) {
  if (k < 2 || k % 2 != 0 || nics_per_server < 1 || (k / 2) % nics_per_server != 0) return 0;
  return k * k * k / 4 / nics_per_server * gpus_per_server;
}

namespace {

// topology.k decides the size and radix of a k-ary fat tree, as its help says: topology.gpus = k^3/4 NIC
// ports x GPUs per NIC and switch.radix = k, whatever else was given (a file's radix 48 follows a --set
// topology.k=8); resolve printed the default `gpus: 1024` for fat-tree-k48's 27,648 GPUs. An odd k or NICs
// not dividing k/2: the builder says why.
void derive_k_ary(Params& topology, const Params& server, Params& sw) {
  if (!topology.has("k")) return;
  const int64_t k = topology.get_int("k");
  const int64_t gpus = k_ary_fat_tree_gpus(k, server.get_int("gpus"), server.get_int("nics"));
  if (gpus == 0) return;
  topology.set("gpus", gpus, std::to_string(gpus));
  sw.set("radix", k, std::to_string(k));
}

}  // namespace

BuilderInfo fat_tree_builder() {
  return {"fat_tree", "2- or 3-tier folded Clos (leaf-spine[-core]), non-blocking or oversubscribed; k-ary fat-tree",
          fat_tree_params, build_fat_tree, derive_k_ary};
}
BuilderInfo rail_clos_builder() {
  return {"rail_clos",
          "rail-optimized multi-plane Clos (AIPod-style): NIC r of each server on rail r, per-rail spines, optional "
          "super-spine joining rails and pods",
          rail_clos_params, build_rail_clos};
}
BuilderInfo tree3_builder() {
  return {"tree3", "traditional 3-tier access/aggregation/core tree with oversubscription at each tier", tree3_params,
          build_tree3};
}

}  // namespace podnet::topology
