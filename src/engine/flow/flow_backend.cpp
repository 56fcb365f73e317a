#include "engine/flow/flow_backend.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdio>
#include <thread>
#include <unistd.h>
#include <unordered_map>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
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

std::vector<routing::DirLink> same_flow_representatives(const plan::TransferPlan& plan, PlanCompiler& compiler,
                                                        const std::vector<double>& capacity_bps) {
  struct Print {
    uint64_t a = 0, b = 0;
    bool operator==(const Print&) const = default;
  };
  struct PrintHash {
    size_t operator()(const Print& p) const { return static_cast<size_t>(p.a ^ (p.b * 0x9e3779b97f4a7c15ULL)); }
  };
  const size_t links = capacity_bps.size();
  std::vector<Print> print(links);
  std::vector<SharedFlow> flows;
  for (int32_t i = 0; i < static_cast<int32_t>(plan.transfers.size()); ++i) {
    if (plan.transfers[static_cast<size_t>(i)].kind == plan::TransferKind::Compute) continue;
    flows.clear();
    compiler.compile_shared(plan, i, flows);
    for (const SharedFlow& f : flows) {
      // The flow's identity as FlowRun starts it: transfer i, the k-th of its compiled flows.
      const uint64_t id = (static_cast<uint64_t>(static_cast<uint32_t>(i)) << 32) | f.k;
      const uint64_t ida = mix64(id), idb = mix64(id ^ 0x5851f42d4c957f2dULL);
      for (const routing::PathPart& p : f.route().parts) {
        const uint64_t c = std::bit_cast<uint64_t>(p.fraction);
        Print& s = print[static_cast<size_t>(p.link)];
        s.a += mix64(ida ^ c);
        s.b += mix64(idb + c);
      }
    }
  }
  // Each link's class (one lookup per link), then each class's member of least capacity.
  std::unordered_map<Print, uint32_t, PrintHash> class_of;
  std::vector<uint32_t> cls(links);
  std::vector<routing::DirLink> best;
  for (size_t d = 0; d < links; ++d) {
    if (print[d] == Print{}) continue;  // no flow crosses it
    const auto [at, fresh] = class_of.try_emplace(print[d], static_cast<uint32_t>(best.size()));
    if (fresh) best.push_back(static_cast<routing::DirLink>(d));
    routing::DirLink& b = best[at->second];
    if (capacity_bps[d] < capacity_bps[static_cast<size_t>(b)]) b = static_cast<routing::DirLink>(d);
    cls[d] = at->second;
  }
  std::vector<routing::DirLink> rep(links);
  for (size_t d = 0; d < links; ++d) rep[d] = print[d] == Print{} ? static_cast<routing::DirLink>(d) : best[cls[d]];
  return rep;
}

FlowBackend::FlowBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

namespace {

// One run of a plan on the flow engine: compiling transfers into flows, the
// failure hooks and the report (flow_backend.hpp).
class FlowRun {
 public:
  FlowRun(const topology::Topology& topo, const NetworkOptions& options, const char* engine,
          const plan::TransferPlan& plan, RunReport& report)
      : topo_(topo),
        options_(options),
        engine_(engine),
        plan_(plan),
        report_(report),
        router_(topo, options.routing),
        compiler_(topo, router_, options.transport, options.links),
        adaptive_(routing::policy_info(options.routing.policy).load_aware),
        failures_(!options.faults.failures.events.empty()),
        keep_routes_(adaptive_ || failures_),  // for adaptive load release, or re-routing around a failed link
        sim_(sim_options()),
        runner_(plan, report),  // rejects bad dependencies and cycles up front
        driver_(topo, options.faults.failures, report) {
    const int32_t dir_links = routing::dir_link_count(topo_);
    sim_.reserve_links(static_cast<uint32_t>(dir_links));
    capacity_.resize(static_cast<size_t>(dir_links));  // payload capacity per directed link
    for (int32_t d = 0; d < dir_links; ++d) capacity_[static_cast<size_t>(d)] = compiler_.payload_capacity_bps(d);
    for (int32_t d = 0; d < dir_links; ++d) sim_.add_link(Bandwidth(capacity_[static_cast<size_t>(d)]));
    runner_.report_progress(&options_.observers.progress, options_.observers.progress_every);
    // Links that carry the same flows as one of less capacity are left out of the solver: plan-wide when
    // routes are fixed and the plan has a ring or coupled transfer (same_flow_representatives), else the
    // NICs' series links (series_representatives). A plan of P2p transfers alone merges little beyond the
    // series links and would compile every transfer twice (an all-to-all of 261,632 flows ran 6 % slower).
    series_ = !failures_ && !record_link_steps();
    const bool coupled = std::any_of(plan_.transfers.begin(), plan_.transfers.end(), [](const plan::Transfer& t) {
      return t.kind == plan::TransferKind::Ring || t.kind == plan::TransferKind::Coupled;
    });
    if (series_)
      rep_ = !adaptive_ && coupled && options_.flow.same_flow_links
                 ? same_flow_representatives(plan_, compiler_, capacity_)
                 : series_representatives(topo_, capacity_);
  }

  // PlanRunner's launch callback (a template argument: no std::function per completion).
  auto launcher() {
    return [this](int32_t i, Time at) { launch(i, at); };
  }

  void run() {
    runner_.start(launcher());
    auto on_complete = [this](const Completion& c) { complete(c); };
    if (!failures_) {
      sim_.run_until_idle(on_complete);
    } else {
      FailureDriver::Hooks h = failure_hooks();
      h.run_until = [this, &on_complete](Time t) { sim_.run_until(t, on_complete); };
      h.run_to_end = [this, &on_complete] { sim_.run_until_idle(on_complete); };
      driver_.run(h);
    }
    if (!report_.job_failed && sim_.stalled_flows() > 0)
      throw Error(fmt::format("{} stalled with zero bandwidth (a failed link on their path): {}",
                              plural(static_cast<int64_t>(sim_.stalled_flows()), "flow", "flows"),
                              sim_.stuck_report()));
    link_report();
  }

 private:
  struct Record {
    int32_t transfer;
    int32_t index;  // which of the transfer's compiled flows (QP) this is
    double route_weight;
    FlowId sim_id = kInvalidId;            // valid while running
    std::vector<routing::PathPart> parts;  // kept only when keep_routes_
  };

  bool record_link_steps() const { return static_cast<bool>(options_.observers.observe); }

  FlowSimOptions sim_options() {
    FlowSimOptions so;
    so.quantum = options_.flow.quantum;
    so.threads = options_.flow.threads > 0 ? options_.flow.threads : (std::thread::hardware_concurrency() >= 2 ? 2 : 1);
    // Reports of stuck flows (watchdog, zero bandwidth) name the transfer and the links.
    so.flow_name = [this](uint64_t tag) {
      const Record& r = records_[tag];
      const std::string& label = plan_.transfers[static_cast<size_t>(r.transfer)].label;
      return fmt::format("transfer {}{}{} flow {}", r.transfer, label.empty() ? "" : " ", label, r.index);
    };
    so.heartbeat = options_.observers.heartbeat;
    so.heartbeat_every = static_cast<uint64_t>(std::max<int64_t>(1, options_.observers.heartbeat_every / 256));
    so.link_name = [this](LinkId l) { return dir_link_name(topo_, static_cast<routing::DirLink>(l)); };
    so.record_link_steps = record_link_steps();
    // A caller that reads no link loads (the training study) lets the solver fold the links that carry one
    // flow into its cap (MaxMinSolver::set_fold_single). Failures keep the counters: their driver reads them.
    so.link_counters = options_.link_loads || so.record_link_steps || failures_;
    if (so.record_link_steps && options_.flow.memory_limit > 0) {
      // The record may take what the process does not hold now; a vector's capacity can reach twice its
      // size, so it is capped at half of that.
      const int64_t held = resident_bytes();
      const int64_t room = std::max<int64_t>(options_.flow.memory_limit - held, 0);
      so.max_link_steps = std::max<uint64_t>(1, static_cast<uint64_t>(room) / (2 * sizeof(FlowSim::LinkStep)));
      so.link_steps_limit = fmt::format("the memory limit of {:.1f} MB (--max-memory) leaves beside the {:.1f} MB "
                                        "the process held when the run started (the record's capacity may reach "
                                        "twice its size)",
                                        static_cast<double>(options_.flow.memory_limit) / 1e6,
                                        static_cast<double>(held) / 1e6);
    }
    return so;
  }

  void launch(int32_t i, Time at) {
    compiled_.clear();
    if (!failures_) {
      compiler_.compile(plan_, i, compiled_);
    } else {
      try {
        compiler_.compile(plan_, i, compiled_);
      } catch (const Error& e) {
        driver_.fail_launch(at, plan_, i, e.what());
        return;
      }
    }
    const plan::Transfer& t = plan_.transfers[static_cast<size_t>(i)];
    if (t.kind == plan::TransferKind::Compute && failures_)
      compiled_[0].latency = driver_.compute_duration(compiled_[0].latency, t.ranks);
    runner_.add_parts(i, static_cast<int32_t>(compiled_.size()));
    for (size_t k = 0; k < compiled_.size(); ++k)
      start_flow(i, static_cast<int32_t>(k), compiled_[k], compiled_[k].bytes, at, compiled_[k].latency);
  }

  void start_flow(int32_t transfer, int32_t index, CompiledFlow& f, Bytes bytes, Time at, Time latency) {
    resources_.clear();
    for (const auto& p : f.parts)
      if (!series_ || rep_[static_cast<size_t>(p.link)] == p.link)
        resources_.push_back({static_cast<LinkId>(p.link), p.fraction});
    report_.solver_terms += resources_.size();
    if (failures_) driver_.start_on(f.parts, at, plan_, transfer);  // on a failed direction: stalls until repaired
    if (options_.observers.on_route) options_.observers.on_route(transfer, f.parts, static_cast<double>(bytes));
    FlowSpec spec;
    spec.bytes = bytes;
    spec.start = at;
    spec.latency = latency;
    spec.resources = resources_;
    const plan::Transfer& tr = plan_.transfers[static_cast<size_t>(transfer)];
    if (tr.max_rate_bps > 0 && f.bytes > 0) spec.cap = Bandwidth(plan::part_rate_cap_bps(tr, f.bytes));
    spec.tag = records_.size();
    Record r{transfer, index, f.route_weight, kInvalidId,
             keep_routes_ ? std::move(f.parts) : std::vector<routing::PathPart>{}};
    r.sim_id = sim_.add_flow(spec);
    records_.push_back(std::move(r));
    ++report_.flows;
  }

  void complete(const Completion& c) {
    Record& r = records_[c.tag];
    r.sim_id = kInvalidId;
    if (adaptive_) router_.release(r.parts, r.route_weight);
    r.parts = {};
    runner_.part_done(r.transfer, c.finish, launcher());
  }

  FailureDriver::Hooks failure_hooks() {
    FailureDriver::Hooks h;
    h.done = [this] { return runner_.done(); };
    h.apply = [this](const FailureEvent& ev) {
      // Down/Drain: no capacity (a drain's flows move off at once, so nothing stalls).
      const bool removed = ev.action == FailureAction::Down || ev.action == FailureAction::Drain;
      for (topology::LinkId l : ev.links)
        for (routing::DirLink d : {2 * l, 2 * l + 1}) {
          double cap = capacity_[static_cast<size_t>(d)];
          if (removed) cap = 0;
          if (ev.action == FailureAction::Degrade) cap = ev.rate.bps * compiler_.payload_factor(l);
          sim_.set_link_capacity(static_cast<LinkId>(d), Bandwidth(cap));
        }
    };
    h.visit_running = [this](const std::function<void(const std::vector<routing::DirLink>&)>& visit) {
      for (const auto& r : records_) {
        if (r.sim_id == kInvalidId) continue;
        dirs_.clear();
        for (const auto& p : r.parts) dirs_.push_back(p.link);
        visit(dirs_);
      }
    };
    h.set_routing = [this](routing::DirLink d, bool up) { router_.set_dir_up(d, up); };
    h.reroute = [this](const std::vector<routing::DirLink>& dead, Time at) { return reroute(dead, at); };
    return h;
  }

  // Moves every running flow that crosses `dead` onto a new route at `at`; returns how many moved.
  int64_t reroute(const std::vector<routing::DirLink>& dead, Time at) {
    int64_t moved = 0;
    for (size_t k = 0; k < records_.size(); ++k) {
      if (records_[k].sim_id == kInvalidId) continue;
      bool hit = false;
      for (const auto& p : records_[k].parts) hit = hit || std::find(dead.begin(), dead.end(), p.link) != dead.end();
      if (!hit) continue;
      const double remaining = sim_.remaining_bytes(records_[k].sim_id);
      // A flow still in its latency phase keeps what is left of it.
      const Time latency_left = std::max(Time(), sim_.active_at(records_[k].sim_id) - at);
      sim_.cancel_flow(records_[k].sim_id);
      records_[k].sim_id = kInvalidId;
      if (adaptive_) router_.release(records_[k].parts, records_[k].route_weight);
      const int32_t i = records_[k].transfer, index = records_[k].index;
      compiled_.clear();
      compiler_.compile(plan_, i, compiled_);  // throws when no route is left
      for (size_t q = 0; q < compiled_.size(); ++q)
        if (static_cast<int32_t>(q) != index && adaptive_)
          router_.release(compiled_[q].parts, compiled_[q].route_weight);
      // The replacement continues the stream (no second latency, the rest of the
      // first if it had not run out); the old record is retired.
      start_flow(i, index, compiled_[static_cast<size_t>(index)], static_cast<Bytes>(remaining + 0.5), at,
                 latency_left);
      ++moved;
    }
    return moved;
  }

  // The hottest links and the load per link class; the observer, if any.
  void link_report() {
    report_.solves = sim_.stats().solves;
    report_.flows_resolved = sim_.stats().flows_resolved;
    if (!options_.link_loads && !options_.observers.observe) return;  // nothing reads them
    const auto dir_links = static_cast<int32_t>(capacity_.size());
    std::vector<double> bytes(static_cast<size_t>(dir_links)), peak(static_cast<size_t>(dir_links));
    for (int32_t d = 0; d < dir_links; ++d) {
      // A link left out for its series representative carried what the representative did.
      const routing::DirLink r = series_ ? rep_[static_cast<size_t>(d)] : d;
      const LinkStats s = sim_.link_stats(static_cast<LinkId>(r));
      bytes[static_cast<size_t>(d)] = s.bytes;
      const double cap = capacity_[static_cast<size_t>(d)];
      peak[static_cast<size_t>(d)] = r == d    ? s.peak_utilization
                                     : cap > 0 ? s.peak_utilization * capacity_[static_cast<size_t>(r)] / cap
                                               : 0.0;
    }
    const auto capacity = [this](routing::DirLink d) { return compiler_.payload_capacity_bps(d); };
    report_.hottest = hottest_links(bytes, &peak, report_.makespan, options_.hottest_links, capacity);
    report_.by_class = class_loads(topo_, bytes, report_.makespan, capacity);
    if (options_.observers.observe) {
      RunObservation o;
      o.engine = engine_;
      o.report = &report_;
      o.link_steps = &sim_.link_steps();  // the simulator's own record, not a copy
      o.link_capacity_bps = &capacity_;
      options_.observers.observe(o);
    }
  }

  const topology::Topology& topo_;
  const NetworkOptions& options_;
  const char* engine_;
  const plan::TransferPlan& plan_;
  RunReport& report_;
  routing::Router router_;
  PlanCompiler compiler_;
  const bool adaptive_, failures_, keep_routes_;
  std::vector<Record> records_;
  FlowSim sim_;
  PlanRunner runner_;
  FailureDriver driver_;
  std::vector<double> capacity_;
  bool series_ = false;
  std::vector<routing::DirLink> rep_;
  std::vector<CompiledFlow> compiled_;
  std::vector<Resource> resources_;
  std::vector<routing::DirLink> dirs_;
};

}  // namespace

RunReport FlowBackend::run(const plan::TransferPlan& plan) {
  RunReport report;
  report.engine = name();
  FlowRun(topo_, options_, name(), plan, report).run();
  return report;
}

}  // namespace podnet::engine::flow
