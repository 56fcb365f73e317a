// The inference study: the scenario's `inference:` serving layout and
// request stream on its fabric (workload/inference.hpp). Replica r holds the
// fabric's GPUs [r n, (r + 1) n), n = tp x pp, in order (a TP group inside a
// server when tp divides the server's GPUs); in disaggregated serving the
// prefill pool comes first, then the decode pool.
//
// The network's part of a pass is timed on the Setup's engine, each
// collective alone on an idle fabric (passes of different replicas do not
// contend; the KV transfers neither):
//   dense layer   2 all-reduces of t h 2 bytes over the TP group (attention and MLP outputs)
//   MoE layer     1 all-reduce (attention) + dispatch and combine all-to-alls over the TP group, each rank
//                 sending t k h 2 / tp bytes (its tokens' top-k copies, spread over the experts' ranks)
//   pipeline      pp - 1 sends of t h 2 bytes (activations to the next stage)
//   KV transfer   a prompt's s K' bytes, split evenly over n parallel flows, prefill GPU i to decode GPU i
//                 (of the first prefill and the first decode replica: the same paths as any other pair on a
//                 symmetric fabric)
// for t tokens in the pass (a prefill's prompt tokens rounded up to a multiple of 64 for the timing, a
// decode's batch exactly). Each distinct size is timed once. With a latency
// target, the rate search's runs reuse those timings.
#pragma once

#include <cstdint>
#include <string>

#include "scenario/setup.hpp"
#include "study/study.hpp"
#include "workload/inference.hpp"

namespace podnet::study {

struct InferenceStudy {
  workload::InferenceConfig config;
  // inference.pp left to its default and raised (doubled) until the model's weights fit one replica: the pp the
  // default gave (0: not raised).
  int64_t pp_raised_from = 0;
  workload::ModelSpec model;
  workload::GpuSpec gpu;
  int64_t fabric_gpus = 0;
  double weight_bytes_per_gpu = 0, kv_bytes_per_token = 0;
  int64_t kv_capacity_tokens = 0;  // per replica
  // One request alone on an idle replica: its prefill (TTFT), one decode pass (TPOT), each with its network part.
  // Its prompt: the shortest of the range, or the median of a lengths file.
  int64_t single_prompt = 0;
  Time single_ttft, single_ttft_network, single_tpot, single_tpot_network, single_kv_transfer;
  // Whether the fabric (NICs and switches) carries any of it: a replica spanning servers (its TP group or
  // its pipeline stages), or a KV transfer between servers. Otherwise it all stays on NVLink.
  bool fabric_carries = false;
  workload::ServingResult serving;
  // With a latency target (inference.target_ttft / target_tpot): the highest rate that meets it.
  bool searched = false;
  workload::RateSearch search;
};

InferenceStudy inference(const scenario::Setup& s, const Progress& progress = {});
// The refusals inference() makes before it runs (a layout the fabric or the GPUs' memory cannot hold), for a
// front end to answer before it accepts the run.
void check_inference(const scenario::Setup& s);

}  // namespace podnet::study
