#include "study/bench.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "collective/nccl/tuner.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/network_presets.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "scenario/estimate.hpp"
#include "scenario/scenario.hpp"

namespace podnet::study {

AlgoChoice algo_choice(const std::string& text, const std::string& label) {
  AlgoChoice c;
  if (text.empty() || text == "auto") return c;
  if (!collective::find_algorithm(text)) {
    if (text.find_first_of(",^") == std::string::npos)
      throw InputError(fmt::format("{}: '{}' is not an algorithm (see podnet list), nor auto, nor a list for the "
                                   "tuner such as ring,tree or ^nvls",
                                   label, text));
    c.scenario_algorithms = text;  // a list for the tuner; collective.algorithms checks it
    return c;
  }
  c.algo = text;
  if (collective::is_nccl_algorithm(text)) c.scenario_algorithms = text;
  return c;
}

std::vector<TransportChoice> transport_choices(const std::string& list, const std::string& label,
                                               const std::function<bool(const std::string&)>& user_gave) {
  std::vector<std::string> ccs, presets;
  for (const auto& p : engine::packet::cc_presets()) ccs.emplace_back(p.name);
  for (const auto& p : engine::network_presets()) presets.emplace_back(p.name);
  const std::string choices =
      fmt::format("congestion controls: {}; presets: {}", fmt::join(ccs, ", "), fmt::join(presets, ", "));
  std::vector<TransportChoice> out;
  for (size_t at = 0;;) {  // every item, empty ones included
    const size_t comma = list.find(',', at);
    const std::string raw = list.substr(at, comma == std::string::npos ? std::string::npos : comma - at);
    const size_t b = raw.find_first_not_of(" \t");
    const std::string item = b == std::string::npos ? std::string()
                                                    : raw.substr(b, raw.find_last_not_of(" \t") - b + 1);
    if (item.empty())
      throw InputError(fmt::format("{} '{}': an empty item; expected a comma-separated list such as "
                                   "dcqcn_nic,nscc or roce_dcqcn,uec ({})",
                                   label, list, choices));
    if (std::any_of(out.begin(), out.end(), [&](const TransportChoice& c) { return c.name == item; }))
      throw InputError(fmt::format("{} '{}': '{}' is listed twice", label, list, item));
    TransportChoice c;
    c.name = item;
    if (const engine::NetworkPreset* p = engine::find_network_preset(item)) {
      // A preset's keys over the scenario's; a key the user gives is the user's.
      c.sets.emplace_back("network.preset", item);
      for (const auto& [k, v] : p->keys)
        if (!user_gave(std::string("network.") + k)) c.sets.emplace_back(std::string("network.") + k, v);
    } else if (std::find(ccs.begin(), ccs.end(), item) != ccs.end()) {
      c.sets.emplace_back("network.cc", item);
    } else {
      std::vector<std::string> names = ccs;
      names.insert(names.end(), presets.begin(), presets.end());
      // A family's stem (`dcqcn`) names its members; else the nearest name.
      const std::string near = scenario::closest_quoted(item, names);
      throw InputError(fmt::format("{}: '{}' is neither a congestion control nor a network preset{} ({})", label, item,
                                   near.empty() ? "" : "; did you mean " + near + "?", choices));
    }
    out.push_back(std::move(c));
    if (comma == std::string::npos) break;
    at = comma + 1;
  }
  return out;
}

std::vector<Bytes> size_series(Bytes lo, Bytes hi, double factor) {
  // A size to the byte ("4,194,304 B"): podnet's own short form could read 512KB back as 500KiB.
  auto size = [](Bytes b) { return fmt::format("{} B", thousands(b)); };
  if (lo <= 0) throw InputError(fmt::format("--min {} B: the smallest size must be at least 1 B", thousands(lo)));
  if (lo > hi) throw InputError(fmt::format("--min {} is larger than --max {}", size(lo), size(hi)));
  if (lo == hi) return {lo};
  if (!(factor > 1.0) || !std::isfinite(factor)) throw InputError("--factor must be greater than 1");
  // Sizes lo * factor^k for k = 0 .. floor(log(hi/lo) / log(factor)).
  const double count = std::floor(std::log(static_cast<double>(hi) / static_cast<double>(lo)) / std::log(factor)) + 1;
  if (!(count <= static_cast<double>(kMaxSizes)))
    throw InputError(fmt::format("--min {} B to --max {} B by --factor {} makes {:.3g} sizes; at most {} are run "
                                 "(raise --factor or narrow the range)",
                                 lo, hi, factor, count, kMaxSizes));
  std::vector<Bytes> sizes;
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-12); s *= factor)
    sizes.push_back(static_cast<Bytes>(s));
  return sizes;
}

BenchResult bench(const scenario::Setup& s, const BenchRequest& r, const Progress& progress) {
  const topology::Topology& topo = s.fabric;
  BenchResult out;
  out.op = r.op;
  out.group = r.group;
  if (out.group.empty())
    for (int32_t i = 0; i < static_cast<int32_t>(topo.gpus.size()); ++i) out.group.push_back(i);
  if (out.group.size() < 2)
    throw InputError(fmt::format("bench: a collective needs at least 2 GPUs (the group has {})", out.group.size()));
  out.algo = r.algo.empty() ? "auto" : r.algo;
  if (out.algo == "auto" && !s.collective.tuner) out.algo = collective::default_algorithm(r.op);  // nccl_model = false
  if (out.algo == "auto" && (r.op == collective::Op::Permutation || r.op == collective::Op::Incast))
    out.algo = collective::default_algorithm(r.op);  // a traffic pattern, not an NCCL collective
  // An incast's ranks are its senders and the receiver, which may be fewer than --gpus.
  const int64_t ranks = r.op == collective::Op::Incast && s.collective.incast_senders > 0
                            ? std::min<int64_t>(s.collective.incast_senders + 1, static_cast<int64_t>(out.group.size()))
                            : static_cast<int64_t>(out.group.size());
  out.bus_factor = collective::bus_factor(r.op, ranks);

  require_fault_engine(s);
  const bool failures = !s.scenario.failures.empty();
  if (failures) require_failure_engine(s);
  // The memory guard (scenario/estimate.hpp): an all-to-all's n(n-1) transfers are known before its plan is
  // built; every plan is checked again, exactly, before it runs.
  const auto n = static_cast<int64_t>(out.group.size());
  const auto guard = [&](scenario::estimate::PlanSize plan) {
    scenario::estimate::Estimate e = scenario::estimate::fabric(static_cast<int64_t>(topo.gpus.size()));
    scenario::estimate::add_threads(e, s.engine, static_cast<double>(topo.gpus.size()), s.network.flow.threads);
    scenario::estimate::add_run(e, s.engine, static_cast<double>(topo.gpus.size()), plan, "--gpus (the group)");
    scenario::estimate::check(e, fmt::format("bench {} over {} GPUs", collective::op_name(r.op), out.group.size()));
  };
  if (r.op == collective::Op::AllToAll) guard({n * (n - 1), 0});
  // Telemetry observes the runs reported: the failure-free ones, or those with the failures.
  out.telemetry.recorder = make_recorder(s, r.telemetry);
  const engine::NetworkOptions observed = out.telemetry.recorder ? out.telemetry.recorder->instrument(s.network)
                                                                 : s.network;
  auto backend = engine::make_backend(s.engine, topo, failures ? s.network : observed);  // the fabric as built
  for (size_t k = 0; k < r.sizes.size(); ++k) {
    const Bytes bytes = r.sizes[k];
    const std::string what = thousands(bytes) + " B";
    if (progress.run) progress.run(what);
    plan::TransferPlan plan = collective::make_plan(out.algo, r.op, out.group, bytes, s.collective, topo);
    guard(scenario::estimate::plan_size(plan));
    BenchRow row;
    row.bytes = bytes;
    row.algorithm = plan.algorithm;
    row.protocol = plan.protocol;
    row.channels = plan.channels;
    collective::Algo ma;
    collective::Proto mp;
    // NCCL's model is for NCCL's own channel count: with the channels fixed (--channels) it is not comparable.
    if (s.collective.channels == collective::kAutoChannels && collective::find_algo(plan.algorithm, ma) &&
        collective::find_proto(plan.protocol, mp))
      row.nccl_model_us =
          collective::model_time_us(r.op, ma, mp, collective::comm_shape(out.group, topo, s.collective.arch), bytes);
    if (progress.expect && row.nccl_model_us) progress.expect(Time(static_cast<int64_t>(*row.nccl_model_us * 1e6)), {});
    if (failures) {
      // The failures on the same plan; random ones are drawn over this size's failure-free run.
      row.baseline = backend->run(plan);
      FailingEngine f = with_failures(s, observed, row.baseline->makespan, out.group);
      row.scheduled = f.scheduled;
      row.run = f.backend->run(plan);
    } else {
      row.run = backend->run(plan);
    }
    row.fct = engine::flow_times(plan, row.run);
    if (row.baseline) row.baseline_fct = engine::flow_times(plan, *row.baseline);
    // Per-transfer timings are not reported by bench: drop them so a long series stays small.
    row.run.transfers = {};
    if (row.baseline) row.baseline->transfers = {};
    out.rows.push_back(std::move(row));
    if (k + 1 == r.sizes.size()) {
      // The torus's own rings are lines of chips, not a ring's order over servers and rails: no ring stats.
      const collective::AlgorithmInfo* built = collective::find_algorithm(plan.algorithm);
      for (const auto& t : plan.transfers) {
        if (built && built->own_parts) break;
        if (t.kind != plan::TransferKind::Ring || t.ranks.size() < 2) continue;
        out.ring = collective::ring_stats(t.ranks, topo, t.open);
        out.ring_label = t.label;
        break;
      }
    }
    if (progress.step) progress.step(k + 1, r.sizes.size(), what);
  }
  if (out.telemetry.recorder) {
    out.telemetry.storms = find_storms(*out.telemetry.recorder);
    out.telemetry.drifts = find_drifts(*out.telemetry.recorder);
  }
  return out;
}

}  // namespace podnet::study
