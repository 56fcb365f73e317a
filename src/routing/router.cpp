// Router: the maths and the rules are in router.hpp; this file follows them:
//   constructor (network graph CSR, per-rank server links, torus links) ->
//   resolve (NVLink / shared NIC / NICs with PXN) -> distance tables (lazy
//   BFS per target) -> walks per policy -> load bookkeeping -> failures.
#include "routing/router.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fmt/format.h>
#include <limits>
#include <tuple>
#include <utility>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/units.hpp"

namespace podnet::routing {

using topology::kNone;
using topology::LinkId;
using topology::NodeId;
using topology::NodeKind;

namespace {

constexpr uint64_t kValiantSalt = 0x7a11a7;

}  // namespace

// ---------------------------------------------------------------- setup

Router::Router(const topology::Topology& t, RouteOptions o) : t_(t), o_(std::move(o)) {
  const PolicyInfo* info = &policy_info(o_.policy);
  if (!policy_applies(*info, t.family))
    throw InputError(fmt::format("network.routing: policy '{}' applies to {} topologies, not to '{}'", o_.policy,
                                 info->families, t.family));  // an input error (e.g. with an imported topology)
  if (t.adj_offset.size() != t.nodes.size() + 1)
    throw Error("routing: the topology has no adjacency (Topology::finalize() was not called)");
  policy_ = info->kind;
  torus_ = !t.torus_dims.empty();
  dragonfly_ = t.group_minimal;
  planes_ = std::max(1, t.nic_planes);
  tracks_load_ = info->load_aware;
  if (policy_ == Policy::DimensionOrder && !torus_)
    throw Error("routing: policy 'dimension_order' needs a torus (the topology has no torus_dims)");

  const size_t nn = t.nodes.size();
  load_.assign(2 * t.links.size(), 0.0);

  // Network nodes (network_graph.hpp): switches; on a torus the GPUs (network index = rank).
  if (torus_) {
    int64_t chips = 1;
    for (int32_t k : t.torus_dims) chips *= k;
    if (chips != static_cast<int64_t>(t.gpus.size()))
      throw Error(fmt::format("routing: torus_dims hold {} chips but the topology has {} GPUs", chips, t.gpus.size()));
  }
  graph_ = std::make_unique<NetworkGraph>(t);
  const int32_t net = graph_->size();
  seed_of_.resize(net);
  for (int32_t i = 0; i < net; ++i) {
    const NodeId u = graph_->node_of(i);
    seed_of_[i] = o_.per_switch_seed ? mix64(o_.seed ^ static_cast<uint64_t>(u)) : mix64(o_.seed);
  }

  // Per rank: NVSwitch, NVLink, PCIe to its NIC; per NIC: first owning GPU.
  const size_t ranks = t.gpus.size();
  nvswitch_.assign(ranks, kNone);
  nvl_link_.assign(ranks, kNone);
  gpu_pcie_.assign(ranks, kNone);
  owner_rank_.assign(nn, -1);
  owner_pcie_.assign(nn, kNone);
  for (size_t r = 0; r < ranks; ++r) {
    const NodeId g = t.gpus[r];
    const NodeId nic = r < t.gpu_nic.size() ? t.gpu_nic[r] : kNone;
    auto [b, e] = t.incident(g);
    for (const LinkId* l = b; l != e; ++l) {
      const NodeId v = t.other_end(*l, g);
      const NodeKind k = t.nodes[v].kind;
      if (k == NodeKind::NvSwitch && nvswitch_[r] == kNone) {
        nvswitch_[r] = v;
        nvl_link_[r] = *l;
      } else if (k == NodeKind::Nic) {
        if (v == nic && gpu_pcie_[r] == kNone) gpu_pcie_[r] = *l;
        if (owner_rank_[v] < 0) {
          owner_rank_[v] = static_cast<int32_t>(r);
          owner_pcie_[v] = *l;
        }
      }
    }
  }

  // Torus: dimensions, strides, +/- link of every chip per dimension.
  if (torus_) {
    dims_ = t.torus_dims;
    const auto D = static_cast<int32_t>(dims_.size());
    stride_.assign(D, 1);
    for (int32_t i = 1; i < D; ++i) stride_[i] = stride_[i - 1] * dims_[i - 1];
    plus_.assign(ranks * D, kNone);
    minus_.assign(ranks * D, kNone);
    auto link_between = [&](int32_t r, int32_t s) {
      const NodeId a = t.gpus[r], b2 = t.gpus[s];
      auto [b, e] = t.incident(a);
      for (const LinkId* l = b; l != e; ++l)
        if (t.other_end(*l, a) == b2) return *l;
      throw Error(fmt::format("routing: torus chips {} and {} are neighbours but not linked", t.nodes[a].name,
                              t.nodes[b2].name));
    };
    for (int32_t r = 0; r < static_cast<int32_t>(ranks); ++r)
      for (int32_t i = 0; i < D; ++i) {
        const int32_t k = dims_[i], x = (r / stride_[i]) % k;
        plus_[static_cast<size_t>(r) * D + i] = link_between(r, r + ((x + 1) % k - x) * stride_[i]);
        minus_[static_cast<size_t>(r) * D + i] = link_between(r, r + ((x - 1 + k) % k - x) * stride_[i]);
      }
  }

  frac_.assign(net, 0.0);
  count_.assign(net, 0);
  next_id_.resize(net);
  target_of_.assign(net, Target{});
  own_id_.resize(net);
  near_.resize(net);
  near_count_.assign(net, 0);
  attach_.resize(nn);
  for (size_t n = 0; n < nn; ++n)
    if (t.nodes[n].kind == NodeKind::Nic) attach_[n] = scan_attachment(static_cast<NodeId>(n));
  if (planes_ > 1) {  // every NIC's switch links in order: plane 0, 1, ... (topology/planes.hpp)
    plane_attach_.resize(nn * static_cast<size_t>(planes_));
    for (size_t n = 0; n < nn; ++n)
      if (t.nodes[n].kind == NodeKind::Nic)
        for (int32_t p = 0; p < planes_; ++p)
          plane_attach_[n * planes_ + p] = scan_plane_attachment(static_cast<NodeId>(n), p);
  }
  rank_end_.resize(ranks);
  for (size_t r = 0; r < ranks; ++r) {
    RankEnd& re = rank_end_[r];
    re.nvswitch = nvswitch_[r];
    if (torus_ || r >= t.gpu_nic.size() || t.gpu_nic[r] == kNone) continue;
    re.nic = t.gpu_nic[r];
    re.rail = t.nodes[re.nic].rail;
    if (gpu_pcie_[r] != kNone) re.pcie_up = dir_link(gpu_pcie_[r], t.gpus[r], t);
    re.attach = attach_[re.nic];
  }
}

uint16_t Router::udp_source_port(uint64_t entropy) { return static_cast<uint16_t>(0xC000 | (mix64(entropy) & 0x3FFF)); }

uint64_t Router::flow_key(NodeId src_nic, NodeId dst_nic, uint64_t entropy) {
  const uint64_t addr = (static_cast<uint64_t>(static_cast<uint32_t>(src_nic)) << 32) | static_cast<uint32_t>(dst_nic);
  return mix64(mix64(addr) ^ udp_source_port(entropy));
}

// ---------------------------------------------------------------- endpoints

void Router::check_rank(int32_t rank) const {
  if (rank < 0 || rank >= static_cast<int32_t>(t_.gpus.size()))
    throw Error(fmt::format("routing: GPU rank {} out of range (the topology has {} GPUs)", rank, t_.gpus.size()));
}

NodeId Router::nic_on_rail(int32_t server, int32_t rail) const {
  const int32_t n = t_.nics_per_server;
  if (server < 0 || rail < 0 || rail >= n) return kNone;
  const size_t i = static_cast<size_t>(server) * n + rail;
  if (i >= t_.nics.size()) return kNone;
  const topology::Node& nic = t_.nodes[t_.nics[i]];
  return nic.server == server && nic.rail == rail ? t_.nics[i] : kNone;
}

Router::Attachment Router::scan_attachment(NodeId nic) const {
  auto [b, e] = t_.incident(nic);
  for (const LinkId* l = b; l != e; ++l) {
    const int32_t v = graph_->net_of(t_.other_end(*l, nic));
    if (v >= 0 && graph_->link_up(*l)) return {*l, v, dir_link(*l, nic, t_)};
  }
  return {};
}

Router::Attachment Router::attachment(NodeId nic) const {
  return graph_->any_down() ? scan_attachment(nic) : attach_[nic];
}

Router::Attachment Router::plane_attachment(NodeId nic, int32_t p) const {
  return graph_->any_down() ? scan_plane_attachment(nic, p) : plane_attach_[static_cast<size_t>(nic) * planes_ + p];
}

Router::Attachment Router::scan_plane_attachment(NodeId nic, int32_t p) const {
  auto [b, e] = t_.incident(nic);
  int32_t k = 0;
  for (const LinkId* l = b; l != e; ++l) {
    const int32_t v = graph_->net_of(t_.other_end(*l, nic));
    if (v < 0) continue;
    if (k++ == p) return graph_->link_up(*l) ? Attachment{*l, v, dir_link(*l, nic, t_)} : Attachment{};
  }
  return {};
}

[[noreturn]] void Router::no_path(int32_t src, int32_t dst, const Ends& e, const char* why) const {
  const auto& nodes = t_.nodes;
  std::string msg =
      fmt::format("routing: no network path from {} to {}", nodes[t_.gpus[src]].name, nodes[t_.gpus[dst]].name);
  bool cross_rail = false;
  if (!torus_ && e.src_ep != kNone && e.dst_ep != kNone) {
    const int32_t sr = nodes[e.src_ep].rail, dr = nodes[e.dst_ep].rail;
    cross_rail = sr != dr;
    msg += fmt::format(" (NIC {} on rail {} -> NIC {} on rail {})", nodes[e.src_ep].name, sr, nodes[e.dst_ep].name, dr);
  }
  if (why && *why) msg += fmt::format(": {}", why);
  if (cross_rail) {
    if (!o_.pxn)
      msg += "; the NICs are on different rails and no switch joins those rails: enable PXN (routing.pxn: true) to "
             "cross rails over NVLink inside the source server, or add a super-spine tier joining the rails "
             "(topology.tiers: 3)";
    else msg += "; PXN found no GPU on the destination rail reachable over NVLink in the source server";
  }
  if (graph_->down_links() > 0)
    msg += (graph_->down_links() == 1 ? std::string("; 1 link is down")
                                      : fmt::format("; {} links are down", thousands(graph_->down_links())));
  throw Error(msg);
}

Router::Ends Router::resolve(int32_t src, int32_t dst) {
  check_rank(src);
  check_rank(dst);
  Ends e;
  if (src == dst) return e;
  if (!torus_ && !graph_->any_down()) {
    // Fault-free, from the two ranks' records: the same answer as the general case below wherever it applies
    // (one NVLink domain; two NICs on one rail, each with its PCIe link and a switch); else that case decides.
    const RankEnd& a = rank_end_[src];
    const RankEnd& b = rank_end_[dst];
    if (a.nvswitch != kNone && a.nvswitch == b.nvswitch) {
      e.kind = Ends::NvLink;
      return e;
    }
    if (a.nic != kNone && b.nic != kNone && a.nic != b.nic && a.rail == b.rail && a.pcie_up >= 0 && b.pcie_up >= 0 &&
        a.attach.net >= 0 && b.attach.net >= 0) {
      e.kind = Ends::Net;
      e.src_ep = a.nic;
      e.dst_ep = b.nic;
      e.src_pcie = link_of(a.pcie_up);
      e.src_dir = a.pcie_up;
      e.dst_dir = b.pcie_up ^ 1;
      e.attach(a.attach, b.attach);
      return e;
    }
  }
  e.kind = Ends::Net;
  if (torus_) {
    e.src_ep = t_.gpus[src];
    e.dst_ep = t_.gpus[dst];
    e.from = src;
    e.to = dst;
    return e;
  }
  if (nvswitch_[src] != kNone && nvswitch_[src] == nvswitch_[dst] && graph_->link_up(nvl_link_[src]) &&
      graph_->link_up(nvl_link_[dst])) {
    e.kind = Ends::NvLink;
    return e;
  }
  NodeId sn = t_.gpu_nic[src];
  const NodeId dn = t_.gpu_nic[dst];
  if (sn == kNone || dn == kNone)
    no_path(src, dst, e, sn == kNone ? "the source GPU has no NIC" : "the destination GPU has no NIC");
  e.dst_ep = dn;
  if (sn == dn) {
    e.kind = Ends::SharedNic;
    e.src_ep = sn;
    if (!graph_->link_up(gpu_pcie_[src]) || !graph_->link_up(gpu_pcie_[dst]))
      no_path(src, dst, e, "a PCIe link to the shared NIC is down");
    return e;
  }
  LinkId src_pcie = gpu_pcie_[src];
  const int32_t dr = t_.nodes[dn].rail;
  if (t_.nodes[sn].rail != dr && dr != kNone) {
    const NodeId alt = nic_on_rail(t_.nodes[t_.gpus[src]].server, dr);
    if (alt != kNone) {
      const int32_t owner = owner_rank_[alt];
      if (owner == src && graph_->link_up(owner_pcie_[alt])) {
        sn = alt;
        src_pcie = owner_pcie_[alt];
      } else if (o_.pxn && owner >= 0 && nvswitch_[src] != kNone && nvswitch_[owner] == nvswitch_[src] &&
                 graph_->link_up(nvl_link_[src]) && graph_->link_up(nvl_link_[owner]) &&
                 graph_->link_up(owner_pcie_[alt])) {
        sn = alt;
        src_pcie = owner_pcie_[alt];
        e.relay = owner;
      }
    }
  }
  e.src_ep = sn;
  e.src_pcie = src_pcie;
  if (src_pcie == kNone || !graph_->link_up(src_pcie)) no_path(src, dst, e, "the PCIe link to the source NIC is down");
  if (gpu_pcie_[dst] == kNone || !graph_->link_up(gpu_pcie_[dst]))
    no_path(src, dst, e, "the PCIe link from the destination NIC is down");
  e.src_dir = dir_link(src_pcie, t_.gpus[e.relay >= 0 ? e.relay : src], t_);
  e.dst_dir = dir_link(gpu_pcie_[dst], dn, t_);
  e.attach(attachment(sn), attachment(dn));
  if (e.from < 0) no_path(src, dst, e, "the source NIC has no up link to a switch");
  if (e.to < 0) no_path(src, dst, e, "the destination NIC has no up link to a switch");
  return e;
}

// ---------------------------------------------------------------- distance tables

int Router::torus_dist(int32_t u, int32_t v) const {
  int s = 0;
  for (size_t i = 0; i < dims_.size(); ++i) {
    const int32_t k = dims_[i];
    const int32_t d = std::abs((u / stride_[i]) % k - (v / stride_[i]) % k);
    s += std::min(d, k - d);
  }
  return s;
}

Router::Target Router::node_target(int32_t net, int32_t from, bool fallback) {
  const bool plain = !torus_ && !dragonfly_ && !graph_->any_down();
  if (plain && target_of_[static_cast<size_t>(net)].tab) return target_of_[static_cast<size_t>(net)];
  Target tg;
  tg.node = net;
  if (torus_ && graph_->down_links() == 0) return tg;  // distances computed
  tg.group = graph_->group(net);
  tg.restricted = dragonfly_;
  tg.tab = graph_->table(net, tg.restricted, false);
  if (fallback && tg.restricted && from >= 0 && tg.tab[from] < 0) {
    tg.restricted = false;
    tg.tab = graph_->table(net, false, false);
  }
  if (!tg.restricted && !graph_->any_down()) {  // gather's learnt next hops, shared with the target's twins
    const int32_t first = graph_->twin(net);
    std::vector<int32_t>& near = near_[first];
    int32_t& count = near_count_[first];
    if (near.empty()) {  // the twins of first and their neighbours (the same for every twin), numbered
      near.assign(graph_->size(), -1);
      for (int32_t v = first; v < graph_->size(); ++v)
        if (graph_->twin(v) == first) near[v] = count++;
      for (int32_t i = graph_->edge_begin(first); i < graph_->edge_end(first); ++i)
        if (int32_t& k = near[graph_->edge(i).to]; k < 0) k = count++;
    }
    std::vector<uint32_t>& own = own_id_[net];
    std::vector<uint32_t>& shared = next_id_[first];
    if (own.empty()) own.assign(static_cast<size_t>(count), kUnlearnt);
    if (shared.empty()) shared.assign(graph_->size(), kUnlearnt);
    tg.near = near.data();
    tg.own = own.data();
    tg.shared = shared.data();
  }
  if (plain) target_of_[static_cast<size_t>(net)] = tg;
  return tg;
}

Router::Target Router::group_target(int32_t group, int32_t from, bool fallback) {
  Target tg;
  tg.group = group;
  tg.restricted = dragonfly_;
  const auto key = graph_->size() + group;
  tg.tab = graph_->table(key, tg.restricted, false);
  if (fallback && tg.restricted && from >= 0 && tg.tab[from] < 0) {
    tg.restricted = false;
    tg.tab = graph_->table(key, false, false);
  }
  return tg;
}

// N_T(u), u at distance d > 0.
std::span<const Router::Hop> Router::gather(int32_t u, const Target& tg) {
  if (tg.shared) {
    const int32_t k = tg.near[u];
    uint32_t& id = k >= 0 ? tg.own[k] : tg.shared[u];
    if (id == kUnlearnt) id = learn_next(u, tg);
    const NextList& l = lists_[id];
    return {pool_.data() + l.off, l.n};
  }
  cand_.clear();
  const int want = dist(u, tg) - 1;
  const int32_t gu = graph_->group(u);
  for (int32_t i = graph_->edge_begin(u); i < graph_->edge_end(u); ++i) {
    const NetworkGraph::Edge& ed = graph_->edge(i);
    if (!graph_->dir_up(ed.dir) || dist(ed.to, tg) != want) continue;
    if (tg.restricted && graph_->group(ed.to) != gu && graph_->group(ed.to) != tg.group) continue;
    cand_.push_back({ed.dir, ed.to});
  }
  return cand_;
}

// Every direction up, no group restriction: a next hop is any edge one hop closer (the same list, in the same
// order, as gather's general case). Returns the index of that list in lists_, adding it if u has no such list.
uint32_t Router::learn_next(int32_t u, const Target& tg) {
  cand_.clear();
  const int want = dist(u, tg) - 1;
  for (int32_t i = graph_->edge_begin(u), e = graph_->edge_end(u); i < e; ++i) {
    const NetworkGraph::Edge& ed = graph_->edge(i);
    if (tg.tab[ed.to] == want) cand_.push_back({ed.dir, ed.to});
  }
  uint64_t h = mix64(static_cast<uint64_t>(u) << 32 | cand_.size());
  for (const Hop& c : cand_) h = mix64(h ^ static_cast<uint64_t>(c.dir));
  const auto same = [&](uint32_t id) {
    const NextList& l = lists_[id];
    if (l.u != u || l.n != cand_.size()) return false;
    for (uint32_t k = 0; k < l.n; ++k)
      if (pool_[l.off + k].dir != cand_[k].dir) return false;
    return true;
  };
  // Open addressing, linear probing; kept at most half full.
  if (2 * (lists_.size() + 1) > list_slots_.size()) {
    std::vector<uint32_t> old(std::max<size_t>(1024, 2 * list_slots_.size()), kUnlearnt);
    old.swap(list_slots_);
    const size_t mask = list_slots_.size() - 1;
    for (const uint32_t id : old)
      if (id != kUnlearnt)
        for (size_t i = lists_[id].hash & mask;; i = (i + 1) & mask)
          if (list_slots_[i] == kUnlearnt) {
            list_slots_[i] = id;
            break;
          }
  }
  const size_t mask = list_slots_.size() - 1;
  size_t i = h & mask;
  for (; list_slots_[i] != kUnlearnt; i = (i + 1) & mask)
    if (lists_[list_slots_[i]].hash == h && same(list_slots_[i])) return list_slots_[i];
  const auto id = static_cast<uint32_t>(lists_.size());
  if (id == kUnlearnt) throw Error("routing: internal: too many next-hop lists");
  lists_.push_back({h, u, static_cast<uint32_t>(pool_.size()), static_cast<uint32_t>(cand_.size())});
  pool_.insert(pool_.end(), cand_.begin(), cand_.end());
  list_slots_[i] = id;
  return id;
}

// ---------------------------------------------------------------- walks

int32_t Router::walk(int32_t from, const Target& tg, Pick pick, uint64_t key, std::vector<PathPart>& out) {
  int32_t u = from;
  for (int d = dist(u, tg); d > 0; --d) {
    const std::span<const Hop> cand = gather(u, tg);
    const auto n = static_cast<int>(cand.size());
    if (n == 0) throw Error("routing: internal: a node on a shortest path has no next hop");
    Hop c = cand[0];
    if (pick == Pick::Hash && n > 1) {
      c = cand[mix64(key ^ seed_of_[u]) % static_cast<uint64_t>(n)];
    } else if (pick == Pick::Least) {
      double best = std::numeric_limits<double>::infinity();
      ties_.clear();
      for (const Hop& h : cand) {
        const double l = load_[h.dir];
        if (l < best) {
          best = l;
          ties_.clear();
        }
        if (l == best) ties_.push_back(h);
      }
      c = ties_.size() == 1 ? ties_[0] : ties_[mix64(key ^ seed_of_[u]) % ties_.size()];
    }
    out.push_back({c.dir, 1.0});
    u = c.to;
  }
  return u;
}

void Router::spray(int32_t from, const Target& tg, std::vector<PathPart>& out) {
  level_.assign(1, from);
  frac_[from] = 1.0;
  for (int d = dist(from, tg); d > 0; --d) {
    next_.clear();
    for (int32_t u : level_) {
      const double f = frac_[u];
      frac_[u] = 0.0;
      const std::span<const Hop> cand = gather(u, tg);
      const auto n = static_cast<int>(cand.size());
      if (n == 0) throw Error("routing: internal: a node on a shortest path has no next hop");
      const double share = f / n;
      for (const Hop& h : cand) {
        out.push_back({h.dir, share});
        if (frac_[h.to] == 0.0) next_.push_back(h.to);
        frac_[h.to] += share;
      }
    }
    level_.swap(next_);
  }
  for (int32_t u : level_) frac_[u] = 0.0;
}

bool Router::dimension_order(int32_t from, int32_t to, std::vector<PathPart>& out) {
  const size_t start = out.size();
  const auto D = static_cast<int32_t>(dims_.size());
  int32_t r = from;
  for (int32_t i = 0; i < D; ++i) {
    const int32_t k = dims_[i];
    int32_t x = (r / stride_[i]) % k;
    const int32_t delta = ((to / stride_[i]) % k - x + k) % k;
    if (delta == 0) continue;
    const bool plus = delta <= k - delta;  // tie (delta = k/2) goes +
    const int32_t steps = plus ? delta : k - delta;
    for (int32_t s = 0; s < steps; ++s) {
      const LinkId l = (plus ? plus_ : minus_)[static_cast<size_t>(r) * D + i];
      if (!graph_->link_up(l)) {
        out.resize(start);
        return false;
      }
      out.push_back({dir_link(l, t_.gpus[r], t_), 1.0});
      const int32_t nx = plus ? (x + 1) % k : (x - 1 + k) % k;
      r += (nx - x) * stride_[i];
      x = nx;
    }
  }
  return true;
}

void Router::merge_duplicates(std::vector<PathPart>& out, size_t start) {
  for (size_t i = start; i < out.size(); ++i)
    for (size_t j = i + 1; j < out.size();) {
      if (out[j].link == out[i].link) {
        out[i].fraction += out[j].fraction;
        out.erase(out.begin() + static_cast<std::ptrdiff_t>(j));
      } else {
        ++j;
      }
    }
}

void Router::valiant(int32_t from, int32_t to, Pick pick, uint64_t key, std::vector<PathPart>& out) {
  const int32_t sg = graph_->group(from), dg = graph_->group(to), groups = t_.groups;
  if (sg != dg && sg >= 0 && dg >= 0 && groups >= 3) {
    const int32_t m = groups - 2, lo = std::min(sg, dg), hi = std::max(sg, dg);
    const auto first = static_cast<int32_t>(mix64(key ^ mix64(o_.seed ^ kValiantSalt)) % static_cast<uint64_t>(m));
    for (int32_t tries = 0; tries < m; ++tries) {
      int32_t g = (first + tries) % m;  // the g-th group other than sg and dg
      if (g >= lo) ++g;
      if (g >= hi) ++g;
      // both phases minimal (local-global-local); else the next group
      const Target ti = group_target(g, from, false);
      if (ti.tab[from] < 0) continue;
      const size_t start = out.size();
      const int32_t mid = walk(from, ti, pick, key, out);
      const Target td = node_target(to, mid, false);
      if (dist(mid, td) < 0) {
        out.resize(start);
        continue;
      }
      walk(mid, td, pick, key, out);
      merge_duplicates(out, start);
      return;
    }
  }
  walk(from, node_target(to, from), pick, key, out);  // minimal
}

double Router::path_cost(const std::vector<PathPart>& parts, double weight) const {
  double lmax = 0;
  for (const PathPart& p : parts) lmax = std::max(lmax, load_[p.link]);
  return static_cast<double>(parts.size()) * (lmax + weight);
}

// ---------------------------------------------------------------- public

void Router::route(int32_t src, int32_t dst, uint64_t entropy, double weight, std::vector<PathPart>& out) {
  const size_t start = out.size();
  const Ends e = resolve(src, dst);
  switch (e.kind) {
    case Ends::Same: return;
    case Ends::NvLink:
      out.push_back({dir_link(nvl_link_[src], t_.gpus[src], t_), 1.0});
      out.push_back({dir_link(nvl_link_[dst], nvswitch_[dst], t_), 1.0});
      break;
    case Ends::SharedNic:
      out.push_back({dir_link(gpu_pcie_[src], t_.gpus[src], t_), 1.0});
      out.push_back({dir_link(gpu_pcie_[dst], e.dst_ep, t_), 1.0});
      break;
    case Ends::Net: {
      if (!torus_) {
        if (e.relay >= 0) {
          out.push_back({dir_link(nvl_link_[src], t_.gpus[src], t_), 1.0});
          out.push_back({dir_link(nvl_link_[e.relay], nvswitch_[src], t_), 1.0});
        }
        out.push_back({e.src_dir, 1.0});
      }
      if (!network_part(e, entropy, weight, out)) {
        out.resize(start);
        no_path(src, dst, e, "");
      }
      if (!torus_) out.push_back({e.dst_dir, 1.0});
      break;
    }
  }
  if (tracks_load_)
    for (size_t i = start; i < out.size(); ++i) load_[out[i].link] += weight * out[i].fraction;
}

void Router::route_batch(std::span<const Request> reqs, std::vector<PathPart>& out, std::vector<size_t>& at) {
  at.clear();
  walks_.clear();
  const bool walks = !tracks_load_ && !torus_ && !dragonfly_ && planes_ == 1 && !graph_->any_down() &&
                     (policy_ == Policy::Ecmp || policy_ == Policy::Static);
  const bool hash = policy_ == Policy::Ecmp;
  // A hop of a walk is three dependent reads (as gather() and walk() make them): the node's list number toward
  // the target, that list's place in pool_, and the next hop in it. A walk takes one of them per round and
  // requests what the next one reads, so that a round's reads, one per walk, overlap. true: w has arrived.
  const auto stage = [&](Walk& w) {
    switch (w.stage) {
      case 0:
      case 3: {
        uint32_t* slot = w.tg.shared + w.u;
        if (w.stage == 3) {
          slot = w.tg.own + w.id;
        } else if (const int32_t k = w.tg.near[w.u]; k >= 0) {  // its own list number: one read more
          w.id = static_cast<uint32_t>(k);
          __builtin_prefetch(w.tg.own + k);
          w.stage = 3;
          return false;
        }
        if (*slot == kUnlearnt) *slot = learn_next(w.u, w.tg);
        w.id = *slot;
        __builtin_prefetch(lists_.data() + w.id);
        w.stage = 1;
        return false;
      }
      case 1: {
        const NextList& l = lists_[w.id];
        if (l.n == 0) throw Error("routing: internal: a node on a shortest path has no next hop");
        w.id = l.off + (hash && l.n > 1 ? static_cast<uint32_t>(mix64(w.key ^ seed_of_[w.u]) % l.n) : 0);
        __builtin_prefetch(pool_.data() + w.id);
        w.stage = 2;
        return false;
      }
      default: {
        const Hop c = pool_[w.id];
        out[w.pos++] = {c.dir, 1.0};
        w.u = c.to;
        w.stage = 0;
        if (--w.d == 0) return true;
        __builtin_prefetch(w.tg.near + w.u);
        __builtin_prefetch(w.tg.shared + w.u);
        __builtin_prefetch(seed_of_.data() + w.u);
        return false;
      }
    }
  };
  // One round: every walk in progress one read further; those that arrived leave (their order changes
  // nothing: each writes its own slots).
  const auto round = [&] {
    for (size_t i = 0; i < walks_.size();)
      if (stage(walks_[i])) {
        walks_[i] = walks_.back();
        walks_.pop_back();
      } else {
        ++i;
      }
  };
  // Requests are resolved kAhead before their turn (their ends, their target, and a request for the
  // distance and the first hop's list that the turn reads). A request that throws there is left to route(),
  // which throws the same in its turn.
  constexpr size_t kAhead = 8;
  struct Ahead {
    Ends e;
    Target tg;
    bool walk = false;
  };
  std::array<Ahead, kAhead> ahead;
  const auto prepare = [&](size_t k) {
    Ahead& a = ahead[k % kAhead];
    a.walk = false;
    if (!walks) return;
    try {
      a.e = resolve(reqs[k].src, reqs[k].dst);
    } catch (const Error&) {
      return;
    }
    if (a.e.kind != Ends::Net || a.e.relay >= 0 || a.e.from_dir < 0 || a.e.to_dir < 0) return;
    a.tg = node_target(a.e.to, a.e.from);
    if (!a.tg.shared) return;
    a.walk = true;
    __builtin_prefetch(a.tg.tab + a.e.from);
    __builtin_prefetch(a.tg.near + a.e.from);
    __builtin_prefetch(a.tg.shared + a.e.from);
    __builtin_prefetch(seed_of_.data() + a.e.from);
  };
  for (size_t k = 0; k < std::min(kAhead, reqs.size()); ++k) prepare(k);
  for (size_t k = 0; k < reqs.size(); ++k) {
    const Request& r = reqs[k];
    at.push_back(out.size());
    const Ahead a = ahead[k % kAhead];
    if (k + kAhead < reqs.size()) {
      if (walks && k + 2 * kAhead < reqs.size()) {
        __builtin_prefetch(rank_end_.data() + reqs[k + 2 * kAhead].src);
        __builtin_prefetch(rank_end_.data() + reqs[k + 2 * kAhead].dst);
      }
      prepare(k + kAhead);
    }
    const int d = a.walk ? dist(a.e.from, a.tg) : -1;
    if (d < 0) {  // not one walk between two NICs (or no path: route() says why)
      route(r.src, r.dst, r.entropy, 1.0, out);
      continue;
    }
    // route()'s parts: PCIe, NIC -> switch, the walk's d hops, switch -> NIC, PCIe
    out.push_back({a.e.src_dir, 1.0});
    out.push_back({a.e.from_dir, 1.0});
    const size_t pos = out.size();
    out.resize(pos + static_cast<size_t>(d));
    out.push_back({a.e.to_dir, 1.0});
    out.push_back({a.e.dst_dir, 1.0});
    if (d > 0) walks_.push_back({a.e.from, d, flow_key(a.e.src_ep, a.e.dst_ep, r.entropy), pos, a.tg, 0, 0});
    if (walks_.size() >= kBatchWalks) round();
  }
  at.push_back(out.size());
  while (!walks_.empty()) round();
}

bool Router::network_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out) {
  return planes_ > 1 ? plane_part(e, entropy, weight, out) : one_part(e, entropy, weight, out);
}

bool Router::plane_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out) {
  usable_.clear();
  for (int32_t p = 0; p < planes_; ++p) {
    const Attachment a = plane_attachment(e.src_ep, p), b = plane_attachment(e.dst_ep, p);
    if (a.net < 0 || b.net < 0 || dist(a.net, node_target(b.net, a.net)) < 0) continue;
    usable_.push_back(p);
  }
  const auto n = static_cast<int32_t>(usable_.size());
  if (n == 0) return false;
  const uint64_t hash = mix64(flow_key(e.src_ep, e.dst_ep, entropy) ^ mix64(o_.seed ^ static_cast<uint64_t>(e.src_ep)));
  auto in_plane = [&](int32_t p) {
    Ends ep = e;
    ep.attach(plane_attachment(e.src_ep, p), plane_attachment(e.dst_ep, p));
    return one_part(ep, entropy, weight, out);
  };
  switch (policy_) {
    case Policy::Spray:
      for (int32_t p : usable_) {
        const size_t start = out.size();
        if (!in_plane(p)) return false;
        for (size_t i = start; i < out.size(); ++i) out[i].fraction /= n;
      }
      return true;
    case Policy::Static: return in_plane(usable_[0]);
    case Policy::Adaptive:
    case Policy::Ugal: {
      double best = std::numeric_limits<double>::infinity();
      std::vector<int32_t> ties;
      for (int32_t p : usable_) {
        const double l = load_[plane_attachment(e.src_ep, p).up];
        if (l < best) {
          best = l;
          ties.clear();
        }
        if (l == best) ties.push_back(p);
      }
      return in_plane(ties[hash % ties.size()]);
    }
    default: return in_plane(usable_[hash % static_cast<uint64_t>(n)]);
  }
}

bool Router::one_part(const Ends& e, uint64_t entropy, double weight, std::vector<PathPart>& out) {
  const size_t start = out.size();
  if (e.from_dir >= 0) out.push_back({e.from_dir, 1.0});
  const uint64_t key = flow_key(e.src_ep, e.dst_ep, entropy);
  if (policy_ == Policy::DimensionOrder && dimension_order(e.from, e.to, out)) {
    // done: the dimension-order path is up
  } else {
    const Target tg = node_target(e.to, e.from);
    if (dist(e.from, tg) < 0) {
      out.resize(start);
      return false;
    }
    switch (policy_) {
      case Policy::Ecmp: walk(e.from, tg, Pick::Hash, key, out); break;
      case Policy::Adaptive: walk(e.from, tg, Pick::Least, key, out); break;
      case Policy::Spray: spray(e.from, tg, out); break;
      case Policy::Static:
      case Policy::DimensionOrder: walk(e.from, tg, Pick::Static, key, out); break;
      case Policy::Valiant: valiant(e.from, e.to, Pick::Hash, key, out); break;
      case Policy::Ugal: {
        alt_a_.clear();
        alt_b_.clear();
        walk(e.from, tg, Pick::Least, key, alt_a_);
        valiant(e.from, e.to, Pick::Least, key, alt_b_);
        const auto& pick = path_cost(alt_a_, weight) <= path_cost(alt_b_, weight) ? alt_a_ : alt_b_;
        out.insert(out.end(), pick.begin(), pick.end());
        break;
      }
    }
  }
  if (e.to_dir >= 0) out.push_back({e.to_dir, 1.0});
  return true;
}

void Router::route_endpoints(NodeId src_ep, NodeId dst_ep, uint64_t entropy, std::vector<PathPart>& out) {
  const auto n = static_cast<NodeId>(t_.nodes.size());
  if (src_ep < 0 || src_ep >= n || dst_ep < 0 || dst_ep >= n)
    throw Error(fmt::format("routing: endpoint node out of range (the topology has {} nodes)", n));
  if (src_ep == dst_ep) return;
  const size_t start = out.size();
  Ends e;
  e.kind = Ends::Net;
  e.src_ep = src_ep;
  e.dst_ep = dst_ep;
  const auto kind_ok = [&](NodeId v) {
    return torus_ ? t_.nodes[v].kind == topology::NodeKind::Gpu : t_.nodes[v].kind == topology::NodeKind::Nic;
  };
  if (!kind_ok(src_ep) || !kind_ok(dst_ep))
    throw Error(fmt::format("routing: {} -> {}: endpoints must be {}", t_.nodes[src_ep].name, t_.nodes[dst_ep].name,
                            torus_ ? "GPUs (the routers of a torus)" : "NICs"));
  if (torus_) {
    e.from = graph_->net_of(src_ep);
    e.to = graph_->net_of(dst_ep);
  } else {
    e.attach(attachment(src_ep), attachment(dst_ep));
  }
  const bool ok = e.from >= 0 && e.to >= 0 && network_part(e, entropy, 1.0, out);
  if (!ok) {
    out.resize(start);
    throw Error(fmt::format("routing: no network path from {} to {}{}", t_.nodes[src_ep].name, t_.nodes[dst_ep].name,
                            graph_->down_links() > 0
                                ? (graph_->down_links() == 1
                                       ? std::string(" (1 link is down)")
                                       : fmt::format(" ({} links are down)", thousands(graph_->down_links())))
                                : std::string()));
  }
  if (tracks_load_)
    for (size_t i = start; i < out.size(); ++i) load_[out[i].link] += out[i].fraction;
}

void Router::release(const std::vector<PathPart>& route, double weight) {
  if (!tracks_load_) return;
  for (const PathPart& p : route) {
    double& l = load_[p.link];
    l -= weight * p.fraction;
    if (std::abs(l) < 1e-9) l = 0;
  }
}

void Router::set_link_up(LinkId l, bool up) {
  if (l < 0 || l >= static_cast<LinkId>(t_.links.size()))
    throw Error(fmt::format("routing: link {} out of range (the topology has {} links)", l, t_.links.size()));
  set_dir_up(2 * l, up);
  set_dir_up(2 * l + 1, up);
}

void Router::set_dir_up(DirLink d, bool up) {
  if (d < 0 || d >= 2 * static_cast<DirLink>(t_.links.size()))
    throw Error(fmt::format("routing: directed link {} out of range (the topology has {} links)", d, t_.links.size()));
  graph_->set_dir_up(d, up);  // drops the live distance tables
  std::fill(target_of_.begin(), target_of_.end(), Target{});
  ++epoch_;
}

int Router::switch_hops(int32_t src, int32_t dst) {
  const Ends e = resolve(src, dst);
  if (e.kind != Ends::Net) return 0;
  const Target tg = node_target(e.to, e.from);
  const int d = dist(e.from, tg);
  if (d < 0) no_path(src, dst, e, "");
  return torus_ ? d : d + 1;
}

int Router::equal_cost_paths(int32_t src, int32_t dst) {
  const Ends e = resolve(src, dst);
  if (e.kind != Ends::Net) return 1;
  const Target tg = node_target(e.to, e.from);
  if (dist(e.from, tg) < 0) no_path(src, dst, e, "");
  constexpr int64_t kCap = std::numeric_limits<int32_t>::max();
  // Paths to each DAG node, level by level (same propagation as spray).
  level_.assign(1, e.from);
  count_[e.from] = 1;
  for (int d = dist(e.from, tg); d > 0; --d) {
    next_.clear();
    for (int32_t u : level_) {
      const int64_t c = count_[u];
      count_[u] = 0;
      for (const Hop& h : gather(u, tg)) {
        const int32_t v = h.to;
        if (count_[v] == 0) next_.push_back(v);
        count_[v] = std::min(kCap, count_[v] + c);
      }
    }
    level_.swap(next_);
  }
  int64_t total = 0;
  for (int32_t u : level_) {
    total = std::min(kCap, total + count_[u]);
    count_[u] = 0;
  }
  if (planes_ > 1) {  // every plane where both NICs are linked (a copy of this one, fault-free)
    int64_t planes = 0;
    for (int32_t p = 0; p < planes_; ++p)
      planes += plane_attachment(e.src_ep, p).net >= 0 && plane_attachment(e.dst_ep, p).net >= 0;
    total = std::min(kCap, total * planes);
  }
  return static_cast<int>(total);
}

}  // namespace podnet::routing
