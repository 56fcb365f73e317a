// dragonfly and dragonfly_plus builders. The structure, the maths of their
// facts, the global-link arrangement and the sizing rules are in
// dragonfly.hpp; this file implements them in that order:
//   resolve shape (p, a, h | leaves, spines, p, h) -> radix check -> size
//   (gpus | g) -> servers -> edge switches (+ spines) -> NIC links -> local /
//   leaf-spine links -> global links (GlobalPlan) -> finalize -> facts (BFS
//   diameter from group 0, cut capacity from the built links).
#include "topology/dragonfly.hpp"

#include <algorithm>
#include <deque>
#include <fmt/format.h>
#include <initializer_list>

#include "core/error.hpp"

namespace podnet::topology {

namespace {

// --- global links: m per pair of groups plus a circulant remainder (dragonfly.hpp)

struct GlobalPlan {
  int64_t g = 1;           // groups
  int64_t ports = 0;       // global ports per group (P)
  int64_t m = 0;           // links to every other group
  int64_t r = 0;           // remaining ports per group after m (g - 1)
  int64_t hr = 0;          // one more link to offsets +-1 .. +-hr
  bool antipodal = false;  // r odd, g even: one more link to offset g/2
  int64_t unused = 0;      // ports per group left unused
};

GlobalPlan plan_global(int64_t g, int64_t ports) {
  GlobalPlan pl;
  pl.g = g;
  pl.ports = ports;
  if (g < 2) {
    pl.unused = ports;
    return pl;
  }
  pl.m = ports / (g - 1);
  pl.r = ports - pl.m * (g - 1);
  pl.hr = pl.r / 2;
  pl.antipodal = pl.r % 2 == 1 && g % 2 == 0;
  pl.unused = (pl.r % 2 == 1 && !pl.antipodal) ? 1 : 0;
  return pl;
}

// Links between a group and the group at offset o (1 <= o < g).
int64_t multiplicity(const GlobalPlan& pl, int64_t o) {
  return pl.m + ((o <= pl.hr || pl.g - o <= pl.hr) ? 1 : 0) + ((pl.antipodal && 2 * o == pl.g) ? 1 : 0);
}

// Port (0 .. P-1) of copy c of the link toward offset o: round-robin copies
// first, then the circulant extras +1, -1, +2, -2, ..., g/2.
int64_t port_of(const GlobalPlan& pl, int64_t o, int64_t c) {
  if (c < pl.m) return c * (pl.g - 1) + (o - 1);
  const int64_t base = pl.m * (pl.g - 1);
  if (o <= pl.hr) return base + 2 * (o - 1);
  if (pl.g - o <= pl.hr) return base + 2 * (pl.g - o - 1) + 1;
  return base + 2 * pl.hr;  // antipodal
}

// Calls f(group i, port on i, group t, port on t) once per global link, i < t.
template <class F>
void for_each_global(const GlobalPlan& pl, F&& f) {
  for (int64_t i = 0; i < pl.g; ++i)
    for (int64_t o = 1; o < pl.g; ++o) {
      const int64_t t = (i + o) % pl.g;
      if (t < i) continue;
      const int64_t k = multiplicity(pl, o);
      for (int64_t c = 0; c < k; ++c) f(i, port_of(pl, o, c), t, port_of(pl, pl.g - o, c));
    }
}

std::string global_note(const GlobalPlan& pl, const char* per_port_owner) {
  if (pl.g < 2) return fmt::format("one group: its {} global ports are unused", pl.ports);
  std::string s = fmt::format("global links: {} ports per group ({} = port / h), {} to each of the {} other "
                              "groups",
                              pl.ports, per_port_owner, plural(pl.m, "link", "links"), pl.g - 1);
  if (pl.hr > 0) s += fmt::format(", one more to the groups at offsets +-1..+-{}", pl.hr);
  if (pl.antipodal) s += fmt::format(", one more to the opposite group (offset {})", pl.g / 2);
  if (pl.unused > 0)
    s += fmt::format("; {} per group unused (P and g odd: no perfect pairing)", plural(pl.unused, "port", "ports"));
  return s;
}

// --- sizing shared by both families

void require_nics(const Hardware& hw) {
  if (hw.nics_per_server < 1)
    throw ParamError("server.nics", fmt::format("server.nics = {}: dragonfly terminals are NIC ports, expected "
                                                "server.nics >= 1",
                                                hw.nics_per_server));
}

constexpr int64_t kDefaultGpus = 1024;  // as the Clos families

// GPUs asked for: topology.gpus; without it and without any shape key,
// kDefaultGpus rounded down to whole servers; else -1 (size from the shape).
int64_t requested_gpus(const Params& prm, const Hardware& hw, std::initializer_list<const char*> shape_keys) {
  if (!prm.has("gpus")) {
    for (const char* key : shape_keys)
      if (prm.has(key)) return -1;
    return std::max<int64_t>(1, kDefaultGpus / hw.gpus_per_server) * hw.gpus_per_server;
  }
  const int64_t gpus = prm.get_int("gpus");
  if (gpus % hw.gpus_per_server != 0)
    throw ParamError("topology.gpus",
                     fmt::format("topology.gpus = {} is not a multiple of server.gpus = {}: "
                                 "expected whole servers, e.g. {}",
                                 gpus, hw.gpus_per_server, (gpus / hw.gpus_per_server + 1) * hw.gpus_per_server));
  return gpus;
}

int64_t terminals_for_gpus(int64_t gpus, const Hardware& hw) {
  return gpus < 0 ? -1 : gpus / hw.gpus_per_server * hw.nics_per_server;
}

int64_t gpus_for_terminals(int64_t terminals, const Hardware& hw) {
  return terminals / hw.nics_per_server * hw.gpus_per_server;
}

struct Sizing {
  int64_t servers = 0;
  int64_t terminals = 0;
  int64_t groups = 0;
};

// per_group: terminal ports per group; gmax: most groups (why: its formula).
Sizing size_fabric(const Params& prm, const Hardware& hw, int64_t gpus, int64_t per_group, int64_t gmax,
                   const std::string& why) {
  Sizing s;
  const int64_t want = terminals_for_gpus(gpus, hw);
  const int64_t max_gpus = gpus_for_terminals(per_group * gmax, hw);
  if (prm.has("g")) {
    s.groups = prm.get_int("g");
    if (s.groups > gmax)
      throw ParamError("topology.g", fmt::format("topology.g = {} exceeds {} = {} groups (one global link per pair "
                                                 "of groups): expected g <= {}",
                                                 s.groups, why, gmax, gmax));
    if (want > per_group * s.groups)
      throw ParamError("topology.gpus", fmt::format("topology.gpus = {} needs {} terminals but g = {} groups of {} "
                                                    "hold {}: expected gpus <= {} or more groups",
                                                    thousands(gpus), thousands(want), s.groups, thousands(per_group),
                                                    thousands(per_group * s.groups),
                                                    thousands(gpus_for_terminals(per_group * s.groups, hw))));
  } else if (want >= 0) {
    s.groups = (want + per_group - 1) / per_group;
    if (s.groups > gmax)
      throw ParamError("topology.gpus", fmt::format("topology.gpus = {} needs {} groups of {} terminals, more than "
                                                    "{} = {}: expected gpus <= {}, or larger groups / more global "
                                                    "links per switch",
                                                    thousands(gpus), thousands(s.groups), thousands(per_group), why,
                                                    thousands(gmax), thousands(max_gpus)));
  } else {
    s.groups = gmax;
  }
  if (want >= 0) {
    s.terminals = want;
    s.servers = gpus / hw.gpus_per_server;
  } else {
    s.servers = per_group * s.groups / hw.nics_per_server;
    if (s.servers == 0)
      throw ParamError("server.nics", fmt::format("server.nics = {} exceeds the {} terminal ports of the fabric: "
                                                  "expected at most {} NICs per server",
                                                  hw.nics_per_server, per_group * s.groups, per_group * s.groups));
    s.terminals = s.servers * hw.nics_per_server;
  }
  if (s.servers * hw.gpus_per_server > kMaxGpus)
    throw ParamError(prm.has("gpus") ? "topology.gpus" : "topology.g",
                     fmt::format("the fabric would hold {} GPUs, more than podnet builds ({}): expected "
                                 "topology.gpus <= {} (the family reaches {} with these switches)",
                                 s.servers * hw.gpus_per_server, kMaxGpus, kMaxGpus, max_gpus));
  return s;
}

// --- building blocks

NodeId add_switch(Topology& t, uint8_t tier, int32_t group, int32_t local, std::string name) {
  Node n;
  n.kind = NodeKind::Switch;
  n.tier = tier;
  n.group = group;
  n.local = local;
  n.name = std::move(name);
  return t.add_node(std::move(n));
}

// NIC n (t.nics order) -> edge switch first_edge + n / per_edge. The NIC, its
// GPUs and its server's NVSwitch take the switch's group; a switch takes the
// rack of its first terminal's server.
void attach_terminals(Topology& t, const Hardware& hw, NodeId first_edge, int64_t per_edge, const char* cls_name) {
  const uint8_t cls = t.link_class(cls_name);
  const double len = hw.server_to_leaf_m;
  const Bandwidth speed = std::min(hw.nic_speed, hw.port_speed);
  for (size_t n = 0; n < t.nics.size(); ++n) {
    const NodeId nic = t.nics[n];
    const auto sw = static_cast<NodeId>(first_edge + static_cast<int64_t>(n) / per_edge);
    t.connect(nic, sw, speed, cable_latency(hw, len), len, media_for(hw, len), cls);
    t.nodes[nic].group = t.nodes[sw].group;
    if (t.nodes[sw].rack == kNone) t.nodes[sw].rack = t.nodes[nic].rack;
  }
  for (size_t r = 0; r < t.gpus.size(); ++r) t.nodes[t.gpus[r]].group = t.nodes[t.gpu_nic[r]].group;
  for (Node& node : t.nodes)
    if (node.kind == NodeKind::NvSwitch)
      node.group = t.nodes[t.nics[static_cast<size_t>(node.server) * hw.nics_per_server]].group;
}

void connect_switches(Topology& t, const Hardware& hw, NodeId a, NodeId b, double len, uint8_t cls) {
  t.connect(a, b, hw.port_speed, cable_latency(hw, len), len, media_for(hw, len), cls);
}

// Wires every global link of the plan (class "global", spine_to_super_m long):
// global port p of group i belongs to switch_of(i, p / h). Returns how many.
template <class S>
int64_t wire_globals(Topology& t, const Hardware& hw, const GlobalPlan& pl, int64_t h, S&& switch_of) {
  const uint8_t cls = t.link_class("global");
  int64_t n = 0;
  for_each_global(pl, [&](int64_t i, int64_t pi, int64_t j, int64_t pj) {
    connect_switches(t, hw, switch_of(i, pi / h), switch_of(j, pj / h), hw.spine_to_super_m, cls);
    ++n;
  });
  return n;
}

// Largest switch-to-switch distance from any source to any target switch
// (BFS through switches only); -1 if some target is unreachable.
int switch_eccentricity(const Topology& t, const std::vector<NodeId>& sources, const std::vector<char>& target) {
  std::vector<int32_t> dist(t.nodes.size(), -1);
  std::vector<NodeId> seen;
  int worst = 0;
  for (NodeId s : sources) {
    for (NodeId v : seen) dist[v] = -1;
    seen.clear();
    std::deque<NodeId> q{s};
    dist[s] = 0;
    seen.push_back(s);
    while (!q.empty()) {
      const NodeId u = q.front();
      q.pop_front();
      auto [b, e] = t.incident(u);
      for (const LinkId* l = b; l != e; ++l) {
        const NodeId v = t.other_end(*l, u);
        if (t.nodes[v].kind != NodeKind::Switch || dist[v] >= 0) continue;
        dist[v] = dist[u] + 1;
        seen.push_back(v);
        q.push_back(v);
      }
    }
    for (size_t v = 0; v < t.nodes.size(); ++v)
      if (target[v]) {
        if (dist[v] < 0) return -1;
        worst = std::max(worst, static_cast<int>(dist[v]));
      }
  }
  return worst;
}

// Capacity (per direction) and count of switch-to-switch links whose ends
// lie on different sides.
std::pair<double, int64_t> cut_capacity(const Topology& t, const std::vector<char>& side) {
  double bps = 0;
  int64_t links = 0;
  for (const Link& l : t.links)
    if (t.nodes[l.a].kind == NodeKind::Switch && t.nodes[l.b].kind == NodeKind::Switch && side[l.a] != side[l.b]) {
      bps += l.capacity.bps;
      ++links;
    }
  return {bps, links};
}

void fill_common_facts(Topology& t, const Hardware& hw, const Sizing& sz, int64_t capacity, int64_t edges,
                       int64_t per_edge, const char* edge_name) {
  const int64_t empty_edges = edges - (sz.terminals + per_edge - 1) / per_edge;
  if (sz.terminals < capacity)
    t.facts.notes.push_back(fmt::format("{} of {} terminal ports used ({} servers x {} NICs); {} without "
                                        "terminals; every group is built whole",
                                        thousands(sz.terminals), thousands(capacity), thousands(sz.servers),
                                        hw.nics_per_server, plural(empty_edges, edge_name, tier_plural(edge_name))));
  t.facts.notes.push_back(fmt::format("NIC links at {}, switch links at {}",
                                      format_bandwidth(std::min(hw.nic_speed, hw.port_speed)),
                                      format_bandwidth(hw.port_speed)));
}

// --- dragonfly

std::vector<ParamSpec> dragonfly_params() {
  return {
      {"gpus",
       ParamType::Int,
       "",
       "GPUs (a multiple of server.gpus); sets the groups, the last may be partly filled; "
       "default 1024 if no shape key is given, else the full fabric",
       1,
       static_cast<double>(kMaxGpus),
       {},
       true},
      {"p",
       ParamType::Int,
       "",
       "terminals (NIC ports) per router; default: balanced (a/2, h, or sized from gpus or "
       "switch.radix)",
       1,
       4096,
       {},
       true},
      {"a", ParamType::Int, "", "routers per group; default 2p", 1, 4096, {}, true},
      {"h", ParamType::Int, "", "global links per router; default p", 0, 4096, {}, true},
      {"g", ParamType::Int, "", "groups (<= a*h + 1); default: enough for gpus, else a*h + 1", 1, 16777217, {}, true},
  };
}

Topology build_dragonfly(const Params& prm, const Hardware& hw) {
  require_nics(hw);
  const int64_t gpus = requested_gpus(prm, hw, {"p", "a", "h", "g"});
  const int64_t want = terminals_for_gpus(gpus, hw);
  const int64_t radix = hw.radix;
  const bool auto_shape = !prm.has("p") && !prm.has("a") && !prm.has("h");
  int64_t p = 0;
  if (prm.has("p")) p = prm.get_int("p");
  else if (prm.has("a")) p = std::max<int64_t>(1, prm.get_int("a") / 2);
  else if (prm.has("h")) p = std::max<int64_t>(1, prm.get_int("h"));
  else if (want >= 0) {
    p = 1;  // smallest balanced p covering the terminals, within the radix (4p - 1 <= radix)
    while (2 * p * p * (2 * p * p + 1) < want && 4 * (p + 1) - 1 <= radix) ++p;
  } else {
    p = std::max<int64_t>(1, (radix + 1) / 4);
  }
  const int64_t a = prm.has("a") ? prm.get_int("a") : 2 * p;
  const int64_t h = prm.has("h") ? prm.get_int("h") : p;
  const int64_t k = p + a - 1 + h;
  if (k > radix)
    throw ParamError("switch.radix", fmt::format("a dragonfly router with p = {}, a = {}, h = {} needs radix k = p + "
                                                 "a - 1 + h = {} ports, but switch.radix = {}: expected "
                                                 "switch.radix >= {} or smaller p/a/h",
                                                 p, a, h, k, radix, k));
  const int64_t gmax = a * h + 1;
  const Sizing sz = size_fabric(prm, hw, gpus, a * p, gmax, fmt::format("a*h + 1 = {}*{} + 1", a, h));
  const int64_t g = sz.groups;

  Topology t;
  t.family = "dragonfly";
  t.group_minimal = true;
  t.switch_latency = hw.switch_latency;
  t.tier_names = {"", "router"};
  add_servers(t, hw, static_cast<int32_t>(sz.servers));
  const auto first = static_cast<NodeId>(t.nodes.size());
  for (int64_t i = 0; i < g; ++i)
    for (int64_t r = 0; r < a; ++r)
      add_switch(t, 1, static_cast<int32_t>(i), static_cast<int32_t>(i * a + r),
                 fmt::format("g{}-r{}", padded(i, g), padded(r, a)));
  auto router = [&](int64_t i, int64_t r) { return static_cast<NodeId>(first + i * a + r); };
  attach_terminals(t, hw, first, p, "nic-router");

  const uint8_t local_cls = t.link_class("local");
  for (int64_t i = 0; i < g; ++i)
    for (int64_t r1 = 0; r1 < a; ++r1)
      for (int64_t r2 = r1 + 1; r2 < a; ++r2)
        connect_switches(t, hw, router(i, r1), router(i, r2), hw.leaf_to_spine_m, local_cls);
  const GlobalPlan pl = plan_global(g, a * h);
  const int64_t globals = wire_globals(t, hw, pl, h, router);
  t.groups = static_cast<int32_t>(g);
  t.pods = 0;
  t.finalize();

  // --- facts
  Facts& f = t.facts;
  f.max_gpus = gpus_for_terminals(a * p * gmax, hw);
  f.max_gpus_reason = fmt::format("g <= a*h + 1 = {} groups (one global link between every pair of groups) of a*p "
                                  "= {} terminals; router radix p + a - 1 + h = {} <= switch.radix {}",
                                  gmax, a * p, k, radix);
  std::vector<NodeId> sources;
  for (int64_t r = 0; r < a; ++r) sources.push_back(router(0, r));
  std::vector<char> target(t.nodes.size(), 0), side(t.nodes.size(), 0);
  for (int64_t i = 0; i < g; ++i)
    for (int64_t r = 0; r < a; ++r) {
      target[router(i, r)] = 1;
      side[router(i, r)] = g >= 2 ? (i < g / 2) : (r < a / 2);
    }
  f.diameter_hops = switch_eccentricity(t, sources, target);
  if (f.diameter_hops < 0) throw Error("internal: dragonfly routers are not connected");
  const auto [bps, crossing] = cut_capacity(t, side);
  f.bisection_bps = bps;
  f.bisection_method =
      g >= 2 ? fmt::format("links between groups [0, {}) and [{}, {}): {} global links x {} per direction", g / 2,
                           g / 2, g, thousands(crossing), format_bandwidth(hw.port_speed))
             : fmt::format("one group: local links between routers [0, {}) and [{}, {}): {} links x {} per direction",
                           a / 2, a / 2, a, crossing, format_bandwidth(hw.port_speed));
  if (h > 0) f.oversubscription.emplace_back("router", static_cast<double>(p) / static_cast<double>(h));
  f.notes.push_back(fmt::format("p = {}, a = {}, h = {}, g = {}: router radix k = {} ({} of switch.radix {} "
                                "unused); {} local and {} global links",
                                p, a, h, g, k, radix - k, radix, thousands(g * a * (a - 1) / 2), thousands(globals)));
  f.notes.push_back(global_note(pl, "router"));
  fill_common_facts(t, hw, sz, a * p * g, a * g, p, "router");
  // The default shape is the smallest balanced one that holds the GPUs (many small groups); the radix's largest
  // balanced shape holds them on fewer routers, which a user sizing for cost wants to know.
  if (auto_shape && want > 0) {
    const int64_t big = std::max<int64_t>(1, (radix + 1) / 4);
    const int64_t groups = (want + 2 * big * big - 1) / (2 * big * big);
    const int64_t routers = groups * 2 * big;
    if (big > p && groups <= 2 * big * big + 1 && routers < a * g)
      f.notes.push_back(fmt::format(
          "the radix's largest balanced shape (p = {}, a = {}, h = {}) holds these GPUs on {} routers instead of {} "
          "and reaches {} GPUs: set topology.p={} for it (fewer, larger groups)",
          big, 2 * big, big, thousands(routers), thousands(a * g),
          thousands(gpus_for_terminals(2 * big * big * (2 * big * big + 1), hw)), big));
  }
  return t;
}

// --- dragonfly_plus

std::vector<ParamSpec> dragonfly_plus_params() {
  return {
      {"gpus",
       ParamType::Int,
       "",
       "GPUs (a multiple of server.gpus); sets the groups, the last may be partly filled; "
       "default 1024 if no shape key is given, else the full fabric",
       1,
       static_cast<double>(kMaxGpus),
       {},
       true},
      {"p", ParamType::Int, "", "terminals (NIC ports) per leaf; default x (see leaves)", 1, 4096, {}, true},
      {"leaves",
       ParamType::Int,
       "",
       "leaves per group; default x: the smallest x with x^2(x^2+1) >= terminals "
       "for gpus, else switch.radix/2",
       1,
       4096,
       {},
       true},
      {"spines", ParamType::Int, "", "spines per group (every leaf links to each); default x", 1, 4096, {}, true},
      {"h", ParamType::Int, "", "global links per spine; default x", 0, 4096, {}, true},
      {"g",
       ParamType::Int,
       "",
       "groups (<= spines*h + 1); default: enough for gpus, else spines*h + 1",
       1,
       16777217,
       {},
       true},
  };
}

Topology build_dragonfly_plus(const Params& prm, const Hardware& hw) {
  require_nics(hw);
  const int64_t gpus = requested_gpus(prm, hw, {"p", "leaves", "spines", "h", "g"});
  const int64_t want = terminals_for_gpus(gpus, hw);
  const int64_t radix = hw.radix;
  int64_t x = std::max<int64_t>(1, radix / 2);
  if (want >= 0) {
    x = 1;  // smallest balanced x covering the terminals, within the radix (2x <= radix)
    while (x * x * (x * x + 1) < want && 2 * (x + 1) <= radix) ++x;
  }
  const int64_t p = prm.has("p") ? prm.get_int("p") : x;
  const int64_t leaves = prm.has("leaves") ? prm.get_int("leaves") : x;
  const int64_t spines = prm.has("spines") ? prm.get_int("spines") : x;
  const int64_t h = prm.has("h") ? prm.get_int("h") : x;
  if (p + spines > radix)
    throw ParamError("switch.radix", fmt::format("a dragonfly_plus leaf with p = {} terminals and {} spines needs "
                                                 "{} ports, but switch.radix = {}: expected switch.radix >= {} or "
                                                 "smaller p/spines",
                                                 p, spines, p + spines, radix, p + spines));
  if (leaves + h > radix)
    throw ParamError("switch.radix", fmt::format("a dragonfly_plus spine with {} leaves and h = {} global links "
                                                 "needs {} ports, but switch.radix = {}: expected switch.radix >= {} "
                                                 "or smaller leaves/h",
                                                 leaves, h, leaves + h, radix, leaves + h));
  const int64_t gmax = spines * h + 1;
  const bool auto_shape = !prm.has("p") && !prm.has("leaves") && !prm.has("spines") && !prm.has("h");
  const Sizing sz = size_fabric(prm, hw, gpus, leaves * p, gmax, fmt::format("spines*h + 1 = {}*{} + 1", spines, h));
  const int64_t g = sz.groups;

  Topology t;
  t.family = "dragonfly_plus";
  t.group_minimal = true;
  t.switch_latency = hw.switch_latency;
  t.tier_names = {"", "leaf", "spine"};
  add_servers(t, hw, static_cast<int32_t>(sz.servers));
  const auto first_leaf = static_cast<NodeId>(t.nodes.size());
  for (int64_t i = 0; i < g; ++i)
    for (int64_t l = 0; l < leaves; ++l)
      add_switch(t, 1, static_cast<int32_t>(i), static_cast<int32_t>(i * leaves + l),
                 fmt::format("g{}-leaf{}", padded(i, g), padded(l, leaves)));
  const auto first_spine = static_cast<NodeId>(t.nodes.size());
  for (int64_t i = 0; i < g; ++i)
    for (int64_t s = 0; s < spines; ++s)
      add_switch(t, 2, static_cast<int32_t>(i), static_cast<int32_t>(i * spines + s),
                 fmt::format("g{}-spine{}", padded(i, g), padded(s, spines)));
  auto leaf = [&](int64_t i, int64_t l) { return static_cast<NodeId>(first_leaf + i * leaves + l); };
  auto spine = [&](int64_t i, int64_t s) { return static_cast<NodeId>(first_spine + i * spines + s); };
  attach_terminals(t, hw, first_leaf, p, "nic-leaf");
  for (int64_t i = 0; i < g; ++i)
    for (int64_t s = 0; s < spines; ++s) {
      NodeId sp = spine(i, s);
      if (t.nodes[sp].rack == kNone) t.nodes[sp].rack = t.nodes[leaf(i, 0)].rack;
    }

  const uint8_t ls_cls = t.link_class("leaf-spine");
  for (int64_t i = 0; i < g; ++i)
    for (int64_t l = 0; l < leaves; ++l)
      for (int64_t s = 0; s < spines; ++s) connect_switches(t, hw, leaf(i, l), spine(i, s), hw.leaf_to_spine_m, ls_cls);
  const GlobalPlan pl = plan_global(g, spines * h);
  const int64_t globals = wire_globals(t, hw, pl, h, spine);
  t.groups = static_cast<int32_t>(g);
  t.pods = 0;
  t.finalize();

  // --- facts
  Facts& f = t.facts;
  f.max_gpus = gpus_for_terminals(leaves * p * gmax, hw);
  f.max_gpus_reason = fmt::format("g <= spines*h + 1 = {} groups (one global link between every pair of groups) of "
                                  "leaves*p = {} terminals; leaf radix p + spines = {}, spine radix leaves + h = {} "
                                  "<= switch.radix {}",
                                  gmax, leaves * p, p + spines, leaves + h, radix);
  std::vector<NodeId> sources;
  for (int64_t l = 0; l < leaves; ++l) sources.push_back(leaf(0, l));
  std::vector<char> target(t.nodes.size(), 0), side(t.nodes.size(), 0);
  for (int64_t i = 0; i < g; ++i) {
    for (int64_t l = 0; l < leaves; ++l) {
      target[leaf(i, l)] = 1;
      side[leaf(i, l)] = g >= 2 ? (i < g / 2) : (l < leaves / 2);
    }
    for (int64_t s = 0; s < spines; ++s) side[spine(i, s)] = g >= 2 ? (i < g / 2) : (s < spines / 2);
  }
  f.diameter_hops = switch_eccentricity(t, sources, target);
  if (f.diameter_hops < 0) throw Error("internal: dragonfly_plus leaves are not connected");
  const auto [bps, crossing] = cut_capacity(t, side);
  f.bisection_bps = bps;
  f.bisection_method =
      g >= 2 ? fmt::format("links between groups [0, {}) and [{}, {}): {} global links x {} per direction", g / 2,
                           g / 2, g, thousands(crossing), format_bandwidth(hw.port_speed))
             : fmt::format("one group: leaves [0, {}) with spines [0, {}) vs the rest: {} leaf-spine links x {} per "
                           "direction",
                           leaves / 2, spines / 2, crossing, format_bandwidth(hw.port_speed));
  f.oversubscription.emplace_back("leaf", static_cast<double>(p) / static_cast<double>(spines));
  if (h > 0) f.oversubscription.emplace_back("spine", static_cast<double>(leaves) / static_cast<double>(h));
  f.notes.push_back(fmt::format("p = {}, leaves = {}, spines = {}, h = {}, g = {}: leaf ports {}, spine ports {} of "
                                "switch.radix {}; {} leaf-spine and {} global links",
                                p, leaves, spines, h, g, p + spines, leaves + h, radix, thousands(g * leaves * spines),
                                thousands(globals)));
  f.notes.push_back(global_note(pl, "spine"));
  fill_common_facts(t, hw, sz, leaves * p * g, leaves * g, p, "leaf");
  // As for the dragonfly: the radix's largest balanced shape may hold the GPUs on fewer switches.
  if (auto_shape && want > 0) {
    const int64_t big = std::max<int64_t>(1, radix / 2);
    const int64_t groups = (want + big * big - 1) / (big * big);
    if (big > x && groups <= big * big + 1 && groups * 2 * big < g * (leaves + spines))
      f.notes.push_back(fmt::format(
          "the radix's largest balanced shape (p = leaves = spines = h = {}) holds these GPUs on {} switches "
          "instead of {} and reaches {} GPUs: set topology.p, leaves, spines and h to {} for it (fewer, larger "
          "groups)",
          big, thousands(groups * 2 * big), thousands(g * (leaves + spines)),
          thousands(gpus_for_terminals(big * big * (big * big + 1), hw)), big));
  }
  return t;
}

}  // namespace

BuilderInfo dragonfly_builder() {
  return {"dragonfly",
          "Kim/Dally dragonfly: groups of a all-to-all routers (p terminals, h global links each), one global link "
          "per pair of groups",
          &dragonfly_params, &build_dragonfly};
}

BuilderInfo dragonfly_plus_builder() {
  return {"dragonfly_plus", "Dragonfly+: groups are leaf/spine Clos, spines carry the global links between groups",
          &dragonfly_plus_params, &build_dragonfly_plus};
}

}  // namespace podnet::topology
