#include "engine/flow/flow_backend.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/failure_driver.hpp"
#include "engine/flow/flow_sim.hpp"
#include "engine/plan_compiler.hpp"
#include "engine/plan_runner.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::flow {

namespace {

// The process's resident memory now (Linux /proc/self/statm), 0 when unknown.
int64_t resident_bytes() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (!f) return 0;
  long long size = 0, resident = 0;
  const int n = std::fscanf(f, "%lld %lld", &size, &resident);
  std::fclose(f);
  return n == 2 ? static_cast<int64_t>(resident) * static_cast<int64_t>(sysconf(_SC_PAGESIZE)) : 0;
}

}  // namespace

std::vector<routing::DirLink> series_representatives(const topology::Topology& topo,
                                                     const std::vector<double>& capacity_bps) {
  const int32_t dir_links = routing::dir_link_count(topo);
  std::vector<routing::DirLink> parent(static_cast<size_t>(dir_links));
  for (int32_t d = 0; d < dir_links; ++d) parent[static_cast<size_t>(d)] = d;
  auto find = [&](routing::DirLink d) {
    while (parent[static_cast<size_t>(d)] != d)
      d = parent[static_cast<size_t>(d)] = parent[parent[static_cast<size_t>(d)]];
    return d;
  };
  std::vector<int8_t> degree(topo.nodes.size(), 0);
  std::vector<std::array<topology::LinkId, 2>> links_at(topo.nodes.size(), {-1, -1});
  for (size_t l = 0; l < topo.links.size(); ++l)
    for (const topology::NodeId n : {topo.links[l].a, topo.links[l].b}) {
      auto& k = degree[static_cast<size_t>(n)];
      if (k < 2) links_at[static_cast<size_t>(n)][static_cast<size_t>(k)] = static_cast<topology::LinkId>(l);
      k = static_cast<int8_t>(std::min(k + 1, 3));
    }
  for (size_t n = 0; n < topo.nodes.size(); ++n) {
    if (topo.nodes[n].kind == topology::NodeKind::Gpu || degree[n] != 2) continue;
    const auto [x, y] = links_at[n];
    const auto node = static_cast<topology::NodeId>(n);
    auto other = [&](topology::LinkId l) { return topo.links[l].a == node ? topo.links[l].b : topo.links[l].a; };
    if (other(x) == other(y) || other(x) == node) continue;
    auto into = [&](topology::LinkId l) { return routing::dir_link(l, other(l), topo); };
    auto out_of = [&](topology::LinkId l) { return routing::dir_link(l, node, topo); };
    parent[static_cast<size_t>(find(into(x)))] = find(out_of(y));
    parent[static_cast<size_t>(find(into(y)))] = find(out_of(x));
  }
  std::vector<routing::DirLink> best(static_cast<size_t>(dir_links), -1);
  for (int32_t d = 0; d < dir_links; ++d) {
    auto& b = best[static_cast<size_t>(find(d))];
    if (b < 0 || capacity_bps[static_cast<size_t>(d)] < capacity_bps[static_cast<size_t>(b)]) b = d;
  }
  std::vector<routing::DirLink> rep(static_cast<size_t>(dir_links));
  for (int32_t d = 0; d < dir_links; ++d) rep[static_cast<size_t>(d)] = best[static_cast<size_t>(find(d))];
  return rep;
}

FlowBackend::FlowBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

RunReport FlowBackend::run(const plan::TransferPlan& plan) {
  routing::Router router(topo_, options_.routing);
  PlanCompiler compiler(topo_, router, options_.transport, options_.links);
  const bool adaptive = routing::policy_info(options_.routing.policy).load_aware;

  struct Record {
    int32_t transfer;
    int32_t index;  // which of the transfer's compiled flows (QP) this is
    double route_weight;
    FlowId sim_id = kInvalidId;            // valid while running
    std::vector<routing::PathPart> parts;  // kept only when keep_routes
  };
  std::vector<Record> records;

  FlowSimOptions so;
  so.quantum = options_.flow_quantum;
  so.threads = options_.threads > 0 ? options_.threads : (std::thread::hardware_concurrency() >= 2 ? 2 : 1);
  // Reports of stuck flows (watchdog, zero bandwidth) name the transfer and the links.
  so.flow_name = [&](uint64_t tag) {
    const Record& r = records[tag];
    const std::string& label = plan.transfers[r.transfer].label;
    return fmt::format("transfer {}{}{} flow {}", r.transfer, label.empty() ? "" : " ", label, r.index);
  };
  so.heartbeat = options_.heartbeat;
  so.heartbeat_every = static_cast<uint64_t>(std::max<int64_t>(1, options_.heartbeat_every / 256));
  so.link_name = [&](LinkId l) { return dir_link_name(topo_, static_cast<routing::DirLink>(l)); };
  so.record_link_steps = static_cast<bool>(options_.observe);
  if (so.record_link_steps && options_.memory_limit > 0) {
    // The record may take what the process does not hold now; a vector's capacity can reach twice its
    // size, so it is capped at half of that.
    const int64_t held = resident_bytes();
    const int64_t room = std::max<int64_t>(options_.memory_limit - held, 0);
    so.max_link_steps = std::max<uint64_t>(1, static_cast<uint64_t>(room) / (2 * sizeof(FlowSim::LinkStep)));
    so.link_steps_limit = fmt::format("the memory limit of {:.1f} MB (--max-memory) leaves beside the {:.1f} MB the "
                                      "process held when the run started (the record's capacity may reach twice "
                                      "its size)",
                                      static_cast<double>(options_.memory_limit) / 1e6,
                                      static_cast<double>(held) / 1e6);
  }
  FlowSim sim(so);
  const int32_t dir_links = routing::dir_link_count(topo_);
  sim.reserve_links(static_cast<uint32_t>(dir_links));
  std::vector<double> capacity(static_cast<size_t>(dir_links));  // payload capacity per directed link
  for (int32_t d = 0; d < dir_links; ++d) capacity[static_cast<size_t>(d)] = compiler.payload_capacity_bps(d);
  for (int32_t d = 0; d < dir_links; ++d) sim.add_link(Bandwidth(capacity[static_cast<size_t>(d)]));

  RunReport report;
  report.engine = name();
  PlanRunner runner(plan, report);  // rejects bad dependencies and cycles up front
  runner.report_progress(&options_.progress, options_.progress_every);

  const FailureOptions& fo = options_.failures;
  const bool failures = !fo.events.empty();
  FailureDriver driver(topo_, fo, report);
  // Routes are kept while a flow runs when something needs them later:
  // adaptive load release, or re-routing around a failed link.
  const bool keep_routes = adaptive || failures;

  std::vector<CompiledFlow> compiled;
  std::vector<Resource> resources;
  // Links in series with one of less capacity are left out of the solver (series_representatives).
  const bool series = !failures && !so.record_link_steps;
  const std::vector<routing::DirLink> rep = series ? series_representatives(topo_, capacity)
                                                   : std::vector<routing::DirLink>{};

  auto start_flow = [&](int32_t transfer, int32_t index, CompiledFlow& f, Bytes bytes, Time at, Time latency) {
    resources.clear();
    for (const auto& p : f.parts)
      if (!series || rep[static_cast<size_t>(p.link)] == p.link)
        resources.push_back({static_cast<LinkId>(p.link), p.fraction});
    report.solver_terms += resources.size();
    if (failures) {  // on a failed direction: stalls until the first repair among them
      routing::DirLink first = -1;
      for (const auto& p : f.parts)
        if (driver.repair_at(p.link) != Time::max() &&
            (first < 0 || driver.repair_at(p.link) < driver.repair_at(first)))
          first = p.link;
      if (first >= 0) {
        const auto& label = plan.transfers[transfer].label;
        driver.stalled_start(first, at, label.empty() ? fmt::format("transfer {}", transfer) : label);
      }
    }
    if (options_.on_route) options_.on_route(transfer, f.parts, static_cast<double>(bytes));
    FlowSpec spec;
    spec.bytes = bytes;
    spec.start = at;
    spec.latency = latency;
    spec.resources = resources;
    const plan::Transfer& tr = plan.transfers[static_cast<size_t>(transfer)];
    if (tr.max_rate_bps > 0 && f.bytes > 0) spec.cap = Bandwidth(plan::part_rate_cap_bps(tr, f.bytes));
    spec.tag = records.size();
    Record r{transfer, index, f.route_weight, kInvalidId,
             keep_routes ? std::move(f.parts) : std::vector<routing::PathPart>{}};
    r.sim_id = sim.add_flow(spec);
    records.push_back(std::move(r));
    ++report.flows;
  };

  auto launch = [&](int32_t i, Time at) {
    compiled.clear();
    if (!failures) {
      compiler.compile(plan, i, compiled);
    } else {
      try {
        compiler.compile(plan, i, compiled);
      } catch (const Error& e) {
        const auto& label = plan.transfers[i].label;
        driver.fail_launch(at, label.empty() ? fmt::format("transfer {}", i) : label, e.what());
        return;
      }
    }
    const plan::Transfer& t = plan.transfers[i];
    if (t.kind == plan::TransferKind::Compute && failures) {
      const double factor = driver.compute_factor(t.ranks);
      if (factor != 1.0)
        compiled[0].latency = Time(static_cast<int64_t>(static_cast<double>(compiled[0].latency.ps) * factor + 0.5));
    }
    runner.add_parts(i, static_cast<int32_t>(compiled.size()));
    for (size_t k = 0; k < compiled.size(); ++k)
      start_flow(i, static_cast<int32_t>(k), compiled[k], compiled[k].bytes, at, compiled[k].latency);
  };

  runner.start(launch);

  auto on_complete = [&](const Completion& c) {
    Record& r = records[c.tag];
    r.sim_id = kInvalidId;
    if (adaptive) router.release(r.parts, r.route_weight);
    r.parts = {};
    runner.part_done(r.transfer, c.finish, launch);
  };

  if (!failures) {
    sim.run_until_idle(on_complete);
  } else {
    FailureDriver::Hooks h;
    h.run_until = [&](Time t) { sim.run_until(t, on_complete); };
    h.run_to_end = [&] { sim.run_until_idle(on_complete); };
    h.done = [&] { return runner.done(); };
    h.apply = [&](const FailureEvent& ev) {
      // Down/Drain: no capacity (a drain's flows move off at once, so nothing stalls).
      const bool removed = ev.action == FailureAction::Down || ev.action == FailureAction::Drain;
      for (topology::LinkId l : ev.links)
        for (routing::DirLink d : {2 * l, 2 * l + 1}) {
          double cap = capacity[static_cast<size_t>(d)];
          if (removed) cap = 0;
          if (ev.action == FailureAction::Degrade) cap = ev.rate.bps * compiler.payload_factor(l);
          sim.set_link_capacity(static_cast<LinkId>(d), Bandwidth(cap));
        }
    };
    std::vector<routing::DirLink> dirs;
    h.visit_running = [&](const std::function<void(const std::vector<routing::DirLink>&)>& visit) {
      for (const auto& r : records) {
        if (r.sim_id == kInvalidId) continue;
        dirs.clear();
        for (const auto& p : r.parts) dirs.push_back(p.link);
        visit(dirs);
      }
    };
    h.set_routing = [&](routing::DirLink d, bool up) { router.set_dir_up(d, up); };
    h.reroute = [&](const std::vector<routing::DirLink>& dead, Time at) {
      int64_t moved = 0;
      for (size_t k = 0; k < records.size(); ++k) {
        if (records[k].sim_id == kInvalidId) continue;
        bool hit = false;
        for (const auto& p : records[k].parts) hit = hit || std::find(dead.begin(), dead.end(), p.link) != dead.end();
        if (!hit) continue;
        const double remaining = sim.remaining_bytes(records[k].sim_id);
        // A flow still in its latency phase keeps what is left of it.
        const Time latency_left = std::max(Time(), sim.active_at(records[k].sim_id) - at);
        sim.cancel_flow(records[k].sim_id);
        records[k].sim_id = kInvalidId;
        if (adaptive) router.release(records[k].parts, records[k].route_weight);
        const int32_t i = records[k].transfer, index = records[k].index;
        compiled.clear();
        compiler.compile(plan, i, compiled);  // throws when no route is left
        for (size_t q = 0; q < compiled.size(); ++q)
          if (static_cast<int32_t>(q) != index && adaptive) router.release(compiled[q].parts, compiled[q].route_weight);
        // The replacement continues the stream (no second latency, the rest of the
        // first if it had not run out); the old record is retired.
        start_flow(i, index, compiled[index], static_cast<Bytes>(remaining + 0.5), at, latency_left);
        ++moved;
      }
      return moved;
    };
    driver.run(h);
  }
  if (!report.job_failed && sim.stalled_flows() > 0)
    throw Error(fmt::format("{} flow(s) stalled with zero bandwidth (a failed link on their path): {}",
                            sim.stalled_flows(), sim.stuck_report()));

  std::vector<double> bytes(dir_links), peak(dir_links);
  for (int32_t d = 0; d < dir_links; ++d) {
    // A link left out for its series representative carried what the representative did.
    const routing::DirLink r = series ? rep[static_cast<size_t>(d)] : d;
    const LinkStats s = sim.link_stats(static_cast<LinkId>(r));
    bytes[d] = s.bytes;
    const double cap = capacity[static_cast<size_t>(d)];
    peak[d] = r == d ? s.peak_utilization : cap > 0 ? s.peak_utilization * capacity[static_cast<size_t>(r)] / cap : 0.0;
  }
  report.hottest = hottest_links(bytes, &peak, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  report.by_class =
      class_loads(topo_, bytes, report.makespan, [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  report.solves = sim.stats().solves;
  report.flows_resolved = sim.stats().flows_resolved;
  if (options_.observe) {
    RunObservation o;
    o.engine = name();
    o.report = &report;
    o.link_steps = &sim.link_steps();  // the simulator's own record, not a copy
    o.link_capacity_bps = &capacity;
    options_.observe(o);
  }
  return report;
}

}  // namespace podnet::engine::flow
