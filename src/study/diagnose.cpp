#include "study/diagnose.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "diagnose/packet_probe.hpp"
#include "diagnose/probe_csv.hpp"
#include "routing/router.hpp"

namespace podnet::study {

using diagnose::Fault;
using diagnose::FaultKind;

double Score::precision() const {
  const int64_t p = true_pos + false_pos;
  return p == 0 ? 1.0 : static_cast<double>(true_pos) / static_cast<double>(p);
}
double Score::recall() const {
  const int64_t p = true_pos + false_neg;
  return p == 0 ? 1.0 : static_cast<double>(true_pos) / static_cast<double>(p);
}

namespace {

// The components a set of faults makes lossy (latency faults excluded).
std::set<int32_t> truth_of(const std::vector<Fault>& faults, int32_t dirs) {
  std::set<int32_t> out;
  for (const Fault& f : faults) {
    if (f.kind == FaultKind::Degrade) continue;
    for (auto d : f.dirs) out.insert(d);
    if (f.device != topology::kNone) out.insert(dirs + f.device);
  }
  return out;
}

// The suspects as components. A suspect stands for its look-alikes too (components no probe tells from it: the
// report names them all, so an operator checks each): it counts as whichever of them is hidden, and as each when
// several are. A NIC's link is the common case (round-trip probes cross both directions: a fault with
// `direction: both` counted its second direction as missed); two links every probe crosses together are another
// (a leaf's uplink and the spine port behind it on a sparse mesh: the one with the lower id was named, and a
// fault on the other scored as missed and as a false alarm).
std::set<int32_t> suspects_of(const diagnose::Localization& loc, const std::set<int32_t>* truth) {
  std::set<int32_t> out;
  for (const auto& s : loc.suspects) {
    bool hit = false;
    if (truth) {
      std::vector<int32_t> group = {s.component};
      group.insert(group.end(), s.alike.begin(), s.alike.end());
      for (const int32_t c : group)
        if (truth->count(c)) {
          out.insert(c);
          hit = true;
        }
    }
    if (!hit) out.insert(s.component);
  }
  return out;
}

void score(const std::set<int32_t>& truth, const std::set<int32_t>& found, Score& sc) {
  for (int32_t c : found) (truth.count(c) ? sc.true_pos : sc.false_pos) += 1;
  for (int32_t c : truth) sc.false_neg += found.count(c) ? 0 : 1;
}

// Localizes after every round; returns the end of the first round from which the suspects equal `target`
// in every later round (-1 if the last round's do not), and the last round's localization.
double time_to_localize(const diagnose::Incidence& inc, const diagnose::ProbeRun& run,
                        const diagnose::LocalizeOptions& o, const std::set<int32_t>* target,
                        diagnose::Localization& last) {
  const size_t T = run.sent_per_round.size();
  std::vector<int64_t> sent(T, 0), lost(T, 0);
  std::vector<std::set<int32_t>> found(run.rounds);
  for (int r = 0; r < run.rounds; ++r) {
    for (size_t i = 0; i < T; ++i) sent[i] += run.sent_per_round[i];
    for (const auto& x : run.lost_by_round[r]) lost[x.tuple] += x.lost;
    last = diagnose::localize(inc, sent, lost, o);
    found[r] = suspects_of(last, target);
  }
  const std::set<int32_t>& want = target ? *target : found.back();
  int first = run.rounds;
  while (first > 0 && found[first - 1] == want) --first;
  if (first == run.rounds) return -1;
  return run.round.seconds() * (first + 1);
}

std::vector<SuspectRow> rows_of(const topology::Topology& t, const diagnose::Incidence& inc,
                                const diagnose::Localization& loc, const std::set<int32_t>* truth) {
  std::vector<SuspectRow> out;
  for (const auto& s : loc.suspects) {
    SuspectRow r;
    r.kind = s.component < inc.dirs ? "link" : "switch";
    r.s = s;
    const bool reverse_alike = s.alike.size() == 1 && s.alike[0] == (s.component ^ 1) && s.component < inc.dirs;
    if (reverse_alike) {  // a link whose two directions no round-trip probe tells apart: name the link
      const auto& l = t.links[routing::link_of(s.component)];
      r.name = fmt::format("{}:{} <-> {}:{} (either direction)", t.nodes[l.a].name, t.port_name(l.a, l.port_a),
                           t.nodes[l.b].name, t.port_name(l.b, l.port_b));
    } else {
      r.name = inc.name(t, s.component);
    }
    r.hidden = truth && truth->count(s.component);
    for (const int32_t a : s.alike) {
      r.hidden = r.hidden || (truth && truth->count(a));
      if (!reverse_alike) r.alike.push_back(inc.name(t, a));
    }
    out.push_back(std::move(r));
  }
  return out;
}

// The components latency faults slow down.
std::set<int32_t> delay_truth_of(const std::vector<Fault>& faults, int32_t dirs) {
  std::set<int32_t> out;
  for (const Fault& f : faults) {
    if (f.kind != FaultKind::Degrade) continue;
    for (auto d : f.dirs) out.insert(d);
    if (f.device != topology::kNone) out.insert(dirs + f.device);
  }
  return out;
}

void localize_delays(const topology::Topology& t, const diagnose::Incidence& inc, const std::vector<double>& rtt,
                     double threshold, const std::set<int32_t>* truth, DiagnoseResult& res) {
  const diagnose::DelayLocalization loc =
      diagnose::localize_delay(inc, diagnose::component_costs(t, inc, diagnose::kProbeWireBytes), rtt, threshold);
  res.slow_tuples = loc.slow;
  res.unexplained_slow = loc.unexplained;
  std::set<int32_t> found;
  for (const auto& x : loc.suspects) {
    DelayRow r;
    r.kind = x.component < inc.dirs ? "link" : "switch";
    r.s = x;
    const bool reverse_alike = x.alike.size() == 1 && x.alike[0] == (x.component ^ 1) && x.component < inc.dirs;
    if (reverse_alike) {
      const auto& l = t.links[routing::link_of(x.component)];
      r.name = fmt::format("{}:{} <-> {}:{} (either direction)", t.nodes[l.a].name, t.port_name(l.a, l.port_a),
                           t.nodes[l.b].name, t.port_name(l.b, l.port_b));
    } else {
      r.name = inc.name(t, x.component);
    }
    // It stands for its look-alikes too (named, for an operator to check): found is whichever of them is hidden.
    int32_t c = x.component;
    for (const int32_t a : x.alike) {
      if (truth && !truth->count(c) && truth->count(a)) c = a;
      if (!reverse_alike) r.alike.push_back(inc.name(t, a));
    }
    r.hidden = truth && truth->count(c);
    found.insert(c);
    res.delay_suspects.push_back(std::move(r));
  }
  if (truth) {
    // A hidden degrade on both directions of a link found as the link (either direction) counts once each way.
    std::set<int32_t> want = *truth;
    for (int32_t c : found)
      if (want.count(c) && c < inc.dirs && want.count(c ^ 1)) found.insert(c ^ 1);
    Score sc;
    score(want, found, sc);
    res.delay_score = sc;
  }
}

void check_cbd(const scenario::Setup& s, DiagnoseResult& res) {
  const auto names = [&](const diagnose::CbdResult& c) {
    std::vector<std::string> out;
    for (auto d : c.cycle) {
      const auto& l = s.fabric.links[routing::link_of(d)];
      const topology::NodeId from = routing::dir_from(d, s.fabric);
      out.push_back(fmt::format("{}:{} -> {}", s.fabric.nodes[from].name,
                                s.fabric.port_name(from, l.a == from ? l.port_a : l.port_b),
                                s.fabric.nodes[routing::dir_to(d, s.fabric)].name));
    }
    return out;
  };
  {
    routing::NetworkGraph g(s.fabric);
    CbdCheck c{"fault-free", diagnose::find_cbd(s.fabric, g), {}};
    c.cycle = names(c.result);
    res.cbd.push_back(std::move(c));
  }
  // The scenario's named failures (links and switches down; random ones are not drawn here).
  std::vector<topology::LinkId> down;
  std::vector<std::string> what;
  for (const auto& ev : s.scenario.failure_events(s.fabric, Time::from_seconds(1)))
    if (ev.action == engine::FailureAction::Down || ev.action == engine::FailureAction::Drain) {
      down.insert(down.end(), ev.links.begin(), ev.links.end());
      what.push_back(ev.what);
    }
  if (down.empty()) return;
  routing::NetworkGraph g(s.fabric);
  for (auto l : down) {
    g.set_dir_up(2 * l, false);
    g.set_dir_up(2 * l + 1, false);
  }
  std::string when = "with failures:";
  for (const auto& w : what) when += " " + w + ";";
  when.pop_back();
  CbdCheck c{when, diagnose::find_cbd(s.fabric, g), {}};
  c.cycle = names(c.result);
  res.cbd.push_back(std::move(c));
}

}  // namespace

DiagnoseResult diagnose(const scenario::Setup& s, const DiagnoseRequest& r, const Progress& progress) {
  DiagnoseResult res;
  res.delay_threshold_s = r.delay_threshold_s;
  const topology::Topology& t = s.fabric;
  const auto dirs = static_cast<int32_t>(2 * t.links.size());
  if (r.cbd) check_cbd(s, res);

  if (!r.probes_text.empty()) {
    res.mode = "file";
    routing::RouteOptions spray = s.network.routing;
    spray.policy = "spray";
    routing::Router router(t, spray);
    const diagnose::ProbeTable table = diagnose::read_probe_csv(r.probes_text, r.probes_source, t, router);
    const diagnose::Localization loc = diagnose::localize(table.incidence, table.sent, table.lost, r.localize);
    res.sent = loc.sent;
    res.lost = loc.lost;
    res.background = loc.background;
    res.rows_without_path = table.rows_without_path;
    res.tuples = table.rows;
    res.suspects = rows_of(t, table.incidence, loc, nullptr);
    localize_delays(t, table.incidence, table.rtt_p50_s, r.delay_threshold_s, nullptr, res);
    return res;
  }

  if (r.evaluate < 0 || r.evaluate > 100000)
    throw InputError(fmt::format("--evaluate {}: expected 0 to 100,000 trials", r.evaluate));
  if (r.probe_mode != "statistical" && r.probe_mode != "packet")  // names: not a registry name
    throw InputError(fmt::format("--mode '{}': expected statistical or packet", r.probe_mode));
  routing::Router router(t, s.network.routing);
  if (progress.run) progress.run("probe mesh");
  diagnose::Mesh mesh = diagnose::build_mesh(t, router, r.probe, s.scenario.seed);
  const diagnose::Incidence inc = diagnose::incidence_of(t, mesh);
  res.mesh = mesh.kind;
  res.probe_mode = r.probe_mode;
  const bool packet_probes = r.probe_mode == "packet";  // names: not a registry name (a probe mode)
  const auto probe = [&](const std::vector<Fault>& faults, uint64_t seed) {
    return packet_probes ? diagnose::simulate_probes_packet(t, mesh, faults, r.probe, s.network, seed)
                         : diagnose::simulate_probes(t, mesh, faults, r.probe, seed);
  };
  res.endpoints = mesh.endpoints;
  res.tuples = static_cast<int64_t>(mesh.tuples.size());
  res.covered_dirs = mesh.covered_dirs;
  res.network_dirs = mesh.network_dirs;
  res.unroutable = mesh.unroutable;
  res.round = r.probe.round;
  res.duration = r.probe.duration;
  res.rate = r.probe.rate;
  const auto fill_overhead = [&](const diagnose::ProbeRun& run) {
    res.rounds = run.rounds;
    res.probe_bytes_per_s_per_nic = run.probe_bytes_per_s_per_nic;
    res.probe_bytes_per_s_per_nic_max = run.probe_bytes_per_s_per_nic_max;
    res.capacity_share_max = run.capacity_share_max;
  };

  if (r.evaluate == 0) {
    res.mode = "simulated";
    for (const Fault& f : s.faults) {
      if (f.start >= r.probe.duration)
        throw InputError(fmt::format("faults: {} starts at {}, when probing has ended (--duration {}): no probe can "
                                     "see it; lengthen --duration or start it earlier (at:)",
                                     f.what, format_time(f.start), format_time(r.probe.duration)));
      res.hidden.push_back(f.what);
      res.latency_faults += f.kind == FaultKind::Degrade ? 1 : 0;
    }
    // A fault no tuple crosses loses no probe, whatever the mesh's statistics: say so rather than score a miss.
    {
      std::vector<char> device_crossed(t.nodes.size(), 0);
      for (size_t l = 0; l < t.links.size(); ++l)
        if (mesh.covered[2 * l] || mesh.covered[2 * l + 1])
          device_crossed[static_cast<size_t>(t.links[l].a)] = device_crossed[static_cast<size_t>(t.links[l].b)] = 1;
      for (const Fault& f : s.faults) {
        bool seen = f.device != topology::kNone && device_crossed[static_cast<size_t>(f.device)];
        for (const routing::DirLink d : f.dirs) seen = seen || mesh.covered[static_cast<size_t>(d)];
        if (!seen) res.hidden_unprobed.push_back(f.what);
      }
    }
    for (const auto& st : s.network.faults.pause_storms) res.not_probed.push_back(st.what);
    for (const auto& d : s.network.faults.threshold_drifts) res.not_probed.push_back(d.what);
    if (progress.run) progress.run("probing");
    diagnose::ProbeRun run = probe(s.faults, s.scenario.seed);
    fill_overhead(run);
    const std::set<int32_t> truth = truth_of(s.faults, dirs);
    const bool known = !s.faults.empty();
    diagnose::Localization loc;
    res.time_to_localize_s = time_to_localize(inc, run, r.localize, known ? &truth : nullptr, loc);
    res.sent = loc.sent;
    res.lost = loc.lost;
    res.background = loc.background;
    res.suspects = rows_of(t, inc, loc, known ? &truth : nullptr);
    if (known) {
      Score sc;
      score(truth, suspects_of(loc, &truth), sc);
      res.score = sc;
    }
    std::vector<double> rtt(run.total.size(), -1);
    for (size_t i = 0; i < rtt.size(); ++i)
      if (run.total[i].sent > run.total[i].lost) rtt[i] = run.total[i].rtt_p50.seconds();
    const std::set<int32_t> delay_truth = delay_truth_of(s.faults, dirs);
    localize_delays(t, inc, rtt, r.delay_threshold_s, known ? &delay_truth : nullptr, res);
    if (r.keep_probes) {
      res.mesh_data = std::move(mesh);
      res.run_data = std::move(run);
    }
    return res;
  }

  // Evaluation: random hidden faults per trial.
  res.mode = "evaluate";
  if (r.faults < 1 || r.faults > 64) throw InputError(fmt::format("--faults {}: expected 1 to 64", r.faults));
  if (r.fault_kind != "link" && r.fault_kind != "switch" && r.fault_kind != "mixed")
    throw InputError(fmt::format("--fault-kind '{}': expected link, switch or mixed", r.fault_kind));
  if (!(r.loss > 0 && r.loss <= 1))
    throw InputError(fmt::format("--loss {}: expected a drop probability in (0, 1]", r.loss));
  // Candidates: directed network links some probe crosses; switches some probe passes through.
  std::vector<int32_t> link_cand, switch_cand;
  {
    std::vector<char> seen(inc.components, 0);
    for (int32_t c : inc.component) seen[c] = 1;
    for (int32_t c = 0; c < inc.components; ++c)
      if (seen[c]) (c < dirs ? link_cand : switch_cand).push_back(c);
  }
  Evaluation ev;
  ev.trials = r.evaluate;
  ev.faults = r.faults;
  ev.kind = r.fault_kind;
  ev.loss = r.loss;
  ev.candidate_links = static_cast<int64_t>(link_cand.size());
  ev.candidate_switches = static_cast<int64_t>(switch_cand.size());
  const Rng root = Rng(s.scenario.seed).stream("evaluate");
  for (int trial = 0; trial < r.evaluate; ++trial) {
    Rng rng = root.stream(fmt::format("trial-{}", trial));
    std::vector<Fault> faults;
    std::set<int32_t> chosen;
    while (static_cast<int>(faults.size()) < r.faults) {
      const bool sw = r.fault_kind == "switch" || (r.fault_kind == "mixed" && faults.size() % 2 == 1);
      const auto& pool = sw ? switch_cand : link_cand;
      if (pool.size() <= chosen.size()) throw InputError("--faults: more faults than components the probes cross");
      const int32_t c = pool[rng.below(pool.size())];
      if (!chosen.insert(c).second) continue;
      Fault f;
      f.kind = FaultKind::Drop;
      f.probability = r.loss;
      if (c < dirs) f.dirs = {c};
      else f.device = c - dirs;
      faults.push_back(f);
    }
    if (progress.step) progress.step(static_cast<size_t>(trial), static_cast<size_t>(r.evaluate), "trial");
    const diagnose::ProbeRun run = probe(faults, mix64(s.scenario.seed ^ (0x51ed270bULL + trial)));
    if (trial == 0) fill_overhead(run);
    const std::set<int32_t> truth = truth_of(faults, dirs);
    diagnose::Localization loc;
    const double ttl = time_to_localize(inc, run, r.localize, &truth, loc);
    const std::set<int32_t> found = suspects_of(loc, &truth);
    score(truth, found, ev.score);
    ev.localized += found == truth ? 1 : 0;
    ev.time_to_localize_s.push_back(ttl);
  }
  if (progress.step) progress.step(static_cast<size_t>(r.evaluate), static_cast<size_t>(r.evaluate), "trial");
  ev.overhead_share_max = res.capacity_share_max;
  res.evaluation = ev;
  return res;
}

}  // namespace podnet::study
