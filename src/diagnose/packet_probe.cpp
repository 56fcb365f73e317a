#include "diagnose/packet_probe.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/packet_view.hpp"

namespace podnet::diagnose {

using topology::NodeId;

std::vector<engine::SilentFault> silent_faults(const std::vector<Fault>& faults) {
  std::vector<engine::SilentFault> out;
  for (const Fault& f : faults) {
    engine::SilentFault s;
    s.dirs.assign(f.dirs.begin(), f.dirs.end());
    s.node = f.device;
    s.start = f.start;
    s.what = f.what;
    switch (f.kind) {
      case FaultKind::Drop:
      case FaultKind::Corrupt: s.probability = f.probability; break;
      case FaultKind::Degrade: s.latency = f.latency; break;
      case FaultKind::Flap:
        s.period = f.period;
        s.down = f.down;
        break;
    }
    out.push_back(std::move(s));
  }
  return out;
}

ProbeRun simulate_probes_packet(const topology::Topology& t, const Mesh& mesh, const std::vector<Fault>& faults,
                                const ProbeOptions& o, engine::NetworkOptions net, uint64_t seed) {
  if (o.background != 0)
    throw InputError("--background: the packet mode has no background loss (use the statistical mode)");
  ProbeRun run = probe_schedule(t, mesh, o);
  const size_t T = mesh.tuples.size();

  // Sources in mesh order, each with its tuples in order.
  std::vector<NodeId> sources;
  std::map<NodeId, std::vector<int32_t>> tuples_of;
  for (size_t i = 0; i < T; ++i) {
    auto& list = tuples_of[mesh.tuples[i].src];
    if (list.empty()) sources.push_back(mesh.tuples[i].src);
    list.push_back(static_cast<int32_t>(i));
  }
  const auto E = static_cast<int64_t>(sources.size());
  const auto N = static_cast<int64_t>(std::llround(o.rate * o.round.seconds()));  // probes per source per round
  const int64_t total = E * N * run.rounds;
  if (mesh.endpoints > kMaxPacketEndpoints || total > kMaxPacketProbes)
    throw InputError(fmt::format(
        "--mode packet: {} NICs sending {} probes in all ({:g} probes/s each for {:g} s) is more than the packet "
        "mode simulates (at most {} NICs and {} probes); use the statistical mode (--mode statistical, the "
        "default) for this fabric, or lower --rate or --duration",
        thousands(mesh.endpoints), thousands(total), o.rate, o.round.seconds() * run.rounds,
        thousands(kMaxPacketEndpoints), thousands(kMaxPacketProbes)));
  if (N < 1) throw InputError("--mode packet: fewer than one probe per NIC per round: raise --rate or --round");

  net.routing.seed = seed;
  net.faults.silent_faults = silent_faults(faults);
  net.faults.pause_storms.clear();
  net.faults.failures = {};
  net.packet.sample_interval = Time();
  net.observers.observe = nullptr;
  net.observers.progress = nullptr;
  const std::unique_ptr<engine::ProbeSession> session = engine::make_probe_session(t, net);
  engine::ProbeSession& sim = *session;
  std::vector<int32_t> path_of(T);
  {
    std::vector<routing::DirLink> fwd, back;
    for (size_t i = 0; i < T; ++i) {
      const Tuple& tu = mesh.tuples[i];
      fwd.assign(mesh.links.begin() + tu.path_begin, mesh.links.begin() + tu.return_begin);
      back.assign(mesh.links.begin() + tu.return_begin, mesh.links.begin() + tu.path_end);
      path_of[i] = sim.add_path(fwd, back, static_cast<int32_t>(kProbeWireBytes));
    }
  }
  // Source j's k-th probe of round r at r R + (k + j/E) R / N (module comment); one timer per source at a time.
  const int64_t R = o.round.ps;
  const auto at = [&](int64_t j, int64_t r, int64_t k) {
    const __int128 num = static_cast<__int128>(k * E + j) * R;
    return Time(r * R + static_cast<int64_t>(num / (static_cast<__int128>(N) * E)));
  };
  struct Next {
    int64_t r = 0, k = 0;
  };
  std::vector<Next> next(sources.size());
  for (size_t j = 0; j < sources.size(); ++j) sim.add_timer(at(static_cast<int64_t>(j), 0, 0), j);
  sim.run([&](uint64_t tag) {
    const size_t j = tag;
    Next& n = next[j];
    const auto& list = tuples_of[sources[j]];
    sim.send_probe(path_of[list[static_cast<size_t>(n.k % static_cast<int64_t>(list.size()))]]);
    if (++n.k == N) {
      n.k = 0;
      ++n.r;
    }
    if (n.r < run.rounds) sim.add_timer(at(static_cast<int64_t>(j), n.r, n.k), j);
  });

  // Counts per tuple and round, and the RTTs of the replies.
  std::vector<int32_t> tuple_of_path(T);
  for (size_t i = 0; i < T; ++i) tuple_of_path[path_of[i]] = static_cast<int32_t>(i);
  std::vector<std::vector<int64_t>> rtts(T);
  std::vector<std::map<int32_t, int32_t>> lost(run.rounds);  // round -> tuple -> lost
  std::vector<int64_t> sent(T, 0);
  for (const auto& p : sim.probes()) {
    const int32_t i = tuple_of_path[p.path];
    const auto r = static_cast<int32_t>(p.sent.ps / R);
    ++sent[i];
    if (p.rtt.ps < 0) ++lost[r][i];
    else rtts[i].push_back(p.rtt.ps);
  }
  for (size_t i = 0; i < T; ++i) {
    if (sent[i] != run.sent_per_round[i] * run.rounds)
      throw Error(fmt::format("diagnose: internal: tuple {} sent {} probes, expected {}", i, sent[i],
                              run.sent_per_round[i] * run.rounds));
    run.total[i].sent = sent[i];
    run.total[i].lost = sent[i] - static_cast<int64_t>(rtts[i].size());
    auto& v = rtts[i];
    if (v.empty()) continue;
    std::sort(v.begin(), v.end());
    const auto pct = [&](double q) {  // the smallest x with at least q of the replies at or below it
      auto idx = static_cast<int64_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
      idx = std::clamp<int64_t>(idx, 0, static_cast<int64_t>(v.size()) - 1);
      return Time(v[static_cast<size_t>(idx)]);
    };
    run.total[i].rtt_p50 = pct(0.5);
    run.total[i].rtt_p99 = pct(0.99);
  }
  for (int r = 0; r < run.rounds; ++r)
    for (const auto& [i, n] : lost[r]) run.lost_by_round[r].push_back({i, n});
  return run;
}

}  // namespace podnet::diagnose
