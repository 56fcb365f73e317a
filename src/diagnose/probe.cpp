#include "diagnose/probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "core/units.hpp"
#include "routing/router.hpp"

namespace podnet::diagnose {

using topology::LinkId;
using topology::NodeId;
using topology::NodeKind;

const char* fault_kind_name(FaultKind k) {
  switch (k) {
    case FaultKind::Drop: return "drop";
    case FaultKind::Corrupt: return "corrupt";
    case FaultKind::Degrade: return "degrade";
    case FaultKind::Flap: return "flap";
  }
  return "?";
}

double active_share(const Fault& f, Time t0, Time t1) {
  if (!(t1 > t0)) return 0;
  const double len = static_cast<double>(t1.ps - t0.ps);
  if (f.kind != FaultKind::Flap) {
    const int64_t from = std::max(t0.ps, f.start.ps);
    return from >= t1.ps ? 0.0 : static_cast<double>(t1.ps - from) / len;
  }
  if (f.period.ps <= 0) return 0;
  // Down intervals [start + k P, start + k P + D), k >= 0, overlapped with [t0, t1).
  int64_t down = 0;
  const int64_t P = f.period.ps, D = std::min(f.down.ps, f.period.ps);
  int64_t k = t0.ps > f.start.ps ? (t0.ps - f.start.ps) / P : 0;
  for (;; ++k) {
    const int64_t a = f.start.ps + k * P;
    if (a >= t1.ps) break;
    const int64_t lo = std::max(a, t0.ps), hi = std::min(a + D, t1.ps);
    if (hi > lo) down += hi - lo;
  }
  return static_cast<double>(down) / len;
}

bool is_network_link(const topology::Topology& t, LinkId l) {
  const auto net = [&](NodeId n) {
    const auto& node = t.nodes[n];
    return node.kind == NodeKind::Switch || (!t.torus_dims.empty() && node.kind == NodeKind::Gpu);
  };
  const auto& link = t.links[l];
  if (!t.torus_dims.empty()) return net(link.a) && net(link.b);
  return net(link.a) || net(link.b);
}

std::vector<NodeId> probe_endpoints(const topology::Topology& t) {
  std::vector<NodeId> out;
  if (!t.torus_dims.empty()) return t.gpus;
  for (NodeId n : t.nics) {
    auto [b, e] = t.incident(n);
    for (auto it = b; it != e; ++it)
      if (is_network_link(t, *it)) {
        out.push_back(n);
        break;
      }
  }
  return out;
}

NodeId switch_entered(const topology::Topology& t, routing::DirLink d) {
  const NodeId n = routing::dir_to(d, t);
  return t.nodes[n].kind == NodeKind::Switch ? n : topology::kNone;
}

namespace {

// The attachment switch of an endpoint (its first network link's other end), or the endpoint itself on a torus.
NodeId attachment(const topology::Topology& t, NodeId ep) {
  if (!t.torus_dims.empty()) return ep;
  auto [b, e] = t.incident(ep);
  for (auto it = b; it != e; ++it)
    if (is_network_link(t, *it)) return t.other_end(*it, ep);
  return topology::kNone;
}

}  // namespace

Mesh build_mesh(const topology::Topology& t, routing::Router& router, const ProbeOptions& o, uint64_t seed) {
  if (o.ports < 1 || o.ports > 256)
    throw InputError(fmt::format("--ports {}: expected 1 to 256 UDP source ports per pair", o.ports));
  Mesh m;
  m.kind = o.mesh;
  const std::vector<NodeId> eps = probe_endpoints(t);
  if (eps.size() < 2) throw InputError("probing needs at least two NICs with a network link (this fabric has fewer)");
  m.endpoints = static_cast<int32_t>(eps.size());

  // Ordered (src, dst) pairs.
  std::vector<std::pair<NodeId, NodeId>> pairs;
  const auto cap = [&](int64_t n) {
    if (n * o.ports > kMaxTuples)
      throw InputError(fmt::format("--probe {}: {} pairs x {} ports is more than {} probe tuples; use --probe rail or "
                                   "leaf-mesh, or fewer --ports/--targets",
                                   o.mesh, thousands(n), o.ports, thousands(kMaxTuples)));
  };
  if (o.mesh == "full-mesh") {
    const auto n = static_cast<int64_t>(eps.size());
    cap(n * (n - 1));
    for (NodeId s : eps)
      for (NodeId d : eps)
        if (s != d) pairs.emplace_back(s, d);
  } else if (o.mesh == "rail") {
    if (o.targets < 1 || o.targets > 4096)
      throw InputError(fmt::format("--targets {}: expected 1 to 4096 targets per NIC", o.targets));
    cap(static_cast<int64_t>(eps.size()) * o.targets);
    std::map<int32_t, std::vector<NodeId>> by_rail;  // rail -> endpoints (rail kNone: all together)
    for (NodeId e : eps) by_rail[t.torus_dims.empty() ? t.nodes[e].rail : 0].push_back(e);
    Rng base = Rng(seed).stream("probe-targets");
    for (NodeId s : eps) {
      const auto& same = by_rail[t.torus_dims.empty() ? t.nodes[s].rail : 0];
      std::vector<NodeId> cand;
      for (NodeId d : same)
        if (d != s && (t.nodes[d].server != t.nodes[s].server || t.nodes[s].server == topology::kNone))
          cand.push_back(d);
      Rng rng = base.stream(t.nodes[s].name);
      const size_t k = std::min(cand.size(), static_cast<size_t>(o.targets));
      for (size_t i = 0; i < k; ++i) {  // partial Fisher-Yates: k distinct targets
        const size_t j = i + static_cast<size_t>(rng.below(cand.size() - i));
        std::swap(cand[i], cand[j]);
        pairs.emplace_back(s, cand[i]);
      }
    }
  } else if (o.mesh == "leaf-mesh") {
    std::map<NodeId, std::vector<NodeId>> under;  // leaf -> endpoints, in endpoint order
    for (NodeId e : eps) under[attachment(t, e)].push_back(e);
    std::vector<NodeId> leaves;
    for (const auto& [leaf, list] : under) leaves.push_back(leaf);
    if (leaves.size() < 2)
      throw InputError(fmt::format("--probe leaf-mesh: it pairs NICs under different leaves, and every NIC of this "
                                   "fabric is under {}; expected --probe rail or full-mesh",
                                   leaves.empty() ? std::string("no leaf") : "one leaf, " + t.nodes[leaves[0]].name));
    cap(static_cast<int64_t>(leaves.size()) * static_cast<int64_t>(leaves.size() - 1));
    std::map<NodeId, size_t> next;  // rotation through each leaf's endpoints
    for (NodeId a : leaves)
      for (NodeId b : leaves) {
        if (a == b) continue;
        const auto& la = under[a];
        const auto& lb = under[b];
        // Prefer a pair on one rail (a rail plane routes nothing else).
        NodeId s = la[next[a] % la.size()];
        NodeId d = topology::kNone;
        for (size_t k = 0; k < lb.size() && d == topology::kNone; ++k) {
          const NodeId c = lb[(next[b] + k) % lb.size()];
          if (t.nodes[c].rail == t.nodes[s].rail) d = c;
        }
        if (d == topology::kNone) d = lb[next[b] % lb.size()];
        ++next[a];
        ++next[b];
        pairs.emplace_back(s, d);
      }
  } else {
    throw InputError(fmt::format("--probe '{}': expected full-mesh, rail or leaf-mesh", o.mesh));
  }

  std::vector<routing::PathPart> fwd, back;
  std::vector<char>& covered = m.covered;
  covered.assign(2 * t.links.size(), 0);
  for (const auto& [s, d] : pairs) {
    for (int p = 0; p < o.ports; ++p) {
      fwd.clear();
      back.clear();
      try {
        router.route_endpoints(s, d, static_cast<uint64_t>(p), fwd);
        router.route_endpoints(d, s, static_cast<uint64_t>(p), back);
      } catch (const Error&) {
        ++m.unroutable;
        break;  // no route for this pair (another rail plane): skip it whole
      }
      Tuple tu;
      tu.src = s;
      tu.dst = d;
      tu.sport = routing::Router::udp_source_port(static_cast<uint64_t>(p));
      tu.path_begin = static_cast<int32_t>(m.links.size());
      for (const auto& part : fwd) m.links.push_back(part.link);
      tu.return_begin = static_cast<int32_t>(m.links.size());
      for (const auto& part : back) m.links.push_back(part.link);
      tu.path_end = static_cast<int32_t>(m.links.size());
      for (int32_t i = tu.path_begin; i < tu.path_end; ++i) covered[m.links[i]] = 1;
      m.tuples.push_back(tu);
    }
  }
  for (LinkId l = 0; l < static_cast<LinkId>(t.links.size()); ++l) {
    if (!is_network_link(t, l)) continue;
    m.network_dirs += 2;
    m.covered_dirs += covered[2 * l] + covered[2 * l + 1];
  }
  if (m.tuples.empty()) throw InputError(fmt::format("--probe {}: no pair of NICs is routable", o.mesh));
  return m;
}

namespace {

// Binomial(n, p) by geometric gaps between successes: exact, O(n min(p, 1-p)) expected draws.
int64_t binomial(Rng& rng, int64_t n, double p) {
  if (n <= 0 || p <= 0) return 0;
  if (p >= 1) return n;
  if (p > 0.5) return n - binomial(rng, n, 1 - p);
  const double log_q = std::log1p(-p);
  int64_t k = 0, pos = 0;
  for (;;) {
    const double u = 1.0 - rng.uniform();  // (0, 1]
    pos += static_cast<int64_t>(std::floor(std::log(u) / log_q)) + 1;
    if (pos > n) return k;
    ++k;
  }
}

}  // namespace

ProbeRun probe_schedule(const topology::Topology& t, const Mesh& mesh, const ProbeOptions& o) {
  if (!(o.rate > 0) || o.rate > 1e7)
    throw InputError(fmt::format("--rate {}: expected 0 < probes per second per NIC <= 1e7", o.rate));
  if (o.round.ps <= 0 || o.duration.ps < o.round.ps)
    throw InputError(o.round.ps <= 0
                         ? fmt::format("--round {}: expected a round longer than 0", format_time(o.round))
                         : fmt::format("--duration {}: expected at least one round (--round {}); probing runs in "
                                       "whole rounds",
                                       format_time(o.duration), format_time(o.round)));
  // Probing runs in whole rounds: a remainder would be silently left unprobed.
  const int64_t whole = o.duration.ps / o.round.ps;
  if (o.duration.ps % o.round.ps != 0)
    throw InputError(fmt::format("--duration {} is not a whole number of rounds of {} (--round): probing runs in "
                                 "whole rounds; expected {} or {}",
                                 format_time(o.duration), format_time(o.round), format_time(o.round * whole),
                                 format_time(o.round * (whole + 1))));
  constexpr int64_t kMaxRounds = 100000;
  if (whole > kMaxRounds)
    throw InputError(fmt::format("--duration {} is {} rounds of {} (--round): expected at most {}; lengthen the round",
                                 format_time(o.duration), whole, format_time(o.round), kMaxRounds));
  ProbeRun run;
  run.round = o.round;
  run.rounds = static_cast<int>(whole);
  const size_t T = mesh.tuples.size();

  // Probes per tuple per round: each source's rate x round spread evenly over its tuples
  // (tuple j of a source with m tuples and N probes gets N/m, the first N mod m one more).
  std::map<NodeId, int64_t> tuples_of;
  for (const auto& tu : mesh.tuples) ++tuples_of[tu.src];
  const auto per_src = static_cast<int64_t>(std::llround(o.rate * o.round.seconds()));
  run.sent_per_round.resize(T);
  {
    std::map<NodeId, int64_t> seen;
    for (size_t i = 0; i < T; ++i) {
      const NodeId s = mesh.tuples[i].src;
      const int64_t m = tuples_of[s], j = seen[s]++;
      run.sent_per_round[i] = per_src / m + (j < per_src % m ? 1 : 0);
    }
  }
  // Probe load: each NIC transmits its requests and its replies to others' requests.
  {
    std::map<NodeId, double> tx;  // probes per second transmitted
    for (size_t i = 0; i < T; ++i) {
      const double r = static_cast<double>(run.sent_per_round[i]) / o.round.seconds();
      tx[mesh.tuples[i].src] += r;
      tx[mesh.tuples[i].dst] += r;
    }
    double sum = 0;
    for (const auto& [ep, r] : tx) {
      const double bytes = r * kProbeWireBytes;
      sum += bytes;
      run.probe_bytes_per_s_per_nic_max = std::max(run.probe_bytes_per_s_per_nic_max, bytes);
      double cap = 0;
      auto [b, e] = t.incident(ep);
      for (auto it = b; it != e; ++it)
        if (is_network_link(t, *it)) cap = std::max(cap, t.links[*it].capacity.bytes_per_second());
      if (cap > 0) run.capacity_share_max = std::max(run.capacity_share_max, bytes / cap);
    }
    run.probe_bytes_per_s_per_nic = sum / static_cast<double>(mesh.endpoints);
  }

  run.total.assign(T, {});
  run.lost_by_round.resize(run.rounds);
  return run;
}

ProbeRun simulate_probes(const topology::Topology& t, const Mesh& mesh, const std::vector<Fault>& faults,
                         const ProbeOptions& o, uint64_t seed) {
  if (!(o.background >= 0 && o.background < 1))
    throw InputError(fmt::format("--background {}: expected a loss probability in [0, 1)", o.background));
  ProbeRun run = probe_schedule(t, mesh, o);
  const size_t T = mesh.tuples.size();

  // Per directed link and per switch: the faults that touch them.
  const size_t D = 2 * t.links.size();
  std::vector<std::vector<int32_t>> link_faults(D);
  std::map<NodeId, std::vector<int32_t>> switch_faults;
  for (size_t f = 0; f < faults.size(); ++f) {
    for (auto d : faults[f].dirs) link_faults[d].push_back(static_cast<int32_t>(f));
    if (faults[f].device != topology::kNone) switch_faults[faults[f].device].push_back(static_cast<int32_t>(f));
  }
  const auto fault_loss = [&](const Fault& f, double share) {
    if (f.kind == FaultKind::Drop || f.kind == FaultKind::Corrupt) return f.probability * share;
    if (f.kind == FaultKind::Flap) return share;
    return 0.0;
  };

  // Base RTT per tuple (no faults): propagation + serialization per link, a switch latency per switch crossed.
  std::vector<Time> base(T);
  for (size_t i = 0; i < T; ++i) {
    int64_t ps = 0;
    for (int32_t k = mesh.tuples[i].path_begin; k < mesh.tuples[i].path_end; ++k) {
      const auto d = mesh.links[k];
      const auto& l = t.links[routing::link_of(d)];
      ps += l.latency.ps + static_cast<int64_t>(std::llround(kProbeWireBytes * 8.0 / l.capacity.bps * 1e12));
      if (switch_entered(t, d) != topology::kNone) ps += t.switch_latency.ps;
    }
    base[i] = Time(ps);
  }

  // RTT takes at most a few values per tuple (its base, and higher while a degrade is on): count the probes
  // received at the base RTT and at the highest seen, which give the percentiles.
  std::vector<Time> rtt_max(T);
  std::vector<int64_t> at_base(T, 0), at_max(T, 0);
  const Rng root(seed);
  for (int r = 0; r < run.rounds; ++r) {
    const Time t0(o.round.ps * r), t1(o.round.ps * (r + 1));
    Rng rng = root.stream(fmt::format("probe-round-{}", r));
    std::vector<double> share(faults.size());
    for (size_t f = 0; f < faults.size(); ++f) share[f] = active_share(faults[f], t0, t1);
    for (size_t i = 0; i < T; ++i) {
      const Tuple& tu = mesh.tuples[i];
      double keep = std::pow(1.0 - o.background, tu.path_end - tu.path_begin);
      int64_t added = 0;
      for (int32_t k = tu.path_begin; k < tu.path_end; ++k) {
        const auto d = mesh.links[k];
        for (int32_t f : link_faults[d]) {
          keep *= 1.0 - fault_loss(faults[f], share[f]);
          if (faults[f].kind == FaultKind::Degrade && share[f] > 0) added += faults[f].latency.ps;
        }
        if (!switch_faults.empty()) {
          const NodeId x = switch_entered(t, d);
          if (x != topology::kNone)
            if (auto it = switch_faults.find(x); it != switch_faults.end())
              for (int32_t f : it->second) {
                keep *= 1.0 - fault_loss(faults[f], share[f]);
                if (faults[f].kind == FaultKind::Degrade && share[f] > 0) added += faults[f].latency.ps;
              }
        }
      }
      const int64_t n = run.sent_per_round[i];
      const int64_t lost = keep < 1.0 ? binomial(rng, n, 1.0 - keep) : 0;
      if (lost > 0) run.lost_by_round[r].push_back({static_cast<int32_t>(i), static_cast<int32_t>(lost)});
      run.total[i].sent += n;
      run.total[i].lost += lost;
      const Time rtt(base[i].ps + added);
      if (lost < n) {
        if (added == 0) {
          at_base[i] += n - lost;
        } else {
          if (rtt > rtt_max[i]) at_max[i] = 0;
          if (rtt >= rtt_max[i]) {
            rtt_max[i] = rtt;
            at_max[i] += n - lost;
          }
        }
      }
    }
  }
  // Percentiles of the received probes' RTTs: base for at_base of them, the degraded RTT for the rest.
  for (size_t i = 0; i < T; ++i) {
    const int64_t got = run.total[i].sent - run.total[i].lost;
    if (got <= 0) continue;  // every probe lost: no RTT
    const auto pct = [&](double q) { return static_cast<double>(at_base[i]) >= q * static_cast<double>(got); };
    run.total[i].rtt_p50 = pct(0.5) || at_max[i] == 0 ? base[i] : rtt_max[i];
    run.total[i].rtt_p99 = pct(0.99) || at_max[i] == 0 ? base[i] : rtt_max[i];
  }
  return run;
}

}  // namespace podnet::diagnose
