#include "collective/nccl/transforms.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "collective/collective.hpp"
#include "collective/nccl/pipeline.hpp"
#include "collective/nvls.hpp"
#include "collective/pairwise.hpp"
#include "collective/plan_util.hpp"

namespace podnet::collective {

Bytes wire_bytes(Bytes b, Proto p) {
  switch (p) {
    case Proto::LL: return 2 * b;                             // 4 B data per 8 B line
    case Proto::LL128: return detail::scale_up(b, 128, 120);  // 120 B data per 128 B line
    case Proto::Simple: return b;
  }
  return b;
}

double line_factor(Proto p) { return p == Proto::LL ? 2.0 : p == Proto::LL128 ? 128.0 / 120.0 : 1.0; }

// LL at half of Simple's bandwidth but at most NCCL's LL ceiling, llMaxBws; LL128 at 0.92 of it but at most
// its per-channel ceiling; tree LL at 1/3.8 (nccl/tuner.hpp section 3), and at least the line format's own
// overhead (LL 2, LL128 128/120).
double protocol_slowdown(Op op, Algo a, Proto p, const CommShape& s) {
  if (p == Proto::Simple) return 1.0;
  const double line = line_factor(p);
  const double simple = model_entry(op, a, Proto::Simple, s).bw_gbs;
  const double proto = model_entry(op, a, p, s).bw_gbs;
  if (!(simple > 0) || !(proto > 0)) return line;
  return std::max(line, simple / proto);
}

Bytes wire_bytes(Bytes b, Proto p, double factor) {
  const Bytes exact = wire_bytes(b, p);
  if (factor <= line_factor(p) * (1 + 1e-12)) return exact;
  return std::max(exact, static_cast<Bytes>(std::ceil(static_cast<double>(b) * factor)));
}

plan::TransferPlan with_leading_delay(plan::TransferPlan plan, const Group& group, Time latency, std::string label,
                                      bool hop_latency) {
  if (plan.transfers.empty() || latency.ps <= 0) return plan;
  plan::TransferPlan out;
  out.transfers.reserve(plan.transfers.size() + 1);
  plan::Transfer d;
  d.kind = plan::TransferKind::Compute;
  d.ranks = group;
  std::sort(d.ranks.begin(), d.ranks.end());
  d.duration = latency;
  d.holds_hop_latency = hop_latency;
  d.bytes = 0;
  d.label = std::move(label);
  out.add(std::move(d));
  for (auto& t : plan.transfers) {
    for (auto& dep : t.deps) ++dep;
    if (t.deps.empty()) t.deps.push_back(0);
    out.add(std::move(t));
  }
  return out;
}

Time alltoall_post_latency(const CommShape& s) {
  if (s.ranks <= 1) return Time();
  const int64_t ppn = s.ranks / std::max(1, s.nodes);
  const double us = 2.0 * static_cast<double>(s.ranks - ppn) * 1.0 + static_cast<double>(ppn - 1) * 0.6;
  return Time::from_seconds(us * 1e-6);
}

namespace {

bool tuned(const NcclContext& c, const plan::TransferPlan&) { return c.choice.has_value(); }

bool tuned_ring_or_tree(const NcclContext& c, const plan::TransferPlan&) {
  return c.choice && (c.choice->algo == Algo::Ring || c.choice->algo == Algo::Tree);
}

// The untuned path with NCCL's corrections on (Options::tuner), for one op, on a non-empty plan.
bool untuned_op(const NcclContext& c, const plan::TransferPlan& plan, Op op) {
  return !c.choice && c.op == op && c.options.tuner && !plan.transfers.empty();
}

// NCCL's slice pipeline (nccl/pipeline.hpp) on ring and tree transfers, from their payload bytes.
void slice_pipeline(const NcclContext& c, plan::TransferPlan& plan) {
  set_nccl_pipelines(plan, c.op, c.choice->algo, c.choice->proto, static_cast<int32_t>(c.group.size()), c.bytes,
                     c.options.channels, c.shape);
}

// NCCL's latency term (model_latency) replaces the engines' per-hop latency: the data transfers pay none
// (latency_steps = 0), so a step's latency is not counted twice.
// LL and LL128 move at NCCL's modelled rate for them: the line format's overhead, or more where NCCL's
// model caps the protocol's bandwidth (protocol_slowdown).
// The slowdown's bytes give the modelled rate on the channels the model counts, whose rings carry about
// Simple's modelled bandwidth. On fewer (small sizes, which NCCL runs on fewer channels while keeping the
// model's time: nccl/tuner.hpp section 4) they do not: ring LL over 16 servers of 8 GPUs at 1 to 2 MiB,
// on 2 to 4 of 16 channels, took 1.4-1.7x the model's time, more than the LL128 the tuner had set aside.
// There a ring whose protocol the model caps (LL's llMaxBw, LL128's per-channel ceiling) carries the line
// format's bytes at most at its channel's share of the modelled rate, so that each channel's ring takes
// at least S / algBw, the model's bandwidth time, however few channels run it.
void protocol_bytes(const NcclContext& c, plan::TransferPlan& plan) {
  const Choice& ch = *c.choice;
  const double slowdown = protocol_slowdown(c.op, ch.algo, ch.proto, c.shape);
  const double line = line_factor(ch.proto);
  const bool capped_ring = ch.algo == Algo::Ring && c.options.channels < c.model_channels &&
                           slowdown > line * (1 + 1e-12) && c.bytes > 0;
  const double alg_bytes_per_s = capped_ring ? model_entry(c.op, ch.algo, ch.proto, c.shape).bw_gbs * 1e9 : 0;
  for (auto& t : plan.transfers)
    if (t.kind != plan::TransferKind::Compute) {
      if (capped_ring && t.kind == plan::TransferKind::Ring) {
        t.bytes = wire_bytes(t.bytes, ch.proto);
        const double cap = static_cast<double>(t.bytes) * 8 * alg_bytes_per_s / static_cast<double>(c.bytes);
        t.max_rate_bps = t.max_rate_bps > 0 ? std::min(t.max_rate_bps, cap) : cap;
      } else {
        t.bytes = wire_bytes(t.bytes, ch.proto, slowdown);
      }
      t.latency_steps = 0;
    }
}

// NVLS on one server: the pipeline's fill and drain and its cost per stage, which NCCL's model does not
// price (nvls.hpp); model_latency then takes the fitted launch in place of NCCL's model latency.
bool nvls_fill_applies(const NcclContext& c, const plan::TransferPlan&) {
  return c.choice && c.choice->algo == Algo::Nvls && c.op == Op::AllReduce && nvls_pipeline(c.shape, c.bytes).loops > 0;
}
void nvls_fill(const NcclContext& c, plan::TransferPlan& plan) {
  const NvlsPipeline fill = nvls_pipeline(c.shape, c.bytes);
  plan = with_leading_delay(std::move(plan), c.group, Time::from_seconds((fill.fill_us + fill.stage_cost_us) * 1e-6),
                            fmt::format("pipeline-fill/nvls/chunk-{}", fill.chunk));
}

// The leading delay of NCCL's modelled latency (base + every step's latency, the wire included, as NCCL's
// tuner counts it), marked as holding the transfers' hop latency.
void model_latency(const NcclContext& c, plan::TransferPlan& plan) {
  const Choice& ch = *c.choice;
  const double us = (nvls_fill_applies(c, plan) ? nvls_pipeline(c.shape, c.bytes).launch_us
                                                : model_latency_us(c.op, ch.algo, ch.proto, c.shape, c.bytes)) +
                    network_steps(c.op, ch.algo, c.shape) * c.options.stack_latency_excess_us;
  plan = with_leading_delay(std::move(plan), c.group, Time::from_seconds(us * 1e-6),
                            fmt::format("latency/{}/{}", algo_name(ch.algo), proto_name(ch.proto)), true);
}

// NCCL's sendrecv: a rate per p2p channel, channels by size and communicator (pairwise.hpp).
void sendrecv_channels(const NcclContext& c, plan::TransferPlan& plan) {
  cap_sendrecv_channels(plan, c.topo, c.bytes, c.shape, execution_channels(c.shape), c.options);
}

// NCCL's all-to-all as measured on NVSwitch servers (pairwise.hpp): NVLink below the ring's rate.
void alltoall_nvlink(const NcclContext& c, plan::TransferPlan& plan) { scale_alltoall_nvlink(plan, c.topo); }

// A launch, and the proxy's posts (alltoall_post_latency).
void alltoall_launch(const NcclContext& c, plan::TransferPlan& plan) {
  plan = with_leading_delay(std::move(plan), c.group,
                            alltoall_post_latency(c.shape) + Time::from_seconds(kAlltoallLaunchUs * 1e-6),
                            "latency/alltoall-launch-and-posts");
}

}  // namespace

const std::vector<PlanTransform>& nccl_transforms() {
  static const std::vector<PlanTransform> k = {
      {"slice_pipeline", "NCCL's slice pipeline on ring and tree transfers (nccl/pipeline.hpp)", tuned_ring_or_tree,
       slice_pipeline},
      {"protocol_bytes", "LL and LL128 bytes at NCCL's modelled rate; rings on fewer channels rate-capped", tuned,
       protocol_bytes},
      {"nvls_fill", "an NVLS all-reduce's pipeline fill and cost per stage (nvls.hpp)", nvls_fill_applies, nvls_fill},
      {"model_latency", "a leading delay of NCCL's modelled latency, holding the hops' latency", tuned, model_latency},
      {"sendrecv_channels", "a rate per p2p channel, channels by size (pairwise.hpp)",
       [](const NcclContext& c, const plan::TransferPlan& p) { return untuned_op(c, p, Op::SendRecv); },
       sendrecv_channels},
      {"alltoall_nvlink", "all-to-all bytes inside an NVSwitch server at 1/0.911 (pairwise.hpp)",
       [](const NcclContext& c, const plan::TransferPlan& p) { return untuned_op(c, p, Op::AllToAll); },
       alltoall_nvlink},
      {"alltoall_launch", "a leading delay: the all-to-all's launch and posts",
       [](const NcclContext& c, const plan::TransferPlan& p) { return untuned_op(c, p, Op::AllToAll); },
       alltoall_launch},
  };
  return k;
}

std::vector<std::string> apply_nccl_transforms(const NcclContext& c, plan::TransferPlan& plan) {
  std::vector<std::string> applied;
  for (const PlanTransform& t : nccl_transforms())
    if (t.applies(c, plan)) {
      t.apply(c, plan);
      applied.emplace_back(t.name);
    }
  return applied;
}

}  // namespace podnet::collective
