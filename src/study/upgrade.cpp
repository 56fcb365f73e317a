#include "study/upgrade.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <mutex>
#include <numeric>
#include <optional>
#include <thread>

#include "core/error.hpp"
#include "core/parallel.hpp"
#include "engine/registry.hpp"
#include "scenario/estimate.hpp"
#include "study/frontend_io.hpp"
#include "study/reliability.hpp"
#include "study/scaling.hpp"

namespace podnet::study {

UpgradeRequest upgrade_request(const scenario::Setup& s) {
  const Params& p = s.scenario.section("maintenance");
  UpgradeRequest r;
  r.network = p.get_string("network");
  r.tier = p.get_string("tier");
  r.batches = p.get_int_list("batches");
  r.step_time = p.get_time("step_time");
  r.negligible = p.get_time("negligible");  // a Time key: never negative (parse_time refuses it)
  r.runs = static_cast<int32_t>(p.get_int("runs"));
  r.threads = static_cast<int32_t>(p.get_int("threads"));
  if (r.step_time.ps <= 0)
    throw InputError(s.scenario.where("maintenance.step_time") + ": expected a step longer than 0");
  return r;
}

namespace {

// The steps of one plan: switch ids (into `pool`, the tier's switches in node order) per step, b a step (the
// last may hold fewer). Spread: the switches ordered by (i mod S, i div S) for S = ceil(n / b), then cut.
std::vector<std::vector<int32_t>> steps_of(int64_t n, int64_t b, bool spread) {
  const int64_t steps = (n + b - 1) / b;
  std::vector<int32_t> order;
  for (int64_t r = 0; r < (spread ? steps : 1); ++r)
    for (int64_t i = r; i < n; i += spread ? steps : 1) order.push_back(static_cast<int32_t>(i));
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(steps));
  for (size_t k = 0; k < order.size(); ++k) out[k / static_cast<size_t>(b)].push_back(order[k]);
  return out;
}

// Which steps of `steps` get simulated: all when runs is 0 or covers them, else `runs` evenly spaced.
std::vector<char> sampled(size_t steps, int32_t runs) {
  std::vector<char> out(steps, runs <= 0 || steps <= static_cast<size_t>(runs) ? 1 : 0);
  if (runs > 0 && steps > static_cast<size_t>(runs)) {
    if (runs == 1) out[0] = 1;
    for (int32_t i = 0; i < runs && runs > 1; ++i)
      out[static_cast<size_t>(std::llround(static_cast<double>(i) * static_cast<double>(steps - 1) / (runs - 1)))] = 1;
  }
  return out;
}

}  // namespace

namespace {

// What a plan needs before anything runs, every input checked: the request, the frontend (when it is the one
// upgraded), the tier's switches and the batch sizes below their count.
struct Prepared {
  UpgradeRequest request;
  std::optional<topology::FrontendFabric> fe;
  std::vector<int32_t> pool;
  std::vector<int64_t> batches, left_out;
};

Prepared prepare(const scenario::Setup& s) {
  if (!s.scenario.jobs.empty())
    throw InputError(s.scenario.where("jobs") +
                     ": plan-upgrade runs the scenario's one job (`workload:`), not several; expected a scenario "
                     "without `jobs:`");
  Prepared out;
  out.request = upgrade_request(s);
  const UpgradeRequest& rq = out.request;
  // The frontend's switches: its storage traffic is what a step costs the job (the header).
  const bool frontend = rq.network == "frontend";
  std::optional<topology::FrontendFabric>& fe = out.fe;
  if (frontend) {
    const std::string at = s.scenario.where("maintenance.network");
    if (!s.frontend.present() && !s.frontend.converged)
      throw InputError(at + ": this scenario has no frontend network to upgrade; expected a `frontend:` section with "
                            "frontend.nics and frontend.storage_nodes, or maintenance.network: backend");
    if (s.frontend.converged)
      throw InputError(at + ": the storage nodes sit on the back end (frontend.converged), so their traffic crosses "
                            "the back end's switches; expected maintenance.network: backend");
    if (s.frontend.storage_nodes < 1)
      throw InputError(at + ": the frontend has no storage nodes, so no traffic of the job crosses it; expected "
                            "frontend.storage_nodes above 0");
    fe = s.scenario.build_storage_network(s.fabric);
  }
  const topology::Topology& t = frontend ? fe->topology : s.fabric;
  if (!engine::engine_info(s.engine).traits.failures)
    throw InputError(fmt::format("{}: draining switches under a run needs the {} engine; this run's engine is {} "
                                 "(use --engine {})",
                                 s.scenario.where("network.engine"),
                                 engine::engine_names_with(&engine::EngineTraits::failures, " or "), s.engine,
                                 engine::engine_names_with(&engine::EngineTraits::failures, " or --engine ")));
  int tier = -1;
  std::vector<std::string> names;
  for (size_t i = 0; i < t.tier_names.size(); ++i) {
    if (!t.tier_names[i].empty()) names.push_back(t.tier_names[i]);
    if (t.tier_names[i] == rq.tier && !rq.tier.empty()) tier = static_cast<int>(i);
  }
  std::vector<int32_t>& pool = out.pool;
  for (size_t n = 0; n < t.nodes.size() && tier >= 0; ++n)
    if (t.nodes[n].kind == topology::NodeKind::Switch && t.nodes[n].tier == tier)
      pool.push_back(static_cast<int32_t>(n));
  if (names.empty())
    throw InputError(fmt::format("{}: this fabric has no switches to upgrade (a {} links its chips directly); "
                                 "expected a fabric with switch tiers",
                                 s.scenario.where("topology.family"), s.scenario.family));
  if (pool.empty())
    throw InputError(fmt::format("{}: '{}' is not a switch tier of {}; expected one of: {}",
                                 s.scenario.where("maintenance.tier"), rq.tier,
                                 frontend ? "the frontend network" : "this fabric", fmt::join(names, ", ")));
  const auto switches = static_cast<int64_t>(pool.size());
  std::vector<int64_t>& batches = out.batches;
  for (const int64_t b : rq.batches) {
    if (b >= switches) out.left_out.push_back(b);
    else if (std::find(batches.begin(), batches.end(), b) == batches.end()) batches.push_back(b);
  }
  std::sort(batches.begin(), batches.end());
  if (batches.empty())
    throw InputError(fmt::format("{}: every batch is at or above the {} {} switches of this fabric; expected a "
                                 "size below {} (a step must leave some in service)",
                                 s.scenario.where("maintenance.batches"), thousands(switches), rq.tier,
                                 thousands(switches)));
  return out;
}

}  // namespace

void check_upgrade(const scenario::Setup& s) { (void)prepare(s); }

UpgradeResult plan_upgrade(const scenario::Setup& s, const Progress& progress) {
  Prepared prep = prepare(s);
  UpgradeResult out;
  out.request = prep.request;
  const UpgradeRequest& rq = out.request;
  const bool frontend = rq.network == "frontend";
  const std::optional<topology::FrontendFabric>& fe = prep.fe;
  const topology::Topology& t = frontend ? fe->topology : s.fabric;
  const std::vector<int32_t>& pool = prep.pool;
  const std::vector<int64_t>& batches = prep.batches;
  out.switches = static_cast<int64_t>(pool.size());
  out.left_out = prep.left_out;

  // The intact iteration, placed as `podnet train` places it.
  out.job = s.job(true);
  workload::TrainOptions topt;
  topt.collective = s.collective;
  topt.plan_guard =
      scenario::estimate::growing_plan_guard(scenario::estimate::fabric(static_cast<int64_t>(s.fabric.gpus.size())),
                                             s.engine, static_cast<double>(s.fabric.gpus.size()),
                                             "the job (its GPUs, microbatches, gradient buckets)",
                                             "one iteration of this job");
  std::vector<int32_t> gpus;
  if (progress.run) progress.run("the intact iteration");
  const workload::TrainResult base = [&] {
    auto backend = engine::make_backend(s.engine, s.fabric, s.network);
    return simulate_job(out.job, s.fabric, *backend, topt, s.placement, s.scenario.seed, &gpus);
  }();
  out.gpus = static_cast<int64_t>(gpus.size());
  out.baseline = base.iteration;
  out.runs = 1;

  // Frontend: the job's storage traffic as `podnet train` and `podnet reliability` time it, the data read
  // and the checkpoint write on the frontend as `options` leaves it (intact, or with a step's switches out).
  std::vector<double> per_server;
  int32_t writers = 0;
  const double checkpoint_bytes = out.job.model.params() * kCheckpointBytesPerParam;
  const SampleBytes sample = sample_bytes(s.frontend, out.job);
  if (frontend) {
    per_server = data_loading_bytes(out.job, gpus, s.fabric, sample.sample, sample.label);
    per_server.resize(static_cast<size_t>(fe->servers));
    writers = static_cast<int32_t>(std::min<int64_t>(checkpoint_writers(s.fabric, out.gpus), fe->servers));
  }
  struct StorageTimes {
    double read_s = 0, write_s = 0;
    std::string failure;
  };
  auto storage_times = [&](const engine::NetworkOptions& o, const topology::FrontendFabric& f) {
    StorageTimes st;
    const DataLoading d = simulate_data_loading(f, per_server, sample.sample, s.engine, o);
    const FrontendIo io = simulate_checkpoint(f, checkpoint_bytes, writers, s.engine, o, false);
    st.read_s = d.read.seconds;
    st.write_s = io.write.seconds;
    st.failure = !d.read.failure.empty()     ? "data loading: " + d.read.failure
                 : !io.write.failure.empty() ? "checkpoint: " + io.write.failure
                                             : "";
    return st;
  };
  StorageTimes intact;
  // The job's checkpoint advice as `podnet train` gives it: its interval, and what a checkpoint and a restart cost
  // (the storage network's times when there is one, else reliability's constants).
  const TrainingReliability advice = training_reliability(s, gpus, base.days_to_train);
  if (frontend) {
    if (progress.run) progress.run("the intact frontend's data loading and checkpoint");
    intact = storage_times(s.network, *fe);
    out.data_read_s = intact.read_s;
    out.checkpoint_write_s = intact.write_s;
    out.async_checkpoints = s.storage.async;
    out.checkpoint_interval_hours = advice.checkpoint_interval_hours;
  }
  const double iteration_s = base.iteration.seconds();
  const double waited_intact = iteration_s + std::max(0.0, intact.read_s - iteration_s);

  // The plans, and the switch sets they simulate.
  struct Pending {
    UpgradePlan plan;
    std::vector<std::vector<int32_t>> sets;
    std::vector<char> simulate;
  };
  std::vector<Pending> pending;
  for (const int64_t b : batches)
    for (const bool spread : b == 1 ? std::vector<bool>{false} : std::vector<bool>{false, true}) {
      Pending p;
      p.plan.batch = b;
      p.plan.grouping = b == 1 ? "one at a time" : spread ? "spread" : "packed";
      p.sets = steps_of(out.switches, b, spread);
      p.simulate = sampled(p.sets.size(), rq.runs);
      pending.push_back(std::move(p));
    }
  // The distinct switch sets to simulate, in plan order, each named for the progress lines.
  std::vector<std::vector<int32_t>> todo;
  std::vector<std::string> labels;
  std::map<std::vector<int32_t>, size_t> index;  // switch set -> its entry in todo
  for (const auto& p : pending)
    for (size_t i = 0; i < p.sets.size(); ++i) {
      if (!p.simulate[i] || !index.emplace(p.sets[i], todo.size()).second) continue;
      const std::string& first = t.nodes[pool[static_cast<size_t>(p.sets[i][0])]].name;
      todo.push_back(p.sets[i]);
      labels.push_back(fmt::format(
          "{}, step {} ({})",
          p.plan.batch == 1 ? p.plan.grouping : fmt::format("{} at a time, {}", p.plan.batch, p.plan.grouping), i + 1,
          p.sets[i].size() == 1 ? first : fmt::format("{} and {} more", first, p.sets[i].size() - 1)));
    }
  // One step's iteration. Several run at once on `threads` threads, each engine on one thread (its results
  // are the same to the bit on one or two: engine/options.hpp) and without the engine's progress lines.
  const size_t threads = std::clamp<size_t>(rq.threads > 0 ? static_cast<size_t>(rq.threads)
                                                           : std::min<size_t>(std::thread::hardware_concurrency(), 8),
                                            1, std::max<size_t>(1, todo.size()));
  engine::NetworkOptions base_options = s.network;
  std::mutex heartbeat_mu;  // the caller's heartbeat (a terminal's line, the dashboard's cancel), one call at a time
  if (threads > 1) {
    base_options.flow.threads = 1;
    base_options.observers.progress = nullptr;
    if (auto beat = base_options.observers.heartbeat)
      base_options.observers.heartbeat = [beat, &heartbeat_mu](Time at) {
        const std::lock_guard<std::mutex> lock(heartbeat_mu);
        beat(at);
      };
  }
  std::vector<UpgradeStep> results(todo.size());
  auto run_step = [&](size_t k) {
    engine::NetworkOptions o = base_options;
    for (const int32_t sw : todo[k]) {
      engine::FailureEvent ev;
      ev.action = engine::FailureAction::Drain;  // at t = 0: routing avoids it from the start
      const auto [first, last] = t.incident(pool[static_cast<size_t>(sw)]);
      ev.links.assign(first, last);
      ev.what = "switch " + t.nodes[pool[static_cast<size_t>(sw)]].name + ", drained for its upgrade";
      o.faults.failures.events.push_back(std::move(ev));
    }
    UpgradeStep& result = results[k];
    if (frontend) {
      // The ports whose every switch is drained are out of service: their devices' other NICs carry their
      // share (dual-homed), or the devices are cut off.
      topology::FrontendFabric drained = *fe;
      drained.port_down.assign(static_cast<size_t>(fe->ports()), 0);
      std::vector<char> out_of_service(t.nodes.size(), 0);
      for (const int32_t sw : todo[k]) out_of_service[static_cast<size_t>(pool[static_cast<size_t>(sw)])] = 1;
      for (int32_t port = 0; port < fe->ports(); ++port) {
        const topology::NodeId leaf = fe->leaf_of_port(port);
        drained.port_down[static_cast<size_t>(port)] = leaf != topology::kNone &&
                                                       out_of_service[static_cast<size_t>(leaf)] != 0;
      }
      const StorageTimes st = storage_times(o, drained);
      result.stops_job = !st.failure.empty();
      result.failure = st.failure;
      result.data_read_s = st.read_s;
      result.checkpoint_write_s = st.write_s;
      result.slowdown = result.stops_job ? 0 : (iteration_s + std::max(0.0, st.read_s - iteration_s)) / waited_intact;
      return;
    }
    engine::RunReport report;
    const workload::TrainResult r = workload::simulate_iteration(out.job, gpus, s.fabric,
                                                                 *engine::make_backend(s.engine, s.fabric, o),
                                                                 base.times, topt, &report);
    result.stops_job = report.job_failed;
    // The transfer in words ("data-parallel gradient reduce-scatter, ..."), as train says it.
    result.failure = r.failure;
    result.slowdown = report.job_failed ? 0 : r.iteration.seconds() / base.iteration.seconds();
  };
  // On one thread each step is its own run for the progress lines; on several, one line says so.
  if (threads > 1 && progress.run) progress.run(fmt::format("{} steps on {} threads", todo.size(), threads));
  std::mutex progress_mu;
  size_t finished = 0;
  parallel_for(todo.size(), threads, [&](size_t k) {
    if (threads == 1 && progress.run) progress.run(labels[k]);
    run_step(k);
    const std::lock_guard<std::mutex> lock(progress_mu);
    if (progress.step) progress.step(++finished, todo.size(), labels[k]);
  });
  out.runs += static_cast<int64_t>(todo.size());
  out.threads = static_cast<int32_t>(threads);

  const double step_hours = rq.step_time.seconds() / 3600;
  // A step that stops the job: the job checkpoints before the switches go, waits the step out and restarts from
  // that checkpoint after (train's figures: the storage network's times, else reliability.checkpoint_cost and
  // restart_cost).
  const double stop_hours = step_hours + advice.checkpoint_cost_hours + advice.restart_cost_hours;
  out.stop_hours = stop_hours;
  // Frontend: synchronous checkpoints a step holds (none behind training, or when nothing interrupts).
  const double checkpoints = !frontend || out.async_checkpoints || !std::isfinite(out.checkpoint_interval_hours) ||
                                     out.checkpoint_interval_hours <= 0
                                 ? 0
                                 : step_hours / out.checkpoint_interval_hours;
  for (auto& p : pending) {
    std::vector<double> slowdowns, writes;
    int64_t stopped = 0;
    for (size_t i = 0; i < p.sets.size(); ++i) {
      UpgradeStep st;
      for (const int32_t k : p.sets[i]) st.switches.push_back(t.nodes[pool[static_cast<size_t>(k)]].name);
      if (!p.simulate[i]) {
        st.simulated = false;
        p.plan.steps.push_back(std::move(st));
        continue;
      }
      const UpgradeStep& ran = results[index.at(p.sets[i])];
      st.slowdown = ran.slowdown;
      st.stops_job = ran.stops_job;
      st.failure = ran.failure;
      st.data_read_s = ran.data_read_s;
      st.checkpoint_write_s = ran.checkpoint_write_s;
      ++p.plan.simulated;
      if (st.stops_job) {
        ++stopped;
      } else {
        slowdowns.push_back(st.slowdown);
        writes.push_back(st.checkpoint_write_s);
      }
      p.plan.steps.push_back(std::move(st));
    }
    // The steps not simulated: the mean of those that were (a plan whose simulated steps all stop the job
    // has its others stop it too).
    const double mean = slowdowns.empty() ? 1
                                          : std::accumulate(slowdowns.begin(), slowdowns.end(), 0.0) /
                                                static_cast<double>(slowdowns.size());
    const bool all_stop = slowdowns.empty() && stopped > 0;
    UpgradePlan& plan = p.plan;
    plan.worst_slowdown = slowdowns.empty() ? 1 : *std::max_element(slowdowns.begin(), slowdowns.end());
    plan.mean_slowdown = mean;
    const double mean_write =
        writes.empty() ? out.checkpoint_write_s
                       : std::accumulate(writes.begin(), writes.end(), 0.0) / static_cast<double>(writes.size());
    plan.worst_write_s = writes.empty() ? 0 : *std::max_element(writes.begin(), writes.end());
    for (auto& st : plan.steps) {
      if (!st.simulated) {
        st.stops_job = all_stop;
        st.slowdown = all_stop ? 0 : mean;
        st.checkpoint_write_s = all_stop ? 0 : mean_write;
      }
      if (st.stops_job) ++plan.stopping_steps;
      st.extra_hours = st.stops_job
                           ? stop_hours
                           : std::max(0.0, step_hours * (1 - 1 / st.slowdown)) +
                                 checkpoints * std::max(0.0, st.checkpoint_write_s - out.checkpoint_write_s) / 3600;
      plan.extra_hours += st.extra_hours;
    }
    plan.window_hours = step_hours * static_cast<double>(plan.steps.size());
    out.plans.push_back(std::move(plan));
  }
  out.least = least_extra_plan(out.plans);
  out.best = recommended_plan(out.plans, rq.negligible.seconds() / 3600);
  return out;
}

size_t least_extra_plan(const std::vector<UpgradePlan>& plans) {
  size_t least = 0;
  for (size_t i = 1; i < plans.size(); ++i) {
    const UpgradePlan &a = plans[i], &b = plans[least];
    if (a.extra_hours < b.extra_hours - 1e-12 ||
        (std::abs(a.extra_hours - b.extra_hours) <= 1e-12 && a.window_hours < b.window_hours))
      least = i;
  }
  return least;
}

size_t recommended_plan(const std::vector<UpgradePlan>& plans, double negligible_hours) {
  if (plans.empty()) return 0;
  const size_t least = least_extra_plan(plans);
  const double within = plans[least].extra_hours + negligible_hours + 1e-12;
  size_t best = least;
  for (size_t i = 0; i < plans.size(); ++i) {
    const UpgradePlan &a = plans[i], &b = plans[best];
    if (a.extra_hours > within) continue;
    if (a.window_hours < b.window_hours || (a.window_hours == b.window_hours && a.extra_hours < b.extra_hours - 1e-12))
      best = i;
  }
  return best;
}

}  // namespace podnet::study
