// NCCL's corrections to a plan, as a named list of transforms.
//
// make_plan (collective.hpp) runs in three steps: choose (the tuner picks
// the algorithm, protocol and channels, nccl/tuner.hpp), build (the
// algorithm's own plan, which knows nothing of NCCL), apply (these
// transforms, in order). Each transform says which plans it changes, what
// model it applies and where that model comes from; each has its test in
// transforms_test.cpp and its validation row in
// docs/contributing/validation/ (named below).
//
// | transform | applies to | model | source | validation |
// |---|---|---|---|---|
// | slice_pipeline | tuned ring and tree plans | NCCL's slice pipeline on Ring / Coupled transfers (nccl/pipeline.hpp)
// | NCCL prims (buffer, chunk and slice sizes per protocol) | packet-engine.md, NCCL's slice pipeline | |
// protocol_bytes | tuned plans | LL and LL128 carry their line format's bytes, or more where NCCL's model caps the
// protocol; a ring on fewer channels than the model counts is rate-capped at its share of the modelled rate | NCCL
// tuning.cc (llMaxBws, LL128 ceilings) | nccl-model.md, protocols | | nvls_fill | tuned NVLS all-reduce on one server |
// the pipeline's fill and drain and its cost per stage (nvls.hpp) | NCCL's NVLS kernels; nccl-tests on H100 |
// nccl-model.md, NVLS per size | | model_latency | tuned plans | a leading delay of NCCL's modelled latency (base +
// steps, wire included), which holds the data transfers' hop latency (latency_steps = 0) | NCCL tuning.cc (baseLat,
// hwLat) | nccl-model.md, 1-16 MiB time | | sendrecv_channels | sendrecv with the tuner | a rate per p2p channel,
// channels by size and communicator (pairwise.hpp) | NCCL's p2p channels; nccl-tests sendrecv | one-server.md, sendrecv
// | | alltoall_nvlink | all-to-all with the tuner | NVLink below the ring's rate inside a server (pairwise.hpp) |
// nccl-tests alltoall on H100 | one-server.md, all-to-all | | alltoall_launch | all-to-all with the tuner | a leading
// delay: a launch and one proxy post per peer (collective.hpp) | NCCL's net overhead (tuning.cc); nccl-tests alltoall |
// one-server.md, all-to-all |
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "collective/nccl/tuner.hpp"
#include "collective/types.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/topology.hpp"

namespace podnet::collective {

struct Options;  // collective.hpp

// What the transforms know of the collective.
struct NcclContext {
  Op op;
  const Group& group;
  Bytes bytes;
  const Options& options;  // channels as the plan was built with them
  const CommShape& shape;
  const topology::Topology& topo;
  std::optional<Choice> choice;  // set when the tuner chose (NCCL's model): the tuned path
  int32_t model_channels = 0;    // the channels NCCL's model counts (tuned path)
};

struct PlanTransform {
  const char* name;
  const char* model;  // one line: what it changes and after what model
  bool (*applies)(const NcclContext&, const plan::TransferPlan&);
  void (*apply)(const NcclContext&, plan::TransferPlan&);
};

// Every transform, in the order make_plan applies them.
const std::vector<PlanTransform>& nccl_transforms();
// Applies every transform that applies, in order; returns the names of those applied.
std::vector<std::string> apply_nccl_transforms(const NcclContext& c, plan::TransferPlan& plan);

// Puts a Compute delay of `latency` over the group first: every transfer
// that had no dependency now waits for it. `hop_latency`: the delay holds
// the transfers' per-hop latency (plan::Transfer::holds_hop_latency).
plan::TransferPlan with_leading_delay(plan::TransferPlan plan, const Group& group, Time latency, std::string label,
                                      bool hop_latency = false);

// Bytes on the wire for `b` payload bytes under protocol p (ceil b / efficiency).
Bytes wire_bytes(Bytes b, Proto p);
// Wire bytes for b payload bytes at a slowdown of `factor` (>= the line format's): the line format's
// exact count when the ceiling does not bind, else ceil(b x factor).
Bytes wire_bytes(Bytes b, Proto p, double factor);
// The line format's own overhead: LL sends 8 B per 4 B of data, LL128 128 B per 120 B.
double line_factor(Proto p);
// How much slower NCCL's model runs protocol p than Simple for the same algorithm and op (nccl/tuner.hpp
// section 3), and at least the line format's own overhead. 1 for Simple, or where the model has no Simple
// figure.
double protocol_slowdown(Op op, Algo a, Proto p, const CommShape& s);
// Per-rank cost of posting an all-to-all's messages (collective.hpp).
Time alltoall_post_latency(const CommShape& s);

}  // namespace podnet::collective
