#include "study/train.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <numeric>

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "scenario/estimate.hpp"
#include "study/scaling.hpp"
#include "topology/tenants.hpp"

namespace podnet::study {

std::vector<double> network_work(const workload::Job& job, const std::vector<int32_t>& gpus,
                                 const topology::Topology& topo, engine::NetworkBackend& backend,
                                 const workload::TrainOptions& topt) {
  const workload::IterationTimes times = workload::iteration_times(job, gpus, topo, backend, topt);
  const workload::IterationPlan ip = workload::build_iteration(job, gpus, topo, times, topt);
  const engine::RunReport run = backend.run(ip.plan);
  constexpr int kBins = 256;
  const double end = static_cast<double>(run.makespan.ps);
  if (end <= 0) return {};
  std::vector<double> bin(kBins, 0.0);
  double total = 0;
  for (size_t i = 0; i < ip.plan.transfers.size(); ++i) {
    const plan::Transfer& t = ip.plan.transfers[i];
    if (t.kind == plan::TransferKind::Compute || t.bytes <= 0) continue;
    const double flows = static_cast<double>(std::max<size_t>({1, t.edges.size(), t.ranks.size()}));
    const double w = static_cast<double>(t.bytes) * flows;
    const double a = static_cast<double>(run.transfers[i].start.ps) / end * kBins;
    const double b = static_cast<double>(run.transfers[i].finish.ps) / end * kBins;
    total += w;
    if (b <= a) {
      bin[static_cast<size_t>(std::clamp(static_cast<int>(a), 0, kBins - 1))] += w;
      continue;
    }
    for (int k = std::max(0, static_cast<int>(a)); k < std::min(kBins, static_cast<int>(std::ceil(b))); ++k)
      bin[static_cast<size_t>(k)] += w * (std::min<double>(b, k + 1) - std::max<double>(a, k)) / (b - a);
  }
  if (total <= 0) return {};
  std::vector<double> work(kBins + 1, 0.0);
  for (int k = 0; k < kBins; ++k)
    work[static_cast<size_t>(k) + 1] = work[static_cast<size_t>(k)] + bin[static_cast<size_t>(k)] / total;
  return work;
}

namespace {

// The link counters of the backend's last run, taken when it ends (the run's steps are not kept).
struct LastRunCounters {
  std::vector<workload::TrainResult::TraceCounter> counters;
  Time makespan;
};

// The `links` directed links that carried the most bytes in a run (ties by link id), each as a counter
// of its utilization steps (a value repeated at one time keeps the last). Two passes over the steps: the
// bits each link carried (the integral of its step function, summed in time order), then the steps of the
// chosen links only, so that no copy of a run's steps (tens of millions on a 16K-GPU iteration) is made.
std::vector<workload::TrainResult::TraceCounter> link_counters(const topology::Topology& topo,
                                                               const std::vector<engine::LinkLoadStep>& steps,
                                                               const std::vector<double>& capacity, Time makespan,
                                                               size_t links) {
  std::vector<workload::TrainResult::TraceCounter> out;
  if (steps.empty() || links == 0) return out;
  const size_t n = capacity.size();
  std::vector<double> bits(n, 0.0), last_u(n, 0.0);
  std::vector<Time> last_t(n);
  std::vector<char> seen(n, 0);
  for (const auto& st : steps) {
    const auto l = static_cast<size_t>(st.link);
    if (seen[l]) bits[l] += last_u[l] * capacity[l] * (st.at - last_t[l]).seconds();
    seen[l] = 1;
    last_t[l] = st.at;
    last_u[l] = st.utilization;
  }
  std::vector<std::pair<double, int32_t>> carried;  // (bits carried, link)
  for (size_t l = 0; l < n; ++l) {
    if (!seen[l]) continue;
    bits[l] += last_u[l] * capacity[l] * (makespan - last_t[l]).seconds();
    if (bits[l] > 0) carried.push_back({bits[l], static_cast<int32_t>(l)});
  }
  std::sort(carried.begin(), carried.end(),
            [](const auto& a, const auto& b) { return a.first != b.first ? a.first > b.first : a.second < b.second; });
  if (carried.size() > links) carried.resize(links);
  std::vector<int32_t> slot(n, -1);  // link -> its counter in `out`
  for (const auto& [b, link] : carried) {
    slot[static_cast<size_t>(link)] = static_cast<int32_t>(out.size());
    out.push_back({engine::dir_link_name(topo, link), {}});
  }
  for (const auto& st : steps) {
    const int32_t k = slot[static_cast<size_t>(st.link)];
    if (k < 0) continue;
    auto& v = out[static_cast<size_t>(k)].steps;
    if (!v.empty() && v.back().first == st.at) v.back().second = st.utilization;
    else v.push_back({st.at, st.utilization});
  }
  return out;
}

}  // namespace

TrainStudy train(const scenario::Setup& s, const TrainRequest& r, const Progress& progress) {
  if (!s.scenario.jobs.empty())
    throw InputError(
        s.scenario.where("jobs") +
        ": several jobs on one fabric run with `podnet train` only (and the dashboard's jobs page), not yet "
        "from this command; expected `podnet train` with this scenario, or a scenario without `jobs:` "
        "(its `workload:` is the one job)");
  if (r.sweep && !r.simai_workload.empty())
    throw InputError("--sweep works on the scenario's workload, not on an imported SimAI workload");
  if (r.sweep && !r.chakra.empty()) throw InputError("--sweep works on the scenario's workload, not on Chakra traces");
  if (!r.simai_workload.empty() && !r.chakra.empty())
    throw InputError("--chakra and --simai-workload: give one imported workload, not both");
  const topology::Topology& topo = s.fabric;
  const auto fabric_gpus = static_cast<int64_t>(topo.gpus.size());
  require_fault_engine(s);
  // An imported workload's iteration is not run again with failures: refused, not dropped in silence.
  if (r.failures && !s.scenario.failures.empty() && (!r.simai_workload.empty() || !r.chakra.empty()))
    throw InputError(
        s.scenario.where("failures") +
        fmt::format(": failures are not simulated on an imported workload ({}) yet; expected a scenario "
                    "without failures: and no --fail-links or --fail-switches (the scenario's own workload runs "
                    "with them)",
                    r.chakra.empty() ? "--simai-workload" : "--chakra"));
  const bool failures = r.failures && !s.scenario.failures.empty();
  if (failures) require_failure_engine(s);
  workload::TrainOptions topt;
  topt.collective = s.collective;
  topt.trace = r.trace;
  // The memory guard (scenario/estimate.hpp) as the iteration's plan grows: its size is known only once built.
  scenario::estimate::Estimate base = scenario::estimate::fabric(fabric_gpus);
  scenario::estimate::add_threads(base, s.engine, static_cast<double>(fabric_gpus), s.network.flow.threads);
  topt.plan_guard = scenario::estimate::growing_plan_guard(
      base, s.engine, static_cast<double>(fabric_gpus),
      "the job (its GPUs, microbatches, gradient buckets: workload.bucket_params, experts)",
      "one iteration of this job");
  TrainStudy out;
  out.telemetry.recorder = make_recorder(s, r.telemetry);
  const engine::NetworkOptions observed = out.telemetry.recorder ? out.telemetry.recorder->instrument(s.network)
                                                                 : s.network;
  // The trace's link-utilization counters (flow engine): the link-load steps of the backend's last run,
  // which is the iteration's when the result is taken (every helper times its small plans first).
  auto last = std::make_shared<LastRunCounters>();
  engine::NetworkOptions traced = failures ? s.network : observed;
  traced.link_loads = false;  // the study reports no engine link loads (its trace counters come from observe)
  if (r.trace && r.trace_links > 0 && engine::engine_info(s.engine).traits.link_series) {
    traced.observers.observe = [prev = traced.observers.observe, last, &topo,
                                links = static_cast<size_t>(r.trace_links)](const engine::RunObservation& o) {
      if (prev) prev(o);
      if (!o.link_steps || !o.link_capacity_bps || !o.report) return;
      last->counters = link_counters(topo, *o.link_steps, *o.link_capacity_bps, o.report->makespan, links);
      last->makespan = o.report->makespan;
    };
  }
  auto backend = engine::make_backend(s.engine, topo, traced);
  const auto counters = [&] {
    if (last->makespan == out.result.iteration) out.result.trace_counters = std::move(last->counters);
  };
  const auto storms = [&] {
    if (out.telemetry.recorder) {
      out.telemetry.storms = find_storms(*out.telemetry.recorder);
      out.telemetry.drifts = find_drifts(*out.telemetry.recorder);
    }
  };
  if (progress.run) progress.run("iteration");
  if (!r.simai_workload.empty()) {
    const workload::simai::Workload w = workload::simai::load_workload(r.simai_workload);
    out.job = workload::simai::job_of(w, fabric_gpus, fabric_gpus);
    out.gpus = cluster::place(out.job, topo, s.placement, s.scenario.seed);
    const workload::simai::Imported im = workload::simai::import_iteration(w, out.job, out.gpus, topo, *backend, topt);
    out.result = workload::simulate_iteration(out.job, out.gpus, topo, *backend, im.times, topt);
    out.result.placement =
        cluster::summarize(out.job, out.gpus, topo, topt.collective, cluster::policy_name(s.placement));
    counters();
    out.imported_source = r.simai_workload;
    out.imported = im.traffic;
    storms();
    return out;
  }
  if (!r.chakra.empty()) {
    // Chakra traces (workload/chakra.hpp): rank r of the traces is job rank r, placed like a DP group.
    const std::vector<workload::chakra::RankTrace> traces = workload::chakra::load_traces(r.chakra);
    out.job = workload::chakra::job_of(traces, fabric_gpus);
    out.gpus = cluster::place(out.job, topo, s.placement, s.scenario.seed);
    workload::chakra::Result res = workload::chakra::simulate(traces, out.gpus, topo, *backend, topt);
    out.result = std::move(res.train);
    out.chakra = std::move(res.imported);
    counters();
    out.imported_source = r.chakra;
    storms();
    return out;
  }
  out.job = s.job(!r.allow_oom);
  // The packet engine takes minutes to hours on a large job: the analytical engine's iteration first (a second at
  // 16,384 GPUs), so that the run's progress lines say how far along it is and about how long is left. It only
  // sets that estimate; the result is the packet engine's.
  if (progress.expect && engine::engine_info(s.engine).traits.packet_faults) {
    engine::NetworkOptions quick = s.network;
    quick.observers = {};
    quick.faults = {};
    quick.link_loads = false;
    try {
      const auto analytical = engine::make_backend("analytical", topo, quick);
      std::vector<int32_t> placed;
      const Time expected =
          simulate_job(out.job, topo, *analytical, topt, s.placement, s.scenario.seed, &placed).iteration;
      progress.expect(expected, network_work(out.job, placed, topo, *analytical, topt));
    } catch (const Error&) {
      // No estimate (a setting only the packet engine takes): the progress lines count what is simulated.
    }
  }
  out.result = simulate_job(out.job, topo, *backend, topt, s.placement, s.scenario.seed, &out.gpus);
  counters();
  if (failures) {
    // The same iteration (same placement and per-op times) with the scenario's failures injected by the
    // engine; random failures are drawn from the job's components over the failure-free iteration.
    FailingEngine f = with_failures(s, observed, out.result.iteration, out.gpus);
    engine::RunReport slowed;
    // The events one scenario entry drew together (a share of a tier) are left out together, as one failure.
    const std::vector<engine::FailureEvent> all = s.scenario.failure_events(topo, out.result.iteration, out.gpus);
    std::vector<std::vector<size_t>> units;
    for (size_t j = 0; j < all.size(); ++j) {
      auto same = std::find_if(units.begin(), units.end(), [&](const std::vector<size_t>& u) {
        return !all[j].group.empty() && all[u[0]].group == all[j].group;
      });
      if (same != units.end()) same->push_back(j);
      else units.push_back({j});
    }
    // The runs this takes, said up front (a failure what-if on 100K GPUs runs the iteration several times): the
    // iteration as built, with the failures, and when they slow it the straggler report's baseline and one run
    // without each failure (none more for a single one: the baseline is that run).
    const size_t most = 3 + (units.size() > 1 ? std::min(units.size(), kMaxCounterfactuals) : 0);
    if (progress.run)
      progress.run(
          fmt::format("the iteration with the failures (run 2 of up to {}: the rest only if they slow it)", most));
    out.failures = IterationWithFailures{out.result.iteration,
                                         workload::simulate_iteration(out.job, out.gpus, topo, *f.backend,
                                                                      out.result.times, topt, &slowed),
                                         f.scheduled};
    // An iteration the failures did not lengthen (a slow factor of 1, events after it ended) has no straggler
    // to find and no cost to share out: its report says so instead of running the iteration 1 + N times more.
    if (!slowed.job_failed && out.failures->run.iteration != out.result.iteration) {
      // Straggler detection: the same op graph without the failures, timeline against timeline.
      const workload::IterationPlan ip = workload::build_iteration(out.job, out.gpus, topo, out.result.times, topt);
      if (progress.run)
        progress.run(
            fmt::format("the iteration without failures, step by step (the straggler report; run 3 of {})", most));
      const engine::RunReport base = backend->run(ip.plan);
      out.failures->straggler = diagnose::locate_slowdown(ip, base, slowed);
      // The culprit by counterfactual: the slowed run without each event in turn (one event: the baseline).
      engine::NetworkOptions o = s.network;
      for (size_t u = 0; u < units.size() && u < kMaxCounterfactuals; ++u) {
        o.faults.failures.events.clear();
        for (size_t j = 0; j < all.size(); ++j)
          if (std::find(units[u].begin(), units[u].end(), j) == units[u].end())
            o.faults.failures.events.push_back(all[j]);
        const engine::FailureEvent& first = all[units[u][0]];
        if (units.size() > 1 && progress.run)
          progress.run(fmt::format("the iteration without {} ({} of {}; run {} of {})",
                                   first.group.empty() ? first.what : first.group, u + 1,
                                   std::min(units.size(), kMaxCounterfactuals), u + 4, most));
        const engine::RunReport without = units.size() == 1 ? base
                                                            : engine::make_backend(s.engine, topo, o)->run(ip.plan);
        out.failures->costs.push_back({first.group.empty() ? first.what : first.group, first.at,
                                       without.job_failed ? Time() : slowed.makespan - without.makespan});
      }
      std::stable_sort(out.failures->costs.begin(), out.failures->costs.end(),
                       [](const FailureCost& a, const FailureCost& b) { return a.recovered > b.recovered; });
    }
  }
  storms();
  if (s.frontend.has_storage()) {
    if (progress.run)
      progress.run(s.frontend.converged ? "data loading on the back end" : "data loading on the frontend");
    const SampleBytes sample = sample_bytes(s.frontend, out.job);
    const topology::FrontendFabric fe = s.scenario.build_storage_network(topo);
    std::vector<double> per_server = data_loading_bytes(out.job, out.gpus, topo, sample.sample, sample.label);
    // The job's servers (1 for each that holds one of its GPUs).
    std::vector<double> job_server(static_cast<size_t>(topo.servers), 0.0);
    int32_t last = 0;
    for (const int32_t g : out.gpus) {
      const int32_t sv = topo.nodes[topo.gpus[static_cast<size_t>(g)]].server;
      job_server[static_cast<size_t>(sv)] = 1;
      last = std::max(last, sv);
    }
    if (fe.converged) {  // the storage nodes' server slots run none of the job
      if (last >= fe.servers)
        throw InputError(fmt::format(
            "{}: the storage nodes take the back end's last {} server slots ({} on), but the job is placed on "
            "server {}; expected fewer storage nodes, a smaller job or a larger back end",
            s.scenario.where("frontend.storage_nodes"), thousands(fe.config.storage_nodes), thousands(fe.servers),
            thousands(last)));
      per_server.resize(static_cast<size_t>(fe.servers));
    }
    out.data_loading = simulate_data_loading(fe, per_server, sample.sample, s.engine, s.network);
    if (fe.converged && s.storage.async) {
      // The checkpoint written behind training on the links training uses: every server of the job writes
      // its share, as a checkpoint does (frontend_io.hpp).
      if (progress.run) progress.run("checkpoint write behind training");
      std::vector<double> writes(job_server.begin(), job_server.begin() + fe.servers);
      const double writers = std::max(1.0, std::accumulate(writes.begin(), writes.end(), 0.0));
      const double bytes = out.job.model.params() * kCheckpointBytesPerParam;
      for (double& w : writes) w *= bytes / writers;
      const workload::IterationPlan ip = workload::build_iteration(out.job, out.gpus, topo, out.result.times, topt);
      out.write_behind = write_behind_training(fe, ip.plan, writes, s.engine, s.network);
    }
  }
  // Tenants (tenants:): a job across several would need routes between their VRFs, which the plan withholds.
  if (!s.scenario.tenants.empty()) {
    const std::vector<topology::Tenant> tenants = s.scenario.plan_tenants(topo);
    std::vector<std::string> seen;
    for (const int32_t g : out.gpus) {
      const topology::Tenant* x = topology::tenant_of(tenants, topo.nodes[topo.gpus[static_cast<size_t>(g)]].server);
      const std::string name = x != nullptr ? x->name : "the servers outside every tenant";
      if (std::find(seen.begin(), seen.end(), name) == seen.end()) seen.push_back(name);
    }
    if (seen.size() > 1) out.tenants_spanned = seen;
  }
  // Days to train with failures; a write behind training sets the checkpoint's cost (study/reliability.hpp).
  out.reliability =
      training_reliability(s, out.gpus, out.result.days_to_train, out.write_behind ? &*out.write_behind : nullptr);
  if (progress.step) progress.step(1, 1, "iteration");

  if (r.sweep) {
    std::vector<int64_t> dps = r.sweep_dps;
    if (dps.empty())
      for (int64_t d = 1; d <= out.job.dp; d *= 2)
        if (d % out.job.ep == 0) dps.push_back(d);
    if (dps.empty() || dps.back() != out.job.dp) dps.push_back(out.job.dp);
    std::vector<double> caps = r.sweep_caps;
    if (caps.empty()) {
      // The default caps below the NICs' own speed: a cap at or above it is the fabric as built, and its rows
      // repeated the "as built" ones (400G NICs under a 50 GB/s cap).
      const double nic = nic_speed(topo).bytes_per_second();
      caps = {0};
      for (double c : {50e9, 20e9, 10e9, 5e9})
        if (nic == 0 || c < nic * (1 - 1e-9)) caps.push_back(c);
    }
    out.sweep = scaling_sweep(
        out.job, topo, [&](const topology::Topology& t) { return engine::make_backend(s.engine, t, s.network); }, topt,
        s.placement, s.scenario.seed, dps, caps,
        [&](size_t i, size_t n, const std::string& what, bool finished) {
          // Each point named, so that the engine's progress (per run) reads as that point's.
          const std::string label = fmt::format("sweep point {}/{} ({})", i + 1, n, what);
          if (!finished && progress.run) progress.run(label);
          if (finished && progress.step) progress.step(i + 1, n, label);
        });
    out.swept = true;
  }
  return out;
}

}  // namespace podnet::study
