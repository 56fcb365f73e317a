#include "study/inference.hpp"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <map>

#include "collective/collective.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"
#include "engine/registry.hpp"
#include "workload/job.hpp"

namespace podnet::study {

namespace {

// The model, GPU and layout of the scenario, checked against the fabric and the GPUs' memory (InputError
// naming the key), with the layout's memory figures.
InferenceStudy prepared(const scenario::Setup& s) {
  InferenceStudy out;
  try {
    const Params& w = s.scenario.section("workload");
    out.model = workload::model_from(w);
    out.gpu = workload::gpu_from(w);
    if (out.model.hidden % out.model.heads != 0)
      throw ParamError("workload.heads",
                       fmt::format("hidden {} is not divisible by heads {}", out.model.hidden, out.model.heads));
    out.config = workload::inference_from(s.scenario.section("inference"), s.scenario.seed);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  if (!out.config.lengths_file.empty()) {
    // The file gives every request's lengths: a fixed length beside it would be dropped without a word.
    for (const char* k : {"prompt", "prompt_max", "output", "output_max"}) {
      const std::string key = std::string("inference.") + k;
      if (!s.scenario.given(key)) continue;
      const auto by = s.scenario.from_set.find(key);
      throw InputError(fmt::format(
          "{}: inference.lengths_file ({}) gives each request's prompt and output tokens, so {} would be ignored: "
          "drop {}, or drop the file for lengths drawn from inference.prompt and output",
          s.scenario.where(key), out.config.lengths_file, key,
          by != s.scenario.from_set.end() && !by->second.empty() ? by->second : key));
    }
    // Written in the scenario file: relative to that file, as its reader expects; given with --set (or a
    // built-in scenario): relative to the working directory, as any path on a command line.
    namespace fs = std::filesystem;
    fs::path path(out.config.lengths_file);
    std::error_code ec;
    // A --config-add fragment's: relative to the fragment.
    const std::string key = "inference.lengths_file";
    if (path.is_relative() && !s.scenario.from_set.count(key)) {
      if (const auto f = s.scenario.from_fragment.find(key); f != s.scenario.from_fragment.end())
        path = fs::path(f->second.first).parent_path() / path;
      else if (fs::is_regular_file(s.scenario.source, ec)) path = fs::path(s.scenario.source).parent_path() / path;
    }
    const std::string label = fs::absolute(path, ec).lexically_normal().string();
    workload::use_request_lengths(
        out.config,
        workload::parse_request_lengths(read_input_file(label, s.scenario.where("inference.lengths_file") + " " + label,
                                                        "a CSV file of prompt and output tokens per request"),
                                        label));
  }
  out.fabric_gpus = static_cast<int64_t>(s.fabric.gpus.size());
  // A layout nobody chose (inference.tp and pp at their defaults) that cannot hold the weights (Llama 3 405B on one
  // TP8 server): more pipeline stages, doubling, while the fabric holds the replicas. A layout given is kept.
  if (!s.scenario.given("inference.tp") && !s.scenario.given("inference.pp")) {
    workload::InferenceConfig& d = out.config;
    const int64_t from = d.pp;
    while (workload::ServingCost(out.model, out.gpu, d).kv_capacity_tokens() <= 0 && d.pp < 64) {
      d.pp *= 2;
      if (d.gpus() > out.fabric_gpus) {
        d.pp /= 2;
        break;
      }
    }
    if (d.pp != from) out.pp_raised_from = from;
  }
  const workload::InferenceConfig& c = out.config;
  // One layout or the other: co-located replicas, or a prefill and a decode pool. A count given for the layout
  // not chosen would be ignored without a word (--replicas 4 --disaggregated 1:1 served 2 replicas). A count at
  // its default (1) is what a resolved scenario writes for every key: no conflict.
  if (c.disaggregated && s.scenario.given("inference.replicas") && c.replicas != 1)
    throw InputError(fmt::format("{}: co-located replicas, but the layout is disaggregated (inference.disaggregated, "
                                 "--disaggregated P:D), whose pools are inference.prefill_replicas and "
                                 "decode_replicas; expected one of the two layouts",
                                 s.scenario.where("inference.replicas")));
  if (!c.disaggregated)
    for (const auto& [key, count] : {std::pair{"inference.prefill_replicas", c.prefill_replicas},
                                     std::pair{"inference.decode_replicas", c.decode_replicas}})
      if (s.scenario.given(key) && count != 1)
        throw InputError(fmt::format("{}: a pool of a disaggregated layout, but the replicas are co-located; expected "
                                     "inference.disaggregated=true (--disaggregated P:D) or inference.replicas",
                                     s.scenario.where(key)));
  if (c.gpus() > out.fabric_gpus)
    throw InputError(fmt::format("{}: the serving layout needs {} GPUs ({} x {} per replica, {} replicas), the fabric "
                                 "has {}: fewer replicas, or a larger fabric (topology.gpus)",
                                 s.scenario.where(c.disaggregated ? "inference.decode_replicas" : "inference.replicas"),
                                 thousands(c.gpus()), c.tp, c.pp,
                                 c.disaggregated ? c.prefill_replicas + c.decode_replicas : c.replicas,
                                 thousands(out.fabric_gpus)));
  const workload::ServingCost cost(out.model, out.gpu, c);
  try {
    workload::check_serving(cost, c);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  out.weight_bytes_per_gpu = cost.weight_bytes_per_gpu();
  out.kv_bytes_per_token = cost.kv_bytes_per_token();
  out.kv_capacity_tokens = cost.kv_capacity_tokens();
  return out;
}

}  // namespace

void check_inference(const scenario::Setup& s) { (void)prepared(s); }

InferenceStudy inference(const scenario::Setup& s, const Progress& progress) {
  InferenceStudy out = prepared(s);
  const workload::InferenceConfig& c = out.config;
  const topology::Topology& topo = s.fabric;
  const workload::ServingCost cost(out.model, out.gpu, c);

  // The network's part of a pass, timed on the fabric (see the header), memoized per size.
  auto backend = engine::make_backend(s.engine, topo, s.network);
  const int64_t n = c.tp * c.pp;
  collective::Group tp_group;
  for (int64_t i = 0; i < c.tp; ++i) tp_group.push_back(static_cast<int32_t>(i));
  const char* algorithm = s.collective.tuner ? "auto" : "ring";
  // One engine run per kind of plan and size.
  std::map<Bytes, Time> all_reduce, all_to_all, pp_send, kv_send;
  const auto timed = [&](std::map<Bytes, Time>& seen, Bytes bytes, const auto& make) {
    if (auto it = seen.find(bytes); it != seen.end()) return it->second;
    return seen.emplace(bytes, backend->run(make(bytes)).makespan).first->second;
  };
  const auto collective_plan = [&](collective::Op op) {
    return [&, op](Bytes bytes) {
      return collective::make_plan(op == collective::Op::AllToAll ? collective::default_algorithm(op) : algorithm, op,
                                   tp_group, bytes, s.collective, topo);
    };
  };
  const auto p2p_plan = [](const std::vector<std::pair<int32_t, int32_t>>& pairs) {
    return [pairs](Bytes each) {
      plan::TransferPlan plan;
      for (const auto& [a, b] : pairs) {
        plan::Transfer t;
        t.ranks = {a, b};
        t.bytes = each;
        plan.add(t);
      }
      return plan;
    };
  };
  const int64_t h = out.model.hidden, l = out.model.layers;
  workload::ServingNetwork net;
  net.pass = [&](int64_t tokens) {
    Time total;
    const Bytes act = tokens * h * 2;
    if (c.tp > 1) {
      const Time ar = timed(all_reduce, act, collective_plan(collective::Op::AllReduce));
      if (out.model.moe()) {
        const Bytes per_rank = std::max<Bytes>(1, tokens * out.model.top_k * h * 2 / c.tp);
        const Time a2a = timed(all_to_all, per_rank, collective_plan(collective::Op::AllToAll));
        total = total + (ar + a2a * 2) * l;
      } else {
        total = total + ar * (2 * l);
      }
    }
    if (c.pp > 1) total = total + timed(pp_send, act, p2p_plan({{0, static_cast<int32_t>(c.tp)}})) * (c.pp - 1);
    return total;
  };
  std::vector<std::pair<int32_t, int32_t>> kv_pairs;
  for (int64_t i = 0; i < n; ++i)
    kv_pairs.emplace_back(static_cast<int32_t>(i), static_cast<int32_t>(c.prefill_replicas * n + i));
  const auto server = [&](int64_t rank) { return topo.nodes[topo.gpus[static_cast<size_t>(rank)]].server; };
  for (int64_t i = 1; i < n; ++i) out.fabric_carries = out.fabric_carries || server(i) != server(0);
  if (c.disaggregated)
    for (const auto& [a, b] : kv_pairs) out.fabric_carries = out.fabric_carries || server(a) != server(b);
  net.kv_transfer = [&](int64_t prompt) {
    const auto bytes = static_cast<Bytes>(static_cast<double>(prompt) * cost.kv_bytes_per_token());
    return timed(kv_send, std::max<Bytes>(1, bytes / n), p2p_plan(kv_pairs));
  };
  // Prefill sizes rounded up to a multiple of 64 tokens for the timing: a few dozen sizes, not thousands.
  workload::ServingNetwork quantized = net;
  quantized.pass = [&](int64_t tokens) { return net.pass(tokens > c.max_batch ? (tokens + 63) / 64 * 64 : tokens); };

  // One request alone, of the stream's median prompt: the range's middle for lengths uniform in [prompt,
  // prompt_max] (it took the shortest, 1,024 of 1,024-4,096), the file's median for a lengths file.
  int64_t s0 = c.prompt_lo + (c.prompt_hi - c.prompt_lo) / 2;
  if (c.lengths) {
    std::vector<int64_t> prompts;
    prompts.reserve(c.lengths->size());
    for (const auto& [p, o] : *c.lengths) prompts.push_back(p);
    std::nth_element(prompts.begin(), prompts.begin() + static_cast<std::ptrdiff_t>(prompts.size() / 2), prompts.end());
    s0 = prompts[prompts.size() / 2];
  }
  out.single_prompt = s0;
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
  if (c.target.any()) {
    out.searched = true;
    try {
      out.search = workload::search_rate(cost, c, quantized, [&](int run, double rate, bool met, int total) {
        if (progress.step)
          progress.step(static_cast<size_t>(run), 0,  // a search: its run count is not known ahead
                        fmt::format("rate search run at {:.4g} requests/s ({})", rate, met ? "met" : "missed"));
      });
    } catch (const ParamError& e) {
      throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
    }
  }
  return out;
}

}  // namespace podnet::study
