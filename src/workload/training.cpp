#include "workload/training.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numbers>
#include <optional>
#include <regex>
#include <tuple>

#include "collective/nccl/tuner.hpp"
#include "collective/pairwise.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "workload/schedule.hpp"

namespace podnet::workload {

namespace {

// An FP8 cast of a BF16 element (TransformerEngine's cast-transpose): read 2 bytes, write the FP8 copy and its
// transpose (Hopper's FP8 GEMMs take one layout only, so the backward's GEMMs need the transposed copy).
constexpr double kFp8CastBytes = 4;
constexpr double kAdamBytesPerParam = 28;     // fp32 master, m, v read + written (24), grad read (2), param written (2)
constexpr double kGradNormBytesPerParam = 4;  // the fp32 gradient read once for its squared norm

Time seconds(double s) { return Time::from_seconds(s); }

collective::Group gpus_of(const std::vector<int32_t>& gpu_of_rank, const std::vector<int64_t>& ranks) {
  collective::Group g;
  g.reserve(ranks.size());
  for (int64_t r : ranks) g.push_back(gpu_of_rank[static_cast<size_t>(r)]);
  return g;
}

// NCCL's own time for an all-reduce of `bytes` over `g` (its tuner's pick among the all-reduce algorithms podnet
// builds, nccl/tuner.hpp): the scalar all-reduces of the fixed costs, which are latency (training.hpp).
Time nccl_allreduce_time(const collective::Group& g, Bytes bytes, const topology::Topology& topo,
                         const collective::Options& o) {
  if (g.size() < 2) return Time();
  const collective::Choice c = collective::tune(collective::Op::AllReduce, collective::comm_shape(g, topo, o.arch),
                                                bytes, o.selection,
                                                collective::tuner_candidates(collective::Op::AllReduce));
  return c.time_us > 0 ? seconds(c.time_us * 1e-6) : Time();
}

// Runs a plan alone on an idle network and returns its makespan.
Time time_plan(engine::NetworkBackend& backend, const plan::TransferPlan& plan) {
  if (plan.transfers.empty()) return Time();
  return backend.run(plan).makespan;
}

// Appends `sub` to `dst`, shifting its dependency indices; transfers of `sub`
// without dependencies get `deps`. Returns the indices of sub's sinks.
std::vector<int32_t> merge(plan::TransferPlan& dst, const plan::TransferPlan& sub, const std::vector<int32_t>& deps,
                           const std::string& label_prefix) {
  if (static_cast<int64_t>(dst.transfers.size() + sub.transfers.size()) > kMaxPlanTransfers)
    throw InputError(fmt::format("one iteration of this job would be more than {} transfers, podnet's limit (gigabytes "
                                 "and minutes on the flow engine): shrink the job (experts, ep, microbatches, "
                                 "gradient buckets) or its GPUs",
                                 thousands(kMaxPlanTransfers)));
  const auto base = static_cast<int32_t>(dst.transfers.size());
  std::vector<char> has_dependents(sub.transfers.size(), 0);
  for (const auto& t : sub.transfers) {
    plan::Transfer c = t;
    if (c.deps.empty()) {
      c.deps = deps;
    } else {
      for (auto& d : c.deps) {
        has_dependents[static_cast<size_t>(d)] = 1;
        d += base;
      }
    }
    c.label = label_prefix + c.label;
    dst.transfers.push_back(std::move(c));
  }
  std::vector<int32_t> sinks;
  for (size_t i = 0; i < sub.transfers.size(); ++i)
    if (!has_dependents[i]) sinks.push_back(base + static_cast<int32_t>(i));
  return sinks;
}

// The compute model (training.hpp) of one GPU for one microbatch of `job`: per token of it, a layer's forward and
// its parts, and a chunk's forward and backward from them.
struct ComputeModel {
  double tokens = 0, eta = 1, t = 1, rate = 0, gemm_rate = 0;
  double layer_f = 0, core_f = 0, logits_f = 0;                    // FLOPs per token
  double layer_s = 0, core_s = 0, cast_fwd_s = 0, cast_bwd_s = 0;  // seconds per token
  double layer_overhead = 0;
  bool full = false, selective = false, fp8 = false;

  // Forward (its FP8 casts included) and backward seconds of a chunk of `lc` layers, with the LM head or not.
  std::pair<double, double> chunk(double lc, bool head) const {
    // What a step sustains (training.hpp): the kernels at eta of their modelled speed, plus the fixed
    // overhead per layer pass (twice per backward, once more for a full recompute's forward).
    const double lo = layer_overhead * lc;
    const double fwd = tokens * (lc * layer_s + (head ? logits_f / t / rate : 0.0)) / eta + lo;
    const double again = full ? tokens * lc * layer_s / eta + lo : selective ? tokens * lc * core_s / eta : 0.0;
    double bwd = 2 * fwd + again;
    // FP8's casts: the backward's are its own (the output gradients), not twice the forward's; a full
    // recompute casts the forward's inputs again.
    const double casts_fwd = tokens * lc * cast_fwd_s / eta;
    if (fp8) bwd += tokens * lc * cast_bwd_s / eta + (full ? casts_fwd : 0.0);
    return {fwd + casts_fwd, bwd};
  }
};

ComputeModel compute_model(const Job& job) {
  const ModelSpec& m = job.model;
  const double rate = job.gpu.peak_flops * job.compute_efficiency;
  const int64_t seq_local = m.seq / job.cp;  // tokens of each sequence on one CP rank
  const double tokens = static_cast<double>(job.microbatch * seq_local);
  const double t = static_cast<double>(job.tp);
  const bool full = job.recompute == Recompute::Full, selective = job.recompute == Recompute::Selective;
  const double layer_f = m.layer_forward_flops_per_token(), logits_f = m.logits_forward_flops_per_token();
  // Per token on this CP rank: its queries see all s keys, so a layer's FLOPs split evenly over the CP ranks.
  const double core_f = m.attention_core_forward_flops_per_token();
  // Seconds per token of one layer's forward on one GPU (training.hpp, the compute model): GEMMs at
  // compute_efficiency, the attention core at attention_efficiency on its causal half (or with the GEMMs
  // when unset), the element-wise kernels' bytes at HBM bandwidth.
  const double eta = job.sustained_fraction;
  // Unfused attention (no FlashAttention): the counted 4 s h at the GEMM rate, plus its a s scores per token
  // through HBM (training.hpp: 13 bytes per score with dropout, 8 without, at bytes_per_param 2).
  const double score_bytes = (m.dropout ? 6.5 : 4.0) * static_cast<double>(job.bytes_per_param);
  const double core_s =
      !job.flash_attention
          ? core_f / t / rate + (job.gpu.hbm_bandwidth > 0 ? score_bytes * static_cast<double>(m.heads) / t *
                                                                 static_cast<double>(m.seq) / job.gpu.hbm_bandwidth
                                                           : 0.0)
      : job.attention_efficiency > 0 ? core_f / 2 / t / (job.gpu.peak_flops * job.attention_efficiency)
                                     : core_f / t / rate;
  // Seconds per token to move `bytes` per element of `e` through HBM on one GPU: the hidden-width elements split
  // over TP only with sequence parallelism, the TP-sharded ones always.
  const auto hbm_seconds = [&](const ModelSpec::Elementwise& e, double bytes) {
    return (e.replicated / (job.sequence_parallel ? t : 1.0) + e.split / t) * bytes / job.gpu.hbm_bandwidth;
  };
  double elementwise_s = 0;
  if (job.memory_bound_ops && job.gpu.hbm_bandwidth > 0)
    elementwise_s = hbm_seconds(m.elementwise_elements_per_token(), static_cast<double>(job.bytes_per_param));
  // The transformer layers' GEMMs run at the precision's peak (FP8: TransformerEngine's; the LM head, the attention
  // core and the unfused core stay at the BF16 rate), and FP8's casts move 4 bytes an element (training.hpp).
  const bool fp8 = job.precision == Precision::Fp8;
  const double gemm_rate = fp8 ? job.gpu.fp8_peak_flops * job.fp8_efficiency : rate;
  double cast_fwd_s = 0, cast_bwd_s = 0;
  if (fp8 && job.memory_bound_ops && job.gpu.hbm_bandwidth > 0) {
    const ModelSpec::Fp8Casts c = m.fp8_cast_elements_per_token();
    cast_fwd_s = hbm_seconds(c.forward, kFp8CastBytes);
    cast_bwd_s = hbm_seconds(c.backward, kFp8CastBytes);
  }
  const double layer_s = (layer_f - core_f) / t / gemm_rate + core_s + elementwise_s;
  return ComputeModel{tokens,  eta,    t,          rate,       gemm_rate,          layer_f, core_f,    logits_f,
                      layer_s, core_s, cast_fwd_s, cast_bwd_s, job.layer_overhead, full,    selective, fp8};
}

}  // namespace

double layer_compute_seconds(const Job& job) {
  const auto [f, b] = compute_model(job).chunk(1, false);
  return f + b;
}

double head_compute_seconds(const Job& job) {
  const auto [f, b] = compute_model(job).chunk(0, true);
  return f + b;
}

IterationTimes iteration_times(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                               engine::NetworkBackend& backend, const TrainOptions& options) {
  const ModelSpec& m = job.model;
  IterationTimes it;
  const ComputeModel cm = compute_model(job);
  const double rate = cm.rate, tokens = cm.tokens, t = cm.t;
  const int64_t seq_local = m.seq / job.cp;  // tokens of each sequence on one CP rank
  const int64_t last_vs = job.pp * job.interleave - 1;
  const Bytes bsh = job.microbatch * seq_local * m.hidden * job.bytes_per_param;
  const bool full = job.recompute == Recompute::Full;

  // One TP collective (all-reduce, or reduce-scatter + all-gather with sequence parallelism), as NCCL's tuner
  // picks it (NVLS for an all-reduce inside one H100 server, ring for the reduce-scatter and all-gather there);
  // without NCCL's model (collective.nccl_model: false) the plain ring.
  const char* tp_algorithm = options.collective.tuner ? "auto" : "ring";
  if (job.tp > 1) {
    const collective::Group g = gpus_of(gpu_of_rank, tp_group(job, 0, 0));
    if (job.sequence_parallel) {
      using collective::Op;
      it.tp_collective =
          time_plan(backend, collective::make_plan(tp_algorithm, Op::ReduceScatter, g, bsh, options.collective, topo)) +
          time_plan(backend, collective::make_plan(tp_algorithm, Op::AllGather, g, bsh, options.collective, topo));
    } else {
      it.tp_collective = time_plan(backend, collective::make_plan(tp_algorithm, collective::Op::AllReduce, g, bsh,
                                                                  options.collective, topo));
    }
  }
  // One EP all-to-all, every EP group of every stage at once (the header's ASSUMPTION), a group's stages
  // together so that a plan cut short at kEpTransfers still loads whole servers.
  if (m.moe() && job.ep > 1) {
    const Volumes v = volumes(job);
    plan::TransferPlan all;
    const char* algo = collective::default_algorithm(collective::Op::AllToAll);
    for (int64_t k = 0; k < job.dp / job.ep && all.transfers.size() < kEpTransfers; ++k)
      for (int64_t j = 0; j < job.tp && all.transfers.size() < kEpTransfers; ++j)
        for (int64_t s = 0; s < job.pp; ++s) {
          const collective::Group g = gpus_of(gpu_of_rank, ep_group(job, j, k, s));
          merge(all,
                collective::make_plan(algo, collective::Op::AllToAll, g, v.ep_alltoall_bytes, options.collective, topo),
                {}, "");
        }
    it.ep_collective = time_plan(backend, all);
  }
  // One ring-attention step: every CP rank of replica 0's stage 0 sends its KV block to the next, t TP ranks at once.
  Time cp_exposed_per_layer;
  if (job.cp > 1) {
    const Volumes v = volumes(job);
    plan::TransferPlan step;
    for (int64_t c = 0; c < job.cp; ++c) {
      plan::Transfer tr;
      tr.kind = plan::TransferKind::Coupled;
      for (int64_t j = 0; j < job.tp; ++j) {
        const int32_t a = gpu_of_rank[static_cast<size_t>(job.rank(j, c, 0))];
        const int32_t b = gpu_of_rank[static_cast<size_t>(job.rank(j, (c + 1) % job.cp, 0))];
        tr.edges.emplace_back(a, b);
        tr.ranks.push_back(a);
        tr.ranks.push_back(b);
      }
      std::sort(tr.ranks.begin(), tr.ranks.end());
      tr.ranks.erase(std::unique(tr.ranks.begin(), tr.ranks.end()), tr.ranks.end());
      tr.bytes = v.cp_kv_bytes;
      tr.qps = options.collective.qps;
      tr.label = fmt::format("cp kv {}->{}", c, (c + 1) % job.cp);
      step.add(std::move(tr));
    }
    it.cp_step = time_plan(backend, step);
    const double sl = static_cast<double>(seq_local);
    const double block_f = 4.0 * static_cast<double>(job.microbatch) * sl * sl * static_cast<double>(m.hidden) / t;
    const Time block = seconds((job.attention_efficiency > 0 && job.flash_attention
                                    ? block_f / 2 / (job.gpu.peak_flops * job.attention_efficiency)
                                    : block_f / rate) /
                               job.sustained_fraction);
    if (it.cp_step > block) cp_exposed_per_layer = (it.cp_step - block) * (job.cp - 1);
  }
  const double layer_f = cm.layer_f, core_f = cm.core_f, eta = cm.eta, gemm_rate = cm.gemm_rate;
  it.ops.assign(static_cast<size_t>(job.pp), std::vector<OpTimes>(static_cast<size_t>(job.interleave)));
  it.optimizer.assign(static_cast<size_t>(job.pp), Time());
  const int64_t tp_per_layer_fwd = 2, tp_per_layer_bwd = full ? 4 : 2;
  for (int64_t i = 0; i < job.pp; ++i) {
    for (int64_t c = 0; c < job.interleave; ++c) {
      const int64_t vs = c * job.pp + i;
      const int64_t layers = job.layers_of(i, c);
      const double lc = static_cast<double>(layers);
      const auto [fwd_all, bwd] = cm.chunk(lc, vs == last_vs);
      OpTimes& o = it.ops[static_cast<size_t>(i)][static_cast<size_t>(c)];
      o.fwd_compute = seconds(fwd_all);
      o.bwd_compute = seconds(bwd);
      o.fwd_tp = it.tp_collective * (tp_per_layer_fwd * layers);
      o.bwd_tp = it.tp_collective * (tp_per_layer_bwd * layers);
      if (job.tp_comm_overlap) {  // each layer's TP collectives hide behind its GEMMs (training.hpp)
        const double gemm_f = tokens * (layer_f - core_f) / t / gemm_rate / eta;
        const double gemm_b = (full ? 3.0 : 2.0) * gemm_f;
        const auto hidden = [&](Time comm_per_layer, double gemm_s) {
          return seconds(std::max(0.0, comm_per_layer.seconds() - gemm_s) * lc);
        };
        o.fwd_tp = hidden(it.tp_collective * tp_per_layer_fwd, gemm_f);
        o.bwd_tp = hidden(it.tp_collective * tp_per_layer_bwd, gemm_b);
      }
      o.fwd_ep = it.ep_collective * (2 * layers);
      o.bwd_ep = it.ep_collective * ((full ? 4 : 2) * layers);
      o.fwd_cp = cp_exposed_per_layer * layers;
      o.bwd_cp = cp_exposed_per_layer * ((full ? 3 : 2) * layers);
    }
    const double owned = stage_params(job, i).total() / (job.zero >= 1 ? static_cast<double>(job.replicas()) : 1.0);
    it.optimizer[static_cast<size_t>(i)] = seconds(owned * kAdamBytesPerParam / job.gpu.hbm_bandwidth);
    it.grad_norm_local.push_back(seconds(owned * kGradNormBytesPerParam / job.gpu.hbm_bandwidth));
  }
  // The scalar all-reduces (training.hpp, "Fixed costs"): the gradient norm over the grad-stats group (the whole job
  // with the distributed optimizer, else replica 0's model-parallel ranks), the logging loss over the last stage's
  // DP x CP group.
  {
    collective::Group stats(gpu_of_rank.begin(), gpu_of_rank.end());
    if (job.zero == 0) {
      std::vector<int64_t> model_parallel;
      for (int64_t s = 0; s < job.pp; ++s)
        for (int64_t t = 0; t < job.tp; ++t) model_parallel.push_back(job.rank(t, 0, s));
      stats = gpus_of(gpu_of_rank, model_parallel);
    }
    it.grad_norm_reduce = nccl_allreduce_time(stats, 4, topo, options.collective);
    if (job.loss_reduce != LossReduce::None)
      it.loss_reduce =
          nccl_allreduce_time(gpus_of(gpu_of_rank, dp_group(job, 0, job.pp - 1)), 8, topo, options.collective);
  }
  it.pp_p2p_bytes = job.pp > 1 ? bsh : 0;
  // Gradient buckets per chunk.
  it.buckets.assign(static_cast<size_t>(job.pp),
                    std::vector<std::vector<GradBucket>>(static_cast<size_t>(job.interleave)));
  if (job.replicas() > 1) {
    const double bucket = static_cast<double>(job.dp_bucket_params());
    const collective::Op reduce = job.zero == 0 ? collective::Op::AllReduce : collective::Op::ReduceScatter;
    const double e = static_cast<double>(job.bytes_per_grad), ep = static_cast<double>(job.bytes_per_param);
    for (int64_t i = 0; i < job.pp; ++i)
      for (int64_t c = 0; c < job.interleave; ++c) {
        const StageParams cp = chunk_params(job, i, c);
        const auto k_n = std::max<int64_t>(1, static_cast<int64_t>(std::ceil(cp.total() / bucket)));
        auto& list = it.buckets[static_cast<size_t>(i)][static_cast<size_t>(c)];
        for (int64_t k = 0; k < k_n; ++k) {
          const double ready = static_cast<double>(k + 1) / static_cast<double>(k_n);
          const auto name = fmt::format("c{} b{}", c, k);
          const double n = static_cast<double>(k_n);
          list.push_back({reduce, false, static_cast<Bytes>(std::ceil(cp.dense * e / n)), ready, name,
                          static_cast<Bytes>(std::ceil(cp.dense * ep / n))});
          if (cp.expert > 0 && job.dp / job.ep > 1)
            list.push_back({reduce, true, static_cast<Bytes>(std::ceil(cp.expert * e / n)), ready, name + " expert",
                            static_cast<Bytes>(std::ceil(cp.expert * ep / n))});
        }
      }
  }
  return it;
}

namespace {

class Builder {
 public:
  Builder(const Job& job, const std::vector<int32_t>& gpu, const topology::Topology& topo, const IterationTimes& times,
          const TrainOptions& opt)
      : job_(job), gpu_(gpu), topo_(topo), times_(times), opt_(opt), dp_options_(opt.collective) {
    // PAT's steps as one transfer each (collective/pat.hpp): the data-parallel groups of a large job with one GPU
    // a server would otherwise fill the plan (128 GPUs, 8 channels: 7,169 transfers a collective, 8 so). The
    // torus collectives' phases likewise (collective/torus.hpp: 480 rings a collective over 64 chips, 30 so).
    dp_options_.coupled_steps = true;
    P_ = static_cast<int32_t>(job.pp);
    V_ = static_cast<int32_t>(job.interleave);
    M_ = static_cast<int32_t>(job.microbatches());
    T_ = static_cast<int32_t>(job.tp);
    D_ = static_cast<int32_t>(job.replicas());
  }

  IterationPlan build() {
    ip_.chain.assign(static_cast<size_t>(P_), {});
    ops_.assign(static_cast<size_t>(P_) * V_ * M_ * 2, OpRec{});
    pieces_.assign(static_cast<size_t>(P_) * V_, {});
    fractions_.assign(static_cast<size_t>(P_) * V_, {1.0});
    for (int32_t i = 0; i < P_; ++i)
      for (int32_t c = 0; c < V_; ++c) {
        auto& f = fractions_[static_cast<size_t>(i) * V_ + c];
        for (const auto& b : chunk_buckets(i, c)) f.push_back(std::clamp(b.ready, 1e-9, 1.0));
        std::sort(f.begin(), f.end());
        f.erase(std::unique(f.begin(), f.end()), f.end());
      }
    for (int32_t i = 0; i < P_; ++i) build_chain(i);
    add_p2p();
    for (int32_t i = 0; i < P_; ++i) add_dp(i);
    // The gradient norm's all-reduce spans every stage: each waits for every stage's own norm (a barrier).
    for (int32_t ar : norm_reduce_) {
      auto& d = ip_.plan.transfers[static_cast<size_t>(ar)].deps;
      for (int32_t local : norm_local_)
        if (std::find(d.begin(), d.end(), local) == d.end()) d.push_back(local);
    }
    ip_.norm_local = norm_local_;
    ip_.plan.op = "training-iteration";
    ip_.plan.algorithm = "1f1b";
    ip_.plan.ranks = static_cast<int32_t>(job_.gpus());
    return std::move(ip_);
  }

 private:
  struct OpRec {
    int32_t first = -1, last = -1;
  };
  size_t op_index(int32_t stage, int32_t chunk, int32_t mb, bool fwd) const {
    return ((static_cast<size_t>(stage) * V_ + chunk) * M_ + mb) * 2 + (fwd ? 1 : 0);
  }
  int32_t rep(int32_t stage) const { return gpu_[static_cast<size_t>(job_.rank(0, 0, stage))]; }
  // Every GPU of a stage (all TP ranks of all DP replicas): they run the
  // stage's compute in lockstep, so a straggler among them slows it. One
  // list a stage, which every compute op of the stage shares (8,192 GPUs a
  // stage at 131,072 GPUs: 32 KB that each of its thousands of ops copied).
  const SharedVector<int32_t>& stage_gpus(int32_t stage) {
    if (stage_gpus_.empty()) stage_gpus_.resize(static_cast<size_t>(job_.pp));
    auto& list = stage_gpus_[static_cast<size_t>(stage)];
    if (list.empty()) {
      std::vector<int32_t> v;
      v.reserve(static_cast<size_t>(job_.replicas() * job_.tp));
      v.push_back(rep(stage));  // the representative first
      for (int64_t d = 0; d < job_.replicas(); ++d)
        for (int64_t t = 0; t < job_.tp; ++t)
          if (t != 0 || d != 0) v.push_back(gpu_[static_cast<size_t>(job_.rank(t, d, stage))]);
      list = std::move(v);
    }
    return list;
  }
  std::vector<SharedVector<int32_t>> stage_gpus_;

  int32_t add(plan::Transfer t, Category c, int32_t stage, int32_t lane) {
    ip_.category.push_back(c);
    ip_.stage.push_back(static_cast<int16_t>(stage));
    ip_.lane.push_back(static_cast<int16_t>(lane));
    const bool weighs = t.kind != plan::TransferKind::Compute;
    weight_.add(t);
    const int32_t idx = ip_.plan.add(std::move(t));
    if (weighs && opt_.plan_guard) opt_.plan_guard(weight_);
    return idx;
  }

  int32_t delay(int32_t stage, Time d, std::string label, Category c, std::vector<int32_t> deps) {
    plan::Transfer t;
    t.kind = plan::TransferKind::Compute;
    t.ranks = stage_gpus(stage);
    t.duration = d;
    t.deps = std::move(deps);
    t.label = std::move(label);
    const int32_t idx = add(std::move(t), c, stage, c == Category::Marker ? -1 : 0);
    ip_.chain[static_cast<size_t>(stage)].push_back(idx);
    return idx;
  }

  const std::vector<GradBucket>& chunk_buckets(int32_t i, int32_t c) const {
    static const std::vector<GradBucket> kNoBuckets;
    if (static_cast<size_t>(i) >= times_.buckets.size() ||
        static_cast<size_t>(c) >= times_.buckets[static_cast<size_t>(i)].size())
      return kNoBuckets;
    return times_.buckets[static_cast<size_t>(i)][static_cast<size_t>(c)];
  }

  // The stage's passes in schedule order, each followed by its TP and EP delays; the
  // last backward of each chunk split into one piece per gradient bucket.
  void build_chain(int32_t i) {
    const auto order = pipeline_order(P_, V_, M_, i);
    int32_t prev = -1;
    if (job_.step_overhead > 0)  // the fixed cost before the first pass (header, "Fixed costs")
      prev = delay(i, Time::from_seconds(job_.step_overhead), "step overhead", Category::Step, {});
    for (const PipeOp& op : order) {
      const OpTimes& t = times_.ops[static_cast<size_t>(i)][static_cast<size_t>(op.chunk)];
      const bool split = !op.forward && op.microbatch == M_ - 1;
      const auto& fr = fractions_[static_cast<size_t>(i) * V_ + op.chunk];
      const auto pieces = static_cast<int64_t>(split ? fr.size() : 1);
      const Time comp = op.forward ? t.fwd_compute : t.bwd_compute;
      const Time tp = op.forward ? t.fwd_tp : t.bwd_tp;
      const Time ep = op.forward ? t.fwd_ep : t.bwd_ep;
      const Time cpx = op.forward ? t.fwd_cp : t.bwd_cp;
      OpRec rec;
      for (int64_t k = 0; k < pieces; ++k) {
        auto part = [&](Time total) {  // the share of the pass between fractions k-1 and k
          if (pieces == 1) return total;
          const double lo = k == 0 ? 0.0 : fr[static_cast<size_t>(k - 1)], hi = fr[static_cast<size_t>(k)];
          const auto a = static_cast<int64_t>(std::llround(static_cast<double>(total.ps) * lo));
          const auto b = k + 1 == pieces ? total.ps
                                         : static_cast<int64_t>(std::llround(static_cast<double>(total.ps) * hi));
          return Time(b - a);
        };
        std::string label = fmt::format("{} c{} mb{}", op.forward ? "F" : "B", op.chunk, op.microbatch);
        if (pieces > 1) label += fmt::format(" [{}/{}]", k + 1, pieces);
        const int32_t f = delay(i, part(comp), label, Category::Compute,
                                prev >= 0 ? std::vector<int32_t>{prev} : std::vector<int32_t>{});
        if (rec.first < 0) rec.first = f;
        prev = f;
        if (tp.ps > 0) prev = delay(i, part(tp), "tp " + label, Category::Tp, {prev});
        if (ep.ps > 0) prev = delay(i, part(ep), "ep " + label, Category::Ep, {prev});
        if (cpx.ps > 0) prev = delay(i, part(cpx), "cp " + label, Category::Cp, {prev});
        if (split) pieces_[static_cast<size_t>(i) * V_ + op.chunk].push_back(prev);
      }
      // The logging loss of each microbatch, all-reduced where it is computed (workload.loss_reduce microbatch).
      if (op.forward && i == P_ - 1 && op.chunk == V_ - 1 && job_.loss_reduce == LossReduce::Microbatch &&
          times_.loss_reduce.ps > 0)
        prev = delay(i, times_.loss_reduce, fmt::format("loss all-reduce mb{}", op.microbatch), Category::Loss, {prev});
      rec.last = prev;
      ops_[op_index(i, op.chunk, op.microbatch, op.forward)] = rec;
    }
  }

  void add_p2p() {
    if (P_ < 2) return;
    const Bytes bsh = times_.pp_p2p_bytes;
    const Bytes per_edge = (bsh + T_ - 1) / T_;
    const int32_t last_vs = P_ * V_ - 1;
    for (int32_t i = 0; i < P_; ++i)
      for (int32_t c = 0; c < V_; ++c)
        for (int32_t mb = 0; mb < M_; ++mb)
          for (int dir = 0; dir < 2; ++dir) {
            const bool fwd = dir == 0;
            const int32_t vs = c * P_ + i;
            if (fwd ? vs == last_vs : vs == 0) continue;
            const int32_t dvs = fwd ? vs + 1 : vs - 1;
            const int32_t dst = dvs % P_, dchunk = dvs / P_;
            const OpRec& from = ops_[op_index(i, c, mb, fwd)];
            const OpRec& to = ops_[op_index(dst, dchunk, mb, fwd)];
            // Every replica's send of this boundary is one transfer: the replicas run the stage in lockstep
            // (one compute transfer per stage), so the receiving pass waits for all of them anyway. One
            // coupled variable of D t edges instead of D transfers keeps every replica's bytes on its links
            // (they still share spines with each other and with the DP rings) at a D-th of the plan.
            // The edges of a stage boundary are the same for every chunk and microbatch: built once per
            // (stage, direction), copied after.
            const plan::Transfer& shape = boundary(i, dst, fwd);
            plan::Transfer t;
            t.kind = shape.kind;
            t.ranks = shape.ranks;
            t.edges = shape.edges;
            // NCCL's p2p rate (collective/pairwise.hpp): a stage boundary's sends are operations of an NCCL
            // communicator (the pipeline group's or the pair's, Job::pp_p2p_comm), whose channels limit them; the
            // edges share one rate, under the slowest edge's limit.
            t.bytes = T_ == 1 ? bsh : per_edge;
            t.max_rate_bps = boundary_cap_[static_cast<size_t>(i) * 2 + (fwd ? 0 : 1)];
            t.qps = opt_.collective.qps;
            t.deps = {from.last};
            t.label = fmt::format("p2p {} vs{}->{} mb{}", fwd ? "act" : "grad", vs, dvs, mb);
            const int32_t idx = add(std::move(t), Category::Pp, i, 1);
            ip_.plan.transfers[static_cast<size_t>(to.first)].deps.push_back(idx);
            ++ip_.p2p_transfers;
          }
  }

  // The endpoints of the p2p from stage i to stage dst (`fwd`: activations, else gradients): P2p between the
  // two representatives when there is one replica of one TP rank, else Coupled over every (replica, TP rank)
  // edge with the sorted participants.
  const plan::Transfer& boundary(int32_t i, int32_t dst, bool fwd) {
    if (boundaries_.empty()) {
      boundaries_.resize(static_cast<size_t>(P_) * 2);
      boundary_cap_.assign(static_cast<size_t>(P_) * 2, 0.0);
    }
    const size_t slot = static_cast<size_t>(i) * 2 + (fwd ? 0 : 1);
    plan::Transfer& t = boundaries_[slot];
    if (!t.ranks.empty()) return t;
    if (opt_.collective.tuner) {  // the slowest edge's limit (NCCL's p2p rate, collective/pairwise.hpp)
      // The communicator: the pipeline group's (batched sends), or the two ranks of each edge (Job::pp_p2p_comm).
      const bool pairwise = job_.pp_p2p_pairwise();
      if (!pp_shape_ && !pairwise) {
        collective::Group g(static_cast<size_t>(P_));
        for (int32_t s = 0; s < P_; ++s) g[static_cast<size_t>(s)] = gpu_[static_cast<size_t>(job_.rank(0, 0, s))];
        pp_shape_ = collective::comm_shape(g, topo_, opt_.collective.arch);
        pp_channels_ = collective::execution_channels(*pp_shape_);
      }
      const Bytes op_bytes = (times_.pp_p2p_bytes + T_ - 1) / T_;
      double cap = 0;  // 0: none
      for (int32_t r = 0; r < D_; ++r)
        for (int32_t j = 0; j < T_; ++j) {
          const int32_t a = gpu_[static_cast<size_t>(job_.rank(j, r, i))];
          const int32_t b = gpu_[static_cast<size_t>(job_.rank(j, r, dst))];
          double c = 0;
          if (pairwise) {
            const collective::CommShape pair = collective::comm_shape({a, b}, topo_, opt_.collective.arch);
            c = collective::nccl_p2p_rate_cap_bps(topo_, a, b, op_bytes, pair, collective::execution_channels(pair),
                                                  opt_.collective);
          } else {
            c = collective::nccl_p2p_rate_cap_bps(topo_, a, b, op_bytes, *pp_shape_, pp_channels_, opt_.collective);
          }
          if (c > 0 && (cap == 0 || c < cap)) cap = c;
        }
      boundary_cap_[slot] = cap;
    }
    if (T_ == 1 && D_ == 1) {
      t.kind = plan::TransferKind::P2p;
      t.ranks = {gpu_[static_cast<size_t>(job_.rank(0, 0, i))], gpu_[static_cast<size_t>(job_.rank(0, 0, dst))]};
      return t;
    }
    t.kind = plan::TransferKind::Coupled;
    t.edges.reserve(static_cast<size_t>(D_) * T_);
    t.ranks.reserve(static_cast<size_t>(D_) * T_ * 2);
    for (int32_t r = 0; r < D_; ++r)
      for (int32_t j = 0; j < T_; ++j) {
        const int32_t a = gpu_[static_cast<size_t>(job_.rank(j, r, i))];
        const int32_t b = gpu_[static_cast<size_t>(job_.rank(j, r, dst))];
        t.edges.emplace_back(a, b);
        t.ranks.push_back(a);
        t.ranks.push_back(b);
      }
    std::sort(t.ranks.begin(), t.ranks.end());
    return t;
  }
  std::vector<plan::Transfer> boundaries_;         // by stage x 2 (forward, backward)
  std::vector<double> boundary_cap_;               // their rate limit (bits/s; 0: none) for NCCL's p2p, the same slots
  std::optional<collective::CommShape> pp_shape_;  // the first pipeline group's communicator
  int32_t pp_channels_ = 0;

  // The DP collectives' algorithm: auto is NCCL's tuner when NCCL's model is on, else the plain ring.
  const char* dp_algorithm() const {
    return opt_.dp_algorithm == "auto" && !opt_.collective.tuner ? "ring" : opt_.dp_algorithm.c_str();
  }

  // A collective of `op` over one DP/EDP group, merged after `deps`; returns its sinks.
  std::vector<int32_t> collective(int64_t key, const collective::Group& g, collective::Op op, Bytes bytes,
                                  const std::vector<int32_t>& deps, int32_t stage, int32_t lane,
                                  const std::string& label) {
    if (g.size() < 2 || bytes <= 0) return deps;
    auto ck = std::make_tuple(key, static_cast<int>(op), bytes);
    auto it = cache_.find(ck);
    if (it == cache_.end())
      it = cache_.emplace(ck, collective::make_plan(dp_algorithm(), op, g, bytes, dp_options_, topo_)).first;
    const size_t before = ip_.plan.transfers.size();
    const plan::TransferPlan& sub = it->second;
    if (static_cast<int64_t>(before + sub.transfers.size()) > kMaxPlanTransfers)  // say which collective, and why
      throw InputError(fmt::format(
          "one iteration of this job would be more than {} transfers, podnet's limit (gigabytes and minutes on the "
          "flow engine): its data-parallel {}s ({} over {} GPUs, {} B: {} transfers each, {} collectives built so "
          "far) fill it: shrink the job (microbatches, gradient buckets: workload.bucket_params) or its GPUs",
          thousands(kMaxPlanTransfers), collective::op_name(op), sub.algorithm,
          thousands(static_cast<int64_t>(g.size())), thousands(bytes),
          thousands(static_cast<int64_t>(sub.transfers.size())), thousands(ip_.dp_collectives)));
    auto sinks = merge(ip_.plan, sub, deps, label);
    for (const auto& t : sub.transfers) weight_.add(t);
    if (opt_.plan_guard) opt_.plan_guard(weight_);
    for (size_t k = before; k < ip_.plan.transfers.size(); ++k) {
      ip_.category.push_back(Category::Dp);
      ip_.stage.push_back(static_cast<int16_t>(stage));
      ip_.lane.push_back(static_cast<int16_t>(lane));
    }
    ++ip_.dp_collectives;
    ++ip_.dp_choices[{collective::op_name(op), sub.algorithm, sub.protocol, sub.channels}];
    return sinks;
  }

  void add_dp(int32_t i) {
    auto& chain = ip_.chain[static_cast<size_t>(i)];
    // Groups of this stage: dense gradients over the t DP groups, expert gradients over the t ep EDP groups.
    struct G {
      int64_t key;
      collective::Group gpus;
      int32_t lane;
      bool expert;
    };
    std::vector<G> groups;
    if (D_ > 1) {
      for (int32_t j = 0; j < T_; ++j)
        groups.push_back({static_cast<int64_t>(i) * T_ + j, gpus_of(gpu_, dp_group(job_, j, i)), 2 + j, false});
      if (job_.dp / job_.ep > 1)
        for (int32_t j = 0; j < T_; ++j)
          for (int64_t e = 0; e < job_.ep; ++e)
            groups.push_back({1'000'000 + (static_cast<int64_t>(i) * T_ + j) * job_.ep + e,
                              gpus_of(gpu_, edp_group(job_, j, e, i)), 2 + j, true});
    }
    // Buckets in the order their gradients become final (the chunks' last backwards in schedule order).
    std::vector<const GradBucket*> buckets;
    std::vector<int32_t> ready;  // the piece each bucket waits for
    for (const PipeOp& op : pipeline_order(P_, V_, M_, i)) {
      if (op.forward || op.microbatch != M_ - 1) continue;
      const auto& fr = fractions_[static_cast<size_t>(i) * V_ + op.chunk];
      const auto& pcs = pieces_[static_cast<size_t>(i) * V_ + op.chunk];
      std::vector<const GradBucket*> list;
      for (const auto& b : chunk_buckets(i, op.chunk)) list.push_back(&b);
      std::stable_sort(list.begin(), list.end(),
                       [](const GradBucket* a, const GradBucket* b) { return a->ready < b->ready; });
      for (const GradBucket* b : list) {
        const double f = std::clamp(b->ready, 1e-9, 1.0);
        const auto k = static_cast<size_t>(std::lower_bound(fr.begin(), fr.end(), f) - fr.begin());
        buckets.push_back(b);
        ready.push_back(pcs[std::min(k, pcs.size() - 1)]);
      }
    }
    if (i == 0) {
      int64_t dense = 0;
      for (const GradBucket* b : buckets) dense += b->expert ? 0 : 1;
      ip_.dp_buckets = dense;
    }
    const int32_t chain_end = chain.back();
    using collective::Op;
    auto fits = [&](const G& g, const GradBucket& b) { return g.expert == b.expert; };
    std::vector<std::vector<int32_t>> tail(groups.size());
    // ZeRO-2 and 3 keep the gradients sharded, so every microbatch's backward reduce-scatters its chunk's
    // buckets (the last one's below, overlapped bucket by bucket); ZeRO-3 also gathers a chunk's parameters
    // before each of its passes (all-gathers run ahead on the group's stream, the pass waits for its own).
    // One stream per group: in schedule order, gathers and reduce-scatters one after another.
    if (job_.zero >= 2 && !groups.empty()) {
      for (const PipeOp& op : pipeline_order(P_, V_, M_, i)) {
        const OpRec& rec = ops_[op_index(i, op.chunk, op.microbatch, op.forward)];
        const auto& cb = chunk_buckets(i, op.chunk);
        if (job_.zero == 3) {
          std::vector<int32_t> sinks;
          for (size_t bi = cb.size(); bi-- > 0;)
            for (size_t gi = 0; gi < groups.size(); ++gi) {
              if (!fits(groups[gi], cb[bi])) continue;
              tail[gi] = collective(groups[gi].key, groups[gi].gpus, Op::AllGather, cb[bi].gather_bytes(), tail[gi], i,
                                    groups[gi].lane,
                                    fmt::format("ag {} c{} mb{} {} ", op.forward ? "F" : "B", op.chunk, op.microbatch,
                                                cb[bi].name));
              sinks.insert(sinks.end(), tail[gi].begin(), tail[gi].end());
            }
          auto& d = ip_.plan.transfers[static_cast<size_t>(rec.first)].deps;
          d.insert(d.end(), sinks.begin(), sinks.end());
        }
        if (op.forward || op.microbatch == M_ - 1) continue;
        for (const GradBucket& b : cb)
          for (size_t gi = 0; gi < groups.size(); ++gi) {
            if (!fits(groups[gi], b)) continue;
            std::vector<int32_t> deps = tail[gi];
            deps.push_back(rec.last);
            tail[gi] = collective(groups[gi].key, groups[gi].gpus, b.op, b.bytes, deps, i, groups[gi].lane,
                                  fmt::format("{} mb{} {} ", collective::op_name(b.op), op.microbatch, b.name));
          }
      }
    }
    // Gradient reduction, bucket by bucket, overlapped with the last backward (without overlap_grad_reduce:
    // after the stage's last pass).
    for (size_t bi = 0; bi < buckets.size(); ++bi) {
      const GradBucket& b = *buckets[bi];
      for (size_t gi = 0; gi < groups.size(); ++gi) {
        if (!fits(groups[gi], b)) continue;
        std::vector<int32_t> deps = tail[gi];
        deps.push_back(job_.overlap_grad_reduce ? ready[bi] : chain_end);
        tail[gi] = collective(groups[gi].key, groups[gi].gpus, b.op, b.bytes, deps, i, groups[gi].lane,
                              fmt::format("{} {} ", collective::op_name(b.op), b.name));
      }
    }
    std::vector<int32_t> opt_deps{chain_end};
    for (const auto& t : tail) opt_deps.insert(opt_deps.end(), t.begin(), t.end());
    if (static_cast<size_t>(i) < times_.grad_norm_local.size()) {  // the gradient norm (training.hpp, "Fixed costs")
      const int32_t local = delay(i, times_.grad_norm_local[static_cast<size_t>(i)], "gradient norm (own shard)",
                                  Category::GradNorm, opt_deps);
      const int32_t reduce = delay(i, times_.grad_norm_reduce, "gradient norm all-reduce", Category::GradNorm, {local});
      norm_local_.push_back(local);
      norm_reduce_.push_back(reduce);
      opt_deps = {reduce};
    }
    const int32_t opt = delay(i, times_.optimizer[static_cast<size_t>(i)], "optimizer", Category::Optimizer, opt_deps);
    std::vector<int32_t> end_deps{opt};
    if (i == P_ - 1 && job_.loss_reduce == LossReduce::Step && times_.loss_reduce.ps > 0)
      end_deps = {delay(i, times_.loss_reduce, "loss all-reduce", Category::Loss, {opt})};
    if (job_.zero == 1 || job_.zero == 2) {
      // Every bucket's all-gather after the optimizer step; with overlap_param_gather only the first bucket the
      // next forward needs (the last whose gradients became final), the others hidden behind that forward.
      std::vector<const GradBucket*> gathered(buckets.begin(), buckets.end());
      if (job_.overlap_param_gather) {  // the last dense and the last expert bucket
        gathered.clear();
        for (bool expert : {false, true})
          for (size_t bi = buckets.size(); bi-- > 0;)
            if (buckets[bi]->expert == expert) {
              gathered.push_back(buckets[bi]);
              break;
            }
      }
      for (auto& t : tail) t = {opt};
      for (const GradBucket* bp : gathered) {
        const GradBucket& b = *bp;
        for (size_t gi = 0; gi < groups.size(); ++gi) {
          if (!fits(groups[gi], b)) continue;
          tail[gi] = collective(groups[gi].key, groups[gi].gpus, Op::AllGather, b.gather_bytes(), tail[gi], i,
                                groups[gi].lane, fmt::format("allgather {} ", b.name));
        }
      }
      for (const auto& t : tail) end_deps.insert(end_deps.end(), t.begin(), t.end());
    }
    delay(i, Time(), "end", Category::Marker, end_deps);
  }

  const Job& job_;
  const std::vector<int32_t>& gpu_;
  const topology::Topology& topo_;
  const IterationTimes& times_;
  const TrainOptions& opt_;
  collective::Options dp_options_;  // opt_.collective for the data-parallel collectives (PAT's steps coupled)
  int32_t P_ = 1, V_ = 1, M_ = 1, T_ = 1, D_ = 1;
  IterationPlan ip_;
  plan::PlanWeight weight_;  // of ip_.plan, for TrainOptions::plan_guard
  std::vector<OpRec> ops_;
  std::vector<std::vector<int32_t>> pieces_;    // [stage * V + chunk]: last transfer of each piece of the last backward
  std::vector<std::vector<double>> fractions_;  // [stage * V + chunk]: where the pieces end (sorted, last = 1)
  std::map<std::tuple<int64_t, int, Bytes>, plan::TransferPlan> cache_;
  std::vector<int32_t> norm_local_, norm_reduce_;  // each stage's gradient-norm ops (own shard, all-reduce)
};

}  // namespace

IterationPlan build_iteration(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                              const IterationTimes& times, const TrainOptions& options) {
  return Builder(job, gpu_of_rank, topo, times, options).build();
}

std::string op_words(const std::string& label) {
  // A pass's compute ("B c0 mb6", "F c1 mb2 [2/3]" when split around a bucket) and the TP, EP and CP
  // communication that follows it ("tp B c0 mb6": add_passes).
  static const std::regex kP2p(R"(p2p (act|grad) vs(\d+)->(\d+) mb(\d+))"),
      kCompute(R"((?:(tp|ep|cp) )?([FB]) c(\d+) mb(\d+)( \[\d+/\d+\])?)"), kKv(R"(cp kv (\d+)->(\d+))"),
      // A data-parallel collective's transfer (add_dp): "{op} c{chunk} b{bucket}[ expert] {step}", ZeRO-2's
      // "{op} mb{m} c.. b.. ..." and ZeRO-3's gathers "ag {F|B} c{chunk} mb{m} c.. b.. ...".
      kDp(R"((?:ag ([FB]) c\d+ mb(\d+)|(allreduce|reducescatter|allgather)(?: mb(\d+))?) c(\d+) b(\d+)( expert)?(?: (.+))?)");
  std::smatch m;
  if (std::regex_match(label, m, kP2p))
    return fmt::format("{} sent, virtual stage {} to {}, microbatch {}", m[1] == "act" ? "activations" : "gradients",
                       m[2].str(), m[3].str(), m[4].str());
  if (std::regex_match(label, m, kCompute)) {
    const std::string part = m[1].matched ? (m[1] == "tp" ? "TP" : m[1] == "ep" ? "EP" : "CP") + std::string(", ") : "";
    return fmt::format("{}{}, chunk {}, microbatch {}{}", part, m[2] == "F" ? "forward" : "backward", m[3].str(),
                       m[4].str(), m[5].matched ? ", piece " + m[5].str().substr(2, m[5].length() - 3) : "");
  }
  if (std::regex_match(label, m, kKv))
    return fmt::format("context-parallel K/V, rank {} to {}", m[1].str(), m[2].str());
  if (std::regex_match(label, m, kDp)) {
    const std::string op = m[3] == "reducescatter" ? "gradient reduce-scatter"
                           : m[3] == "allreduce"   ? "gradient all-reduce"
                                                   : "parameter all-gather";
    std::string when;
    if (m[1].matched)
      when = fmt::format(", before the {} of microbatch {}", m[1] == "F" ? "forward" : "backward", m[2].str());
    else if (m[4].matched) when = fmt::format(", after microbatch {}", m[4].str());
    return fmt::format("data-parallel {}{}, chunk {}, bucket {}{}{}", op, m[7].matched ? " of the experts" : "",
                       m[5].str(), m[6].str(), when, m[8].matched ? " (" + m[8].str() + ")" : "");
  }
  return label;
}

std::string transfer_words(const IterationPlan& ip, int32_t k) {
  const auto i = static_cast<size_t>(k);
  const std::string words = op_words(ip.plan.transfers[i].label);
  // A p2p send names its virtual stages; with one stage there is nothing to tell apart.
  if (ip.chain.size() <= 1 || ip.category[i] == Category::Pp) return words;
  return fmt::format("{}, pipeline stage {}", words, ip.stage[i]);
}

std::vector<Breakdown> stage_breakdowns(const IterationPlan& ip, const engine::RunReport& run) {
  std::vector<Breakdown> out;
  const Time end = run.makespan;
  for (const auto& chain : ip.chain) {
    Breakdown b;
    Time prev;
    for (int32_t idx : chain) {
      const auto& tr = ip.plan.transfers[static_cast<size_t>(idx)];
      const auto& tm = run.transfers[static_cast<size_t>(idx)];
      const Time gap = tm.start - prev;
      if (gap.ps > 0) {
        // The latest-finishing dependency is what the stage waited for.
        int32_t binding = -1;
        for (int32_t d : tr.deps)
          if (binding < 0 ||
              run.transfers[static_cast<size_t>(d)].finish > run.transfers[static_cast<size_t>(binding)].finish)
            binding = d;
        const Category c = binding >= 0 ? ip.category[static_cast<size_t>(binding)] : Category::Compute;
        if (c == Category::Pp) {
          const auto& bt = run.transfers[static_cast<size_t>(binding)];
          const Time inflight = std::min(gap, bt.finish - bt.start);
          b.pp += inflight;
          b.bubble += gap - inflight;
        } else if (c == Category::Dp) {
          b.dp += gap;
        } else {
          b.bubble += gap;
        }
      }
      const Time dur = tm.finish - tm.start;
      switch (ip.category[static_cast<size_t>(idx)]) {
        case Category::Tp: b.tp += dur; break;
        case Category::Ep: b.ep += dur; break;
        case Category::Cp: b.cp += dur; break;
        case Category::Compute: b.compute += dur; break;
        case Category::Optimizer: b.optimizer += dur; break;
        case Category::GradNorm: b.grad_norm += dur; break;
        case Category::Loss: b.loss += dur; break;
        case Category::Step: b.step += dur; break;
        default: break;
      }
      prev = std::max(prev, tm.finish);
    }
    if (end > prev) b.bubble += end - prev;  // idle until the slowest stage ends the iteration
    out.push_back(b);
  }
  return out;
}

TrainResult simulate_training(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                              engine::NetworkBackend& backend, const TrainOptions& options) {
  validate(job, static_cast<int64_t>(topo.gpus.size()));
  if (static_cast<int64_t>(gpu_of_rank.size()) != job.gpus())
    throw Error(fmt::format("internal: placement has {} GPUs for a job of {}", gpu_of_rank.size(), job.gpus()));
  {
    std::vector<char> used(topo.gpus.size(), 0);
    for (int32_t g : gpu_of_rank) {
      if (g < 0 || g >= static_cast<int32_t>(topo.gpus.size()) || used[static_cast<size_t>(g)])
        throw Error(fmt::format("internal: placement maps to GPU {} twice or out of range", g));
      used[static_cast<size_t>(g)] = 1;
    }
  }
  IterationTimes times = iteration_times(job, gpu_of_rank, topo, backend, options);
  if (job.speed_cv <= 0 && job.jitter_cv <= 0 && (job.slow_host_share <= 0 || job.slow_host_forward <= 0))
    return simulate_iteration(job, gpu_of_rank, topo, backend, times, options);
  std::vector<int32_t> server_of_gpu(topo.gpus.size());
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    const int32_t server = topo.nodes[topo.gpus[g]].server;
    server_of_gpu[g] = server >= 0 ? server : static_cast<int32_t>(g);  // a chip of its own (a torus)
  }
  const StageSlowdowns slow = stage_slowdowns(job, gpu_of_rank, server_of_gpu);
  std::vector<Time> added(times.ops.size());
  for (size_t s = 0; s < times.ops.size(); ++s)
    for (OpTimes& o : times.ops[s]) {
      const Time f = Time::from_seconds(o.fwd_compute.seconds() * slow.forward[s]);
      const Time b = Time::from_seconds(o.bwd_compute.seconds() * slow.factor[s]);
      added[s] = added[s] + (f - o.fwd_compute) + (b - o.bwd_compute);
      o.fwd_compute = f;
      o.bwd_compute = b;
    }
  TrainResult r = simulate_iteration(job, gpu_of_rank, topo, backend, times, options);
  r.variability = slow;
  // Per pass of each chunk, times the passes the critical stage makes (m microbatches, forward and backward).
  r.variability_added = added[static_cast<size_t>(r.critical_stage)] * job.microbatches();
  return r;
}

StageSlowdowns stage_slowdowns(const Job& job, const std::vector<int32_t>& gpu_of_rank,
                               const std::vector<int32_t>& server_of_gpu) {
  StageSlowdowns out;
  out.factor.assign(static_cast<size_t>(job.pp), 0.0);
  out.forward.assign(static_cast<size_t>(job.pp), 0.0);
  // Slow hosts: one draw per server of the fabric, in server order.
  std::vector<uint8_t> slow_host;
  if (!server_of_gpu.empty() && job.slow_host_share > 0 && job.slow_host_forward > 0) {
    int32_t servers = 0;
    for (int32_t s : server_of_gpu) servers = std::max(servers, s + 1);
    slow_host.resize(static_cast<size_t>(servers));
    Rng draw = Rng(job.seed).stream("slow-host");
    for (uint8_t& h : slow_host) h = draw.uniform() < job.slow_host_share ? 1 : 0;
    std::vector<uint8_t> used(slow_host.size(), 0);
    for (int32_t g : gpu_of_rank) used[static_cast<size_t>(server_of_gpu[static_cast<size_t>(g)])] = 1;
    for (size_t k = 0; k < used.size(); ++k) {
      out.job_hosts += used[k];
      out.slow_hosts += used[k] && slow_host[k];
    }
  }
  int32_t top = 0;
  for (int32_t g : gpu_of_rank) top = std::max(top, g);
  // Standard normals by Box-Muller from the seed's streams, cut at 4 standard deviations.
  const auto normal = [](Rng& rng) {
    const double u1 = std::max(rng.uniform(), 1e-300), u2 = rng.uniform();
    return std::clamp(std::sqrt(-2 * std::log(u1)) * std::cos(2 * std::numbers::pi * u2), -4.0, 4.0);
  };
  const double sigma = std::sqrt(std::log1p(job.speed_cv * job.speed_cv));
  std::vector<double> speed(static_cast<size_t>(top) + 1);
  Rng per_gpu = Rng(job.seed).stream("gpu-speed");
  for (double& a : speed) a = std::exp(sigma * normal(per_gpu));
  // Step 0's stream is the one every figure before workload.step used; step k > 0 draws its own.
  Rng per_step =
      Rng(job.seed).stream(job.step == 0 ? std::string("step-jitter") : fmt::format("step-jitter-{}", job.step));
  const int64_t replicas = job.replicas();
  for (int64_t stage = 0; stage < job.pp; ++stage)
    for (int64_t rep = 0; rep < replicas; ++rep)
      for (int64_t t = 0; t < job.tp; ++t) {
        const int32_t g = gpu_of_rank[static_cast<size_t>(job.rank(t, rep, stage))];
        const double f = speed[static_cast<size_t>(g)] * std::max(0.0, 1 + job.jitter_cv * normal(per_step));
        out.factor[static_cast<size_t>(stage)] = std::max(out.factor[static_cast<size_t>(stage)], f);
        const bool slow = !slow_host.empty() && slow_host[static_cast<size_t>(server_of_gpu[static_cast<size_t>(g)])];
        out.forward[static_cast<size_t>(stage)] =
            std::max(out.forward[static_cast<size_t>(stage)], slow ? f * (1 + job.slow_host_forward) : f);
        if (f > out.slowest || out.slowest_gpu < 0) {
          out.slowest = f;
          out.slowest_gpu = g;
        }
      }
  return out;
}

TrainResult simulate_iteration(const Job& job, const std::vector<int32_t>& gpu_of_rank, const topology::Topology& topo,
                               engine::NetworkBackend& backend, const IterationTimes& times,
                               const TrainOptions& options, engine::RunReport* run_out) {
  TrainResult r;
  r.job = job;
  r.fabric_gpus = static_cast<int64_t>(topo.gpus.size());
  r.engine = backend.name();
  r.times = times;
  IterationPlan ip = build_iteration(job, gpu_of_rank, topo, r.times, options);
  const engine::RunReport run = backend.run(ip.plan);
  r.iteration = run.makespan;
  r.flows = run.flows;
  r.failures = run.failures;
  r.job_failed = run.job_failed;
  r.failed_at = run.failed_at;
  r.failure = run.failure;
  if (run.failed_transfer >= 0) {  // the transfer's label in words (the trace keeps the label)
    const std::string& label = ip.plan.transfers[static_cast<size_t>(run.failed_transfer)].label;
    const size_t at = label.empty() ? std::string::npos : r.failure.find(label);
    if (at != std::string::npos) r.failure.replace(at, label.size(), transfer_words(ip, run.failed_transfer));
  }
  r.stages = stage_breakdowns(ip, run);
  // The critical stage: the one whose chain ends last, or with the gradient norm's barrier the one the barrier
  // waited for (after it every stage runs only its optimizer, whose lengths would pick a stage by a few ms).
  Time latest;
  const bool barrier = ip.norm_local.size() == ip.chain.size();
  for (size_t s = 0; s < ip.chain.size(); ++s) {
    const Time f = run.transfers[static_cast<size_t>(barrier ? ip.norm_local[s] : ip.chain[s].back())].finish;
    if (f > latest || s == 0) {
      latest = f;
      r.critical_stage = static_cast<int32_t>(s);
    }
  }
  r.breakdown = r.stages[static_cast<size_t>(r.critical_stage)];
  const double T = r.iteration.seconds();
  const double n = static_cast<double>(job.gpus());
  const bool known_model = job.model.layers > 0 && job.model.hidden > 0;  // imported workloads carry no model
  r.model_flops = known_model ? model_flops_per_iteration(job) : 0.0;
  r.hardware_flops = known_model ? hardware_flops_per_iteration(job) : 0.0;
  if (T > 0 && known_model && job.gpu.peak_flops > 0) {
    r.mfu = r.model_flops / (n * job.gpu.peak_flops * T);
    r.hfu = r.hardware_flops / (n * job.gpu.peak_flops * T);
    r.tflops_per_gpu = r.hardware_flops / (n * T) / 1e12;
    r.tokens_per_second = job.tokens_per_iteration() / T;
    r.days_to_train = job.tokens > 0 ? job.tokens / r.tokens_per_second / 86400.0 : 0.0;
  }
  r.ideal_bubble_fraction = static_cast<double>(job.pp - 1) / static_cast<double>(job.interleave * job.microbatches());
  r.groups = group_counts(job);
  if (known_model) r.volumes = volumes(job);
  if (known_model) r.memory = peak_memory(job);
  r.model_params = known_model ? job.model.params() : 0.0;
  r.active_params = known_model ? job.model.active_params() : 0.0;
  r.bucket_params = known_model ? job.dp_bucket_params() : 0;
  r.dp_buckets = ip.dp_buckets;
  r.dp_collectives = ip.dp_collectives;
  r.dp_choices = ip.dp_choices;
  r.p2p_transfers = ip.p2p_transfers;
  r.plan_transfers = static_cast<int64_t>(ip.plan.transfers.size());
  if (options.trace) {
    r.trace_lanes = {"compute", "pp send (every replica)"};
    for (int64_t j = 0; j < job.tp; ++j) r.trace_lanes.push_back(fmt::format("dp (tp rank {})", j));
    std::vector<int32_t> slice_of(ip.plan.transfers.size(), -1);
    for (size_t k = 0; k < ip.plan.transfers.size(); ++k) {
      if (ip.lane[k] < 0) continue;
      const auto& tm = run.transfers[k];
      const auto& tr = ip.plan.transfers[k];
      static constexpr const char* kKinds[] = {"p2p", "ring", "coupled", "compute"};
      slice_of[k] = static_cast<int32_t>(r.trace.size());
      r.trace.push_back({tr.label, category_name(ip.category[k]), ip.stage[k], ip.lane[k], tm.start,
                         tm.finish - tm.start, kKinds[static_cast<int>(tr.kind)], tr.bytes,
                         static_cast<int32_t>(tr.ranks.size()), tr.channel});
    }
    // Arrows: a traced PP send (replica 0's) to the traced op that waits for it (the receiving pass).
    for (size_t k = 0; k < ip.plan.transfers.size(); ++k) {
      if (slice_of[k] < 0 || ip.category[k] == Category::Pp) continue;
      for (int32_t d : ip.plan.transfers[k].deps)
        if (slice_of[static_cast<size_t>(d)] >= 0 && ip.category[static_cast<size_t>(d)] == Category::Pp)
          r.trace_flows.push_back({slice_of[static_cast<size_t>(d)], slice_of[k]});
    }
  }
  if (run_out) *run_out = run;
  return r;
}

}  // namespace podnet::workload
