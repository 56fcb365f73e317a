#include "study/inference.hpp"

#include <fmt/format.h>
#include <map>

#include "collective/collective.hpp"
#include "core/error.hpp"
#include "core/units.hpp"
#include "engine/registry.hpp"

namespace podnet::study {

namespace {

// The model and GPU of the scenario's `workload:` (its preset names and overrides).
workload::ModelSpec model_of(const Params& w) {
  const workload::ModelSpec* m = workload::find_model(w.get_string("model"));
  if (!m) throw ParamError("workload.model", fmt::format("no model '{}'", w.get_string("model")));
  workload::ModelSpec out = *m;
  const auto over = [&](const char* k, int64_t& v) {
    if (w.has(k)) v = w.get_int(k);
  };
  over("layers", out.layers);
  over("hidden", out.hidden);
  over("heads", out.heads);
  over("kv_heads", out.kv_heads);
  over("ffn", out.ffn);
  over("vocab", out.vocab);
  over("experts", out.experts);
  over("top_k", out.top_k);
  if (out.hidden % out.heads != 0)
    throw ParamError("workload.heads", fmt::format("hidden {} is not divisible by heads {}", out.hidden, out.heads));
  return out;
}

}  // namespace

InferenceStudy inference(const scenario::Setup& s, const Progress& progress) {
  InferenceStudy out;
  const Params& w = s.scenario.section("workload");
  out.model = model_of(w);
  const workload::GpuSpec* g = workload::find_gpu(w.get_string("gpu"));
  if (!g)
    throw InputError(fmt::format("{}: no GPU preset '{}'", s.scenario.where("workload.gpu"), w.get_string("gpu")));
  out.gpu = *g;
  try {
    out.config = workload::inference_from(s.scenario.section("inference"), s.scenario.seed);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  const workload::InferenceConfig& c = out.config;
  const topology::Topology& topo = s.fabric;
  out.fabric_gpus = static_cast<int64_t>(topo.gpus.size());
  if (c.gpus() > out.fabric_gpus)
    throw InputError(fmt::format("{}: the serving layout needs {} GPUs ({} x {} per replica, {} replicas), the fabric "
                                 "has {}: fewer replicas, or a larger fabric (topology.gpus)",
                                 s.scenario.where(c.disaggregated ? "inference.decode_replicas" : "inference.replicas"),
                                 thousands(c.gpus()), c.tp, c.pp,
                                 c.disaggregated ? c.prefill_replicas + c.decode_replicas : c.replicas,
                                 thousands(out.fabric_gpus)));
  const workload::ServingCost cost(out.model, out.gpu, c);
  out.weight_bytes_per_gpu = cost.weight_bytes_per_gpu();
  out.kv_bytes_per_token = cost.kv_bytes_per_token();
  out.kv_capacity_tokens = cost.kv_capacity_tokens();

  // The network's part of a pass, timed on the fabric (see the header), memoized per size.
  auto backend = engine::make_backend(s.engine, topo, s.network);
  const int64_t n = c.tp * c.pp;
  collective::Group tp_group;
  for (int64_t i = 0; i < c.tp; ++i) tp_group.push_back(static_cast<int32_t>(i));
  const char* algorithm = s.collective.tuner ? "auto" : "ring";
  std::map<std::pair<int, Bytes>, Time> timed;
  const auto collective_time = [&](collective::Op op, const collective::Group& group, Bytes bytes) {
    const auto key = std::make_pair(static_cast<int>(op), bytes);
    if (auto it = timed.find(key); it != timed.end()) return it->second;
    const Time t =
        backend
            ->run(collective::make_plan(op == collective::Op::AllToAll ? collective::default_algorithm(op) : algorithm,
                                        op, group, bytes, s.collective, topo))
            .makespan;
    timed.emplace(key, t);
    return t;
  };
  const auto p2p_time = [&](const std::vector<std::pair<int32_t, int32_t>>& pairs, Bytes each) {
    const auto key = std::make_pair(-1 - static_cast<int>(pairs.size()), each);
    if (auto it = timed.find(key); it != timed.end()) return it->second;
    plan::TransferPlan plan;
    for (const auto& [a, b] : pairs) {
      plan::Transfer t;
      t.ranks = {a, b};
      t.bytes = each;
      plan.add(t);
    }
    const Time t = backend->run(plan).makespan;
    timed.emplace(key, t);
    return t;
  };
  const int64_t h = out.model.hidden, l = out.model.layers;
  workload::ServingNetwork net;
  net.pass = [&](int64_t tokens) {
    Time total;
    const Bytes act = tokens * h * 2;
    if (c.tp > 1) {
      const Time ar = collective_time(collective::Op::AllReduce, tp_group, act);
      if (out.model.moe()) {
        const Bytes per_rank = std::max<Bytes>(1, tokens * out.model.top_k * h * 2 / c.tp);
        const Time a2a = collective_time(collective::Op::AllToAll, tp_group, per_rank);
        total = total + (ar + a2a * 2) * l;
      } else {
        total = total + ar * (2 * l);
      }
    }
    if (c.pp > 1) total = total + p2p_time({{0, static_cast<int32_t>(c.tp)}}, act) * (c.pp - 1);
    return total;
  };
  std::vector<std::pair<int32_t, int32_t>> kv_pairs;
  for (int64_t i = 0; i < n; ++i)
    kv_pairs.emplace_back(static_cast<int32_t>(i), static_cast<int32_t>(c.prefill_replicas * n + i));
  net.kv_transfer = [&](int64_t prompt) {
    const auto bytes = static_cast<Bytes>(static_cast<double>(prompt) * cost.kv_bytes_per_token());
    return p2p_time(kv_pairs, std::max<Bytes>(1, bytes / n));
  };
  // Prefill sizes rounded up to a multiple of 64 tokens for the timing: a few dozen sizes, not thousands.
  workload::ServingNetwork quantized = net;
  quantized.pass = [&](int64_t tokens) { return net.pass(tokens > c.max_batch ? (tokens + 63) / 64 * 64 : tokens); };

  // One request alone.
  const int64_t s0 = c.prompt_lo;
  out.single_ttft_network = net.pass(s0);
  out.single_ttft = cost.prefill(s0, static_cast<double>(s0) * static_cast<double>(s0), 1) + out.single_ttft_network;
  out.single_tpot_network = net.pass(1);
  out.single_tpot = cost.decode(1, s0 + 1) + out.single_tpot_network;
  if (c.disaggregated) out.single_kv_transfer = net.kv_transfer(s0);

  if (progress.run) progress.run(fmt::format("{} requests", thousands(c.requests)));
  try {
    out.serving = workload::simulate_serving(cost, c, quantized);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  if (progress.step) progress.step(1, 1, "serving");
  return out;
}

}  // namespace podnet::study
