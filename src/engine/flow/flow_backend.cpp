#include "engine/flow/flow_backend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/flow/flow_sim.hpp"
#include "engine/plan_compiler.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::flow {

FlowBackend::FlowBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

RunReport FlowBackend::run(const TransferPlan& plan) {
  routing::Router router(topo_, options_.routing);
  PlanCompiler compiler(topo_, router, options_.transport);
  const bool adaptive = options_.routing.policy == "adaptive" || options_.routing.policy == "ugal";

  FlowSim sim;
  const int32_t dir_links = routing::dir_link_count(topo_);
  for (int32_t d = 0; d < dir_links; ++d) sim.add_link(Bandwidth(compiler.payload_capacity_bps(d)));

  const auto n = static_cast<int32_t>(plan.transfers.size());
  RunReport report;
  report.engine = name();
  report.transfers.assign(n, {});
  std::vector<int32_t> unmet(n, 0), flows_left(n, 0);
  std::vector<std::vector<int32_t>> dependents(n);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : plan.transfers[i].deps) {
      if (d < 0 || d >= n) throw Error("internal: transfer dependency out of range");
      dependents[d].push_back(i);
      ++unmet[i];
    }
  }
  (void)topological_order(plan);  // rejects cycles up front

  const FailureOptions& fo = options_.failures;
  const bool failures = !fo.events.empty();
  // Routes are kept while a flow runs when something needs them later:
  // adaptive load release, or re-routing around a failed link.
  const bool keep_routes = adaptive || failures;

  struct Record {
    int32_t transfer;
    int32_t index;                         // which of the transfer's compiled flows (QP) this is
    double route_weight;
    FlowId sim_id = kInvalidId;            // valid while running
    std::vector<routing::PathPart> parts;  // kept only when keep_routes
  };
  std::vector<Record> records;
  std::vector<CompiledFlow> compiled;
  std::vector<Resource> resources;
  std::vector<double> slowdown(topo_.gpus.size(), 1.0);  // straggler factors in force

  auto start_flow = [&](int32_t transfer, int32_t index, CompiledFlow& f, Bytes bytes, Time at, Time latency) {
    resources.clear();
    for (const auto& p : f.parts) resources.push_back({static_cast<LinkId>(p.link), p.fraction});
    FlowSpec spec;
    spec.bytes = bytes;
    spec.start = at;
    spec.latency = latency;
    spec.resources = resources;
    spec.tag = records.size();
    Record r{transfer, index, f.route_weight, kInvalidId,
             keep_routes ? std::move(f.parts) : std::vector<routing::PathPart>{}};
    r.sim_id = sim.add_flow(spec);
    records.push_back(std::move(r));
    ++report.flows;
  };

  auto launch = [&](int32_t i, Time at) {
    report.transfers[i].start = at;
    compiled.clear();
    compiler.compile(plan, i, compiled);
    const Transfer& t = plan.transfers[i];
    if (t.kind == TransferKind::Compute && failures) {
      double factor = 1.0;  // the slowest GPU of the lockstep group sets the pace
      for (int32_t g : t.ranks) factor = std::max(factor, slowdown[g]);
      if (factor != 1.0)
        compiled[0].latency = Time(static_cast<int64_t>(static_cast<double>(compiled[0].latency.ps) * factor + 0.5));
    }
    flows_left[i] = static_cast<int32_t>(compiled.size());
    for (size_t k = 0; k < compiled.size(); ++k)
      start_flow(i, static_cast<int32_t>(k), compiled[k], compiled[k].bytes, at, compiled[k].latency);
  };

  // Stragglers from time 0 slow the very first compute too.
  for (const auto& ev : fo.events)
    if (ev.action == FailureAction::Slow && ev.at == Time() && ev.gpu >= 0 &&
        ev.gpu < static_cast<int32_t>(slowdown.size()))
      slowdown[ev.gpu] = ev.factor;
  for (int32_t i = 0; i < n; ++i)
    if (unmet[i] == 0) launch(i, Time());

  auto on_complete = [&](const Completion& c) {
    Record& r = records[c.tag];
    r.sim_id = kInvalidId;
    if (adaptive) router.release(r.parts, r.route_weight);
    r.parts = {};
    const int32_t i = r.transfer;
    if (--flows_left[i] > 0) return;
    report.transfers[i].finish = c.finish;
    report.makespan = std::max(report.makespan, c.finish);
    for (int32_t j : dependents[i])
      if (--unmet[j] == 0) launch(j, c.finish);
  };

  if (!failures) {
    sim.run_until_idle(on_complete);
  } else {
    // Actions in time order: the injected events, and the repairs they schedule.
    struct Action {
      Time at;
      int kind;  // 0 event, 1 repair (reroute), 2 rejoin (a link back up)
      int32_t event;
      std::vector<routing::DirLink> dirs;
    };
    std::vector<Action> actions;
    for (size_t e = 0; e < fo.events.size(); ++e) actions.push_back({fo.events[e].at, 0, static_cast<int32_t>(e), {}});
    auto push_action = [&](Action a) {
      auto it = std::upper_bound(actions.begin(), actions.end(), a.at,
                                 [](Time t, const Action& x) { return t < x.at; });
      actions.insert(it, std::move(a));
    };
    std::vector<double> wire_capacity(dir_links);
    for (int32_t d = 0; d < dir_links; ++d) wire_capacity[d] = compiler.payload_capacity_bps(d);
    const double efficiency = options_.transport.efficiency();
    std::vector<char> dead(topo_.links.size(), 0);
    // Can the switch a dead direction leaves from repair it alone? Yes for an
    // uplink (any other uplink of a Clos switch reaches every destination) and
    // for a link with a live parallel twin to the same neighbour; otherwise
    // the routing protocol must converge upstream.
    auto local = [&](routing::DirLink d) {
      const topology::NodeId from = routing::dir_from(d, topo_), to = routing::dir_to(d, topo_);
      if (topo_.nodes[from].kind != topology::NodeKind::Switch) return false;
      if (topo_.nodes[to].kind == topology::NodeKind::Switch && topo_.nodes[to].tier > topo_.nodes[from].tier)
        return true;
      auto [b, e] = topo_.incident(from);
      for (auto it = b; it != e; ++it)
        if (*it != routing::link_of(d) && !dead[*it] && topo_.other_end(*it, from) == to) return true;
      return false;
    };
    auto fail_job = [&](Time at, std::string why) {
      report.job_failed = true;
      report.failed_at = at;
      report.failure = std::move(why);
    };

    std::vector<int32_t> record_of(fo.events.size(), -1);  // event -> its entry in report.failures
    size_t next = 0;
    while (!report.job_failed) {
      const Time limit = next < actions.size() ? actions[next].at : Time::max();
      if (limit == Time::max()) {
        sim.run_until_idle(on_complete);
        break;
      }
      sim.run_until(limit, on_complete);
      const Action a = actions[next++];
      if (a.kind == 0) {
        const FailureEvent& ev = fo.events[a.event];
        record_of[a.event] = static_cast<int32_t>(report.failures.size());
        report.failures.push_back({a.at, ev.what, 0, Time()});
        if (ev.action == FailureAction::Slow) {
          if (ev.gpu >= 0 && ev.gpu < static_cast<int32_t>(slowdown.size())) slowdown[ev.gpu] = ev.factor;
          continue;
        }
        std::vector<routing::DirLink> up_dirs, other_dirs;
        const bool removed = ev.action == FailureAction::Down || ev.action == FailureAction::Drain;
        for (topology::LinkId l : ev.links) dead[l] = removed;
        for (topology::LinkId l : ev.links) {
          for (routing::DirLink d : {2 * l, 2 * l + 1}) {
            double cap = wire_capacity[d];
            if (removed) cap = 0;
            if (ev.action == FailureAction::Degrade) cap = ev.rate.bps * (wire_capacity[d] > 0 ? efficiency : 1.0);
            sim.set_link_capacity(static_cast<LinkId>(d), Bandwidth(cap));
            (local(d) ? up_dirs : other_dirs).push_back(d);
          }
        }
        if (ev.action == FailureAction::Drain) {
          // Planned: routing moves the flows off at once (no stall).
          std::vector<routing::DirLink> all = up_dirs;
          all.insert(all.end(), other_dirs.begin(), other_dirs.end());
          push_action({a.at, 1, a.event, all});
        } else if (ev.action == FailureAction::Down) {
          // Every flow crossing a dead direction stalls until the first repair
          // of a direction it crosses (an uplink: local_repair; else convergence).
          Time worst;
          for (const auto& r : records) {
            if (r.sim_id == kInvalidId) continue;
            Time repair = Time::max();
            for (const auto& p : r.parts) {
              if (std::find(up_dirs.begin(), up_dirs.end(), p.link) != up_dirs.end())
                repair = std::min(repair, fo.local_repair);
              else if (std::find(other_dirs.begin(), other_dirs.end(), p.link) != other_dirs.end())
                repair = std::min(repair, fo.convergence);
            }
            if (repair != Time::max()) worst = std::max(worst, repair);
          }
          if (worst > fo.collective_timeout) {
            fail_job(a.at + fo.collective_timeout,
                     fmt::format("{}: traffic would stall {} until repaired, longer than the collective timeout {}",
                                 ev.what, format_time(worst), format_time(fo.collective_timeout)));
            break;
          }
          if (!up_dirs.empty()) push_action({a.at + fo.local_repair, 1, a.event, up_dirs});
          if (!other_dirs.empty()) push_action({a.at + fo.convergence, 1, a.event, other_dirs});
        } else if (ev.action == FailureAction::Up) {
          std::vector<routing::DirLink> all = up_dirs;
          all.insert(all.end(), other_dirs.begin(), other_dirs.end());
          push_action({a.at + fo.local_repair, 2, a.event, all});
        }
        continue;
      }
      // Repair: routing forgets (or relearns) the links; flows crossing a dead one are re-routed.
      for (routing::DirLink d : a.dirs) router.set_link_up(routing::link_of(d), a.kind == 2);
      if (a.kind == 2) continue;
      FailureRecord* rec = record_of[a.event] >= 0 ? &report.failures[record_of[a.event]] : nullptr;
      for (size_t k = 0; k < records.size() && !report.job_failed; ++k) {
        if (records[k].sim_id == kInvalidId) continue;
        bool hit = false;
        for (const auto& p : records[k].parts)
          hit = hit || std::find(a.dirs.begin(), a.dirs.end(), p.link) != a.dirs.end();
        if (!hit) continue;
        const double remaining = sim.remaining_bytes(records[k].sim_id);
        sim.cancel_flow(records[k].sim_id);
        records[k].sim_id = kInvalidId;
        if (adaptive) router.release(records[k].parts, records[k].route_weight);
        const int32_t i = records[k].transfer, index = records[k].index;
        compiled.clear();
        try {
          compiler.compile(plan, i, compiled);
        } catch (const Error& e) {
          // Nothing can repair it: the collective library gives up after its timeout.
          fail_job(fo.events[a.event].at + fo.collective_timeout,
                   fmt::format("{}: no route left, the collective times out after {} ({})", fo.events[a.event].what,
                               format_time(fo.collective_timeout), e.what()));
          break;
        }
        for (size_t q = 0; q < compiled.size(); ++q)
          if (static_cast<int32_t>(q) != index && adaptive) router.release(compiled[q].parts, compiled[q].route_weight);
        // The replacement continues the stream: no second latency; the old record is retired.
        start_flow(i, index, compiled[index], static_cast<Bytes>(remaining + 0.5), a.at, Time());
        if (rec) {
          ++rec->flows_rerouted;
          rec->repaired = a.at;
        }
      }
    }
  }
  if (!report.job_failed && sim.stalled_flows() > 0)
    throw Error(fmt::format("{} flow(s) stalled with zero bandwidth (a failed link on their path)",
                            sim.stalled_flows()));
  if (report.job_failed) report.makespan = std::max(report.makespan, report.failed_at);

  std::vector<double> bytes(dir_links), peak(dir_links);
  for (int32_t d = 0; d < dir_links; ++d) {
    const LinkStats s = sim.link_stats(static_cast<LinkId>(d));
    bytes[d] = s.bytes;
    peak[d] = s.peak_utilization;
  }
  report.hottest = hottest_links(bytes, &peak, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  report.solves = sim.stats().solves;
  return report;
}

}  // namespace podnet::engine::flow
