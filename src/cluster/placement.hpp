// Job placement: which fabric GPU runs each rank of a training job, and
// what that costs the fabric.
//
// Job ranks follow Megatron's order (workload/job.hpp): rank = tp + t (dp +
// d pp), so one pipeline stage's t d ranks (every DP group of the stage) are
// contiguous, and the t ranks of a TP group are consecutive (unless the job
// sets rank_order: tp-cp-pp-dp, which makes each pipeline contiguous).
//
// Policies (registered by name, scenario key `placement.policy`):
// - packed: rank r on GPU r (the first t p d GPUs of the fabric, in the
//   builder's numbering). What a scheduler that ignores the fabric does on an
//   empty cluster.
// - random: the fabric's servers in a random order (Fisher-Yates with the
//   podnet::Rng stream "placement" of the scenario seed), ranks packed into
//   them in order; each server's GPUs in local order, so TP groups stay
//   inside a server when t divides the GPUs per server. Models a scheduler
//   handing out whole nodes without regard to the fabric.
// - topology_aware: GPUs ordered by (pod, aggregation group, server, local
//   GPU); TP groups inside one server (NVLink); then "communication blocks"
//   of consecutive ranks are packed into aggregation groups:
//     * the heavier of DP and PP traffic per GPU (workload::volumes) decides
//       the block: DP-heavy (the usual case) -> a block is one stage's t d
//       ranks, so every DP ring of the stage stays inside as few groups as
//       possible; PP-heavy -> ranks are re-ordered (tp, pp, dp) and a block is
//       one pipeline's t p ranks.
//     * a block that fits in a group goes to the group with the fewest free
//       GPUs that still holds it (best fit, ties to the current pod, then
//       the lowest group), so blocks never straddle a group boundary when
//       they need not; a block larger than a group takes whole free groups,
//       of one pod when it can; leftovers fill the remaining GPUs in order.
//     * a job with `rank_order: tp-cp-pp-dp` is already laid out pipeline by
//       pipeline: its ranks go in order, a block is one pipeline's t c p ranks.
//   Consecutive blocks (consecutive pipeline stages) land in the same pod
//   when they can, so PP p2p avoids the super-spine.
//
// Placement statistics (PlacementSummary): job GPUs per aggregation group,
// and the bytes per iteration of DP ring hops (the channel-0 ring in the
// collective options' ring order; each hop of a group's ring carries 2(n-1)/n
// x the stage's gradient bytes, x 1.5 with ZeRO-3; expert gradients on the
// EDP rings) and of PP p2p (every replica's t edges per stage boundary, both
// directions, every microbatch), and how many of those bytes go between GPUs
// in different aggregation groups ("cross spine": they must climb to a spine)
// or different pods ("cross super-spine"). Labels are the topology's
// group/pod labels; on fabrics without them (kNone) nothing counts as
// crossing. On a rail-optimized fabric a hop between two rails of one group
// also climbs to a spine unless PXN moves it onto NVLink first; it is not
// counted.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "engine/registry.hpp"
#include "topology/topology.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::cluster {

enum class Policy : uint8_t { TopologyAware, Packed, Random };

struct PolicyInfo {
  const char* name;
  const char* description;
  Policy policy;
};
const std::vector<PolicyInfo>& policies();
const char* policy_name(Policy p);
// Throws InputError listing the policies.
Policy parse_policy(std::string_view name);

// Scenario section `placement:` (policy).
std::vector<ParamSpec> placement_params();

// gpu_of_rank for every job rank. Throws InputError if the job needs more
// GPUs than the fabric has.
std::vector<int32_t> place(const workload::Job& job, const topology::Topology& topo, Policy policy, uint64_t seed);

workload::PlacementSummary summarize(const workload::Job& job, const std::vector<int32_t>& gpu_of_rank,
                                     const topology::Topology& topo, const collective::Options& options,
                                     const std::string& policy);

}  // namespace podnet::cluster
