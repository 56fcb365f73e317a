#include "workload/job.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"

namespace podnet::workload {
namespace {

Params defaults() { return defaults_of(workload_params()); }

template <typename T>
void set(Params& p, const std::string& key, T v) {
  if constexpr (std::is_same_v<T, bool>) p.set(key, v, v ? "true" : "false");
  else if constexpr (std::is_same_v<T, const char*>) p.set(key, std::string(v), v);
  else p.set(key, static_cast<int64_t>(v), std::to_string(v));
}

// Expects job_from to throw a ParamError naming `key`.
void expect_error(const Params& p, int64_t gpus, const std::string& key) {
  try {
    job_from(p, gpus);
    ADD_FAILURE() << "expected an error on " << key;
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

TEST(Model, Gpt3ParametersMatchMegatronEq2) {
  // P = 12 l h^2 (1 + 13/(12h) + (V+s)/(12 l h)) = 173,946,175,488 x 1.00385 = 174.6e9.
  const ModelSpec& m = *find_model("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double p = 12 * l * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * l * h));
  EXPECT_NEAR(m.params() / p, 1.0, 1e-12);
  EXPECT_NEAR(m.params() / 1e9, 174.6, 0.1);
}

TEST(Model, Gpt3FlopsMatchMegatronEq3) {
  // F / (B s) = 96 l h^2 (1 + s/(6h) + V/(16 l h)) with recompute = 1.434e12 FLOPs per token;
  // without: 72 l h^2 (1 + s/(6h)) + 6 h V.
  const ModelSpec& m = *find_model("gpt3-175b");
  const double l = 96, h = 12288, V = 51200, s = 2048;
  const double with = 96 * l * h * h * (1 + s / (6 * h) + V / (16 * l * h));
  const double without = 72 * l * h * h * (1 + s / (6 * h)) + 6 * h * V;
  EXPECT_NEAR(m.hardware_flops_per_token(true) / with, 1.0, 1e-12);
  EXPECT_NEAR(m.hardware_flops_per_token(false) / without, 1.0, 1e-12);
  EXPECT_NEAR(m.model_flops_per_token(), without, 1.0);
  EXPECT_NEAR(with / 1e12, 1.434, 0.001);
}

TEST(Model, LlamaAndMixtralSizes) {
  // Llama 3 405B: 126 x (2h^2 + 2h x 1024 + 3h x 53248 + 2h) + 2 V h = 405.8e9 (the paper's "405B").
  EXPECT_NEAR(find_model("llama3-405b")->params() / 1e9, 405.8, 0.5);
  EXPECT_NEAR(find_model("llama3-70b")->params() / 1e9, 70.6, 0.5);
  EXPECT_NEAR(find_model("llama3-8b")->params() / 1e9, 8.0, 0.1);
  // Mixtral 8x7B: 46.7e9 total, 12.9e9 active (Jiang et al. 2024).
  EXPECT_NEAR(find_model("mixtral-8x7b")->params() / 1e9, 46.7, 0.1);
  EXPECT_NEAR(find_model("mixtral-8x7b")->active_params() / 1e9, 12.9, 0.1);
}

TEST(Model, DaysToTrainGpt3OnA100MatchesMegatron) {
  // Narayanan et al. SC'21: GPT-3 175B, 1024 A100 at 140 TFLOP/s per GPU (45 % of 312), 300B tokens: 34 days.
  // Exact Eq. 3 per token: 300e9 x 1.434e12 / (1024 x 140e12) = 3.0008e6 s = 34.7 days (their Eq. 4,
  // 8 T P / (n X), rounds to 33.8). Tolerance: 34 +- 1.5 days.
  const double days = days_to_train(*find_model("gpt3-175b"), true, 300e9, 1024, 140e12);
  EXPECT_NEAR(days, 34.0, 1.5);
  EXPECT_NEAR(days, 34.73, 0.01);
}

TEST(Job, DefaultsAreGpt3OnH100WithAutoDp) {
  // 16,384 GPUs / (8 x 8) = 256, and 1536 / 256 = 6 microbatches per pipeline.
  const Job j = job_from(defaults(), 16384);
  EXPECT_EQ(j.model.name, "gpt3-175b");
  EXPECT_EQ(j.gpu.name, "h100");
  EXPECT_EQ(j.dp, 256);
  EXPECT_EQ(j.microbatches(), 6);
  EXPECT_EQ(j.gpus(), 16384);
  EXPECT_DOUBLE_EQ(j.tokens, 300e9);
  // Auto bucket: max(40M, 1M x 256) = 256M parameters.
  EXPECT_EQ(j.dp_bucket_params(), 256'000'000);
}

TEST(Job, AutoDpDividesTheBatch) {
  // 1000 GPUs / 64 = 15 replicas at most; 1536 = 2^9 x 3, so the largest divisor <= 15 is 12.
  EXPECT_EQ(job_from(defaults(), 1000).dp, 12);
}

TEST(Job, GroupCountsTp8Pp4Dp3) {
  // 96 GPUs: TP p d = 12 groups of 8, PP t d = 24 groups of 4, DP t p = 32 groups of 3.
  Params p = defaults();
  set(p, "pp", 4);
  set(p, "dp", 3);
  set(p, "global_batch", 24);
  const Job j = job_from(p, 96);
  const GroupCounts g = group_counts(j);
  EXPECT_EQ(g.tp_groups, 12);
  EXPECT_EQ(g.tp_size, 8);
  EXPECT_EQ(g.pp_groups, 24);
  EXPECT_EQ(g.pp_size, 4);
  EXPECT_EQ(g.dp_groups, 32);
  EXPECT_EQ(g.dp_size, 3);
  EXPECT_EQ(g.ep_groups, 0);
  // Megatron order: rank = tp + 8 (dp + 3 pp).
  EXPECT_EQ(dp_group(j, 1, 2), (std::vector<int64_t>{49, 57, 65}));
  EXPECT_EQ(tp_group(j, 2, 0).front(), 16);
  EXPECT_EQ(pp_group(j, 0, 1), (std::vector<int64_t>{8, 32, 56, 80}));
}

TEST(Job, MoeGroups) {
  // Mixtral, TP2 PP4 DP16 EP8 on 128 GPUs: EP groups t p d / ep = 16 of 8; EDP t p ep = 64 of 2.
  Params p = defaults();
  set(p, "model", "mixtral-8x7b");
  set(p, "tp", 2);
  set(p, "pp", 4);
  set(p, "dp", 16);
  set(p, "ep", 8);
  set(p, "global_batch", 64);
  const Job j = job_from(p, 128);
  const GroupCounts g = group_counts(j);
  EXPECT_EQ(g.ep_groups, 16);
  EXPECT_EQ(g.ep_size, 8);
  EXPECT_EQ(g.edp_groups, 64);
  EXPECT_EQ(g.edp_size, 2);
  // EP group of (tp 1, edp 1, pp 0): dp ranks 8..15 -> ranks 1 + 2 dp.
  EXPECT_EQ(ep_group(j, 1, 1, 0), (std::vector<int64_t>{17, 19, 21, 23, 25, 27, 29, 31}));
  EXPECT_EQ(edp_group(j, 0, 3, 0), (std::vector<int64_t>{6, 22}));
}

TEST(Job, VolumesMatchMegatronFormulas) {
  // l 4, h 1024, a 16, s 512, V 1000, t 2, p 2, d 2, b 1, B 8 -> m = 4; e = 2 bytes.
  // b s h e = 512 x 1024 x 2 = 1 MiB.
  Params p = defaults();
  set(p, "layers", 4);
  set(p, "hidden", 1024);
  set(p, "heads", 16);
  set(p, "seq", 512);
  set(p, "vocab", 1000);
  set(p, "tp", 2);
  set(p, "pp", 2);
  set(p, "dp", 2);
  set(p, "global_batch", 8);
  set(p, "activation_recompute", false);
  Job j = job_from(p, 8);
  Volumes v = volumes(j);
  EXPECT_EQ(v.tp_allreduce_bytes, 1 << 20);
  // TP: 8 b s h (t-1)/t elements per layer per microbatch = 4 all-reduces x 2(t-1)/t x 1 MiB = 4 MiB;
  // x l/p = 2 layers x m = 4 microbatches = 32 MiB per GPU.
  EXPECT_DOUBLE_EQ(v.tp_bytes_per_gpu, 32.0 * (1 << 20));
  // PP: b s h e per microbatch per direction, / t per GPU: 2 directions x 4 x 0.5 MiB = 4 MiB.
  EXPECT_EQ(v.pp_p2p_bytes, 1 << 20);
  EXPECT_DOUBLE_EQ(v.pp_bytes_per_gpu, 4.0 * (1 << 20));
  // DP: P = 12 l h^2 + 13 l h + (V + s) h = 50,331,648 + 53,248 + 1,548,288 = 51,933,184; the last stage
  // also holds the tied embedding's copy (V h = 1,024,000), so per GPU on average (P + V h)/(t p) = 13,239,296
  // parameters x 2 bytes = 26,478,592; ring traffic 2(d-1)/d = 1 x that.
  EXPECT_DOUBLE_EQ(v.dp_grad_bytes_per_gpu, 26478592.0);
  EXPECT_DOUBLE_EQ(v.dp_bytes_per_gpu, 26478592.0);
  // Recompute repeats the forward's 2 all-reduces: 6 per layer -> 48 MiB.
  j.recompute = true;
  EXPECT_DOUBLE_EQ(volumes(j).tp_bytes_per_gpu, 48.0 * (1 << 20));
  // ZeRO-3: 1.5x the DP volume.
  j.zero = 3;
  EXPECT_DOUBLE_EQ(volumes(j).dp_bytes_per_gpu, 1.5 * 26478592.0);
}

TEST(Job, StageParamsSumToTheModel) {
  // Over all stages, per-GPU parameters x t add up to P + V h (the tied copy on the last stage).
  const Job j = job_from(defaults(), 16384);
  double sum = 0;
  for (int64_t s = 0; s < j.pp; ++s) sum += stage_params(j, s).total() * static_cast<double>(j.tp);
  EXPECT_NEAR(sum / (j.model.params() + 51200.0 * 12288.0), 1.0, 1e-12);
}

TEST(Job, ValidationNamesTheKey) {
  {
    Params p = defaults();
    set(p, "tp", 5);  // 96 heads % 5 != 0
    expect_error(p, 16384, "workload.tp");
  }
  {
    Params p = defaults();
    set(p, "pp", 7);  // 96 layers % 7 != 0
    expect_error(p, 16384, "workload.pp");
  }
  {
    Params p = defaults();
    set(p, "dp", 100);  // 1536 % 100 != 0
    expect_error(p, 16384, "workload.global_batch");
  }
  {
    Params p = defaults();
    set(p, "dp", 512);  // 8 x 8 x 512 = 32,768 > 16,384
    expect_error(p, 16384, "workload.dp");
  }
  {
    Params p = defaults();
    set(p, "ep", 2);  // GPT-3 is dense
    expect_error(p, 16384, "workload.ep");
  }
  {
    Params p = defaults();
    set(p, "interleave", 5);  // 96 % (8 x 5) != 0
    expect_error(p, 16384, "workload.interleave");
  }
  {
    Params p = defaults();
    set(p, "interleave", 2);  // m = 6 not divisible by pp 8
    expect_error(p, 16384, "workload.interleave");
  }
  {
    Params p = defaults();
    set(p, "tokens", "lots");
    expect_error(p, 16384, "workload.tokens");
  }
  {
    Params p = defaults();
    set(p, "model", "llama3-70b");
    set(p, "tp", 16);  // 8 KV heads
    set(p, "pp", 4);
    expect_error(p, 16384, "workload.tp");
  }
}

TEST(Job, ParseCount) {
  double v = 0;
  EXPECT_TRUE(parse_count("300B", v));
  EXPECT_DOUBLE_EQ(v, 300e9);
  EXPECT_TRUE(parse_count("15T", v));
  EXPECT_DOUBLE_EQ(v, 15e12);
  EXPECT_TRUE(parse_count("2e12", v));
  EXPECT_DOUBLE_EQ(v, 2e12);
  EXPECT_FALSE(parse_count("B", v));
  EXPECT_FALSE(parse_count("-1", v));
}

}  // namespace
}  // namespace podnet::workload
