#include "topology/clos.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <limits>

#include "core/error.hpp"

namespace podnet::topology {

namespace {

struct ClosSpec {
  const char* family;
  int64_t gpus = 0;
  int tiers = 0;                  // 2, 3 or 4; 0 = fewest that fit
  int max_tiers = 4;              // tree3: 3
  double o1 = 1, o2 = 1, o3 = 1;  // oversubscription down:up at leaf, spine, super-spine (4 tiers)
  bool rail_attach = false;       // NIC r of a server -> the rail-r leaf of its group
  bool rail_domains = false;      // spines serve the leaves of one rail (per pod)
  int groups_per_pod = 0;         // 0 = as many as fit
  int spines_per_domain = 0;      // 0 = fewest (most parallel links)
  int pods_per_zone = 0;          // 4 tiers; 0 = as many as fit
  const char* tier_names[4] = {"", "leaf", "spine", "super_spine"};  // 4 tiers: leaf, spine, super_spine, core
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
// prime: 43 switches with one link each, using 1/pmax of their down-ports), cabling count = floor(up / p)
// switches with p links each for some other p <= pmax needs far fewer. Among the p that leave at most
// 10 % of the uplinks idle and need at most half the uniform spread's switches the fewest switches are
// taken (ties: the fewest idle), so 43 uplinks with pmax 4 cable 40 to 10 switches and with pmax 32 cable
// 42 to 2, while 16 with pmax 6 stay 4 x 4 (3 x 5 would save one switch for 6 % of the uplinks); the
// design's oversubscription then counts only the uplinks used.
struct Spread {
  int p = 0, count = 0, used = 0;
};
Spread spread_uplinks(int up, int pmax) {
  Spread s;
  s.p = largest_divisor_at_most(up, pmax);
  s.used = up;
  s.count = up / s.p;
  for (int p = std::min(up, pmax); p > s.p; --p) {
    const int count = up / p, used = count * p;
    if (10 * (up - used) > up || 2 * count > up / s.p) continue;
    if (count < s.count || (count == s.count && used > s.used)) s = {p, count, used};
  }
  return s;
}

int down_ports(int radix, double o) { return static_cast<int>(std::floor(radix * o / (o + 1.0) + 1e-9)); }

// How to fill every pod (zone): the largest divisor of the `n` groups (pods) up to `most`, below n (one pod or
// zone of everything is refused), whose pods (zones) number at most `max_units` (what the tier above joins);
// "11 pods" with 8 at most: 1. `now`: the pods (zones) built.
std::string filling_hint(const char* key, int64_t n, int64_t most, const char* things, const char* unit, int64_t now,
                         int64_t max_units) {
  // It evens the idle ports out over every pod; it removes none: as many pods (or more) keep their layers whole.
  for (int64_t d = std::min(most, n - 1); d >= 1; --d) {
    if (n % d != 0) continue;
    if (n / d > max_units) break;  // a smaller divisor makes more of them still
    const int64_t units = n / d;
    return fmt::format("{} = {} divides the {} {} and fills every {} ({}: {})", key, d, thousands(n), things, unit,
                       thousands(units) + " " + unit + (units == 1 ? "" : "s"),
                       units == now  ? "as now, so the same switches and capex, the idle ports spread over all"
                       : units > now ? fmt::format("more than the {} now, so more switches", thousands(now))
                                     : fmt::format("fewer than the {} now, so fewer switches", thousands(now)));
  }
  return fmt::format("no {} up to {} divides the {} {} into at most {} {}s, so no value fills every {}", key, most,
                     thousands(n), things, thousands(max_units), unit, unit);
}

// A cable length in metres: whole metres with thousands separators (50,000), else as given (0.6).
std::string metres(double m) {
  return m == std::floor(m) && m < 1e15 ? thousands(static_cast<int64_t>(m)) : format_number(m);
}

// The numbers of a Clos: how many of each switch, and how they are cabled.
struct ClosSize {
  int g = 0, n = 0, R = 0;  // GPUs and NICs per server, switch radix
  int64_t servers = 0;
  int d1 = 0, u1 = 0;  // leaf down / up ports
  int64_t servers_per_group = 0, leaves_per_group = 0, gpus_per_group = 0, groups = 0;
  int64_t group_leaves_in_domain = 0;  // leaves of one group that share a spine domain
  int64_t domains_per_pod = 1;
  int64_t max2_groups = 0, max2 = 0;  // what 2 tiers reach
  int tiers = 0;
  int d2 = 0, u2 = 0;  // spine down / up ports (3 tiers)
  int64_t gp = 0, gp_max = 0, pods = 1;
  int64_t Ld = 0;    // leaves per (full) spine domain
  int p = 0, S = 0;  // parallel links from a leaf to each spine; spines per domain
  int u1_used = 0;   // leaf uplinks cabled (spread_uplinks may leave a few idle)
  int64_t D = 0;     // spine domains
  int q = 0, C = 0;  // parallel links from a spine to each super-spine; super-spines per plane (per zone)
  int u2_used = 0;   // spine uplinks cabled
  // 4 tiers: a zone is pz pods whose spines share super-spines; cores join the zones.
  int d3 = 0, u3 = 0;                     // super-spine down / up ports
  int64_t pz = 0, pz_max = 0, zones = 1;  // pods per zone; zones
  int64_t Dz = 0;                         // spine domains per (full) zone (3 tiers: D)
  int r = 0, K = 0;                       // parallel links from a super-spine to each core; cores per plane
  int u3_used = 0;                        // super-spine uplinks cabled
  int64_t leaves() const { return groups * leaves_per_group; }
  int32_t zone_of_pod(int64_t pod) const { return tiers == 4 ? static_cast<int32_t>(pod / pz) : kNone; }
};

// Servers, NICs and ports: the checks every Clos makes before its tiers.
void size_servers_and_leaves(const ClosSpec& spec, const Hardware& hw, ClosSize& z) {
  z.g = hw.gpus_per_server;
  z.n = hw.nics_per_server;
  z.R = hw.radix;
  const int g = z.g, n = z.n, R = z.R;
  if (n < 1) throw ParamError("server.nics", fmt::format("{} needs NICs: server.nics = 0, expected >= 1", spec.family));
  if (spec.rail_attach && g % n != 0 && n % g != 0)
    throw ParamError("server.gpus", fmt::format("{} GPUs per server cannot spread evenly over {} rails (server.nics); "
                                                "expected a multiple or divisor of {}",
                                                g, n, n));
  if (hw.nic_speed > hw.port_speed) {
    // A NIC a whole number of ports wide can also keep the switches: its ports on planes (topology/planes.hpp), as
    // 1.6T NICs on 102.4T switches of 128 x 800G.
    const double k = hw.nic_speed.bps / hw.port_speed.bps;
    const bool planes = hw.nic_planes == 1 && k >= 2 && k <= 16 && std::fabs(k - std::round(k)) < 1e-9;
    throw ParamError("server.nic_speed",
                     fmt::format("server.nic_speed = {} exceeds switch.port_speed = {}; "
                                 "expected at most the switch port speed (a faster NIC needs faster switch "
                                 "ports: set switch.port_speed={} with it{})",
                                 format_bandwidth(hw.nic_speed), format_bandwidth(hw.port_speed),
                                 format_bandwidth(hw.nic_speed),
                                 planes ? fmt::format(", or keep the switches and give each NIC {} ports of {} on {} "
                                                      "planes: server.nic_planes={}",
                                                      std::llround(k), format_bandwidth(hw.port_speed), std::llround(k),
                                                      std::llround(k))
                                        : std::string()));
  }
  if (spec.gpus < 1 || spec.gpus % g != 0)
    throw ParamError("topology.gpus", fmt::format("topology.gpus = {} is not a whole number of {}-GPU servers; "
                                                  "expected a positive multiple of server.gpus = {}",
                                                  thousands(spec.gpus), g, g));
  z.servers = spec.gpus / g;
  z.d1 = down_ports(R, spec.o1);
  z.u1 = R - z.d1;
  if (z.d1 < 1 || z.u1 < 1)
    throw ParamError(spec.o1_key, fmt::format("oversubscription {}:1 leaves a {}-port leaf with {} down and {} up "
                                              "ports; expected at least one of each",
                                              format_number(spec.o1), R, z.d1, z.u1));
  // Tier 1: groups and leaves.
  if (spec.rail_attach) {
    z.servers_per_group = z.d1;
    z.leaves_per_group = n;
  } else {
    z.servers_per_group = z.d1 / n;
    z.leaves_per_group = 1;
    if (z.servers_per_group < 1)
      throw ParamError("switch.radix", fmt::format("a leaf of radix {} has {} down-ports, fewer than the {} NICs of "
                                                   "one server; expected a larger radix or fewer server.nics",
                                                   R, z.d1, n));
  }
  z.gpus_per_group = z.servers_per_group * g;
  z.groups = (z.servers + z.servers_per_group - 1) / z.servers_per_group;
  z.group_leaves_in_domain = spec.rail_domains ? 1 : z.leaves_per_group;
  z.domains_per_pod = spec.rail_domains ? n : 1;
  z.max2_groups = R / z.group_leaves_in_domain;
  z.max2 = z.max2_groups * z.gpus_per_group;
}

// 4 tiers: the pods per zone and the zones. A zone's spines share super-spines (each super-spine plane
// joins spine s of every spine domain of the zone); the cores join the zones' super-spines plane by plane.
void size_zones(const ClosSpec& spec, ClosSize& z) {
  const int R = z.R;
  z.d3 = down_ports(R, spec.o3);
  z.u3 = R - z.d3;
  if (z.d3 < 1 || z.u3 < 1)
    throw ParamError("topology.super_spine_oversubscription",
                     fmt::format("super-spine oversubscription {}:1 leaves {} down and {} up ports; expected at "
                                 "least one of each",
                                 format_number(spec.o3), z.d3, z.u3));
  z.pz_max = z.d3 / z.domains_per_pod;
  if (z.pz_max < 1)
    throw ParamError("switch.radix", fmt::format("a super-spine with {} down-ports cannot reach the {} spine domains "
                                                 "(rails) of one pod; expected a larger switch.radix",
                                                 z.d3, z.domains_per_pod));
  z.pz = spec.pods_per_zone > 0 ? spec.pods_per_zone : std::min(z.pz_max, z.pods);
  // The fourth tier joins zones: with one zone its cores would carry nothing. Unless told otherwise, split
  // the pods over two zones; a single pod, or a pods_per_zone given that makes one zone, is refused.
  if (z.pz >= z.pods) {
    if (spec.pods_per_zone > 0 || z.pods < 2)
      throw ParamError(spec.pods_per_zone > 0 ? "topology.pods_per_zone" : spec.tiers_key,
                       fmt::format("4 tiers with all {} GPUs in one zone: the fourth tier joins zones of pods, so its "
                                   "switches would carry no traffic; expected 3 tiers{}",
                                   thousands(spec.gpus),
                                   z.pods < 2 ? std::string(" (the GPUs fit in one pod)")
                                              : fmt::format(", or topology.pods_per_zone below {}", z.pods)));
    z.pz = (z.pods + 1) / 2;
  }
  if (z.pz > z.pz_max)
    throw ParamError("topology.pods_per_zone",
                     fmt::format("topology.pods_per_zone = {} needs {} super-spine down-ports ({} pods x {} spine "
                                 "domains) but a super-spine has {}; expected at most {}",
                                 z.pz, z.pz * z.domains_per_pod, z.pz, z.domains_per_pod, z.d3, z.pz_max));
  // A zone of one spine domain (one pod of a family whose pods are one domain) would hang each super-spine
  // off a single spine: it joins nothing.
  if (z.pz * z.domains_per_pod < 2)
    throw ParamError(spec.pods_per_zone > 0 ? "topology.pods_per_zone" : spec.tiers_key,
                     fmt::format("4 tiers with zones of one pod of one spine domain: each super-spine would hang off "
                                 "a single spine and join nothing; expected 3 tiers, or zones of at least 2 pods "
                                 "(topology.pods_per_zone; this fabric has {} pods)",
                                 z.pods));
  z.zones = (z.pods + z.pz - 1) / z.pz;
  if (z.zones > R) {
    const int64_t max4 = R * z.pz * z.gp * z.gpus_per_group;
    std::string larger;  // what a larger pod or zone would reach, below the spines' and super-spines' bounds
    if (z.gp < z.gp_max) larger += fmt::format(", or a larger {} (up to {})", spec.groups_per_pod_key, z.gp_max);
    if (z.pz < z.pz_max) larger += fmt::format(", or a larger topology.pods_per_zone (up to {})", z.pz_max);
    throw ParamError("topology.gpus",
                     fmt::format("topology.gpus = {} needs {} zones of {}, more than the {} ports of a core "
                                 "switch; the most a 4-tier {} of radix-{} switches reaches with these pods is {} "
                                 "GPUs ({} zones x {} x {} x {} GPUs); expected at most {}{}, or a larger "
                                 "switch.radix",
                                 thousands(spec.gpus), thousands(z.zones), plural(z.pz, "pod", "pods"), R, spec.family,
                                 R, thousands(max4), R, plural(z.pz, "pod", "pods"), plural(z.gp, "group", "groups"),
                                 z.gpus_per_group, thousands(max4), larger));
  }
}

// Tier choice, and with 3 or 4 tiers the groups per pod and the pods (and zones).
void size_tiers(const ClosSpec& spec, ClosSize& z) {
  const int R = z.R;
  z.tiers = spec.tiers != 0 ? spec.tiers : (z.groups <= z.max2_groups ? 2 : 3);
  z.d2 = R;
  if (z.tiers == 2) {
    if (z.groups > z.max2_groups)
      throw ParamError("topology.gpus",
                       fmt::format("topology.gpus = {} exceeds the {} GPUs a 2-tier {} of radix-{} switches reaches "
                                   "({} groups of {} GPUs: a spine's {} ports reach {} lea{} in each of {} groups); "
                                   "expected at most {}, or set {}: 3 (or auto, to let podnet choose)",
                                   thousands(spec.gpus), thousands(z.max2), spec.family, R, z.max2_groups,
                                   thousands(z.gpus_per_group), R, z.group_leaves_in_domain,
                                   z.group_leaves_in_domain == 1 ? "f" : "ves", z.max2_groups, thousands(z.max2),
                                   spec.tiers_key));
    z.gp = z.groups;
    return;
  }
  z.d2 = down_ports(R, spec.o2);
  z.u2 = R - z.d2;
  if (z.d2 < 1 || z.u2 < 1)
    throw ParamError("topology.spine_oversubscription",
                     fmt::format("spine oversubscription {}:1 leaves {} down and {} up ports", format_number(spec.o2),
                                 z.d2, z.u2));
  z.gp_max = z.d2 / z.group_leaves_in_domain;
  const int64_t pods_max = R / z.domains_per_pod;
  const int64_t max3 = pods_max * z.gp_max * z.gpus_per_group;
  if (z.gp_max < 1)
    throw ParamError("switch.radix", fmt::format("a spine with {} down-ports cannot reach the {} leaves of one group",
                                                 z.d2, z.group_leaves_in_domain));
  z.gp = spec.groups_per_pod > 0 ? spec.groups_per_pod : std::min<int64_t>(z.gp_max, z.groups);
  // The third tier joins spine domains: with one pod of one domain its switches would each hang off one
  // spine and carry nothing (a 1,024-GPU tree3 built 4 cores, 128 optical links and a bisection from them).
  // Unless told otherwise, split the groups over two pods; a single group, or a groups_per_pod given that
  // makes one pod, is refused.
  if (z.domains_per_pod == 1 && z.gp >= z.groups) {
    if (spec.groups_per_pod > 0 || z.groups < 2)
      throw ParamError(spec.groups_per_pod > 0 ? spec.groups_per_pod_key : spec.tiers_key,
                       fmt::format("3 tiers with all {} GPUs in one pod: the third tier joins pods, so its switches "
                                   "would carry no traffic; expected 2 tiers{}",
                                   thousands(spec.gpus),
                                   z.groups < 2 ? std::string(" (the GPUs fit under one leaf's group)")
                                                : fmt::format(", or {} below {}", spec.groups_per_pod_key, z.groups)));
    z.gp = (z.groups + 1) / 2;
  }
  if (z.gp > z.gp_max)
    throw ParamError("topology.groups_per_pod",
                     fmt::format("topology.groups_per_pod = {} needs {} spine down-ports per domain but a spine has "
                                 "{} (switch.radix {}); expected groups_per_pod at most {} (or left out: auto), or a "
                                 "larger switch.radix",
                                 z.gp, z.gp * z.group_leaves_in_domain, z.d2, R, z.gp_max));
  z.pods = (z.groups + z.gp - 1) / z.gp;
  if (z.tiers == 3 && z.pods * z.domains_per_pod > R && spec.tiers == 0 && spec.max_tiers >= 4) {
    z.tiers = 4;  // auto: past what one super-spine tier joins, a fourth joins zones of pods
  } else if (z.tiers == 3 && z.pods * z.domains_per_pod > R) {
    // With groups_per_pod given its pods bound the fabric first; a larger one reaches up to the spines' bound.
    const std::string given =
        spec.groups_per_pod > 0 && z.gp < z.gp_max
            ? fmt::format("with {} = {} it reaches {} GPUs ({} pods x {} groups x {} GPUs); ", spec.groups_per_pod_key,
                          z.gp, thousands(pods_max * z.gp * z.gpus_per_group), pods_max, z.gp, z.gpus_per_group)
            : std::string();
    throw ParamError(
        "topology.gpus",
        fmt::format("topology.gpus = {} needs {} pods x {} spine domains = {} spines per super-spine "
                    "plane, more than the radix {}; {}the most a 3-tier {} of radix-{} switches "
                    "reaches is {} GPUs ({} pods x {} groups x {} GPUs); expected at most {}, or a "
                    "larger switch.radix{}{}",
                    thousands(spec.gpus), thousands(z.pods), z.domains_per_pod, thousands(z.pods * z.domains_per_pod),
                    R, given, spec.family, R, thousands(max3), pods_max, z.gp_max, z.gpus_per_group,
                    given.empty() ? "that" : "the first",
                    // a larger pod helps only below the spines' bound
                    z.gp < z.gp_max ? fmt::format(" or {} up to {}", spec.groups_per_pod_key, z.gp_max) : std::string(),
                    spec.max_tiers >= 4 ? fmt::format(", or {}: 4 (or auto)", spec.tiers_key) : std::string()));
  }
  if (z.tiers == 4) size_zones(spec, z);
}

// Spines per domain and super-spines per plane, and their parallel links.
void size_spreads(const ClosSpec& spec, ClosSize& z) {
  z.Ld = z.gp * z.group_leaves_in_domain;
  const int spine_down = z.tiers == 2 ? z.R : z.d2;
  z.u1_used = z.u1;
  if (spec.spines_per_domain > 0) {
    z.S = spec.spines_per_domain;
    if (z.u1 % z.S != 0)
      throw ParamError("topology.spines_per_pod",
                       fmt::format("{} spines do not divide the {} leaf uplinks evenly", z.S, z.u1));
    z.p = z.u1 / z.S;
    if (z.Ld * z.p > spine_down)
      throw ParamError("topology.spines_per_pod",
                       fmt::format("{} spines per pod need {} down-ports each ({} leaves x {} links), more than {}",
                                   z.S, z.Ld * z.p, z.Ld, z.p, spine_down));
  } else {
    const Spread sp = spread_uplinks(z.u1, static_cast<int>(spine_down / z.Ld));
    z.p = sp.p;
    z.S = sp.count;
    z.u1_used = sp.used;
  }
  z.D = z.pods * z.domains_per_pod;
  z.Dz = z.tiers == 4 ? z.pz * z.domains_per_pod : z.D;
  z.u2_used = z.u2;
  z.u3_used = z.u3;
  if (z.tiers >= 3) {
    const Spread sp = spread_uplinks(z.u2, static_cast<int>((z.tiers == 4 ? z.d3 : z.R) / z.Dz));
    z.q = sp.p;
    z.C = sp.count;
    z.u2_used = sp.used;
  }
  if (z.tiers == 4) {
    const Spread sp = spread_uplinks(z.u3, static_cast<int>(z.R / z.zones));
    z.r = sp.p;
    z.K = sp.count;
    z.u3_used = sp.used;
  }
}

ClosSize size_clos(const ClosSpec& spec, const Hardware& hw) {
  ClosSize z;
  size_servers_and_leaves(spec, hw, z);
  size_tiers(spec, z);
  size_spreads(spec, z);
  return z;
}

// NIC cables by rack layout (hardware.hpp), in racks between the server and its leaf: a rail group's leaves stand
// in a network rack in the middle of the group's server racks (between racks m and m + 1, m = the middle one), a
// ToR leaf in the middle server rack m of its few servers; server_to_leaf reaches the leaf's rack and the racks
// beside it, each rack farther adds rack_width (a group's leaves that need more than one network rack spill into
// the next one: lengths still count the one between m and m + 1). The length decides the media (and so the BOM, cost,
// power and optics); every NIC cable keeps server_to_leaf's propagation delay: a far rack's few tens of ns more on a
// 5 us network hop would only stagger the flow engine's events (one iteration of the default job 2.1 -> 3.1 s of CPU
// for a 0.0001 % change).
struct RackLayout {
  const ClosSpec& spec;
  const Hardware& hw;
  const ClosSize& z;
  int per_rack;
  RackLayout(const ClosSpec& s, const Hardware& h, const ClosSize& size)
      : spec(s), hw(h), z(size), per_rack(servers_per_rack(h)) {}
  int64_t racks_away(int64_t sv) const {
    const int64_t grp = sv / z.servers_per_group;
    const int64_t first = grp * z.servers_per_group, last = std::min(z.servers, first + z.servers_per_group) - 1;
    const int64_t r = sv / per_rack, m = (first / per_rack + last / per_rack) / 2;
    if (!spec.rail_attach) return std::abs(r - m);
    return r <= m ? m - r + 1 : r - m;  // the network rack stands between racks m and m + 1
  }
  double access_length(int64_t sv) const {
    return hw.server_to_leaf_m + static_cast<double>(std::max<int64_t>(0, racks_away(sv) - 1)) * hw.rack_width_m;
  }
};

struct ClosClasses {
  uint8_t access = 0, leaf_spine = 0, spine_super = 0, super_core = 0;
};

// Tier i's name: the family's, but a 4-tier Clos is always leaf, spine, super_spine, core (fat_tree
// calls its third tier core when it is the top).
const char* tier_name(const ClosSpec& spec, const ClosSize& z, int i) {
  static const char* const four[] = {"", "leaf", "spine", "super_spine", "core"};
  return z.tiers == 4 ? four[i] : spec.tier_names[i];
}

// Servers, leaves and their NIC cables; returns the leaves by (group, rail-or-0).
std::vector<NodeId> build_leaves(Topology& t, const ClosSpec& spec, const Hardware& hw, const ClosSize& z,
                                 const ClosClasses& cls) {
  std::vector<NodeId> leaf_ids(static_cast<size_t>(z.leaves()));
  int32_t tier_index = 0;
  for (int64_t grp = 0; grp < z.groups; ++grp) {
    for (int64_t r = 0; r < z.leaves_per_group; ++r) {
      Node sw;
      sw.kind = NodeKind::Switch;
      sw.tier = 1;
      sw.group = static_cast<int32_t>(grp);
      sw.pod = static_cast<int32_t>(grp / z.gp);
      sw.zone = z.zone_of_pod(sw.pod);
      sw.local = tier_index++;
      if (spec.rail_attach) {
        sw.rail = static_cast<int32_t>(r);
        sw.name = fmt::format("su{}-{}-r{}", padded(grp, z.groups), spec.tier_names[1], r);
      } else {
        sw.name = fmt::format("{}-{}", spec.tier_names[1], padded(grp, z.groups));
      }
      leaf_ids[static_cast<size_t>(grp * z.leaves_per_group + r)] = t.add_node(std::move(sw));
    }
  }
  const RackLayout racks(spec, hw, z);
  const Time access_latency = cable_latency(hw, hw.server_to_leaf_m);
  for (NodeId nic : t.nics) {
    const Node& nn = t.nodes[nic];
    const int64_t grp = nn.server / z.servers_per_group;
    const NodeId leaf = leaf_ids[static_cast<size_t>(grp * z.leaves_per_group + (spec.rail_attach ? nn.local : 0))];
    const double len = racks.access_length(nn.server);
    t.connect(nic, leaf, hw.nic_speed, access_latency, len, media_for(hw, len), cls.access);
  }
  return leaf_ids;
}

// Spines: per pod, per domain (rail or 0), S spines, cabled to their leaves; returns them by (domain, s).
std::vector<NodeId> build_spines(Topology& t, const ClosSpec& spec, const Hardware& hw, const ClosSize& z,
                                 const ClosClasses& cls, const std::vector<NodeId>& leaf_ids) {
  std::vector<NodeId> spine_ids(static_cast<size_t>(z.pods * z.domains_per_pod * z.S));
  int32_t tier_index = 0;
  const double ls_len = hw.leaf_to_spine_m;
  const auto spine = [&](int64_t pod, int64_t dom, int s) -> NodeId& {
    return spine_ids[static_cast<size_t>((pod * z.domains_per_pod + dom) * z.S + s)];
  };
  for (int64_t pod = 0; pod < z.pods; ++pod) {
    for (int64_t dom = 0; dom < z.domains_per_pod; ++dom) {
      for (int s = 0; s < z.S; ++s) {
        Node sw;
        sw.kind = NodeKind::Switch;
        sw.tier = 2;
        sw.pod = static_cast<int32_t>(pod);
        sw.zone = z.zone_of_pod(pod);
        sw.local = tier_index++;
        if (spec.rail_domains) {
          sw.rail = static_cast<int32_t>(dom);
          sw.name = fmt::format("pod{}-{}-r{}-{}", padded(pod, z.pods), spec.tier_names[2], dom, padded(s, z.S));
        } else {
          sw.name = fmt::format("pod{}-{}-{}", padded(pod, z.pods), spec.tier_names[2], padded(s, z.S));
        }
        spine(pod, dom, s) = t.add_node(std::move(sw));
      }
      // leaves of this domain: groups of the pod; rail `dom` (rail domains) or all rails
      for (int64_t grp = pod * z.gp; grp < std::min(z.groups, (pod + 1) * z.gp); ++grp) {
        for (int64_t r = 0; r < z.leaves_per_group; ++r) {
          if (spec.rail_domains && r != dom) continue;
          const NodeId leaf = leaf_ids[static_cast<size_t>(grp * z.leaves_per_group + r)];
          for (int s = 0; s < z.S; ++s)
            for (int k = 0; k < z.p; ++k)
              t.connect(leaf, spine(pod, dom, s), hw.port_speed, cable_latency(hw, ls_len), ls_len,
                        media_for(hw, ls_len), cls.leaf_spine);
        }
      }
    }
  }
  return spine_ids;
}

// Super-spines: plane s joins spine s of every domain (4 tiers: of every domain in the zone); C per plane
// (per zone). Returns them by ((zone, s), c).
std::vector<NodeId> build_super_spines(Topology& t, const ClosSpec& spec, const Hardware& hw, const ClosSize& z,
                                       const ClosClasses& cls, const std::vector<NodeId>& spine_ids) {
  const double ss_len = hw.spine_to_super_m;
  const std::string label = host_label(tier_name(spec, z, 3));
  std::vector<NodeId> ids;
  ids.reserve(static_cast<size_t>(z.zones * z.S * z.C));
  int32_t tier_index = 0;
  for (int64_t zone = 0; zone < z.zones; ++zone) {
    const int64_t d_first = zone * z.Dz, d_end = std::min(z.D, (zone + 1) * z.Dz);
    for (int s = 0; s < z.S; ++s) {
      const size_t first = ids.size();
      for (int c = 0; c < z.C; ++c) {
        Node sw;
        sw.kind = NodeKind::Switch;
        sw.tier = 3;
        sw.local = tier_index++;
        if (z.tiers == 4) {
          sw.zone = static_cast<int32_t>(zone);
          sw.name = fmt::format("zone{}-{}-{}-{}", padded(zone, z.zones), label, padded(s, z.S), padded(c, z.C));
        } else {
          sw.name = fmt::format("{}-{}-{}", label, padded(s, z.S), padded(c, z.C));
        }
        ids.push_back(t.add_node(std::move(sw)));
      }
      for (int64_t d = d_first; d < d_end; ++d)
        for (int c = 0; c < z.C; ++c)
          for (int k = 0; k < z.q; ++k)
            t.connect(spine_ids[static_cast<size_t>(d * z.S + s)], ids[first + static_cast<size_t>(c)], hw.port_speed,
                      cable_latency(hw, ss_len), ss_len, media_for(hw, ss_len), cls.spine_super);
    }
  }
  return ids;
}

// Cores (4 tiers): plane (s, c) joins super-spine (s, c) of every zone; K per plane, r parallel links from each.
void build_cores(Topology& t, const ClosSpec& spec, const Hardware& hw, const ClosSize& z, const ClosClasses& cls,
                 const std::vector<NodeId>& super_ids) {
  const double len = hw.super_to_core_m;
  const std::string label = host_label(tier_name(spec, z, 4));
  const auto super = [&](int64_t zone, int s, int c) {
    return super_ids[static_cast<size_t>((zone * z.S + s) * z.C + c)];
  };
  int32_t tier_index = 0;
  std::vector<NodeId> plane(static_cast<size_t>(z.K));
  for (int s = 0; s < z.S; ++s)
    for (int c = 0; c < z.C; ++c) {
      for (int k = 0; k < z.K; ++k) {
        Node sw;
        sw.kind = NodeKind::Switch;
        sw.tier = 4;
        sw.local = tier_index++;
        sw.name = fmt::format("{}-{}-{}-{}", label, padded(s, z.S), padded(c, z.C), padded(k, z.K));
        plane[static_cast<size_t>(k)] = t.add_node(std::move(sw));
      }
      for (int64_t zone = 0; zone < z.zones; ++zone)
        for (int k = 0; k < z.K; ++k)
          for (int j = 0; j < z.r; ++j)
            t.connect(super(zone, s, c), plane[static_cast<size_t>(k)], hw.port_speed, cable_latency(hw, len), len,
                      media_for(hw, len), cls.super_core);
    }
}

// What the design reaches and why; bisection, oversubscription, and notes on how it came out.
void clos_facts(Topology& t, const ClosSpec& spec, const Hardware& hw, const ClosSize& z, const ClosClasses& cls) {
  Facts& f = t.facts;
  const int R = z.R;
  // A groups_per_pod given bounds every pod (the scenario grows by pods of that size), not the spines' ports.
  const int64_t gp_bound = spec.groups_per_pod > 0 ? z.gp : z.gp_max;
  if (z.tiers == 2) {
    f.max_gpus = z.max2;
    f.max_gpus_reason = fmt::format("2 tiers: a radix-{} spine reaches {} leaves per spine domain; {} GPUs per "
                                    "aggregation group; a third tier (topology.tiers: 3) goes further",
                                    R, thousands(z.max2_groups * z.group_leaves_in_domain),
                                    thousands(z.gpus_per_group));
  } else if (z.tiers == 3) {
    f.max_gpus = R / z.domains_per_pod * gp_bound * z.gpus_per_group;
    const std::string top = host_label(spec.tier_names[3]);  // "super-spine", or a fat tree's "core"
    f.max_gpus_reason = fmt::format("3 tiers: {} pods x {} spine domain{} per pod <= radix {} {} ports; "
                                    "{} groups per pod x {} GPUs per group{}",
                                    R / z.domains_per_pod, z.domains_per_pod, z.domains_per_pod == 1 ? "" : "s", R, top,
                                    thousands(gp_bound), thousands(z.gpus_per_group),
                                    spec.max_tiers >= 4 ? "; a fourth tier (topology.tiers: 4) goes further" : "");
  } else {
    // Zones given bound every zone; otherwise the super-spines' ports do.
    const int64_t pz_bound = spec.pods_per_zone > 0 ? z.pz : z.pz_max;
    f.max_gpus = R * pz_bound * gp_bound * z.gpus_per_group;
    f.max_gpus_reason =
        fmt::format("4 tiers: up to {} zones (a core's {} ports) x {} a zone{} x {} a pod x {} GPUs a group", R, R,
                    plural(pz_bound, "pod", "pods"),
                    spec.pods_per_zone > 0 ? std::string(" (topology.pods_per_zone)")
                                           : fmt::format(" ({} super-spine down-ports / {} a pod)", z.d3,
                                                         plural(z.domains_per_pod, "spine domain", "spine domains")),
                    plural(gp_bound, "group", "groups"), thousands(z.gpus_per_group));
  }
  const bool multi_leaf_domain = z.Ld > 1 || (z.leaves() > 1 && !spec.rail_domains);
  f.diameter_hops = z.tiers == 4 && z.zones > 1 ? 6 : z.tiers >= 3 && z.D > 1 ? 4 : multi_leaf_domain ? 2 : 0;
  double cap[4] = {0, 0, 0, 0};
  for (const auto& l : t.links) {
    if (l.cls == cls.access) cap[0] += l.capacity.bps;
    else if (l.cls == cls.leaf_spine) cap[1] += l.capacity.bps;
    else if (z.tiers >= 3 && l.cls == cls.spine_super) cap[2] += l.capacity.bps;
    else if (z.tiers == 4 && l.cls == cls.super_core) cap[3] += l.capacity.bps;
  }
  f.bisection_bps = std::min(cap[0], cap[1]) / 2;
  if (z.tiers >= 3) f.bisection_bps = std::min(f.bisection_bps, cap[2] / 2);
  if (z.tiers == 4) f.bisection_bps = std::min(f.bisection_bps, cap[3] / 2);
  f.bisection_method = z.tiers == 4 ? "half the smallest total capacity a tier offers upward (NIC, leaf, spine and "
                                      "super-spine uplinks): the standard bound for a folded Clos"
                                    : "half the smallest total capacity a tier offers upward (NIC, leaf uplinks, "
                                      "spine uplinks): the standard bound for a folded Clos";
  f.oversubscription.emplace_back(spec.tier_names[1], static_cast<double>(z.d1) / z.u1_used);
  if (z.tiers >= 3) f.oversubscription.emplace_back(spec.tier_names[2], static_cast<double>(z.d2) / z.u2_used);
  if (z.tiers == 4) f.oversubscription.emplace_back(tier_name(spec, z, 3), static_cast<double>(z.d3) / z.u3_used);
  auto idle = [](int up, int used) {
    return up == used ? std::string()
                      : fmt::format(" ({} of them cabled: {} left idle so the rest spread evenly)", used, up - used);
  };
  const std::string leaf_plural = tier_plural(spec.tier_names[1]), spine_plural = tier_plural(spec.tier_names[2]);
  f.notes.push_back(
      fmt::format("{}: {} down / {} up ports{}; {} per spine domain, {} to each of {} per "
                  "domain",
                  spec.tier_names[1], z.d1, z.u1, idle(z.u1, z.u1_used), plural(z.Ld, spec.tier_names[1], leaf_plural),
                  plural(z.p, "parallel link", "parallel links"), plural(z.S, spec.tier_names[2], spine_plural)));
  // Fewer servers than one group holds: each leaf uses few of its down ports, yet every uplink is cabled (and
  // priced) for a full leaf. The oversubscription above counts ports; what the servers can send is far less.
  const int64_t used_down = std::min(z.servers, z.servers_per_group) * (spec.rail_attach ? 1 : z.n);
  if (used_down < z.d1)
    f.notes.push_back(fmt::format(
        "{}: {} of its {} down ports hold servers ({} of the {} a group holds); its {} cabled uplinks are built "
        "for a full {} and carry at most {:.1f}% of their capacity (capex counts them all; a larger fabric fills "
        "them)",
        spec.tier_names[1], used_down, z.d1, z.servers, z.servers_per_group, z.u1_used, spec.tier_names[1],
        100.0 * static_cast<double>(used_down) / static_cast<double>(z.u1_used)));
  if (z.tiers == 3) {
    // The top tier is built for the pods there are, but each of its switches has R ports: those the spine
    // domains leave are room to grow, and capex counts them.
    const int64_t top_used = int64_t{z.q} * z.D;
    const std::string top = host_label(spec.tier_names[3]);
    f.notes.push_back(fmt::format(
        "{}: {} down / {} up ports{}; {} to each of the {} {}s of its plane ({} planes, each {} linked to {} spine "
        "domains){}",
        spec.tier_names[2], z.d2, z.u2, idle(z.u2, z.u2_used), plural(z.q, "parallel link", "parallel links"), z.C, top,
        z.S, top, z.D,
        top_used < z.R ? fmt::format(" (each {} uses {} of its {} ports: {} idle, room for {} more spine domains; "
                                     "capex counts them)",
                                     top, top_used, z.R, z.R - top_used, (z.R - top_used) / std::max(1, z.q))
                       : std::string()));
  }
  if (z.tiers == 4) {
    // Ports a full zone (the zones) leave idle on each super-spine (core): say so, capex counts them.
    const int64_t ss_down = z.Dz * z.q, core_ports = z.zones * z.r;
    f.notes.push_back(
        fmt::format("{}: {} down / {} up ports{}; {} of {}; in each zone {} of {}, {} from each of {} spine "
                    "domains{}",
                    spec.tier_names[2], z.d2, z.u2, idle(z.u2, z.u2_used), plural(z.zones, "zone", "zones"),
                    plural(z.pz, "pod", "pods"), plural(z.S, "plane", "planes"),
                    plural(z.C, "super-spine", "super-spines"), plural(z.q, "parallel link", "parallel links"), z.Dz,
                    ss_down < z.d3
                        ? fmt::format(" (a full zone uses {} of each super-spine's {} down-ports)", ss_down, z.d3)
                        : std::string()));
    f.notes.push_back(
        fmt::format("super_spine: {} down / {} up ports{}; {} planes of {}, {} from each of {} zones{} ({} m "
                    "cables: cabling.super_spine_to_core)",
                    z.d3, z.u3, idle(z.u3, z.u3_used), thousands(int64_t{z.S} * z.C), plural(z.K, "core", "cores"),
                    plural(z.r, "parallel link", "parallel links"), z.zones,
                    core_ports < z.R ? fmt::format(" (each core uses {} of its {} ports)", core_ports, z.R)
                                     : std::string(),
                    metres(hw.super_to_core_m)));
  }
  if (z.tiers < 4 && (spec.pods_per_zone > 0 || std::fabs(spec.o3 - 1) > 1e-12)) {
    std::vector<std::string> keys;
    if (spec.pods_per_zone > 0) keys.push_back("topology.pods_per_zone");
    if (std::fabs(spec.o3 - 1) > 1e-12) keys.push_back("topology.super_spine_oversubscription");
    f.notes.push_back(fmt::format("{} shape{} a fourth tier; this design has {}, so {} unused ({}: 4 adds it)",
                                  fmt::join(keys, " and "), keys.size() == 1 ? "s" : "",
                                  plural(z.tiers, "tier", "tiers"), keys.size() == 1 ? "it is" : "they are",
                                  spec.tiers_key));
  }
  // The same for the third tier's keys on a 2-tier design (a newcomer asking what a 2:1 spine costs got +0 ms).
  if (z.tiers < 3 && (spec.groups_per_pod > 0 || std::fabs(spec.o2 - 1) > 1e-12)) {
    std::vector<std::string> keys;
    if (std::fabs(spec.o2 - 1) > 1e-12) keys.push_back("topology.spine_oversubscription");
    if (spec.groups_per_pod > 0) keys.push_back(spec.groups_per_pod_key);
    f.notes.push_back(fmt::format("{} shape{} a third tier; this design has {}, so {} unused ({}: 3 adds it; "
                                  "topology.oversubscription sets the leaves' down:up ports)",
                                  fmt::join(keys, " and "), keys.size() == 1 ? "s" : "",
                                  plural(z.tiers, "tier", "tiers"), keys.size() == 1 ? "it is" : "they are",
                                  spec.tiers_key));
  }
  // A third tier asked for where two reach the GPUs and it joins a single pod (a file written for a larger fabric,
  // resized: aipod-16k at 4,096 GPUs cost twice a 2-tier design per GPU): it costs a tier of switches and optics,
  // and a hop. Said, so the resize is compared with the fewer tiers auto would build.
  if (spec.tiers == 3 && z.tiers == 3 && z.groups <= z.max2_groups && z.pods == 1)
    f.notes.push_back(fmt::format("{} = 3, but {} GPUs fit 2 tiers of these radix-{} switches (up to {}): the third "
                                  "tier adds switches, optics and a hop ({}: 2, or auto, builds the 2-tier design)",
                                  spec.tiers_key, thousands(spec.gpus), z.R, thousands(z.max2), spec.tiers_key));
  if (z.tiers == 4 && z.pods % z.pz != 0) {  // the last zone is partly filled, its super-spines built whole
    const int64_t in_zone = z.pods % z.pz, supers = int64_t{z.S} * z.C;
    f.notes.push_back(fmt::format(
        "zone {} holds {} of the {} pods a zone takes: its super-spines and their core links are built for {}, so "
        "each super-spine there uses {} of its {} down-ports and cables all {} up, and capex counts them; {}",
        z.zones - 1, in_zone, z.pz, z.pz, in_zone * z.domains_per_pod * z.q, z.d3, z.u3_used,
        filling_hint("topology.pods_per_zone", z.pods, z.pz_max, "pods", "zone", z.zones,
                     std::numeric_limits<int64_t>::max())));
    f.spare.push_back({fmt::format("zone {}'s super-spine layer", z.zones - 1), "super_spine",
                       std::string("super_spine-") + tier_name(spec, z, 4), supers, supers * z.u3_used,
                       static_cast<double>(in_zone) / static_cast<double>(z.pz),
                       fmt::format("{} of {} pods", in_zone, z.pz)});
  }
  if (z.tiers >= 3 && z.groups % z.gp != 0) {  // the last pod is partly filled, its spine layer built whole
    const int64_t in_pod = z.groups % z.gp, spines = z.S * z.domains_per_pod;
    f.notes.push_back(fmt::format(
        "pod {} holds {} of the {} groups a pod takes: its {}s and their {} links are built for {}, so each {} "
        "there uses {} of its {} down-ports and cables all {} up, and capex counts them; {}",
        z.pods - 1, in_pod, z.gp, spec.tier_names[2], tier_name(spec, z, 3), z.gp, spec.tier_names[2],
        in_pod * z.group_leaves_in_domain * z.p, z.d2, z.u2_used,
        filling_hint(spec.groups_per_pod_key, z.groups, z.gp_max, "groups", "pod", z.pods,
                     // 3 tiers: a super-spine plane joins radix / domains pods; 4 tiers: zones take the rest
                     z.tiers == 3 ? z.R / z.domains_per_pod : std::numeric_limits<int64_t>::max())));
    f.spare.push_back({fmt::format("pod {}'s {} layer", z.pods - 1, spec.tier_names[2]), spec.tier_names[2],
                       std::string(spec.tier_names[2]) + "-" + tier_name(spec, z, 3), spines, spines * z.u2_used,
                       static_cast<double>(in_pod) / static_cast<double>(z.gp),
                       fmt::format("{} of {} groups", in_pod, z.gp)});
  }
  if (spec.rail_domains && z.tiers == 2 && z.n > 1)
    f.notes.push_back("rails are separate 2-tier planes: NICs on different rails reach each other only through "
                      "NVLink inside a server (PXN); the diameter is within a rail");
  // Say how the NIC cables came out: how many run past the racks beside the leaf's, how long, in what.
  const RackLayout racks(spec, hw, z);
  int64_t far = 0, max_away = 0, optical = 0;
  for (int64_t sv = 0; sv < z.servers; ++sv) {
    const int64_t away = racks.racks_away(sv);
    max_away = std::max(max_away, away);
    if (away > 1) far += z.n;  // every NIC of the server goes to this group's leaves
    if (media_for(hw, racks.access_length(sv)) == Media::Optical) optical += z.n;
  }
  // A multi-plane fabric (topology/planes.hpp) has a cable per NIC and plane, each laid out as this one.
  const int64_t P = std::max(1, hw.nic_planes);
  far *= P;
  optical *= P;
  if (far > 0)
    f.notes.push_back(fmt::format(
        "NIC cables: {} {} stands {} and serves servers up to {} racks away ({} servers a rack, "
        "cabling.rack_width {} m a rack); {} of the {} NIC cables run past the racks beside its own, up to {} m; "
        "{} of the {} are optical (longer than cabling.copper_max_length {} m)",
        std::string("aeiou").find(spec.tier_names[1][0]) == std::string::npos ? "a" : "an", spec.tier_names[1],
        spec.rail_attach ? "in a network rack in the middle of its group's row" : "in the middle rack of its servers",
        max_away, racks.per_rack, format_number(hw.rack_width_m), thousands(far), thousands(z.servers * z.n * P),
        format_number(hw.server_to_leaf_m + static_cast<double>(max_away - 1) * hw.rack_width_m), thousands(optical),
        thousands(z.servers * z.n * P), format_number(hw.copper_max_m)));
}

// A Clos in three steps: sizing (every check and count), building (nodes and cables), facts.
Topology build_clos(const ClosSpec& spec, const Hardware& hw) {
  const ClosSize z = size_clos(spec, hw);
  Topology t;
  t.family = spec.family;
  t.rail_optimized = spec.rail_attach;
  t.switch_latency = hw.switch_latency;
  for (int i = 1; i <= z.tiers; ++i) t.tier_names.push_back(tier_name(spec, z, i));
  add_servers(t, hw, static_cast<int32_t>(z.servers));
  t.groups = static_cast<int32_t>(z.groups);
  t.pods = static_cast<int32_t>(z.pods);
  t.zones = z.tiers == 4 ? static_cast<int32_t>(z.zones) : 0;
  for (auto& node : t.nodes) {
    if (node.server == kNone) continue;
    node.group = static_cast<int32_t>(node.server / z.servers_per_group);
    node.pod = static_cast<int32_t>(node.group / z.gp);
    node.zone = z.zone_of_pod(node.pod);
  }
  ClosClasses cls;
  cls.access = t.link_class(std::string("nic-") + spec.tier_names[1]);
  cls.leaf_spine = t.link_class(std::string(spec.tier_names[1]) + "-" + spec.tier_names[2]);
  if (z.tiers >= 3) cls.spine_super = t.link_class(std::string(tier_name(spec, z, 2)) + "-" + tier_name(spec, z, 3));
  if (z.tiers == 4) cls.super_core = t.link_class(std::string(tier_name(spec, z, 3)) + "-" + tier_name(spec, z, 4));
  const std::vector<NodeId> leaves = build_leaves(t, spec, hw, z, cls);
  const std::vector<NodeId> spines = build_spines(t, spec, hw, z, cls, leaves);
  if (z.tiers >= 3) {
    const std::vector<NodeId> supers = build_super_spines(t, spec, hw, z, cls, spines);
    if (z.tiers == 4) build_cores(t, spec, hw, z, cls, supers);
  }
  clos_facts(t, spec, hw, z, cls);
  t.finalize();
  return t;
}

// 0 when absent or "auto" (the builder's choice).
int optional_int(const Params& p, const char* key) {
  return p.has(key) && p.text(key) != "auto" ? static_cast<int>(p.get_int(key)) : 0;
}

// The keys of the tiers above the leaves that fat_tree and rail_clos share: each tier's down:up ratio and the
// zones of a fourth tier.
std::vector<ParamSpec> oversubscription_and_zone_params() {
  return {
      {"oversubscription", ParamType::Ratio, "1:1", "leaf down:up port ratio"},
      {"spine_oversubscription", ParamType::Ratio, "1:1", "spine down:up port ratio (3 and 4 tiers)"},
      {"super_spine_oversubscription", ParamType::Ratio, "1:1", "super-spine down:up port ratio (4 tiers)"},
      {"pods_per_zone",
       ParamType::Int,
       "",
       "pods per zone (4 tiers: a zone's spines share super-spines, cores join the zones); auto (the default): as "
       "many as a super-spine reaches, split over at least two zones",
       1,
       4096,
       {"auto"},
       true},
  };
}

std::vector<ParamSpec> fat_tree_params() {
  std::vector<ParamSpec> v = {
      {"gpus", ParamType::Int, "1024", "GPUs in the fabric (a multiple of server.gpus)", 1,
       static_cast<double>(kMaxGpus)},
      {"tiers",
       ParamType::Int,
       "",
       "switch tiers: 2 (leaf-spine), 3 (leaf-spine-core) or 4 (leaf-spine-super_spine-core, zones of pods); "
       "auto (the default): the fewest that fit",
       2,
       4,
       {"auto"},
       true},
  };
  for (auto& p : oversubscription_and_zone_params()) v.push_back(std::move(p));
  v.insert(v.end(),
           {
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
                "aggregation groups (leaves, or rail-leaf sets) per pod (3 and 4 tiers); "
                "auto (the default): as many as a spine reaches",
                1,
                1e6,
                {"auto"},
                true},
               {"spines_per_pod",
                ParamType::Int,
                "",
                "spines per pod (must divide the leaf uplinks); default: fewest",
                1,
                4096,
                {},
                true},
           });
  return v;
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
  s.o3 = p.get_real("super_spine_oversubscription");
  s.pods_per_zone = optional_int(p, "pods_per_zone");
  s.tier_names[3] = "core";
  if (p.has("k")) {
    const int k = static_cast<int>(p.get_int("k"));
    if (k % 2 != 0) throw ParamError("topology.k", fmt::format("topology.k = {} is odd; expected an even radix", k));
    if ((k / 2) % hw.nics_per_server != 0)
      throw ParamError("topology.k",
                       fmt::format("a k = {} edge switch has {} host ports, not a multiple of the {} NICs "
                                   "per server; expected server.nics dividing k/2",
                                   k, k / 2, hw.nics_per_server));
    if (s.tiers != 0 && s.tiers != 3)
      throw ParamError("topology.tiers",
                       fmt::format("topology.k = {} builds a 3-tier k-ary fat tree, but topology.tiers = {}; expected "
                                   "3 (or auto), or a scenario without topology.k: a {}-tier fat tree is sized by "
                                   "topology.gpus and switch.radix ({} tiers of radix-{} switches reach {} hosts)",
                                   k, s.tiers, s.tiers, s.tiers, k,
                                   thousands(s.tiers == 4 ? 2 * (k / 2) * (k / 2) * (k / 2) * int64_t{k / 2}
                                                          : int64_t{k} * k / 2)));
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
  std::vector<ParamSpec> v = {
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
       "2 = leaf + spine per rail; 3 = plus a super-spine joining rails and pods; 4 = super-spines per zone of "
       "pods and a core joining the zones; auto (the default): the fewest that fit",
       2,
       4,
       {"auto"},
       true},
  };
  for (auto& p : oversubscription_and_zone_params()) v.push_back(std::move(p));
  v.insert(v.end(), {
                        {"groups_per_pod",
                         ParamType::Int,
                         "",
                         "aggregation groups per pod (3 and 4 tiers); auto (the default): as many as a spine "
                         "reaches",
                         1,
                         1e6,
                         {"auto"},
                         true},
                    });
  return v;
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
  s.o3 = p.get_real("super_spine_oversubscription");
  s.pods_per_zone = optional_int(p, "pods_per_zone");
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
  s.max_tiers = 3;
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
  return {"fat_tree",
          "2-, 3- or 4-tier folded Clos (leaf-spine[-super_spine]-core), non-blocking or oversubscribed; k-ary "
          "fat-tree",
          fat_tree_params,
          build_fat_tree,
          derive_k_ary,
          true};
}
BuilderInfo rail_clos_builder() {
  return {"rail_clos",
          "rail-optimized multi-plane Clos (AIPod-style): NIC r of each server on rail r, per-rail spines, optional "
          "super-spine joining rails and pods, and a core joining zones of pods (4 tiers)",
          rail_clos_params,
          build_rail_clos,
          nullptr,
          true};
}
BuilderInfo tree3_builder() {
  return {"tree3",      "traditional 3-tier access/aggregation/core tree with oversubscription at each tier",
          tree3_params, build_tree3,
          nullptr,      true};
}

}  // namespace podnet::topology
