// Helpers shared by the workload, cluster and study tests (header-only, tests only).
#pragma once

#include <map>
#include <string>

#include "topology/builders.hpp"
#include "workload/job.hpp"

namespace podnet::workload::testing {

// A default-hardware rail_clos of `gpus` GPUs, built once per size.
inline const topology::Topology& rail(int32_t gpus) {
  static std::map<int32_t, topology::Topology> cache;
  auto it = cache.find(gpus);
  if (it == cache.end())
    it = cache
             .emplace(gpus,
                      topology::build_with("rail_clos", {{"gpus", std::to_string(gpus)}}, topology::default_hardware()))
             .first;
  return it->second;
}

// A small GPT-shaped job (the layout, not the size, matters): 8 layers of 1,024, TP x PP x DP, m microbatches
// of one sequence per replica.
inline Job small_gpt_job(int64_t tp, int64_t pp, int64_t dp, int64_t m = 4) {
  Job j;
  j.model = *find_model("gpt3-175b");
  j.model.layers = 8;
  j.model.hidden = 1024;
  j.model.heads = 16;
  j.model.kv_heads = 16;
  j.model.ffn = 4096;
  j.model.seq = 1024;
  j.model.vocab = 1024;
  j.gpu = *find_gpu("h100");
  j.tp = tp;
  j.pp = pp;
  j.dp = dp;
  j.global_batch = m * dp;
  return j;
}

}  // namespace podnet::workload::testing
