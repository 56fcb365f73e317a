// podnet's defaults against published training throughput (docs/contributing/validation/training-throughput.md, "What a
// training step sustains"): every row is `podnet train aipod-16k --engine analytical` with the run's published
// settings. The sustained fraction and per-layer overhead (workload/model.cpp) were fitted on the 8 single-stage rows
// of Megatron-LM's two tables; the 11 pipeline rows and Llama 3's runs were held out of the fit, so these
// tests fail if a change to the compute, schedule or communication model moves them.
//
// Sources: NVIDIA/Megatron-LM README.md, images/model_table.png (commit f2e5db40, H100, July 2024: MFU) and
// images/cases_april2021.png (commit 50a4b5fa, A100: teraFLOP/s per GPU with recompute; attention heads from
// Narayanan et al. SC'21 Table 1); Dubey et al. 2024, "The Llama 3 Herd of Models", Table 4 (BF16 MFU).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "cli/test_util.hpp"
#include "study/nccl_tests_log.hpp"

namespace podnet::cli {
namespace {

using testing::run;

struct Row {
  const char* name;
  double published;  // MFU in % (H100, Llama 3) or hardware TFLOP/s per GPU (A100)
  int hidden, heads, layers, tp, pp, dp, batch;
};

// H100 rows: GPT, vocabulary 131,072, sequence 4,096, SP, ZeRO-1, no recompute, TP overlap (the runs overlapped
// DP, TP and PP communication), microbatch 1, plain 1F1B in Megatron's rank order.
const char* kH100 =
    "--set workload.model=gpt3-175b --set workload.vocab=131072 --set workload.seq=4096 --set workload.microbatch=1 "
    "--set workload.interleave=1 --set workload.stage_layers=even --set workload.sequence_parallel=true --set "
    "workload.zero=1 --set workload.recompute=none --set workload.tp_comm_overlap=true --set "
    "workload.rank_order=tp-cp-dp-pp";
// A100 rows (2021): vocabulary 51,200, sequence 2,048, no SP, DDP, full recompute, no FlashAttention.
const char* kA100 =
    "--set workload.model=gpt3-175b --set workload.gpu=a100 --set workload.vocab=51200 --set workload.seq=2048 "
    "--set workload.microbatch=1 --set workload.interleave=1 --set workload.stage_layers=even --set "
    "workload.sequence_parallel=false --set workload.zero=0 --set workload.recompute=full --set "
    "workload.flash_attention=false --set workload.rank_order=tp-cp-dp-pp";

// podnet's figure for the row: MFU in % on H100, hardware TFLOP/s per GPU (HFU x 312) on A100.
double podnet_figure(const Row& r, bool a100) {
  const std::string args = fmt::format(
      "train aipod-16k --engine analytical --allow-oom {} --set workload.hidden={} --set workload.heads={} --set "
      "workload.layers={} --set workload.tp={} --set workload.pp={} --set workload.dp={} --set "
      "workload.global_batch={} --format json",
      a100 ? kA100 : kH100, r.hidden, r.heads, r.layers, r.tp, r.pp, r.dp, r.batch);
  const auto res = run(args);
  EXPECT_EQ(res.status, 0) << args;
  if (res.status != 0) return 0;
  const nlohmann::json d = nlohmann::json::parse(res.out);
  return a100 ? d["hfu"].get<double>() * 312 : d["mfu"].get<double>() * 100;
}

void expect_within(const std::vector<Row>& rows, bool a100, double lo, double hi) {
  for (const Row& r : rows) {
    const double ratio = podnet_figure(r, a100) / r.published;
    EXPECT_GE(ratio, lo) << r.name;
    EXPECT_LE(ratio, hi) << r.name;
    std::printf("  %-8s published %6.1f  ratio %.3f\n", r.name, r.published, ratio);
  }
}

TEST(PublishedRuns, MegatronSingleStageRowsTheFitUsed) {
  // The fit's own rows: its residuals were 0.94-1.03 (rms 2.7 %).
  expect_within({{"1.7B", 41, 2048, 16, 24, 1, 1, 48, 192},
                 {"7.1B", 47, 4096, 32, 30, 2, 1, 48, 192},
                 {"16B", 49, 6144, 48, 32, 4, 1, 48, 192},
                 {"32B", 46, 7168, 56, 48, 8, 1, 48, 192}},
                false, 0.9, 1.1);
  expect_within({{"1.7B", 137, 2304, 24, 24, 1, 1, 32, 512},
                 {"3.6B", 138, 3072, 32, 30, 2, 1, 32, 512},
                 {"7.5B", 142, 4096, 32, 36, 4, 1, 32, 512},
                 {"18B", 135, 6144, 48, 40, 8, 1, 32, 1024}},
                true, 0.9, 1.1);
}

TEST(PublishedRuns, MegatronPipelineRowsHeldOutWithinTenPercent) {
  expect_within({{"70B", 42, 8192, 64, 84, 8, 2, 48, 384},
                 {"119B", 43, 10240, 80, 92, 8, 4, 48, 768},
                 {"177B", 44, 12288, 96, 96, 8, 6, 48, 1152},
                 {"314B", 48, 16384, 128, 96, 8, 8, 48, 1536},
                 {"462B", 47, 18432, 144, 112, 8, 16, 48, 3072}},
                false, 0.9, 1.1);
  expect_within({{"39B", 138, 8192, 64, 48, 8, 2, 32, 1536},
                 {"76B", 140, 10240, 80, 60, 8, 4, 32, 1792},
                 {"145B", 148, 12288, 96, 80, 8, 8, 24, 2304},
                 {"310B", 155, 16384, 128, 96, 8, 16, 15, 2160},
                 {"530B", 163, 20480, 128, 105, 8, 35, 9, 2520},
                 {"1T", 163, 25600, 160, 128, 8, 64, 6, 3072}},
                true, 0.9, 1.1);
}

TEST(PublishedRuns, Llama3HeldOut) {
  // The default job (Llama 3 405B, 16,384 H100, TP8 PP16 DP128) and the paper's two other rows. Held out at
  // 1.06-1.13: within 15 % here, outside 10 % on two rows (docs/contributing/validation/training-throughput.md says why
  // it may be).
  struct L {
    const char* name;
    double published;
    const char* set;
  };
  for (const L& l : {L{"16K", 41, ""}, L{"8K", 43, "--set workload.dp=64"},
                     L{"CP16", 38,
                       "--set workload.cp=16 --set workload.dp=8 --set workload.seq=131072 --set "
                       "workload.global_batch=128"}}) {
    const auto res = run(fmt::format("train aipod-16k --engine analytical --allow-oom {} --format json", l.set));
    ASSERT_EQ(res.status, 0) << l.name;
    const double ratio = nlohmann::json::parse(res.out)["mfu"].get<double>() * 100 / l.published;
    EXPECT_GE(ratio, 0.9) << l.name;
    EXPECT_LE(ratio, 1.15) << l.name;
    std::printf("  Llama 3 %-5s published %.0f %%  ratio %.3f\n", l.name, l.published, ratio);
  }
}

// MegaScale's Megatron-LM baseline (Jiang et al., NSDI'24, arXiv 2402.15627): GPT-3 175B on A100s. Settings the
// paper states (§3.2-3.6, §6.1, Table 1): TP8 PP8, interleaved with 6 stages, sequence 2,048, vocabulary 64,000,
// eight 200G NICs per server on rails; DP, TP and PP overlap and FlashAttention-2 are what MegaScale added (§3.2,
// §3.3), so the baseline runs without them, the unfused attention core of Megatron-LM's default; Megatron-LM
// reduces BF16 runs' gradients in FP32 (megatron/arguments.py: "bfloat16 requires gradient accumulation and
// all-reduce to be done in fp32") and, in 2023, all-reduced each microbatch's loss (pretrain_gpt.py loss_func).
// Not stated, podnet's defaults: microbatch 1, selective recompute, the distributed optimizer.
//
// The step overhead (workload.step_overhead) is fitted on the two 256-GPU runs only: Table 2 at batch 768
// (40.0 s, 53.0 % MFU) and Table 3's baseline at batch 256 (47.7 % MFU: 40.0 / 3 x 53.0 / 47.7 = 14.815 s). Their
// difference is 512 sequences' passes; what is left at batch 0 is fixed: 14.815 - (40.0 - 14.815) / 2 = 2.222 s
// published, against podnet's own intercept. The other seven rows (512 to 12,288 GPUs) are held out.
TEST(PublishedRuns, MegaScaleBaselineHeldOut) {
  const std::string ms =
      "--set workload.model=gpt3-175b --set workload.gpu=a100 --set workload.tp=8 --set workload.pp=8 --set "
      "workload.interleave=6 --set workload.microbatch=1 --set workload.seq=2048 --set workload.vocab=64000 --set "
      "server.nic_speed=200Gbps --set workload.overlap_grad_reduce=false --set workload.overlap_param_gather=false "
      "--set workload.tp_comm_overlap=false --set workload.flash_attention=false --set workload.bytes_per_grad=4 "
      "--set workload.loss_reduce=microbatch";
  const auto step_s = [&](int gpus, int batch, const std::string& extra) {
    const auto res = run(fmt::format(
        "train aipod-16k --engine analytical --allow-oom {} {} --set topology.gpus={} --set workload.dp={} --set "
        "workload.global_batch={} --format json",
        ms, extra, gpus, gpus / 64, batch));
    EXPECT_EQ(res.status, 0) << gpus << ": " << res.out;
    return res.status == 0 ? nlohmann::json::parse(res.out)["iteration_time_ms"].get<double>() / 1e3 : 0.0;
  };
  // The fit: published and podnet intercepts at 256 GPUs.
  const double pub256 = 40.0 / 3 * 53.0 / 47.7, pub768 = 40.0;
  const double pn256 = step_s(256, 256, ""), pn768 = step_s(256, 768, "");
  const double fitted = (pub256 - (pub768 - pub256) / 2) - (pn256 - (pn768 - pn256) / 2);
  EXPECT_NEAR(fitted, 1.44, 0.005);  // the figure the docs and workload.step_overhead's help quote
  std::printf("  MegaScale baseline, 256 GPUs: fixed cost per step published - podnet = %.3f s\n", fitted);
  struct M {
    int gpus, batch;
    double published_s;
  };
  for (const M& m : {M{512, 768, 21.2}, M{768, 768, 15.2}, M{1024, 768, 11.9}, M{3072, 6144, 29.02},
                     M{6144, 6144, 14.78}, M{8192, 6144, 12.24}, M{12288, 6144, 8.57}}) {
    const double ratio = m.published_s / step_s(m.gpus, m.batch, "--set workload.step_overhead=1.44s");
    EXPECT_GE(ratio, 0.95) << m.gpus;
    EXPECT_LE(ratio, 1.06) << m.gpus;
    std::printf("  MegaScale baseline %6d GPUs  published %.2f s  published / podnet %.3f\n", m.gpus, m.published_s,
                ratio);
  }
}

// The attention core of a NeMo run: NeMo 25.02 runs TransformerEngine 2.x, whose backend selection disables
// FlashAttention in favour of its cuDNN FusedAttention on sm90 and later when both can run (NVIDIA/
// TransformerEngine, transformer_engine/pytorch/attention.py at v2.1, get_attention_backend: "Disabling
// FlashAttention to give FusedAttention preference on Hopper+ for performance reasons"; since v1.7). TE's own
// attention notebook measures the two on H100 80GB HBM3 in BF16 at b 2, 32 heads, 4 KV heads, head dim 128,
// sequence 8192, causal, forward + backward (docs/examples/attention/attention.ipynb, test_3, commit 88c0c914):
// cuDNN 7.4875 ms, flash-attn 11.8879 ms. podnet's H100 default (0.332, FlashAttention-2 measured by Azure's
// AI-benchmarking-guide) times that kernel; cuDNN's is 11.8879 / 7.4875 = 1.588x as fast: 0.332 x 1.588 = 0.527
// of peak. A setting of the software these runs used, not fitted on them.
constexpr const char* kCudnnAttention = "--set workload.attention_efficiency=0.527";

// A NeMo recipe's row: `podnet train aipod-16k --engine analytical ARGS` with cuDNN's attention rate must fit in
// the GPU's memory (the runs ran on 80 GB H100s) and give a step whose published / podnet ratio lies in [lo, hi].
void expect_nemo_step(const std::string& label, double published_s, const std::string& args, double lo, double hi) {
  const auto res = run(fmt::format("train aipod-16k --engine analytical {} {} --format json", kCudnnAttention, args));
  ASSERT_EQ(res.status, 0) << label << ": " << res.out;
  const nlohmann::json d = nlohmann::json::parse(res.out);
  EXPECT_TRUE(d["memory_gbyte"]["fits"].get<bool>()) << label;
  const double podnet_s = d["iteration_time_ms"].get<double>() / 1e3;
  const double ratio = published_s / podnet_s;
  EXPECT_GE(ratio, lo) << label;
  EXPECT_LE(ratio, hi) << label;
  const bool fp8 = d.contains("mfu_of_fp8_peak");
  std::printf("  NeMo %-32s published %.3f s  podnet %.3f s  ratio %.3f  (MFU %.1f %% of the %s peak)\n", label.c_str(),
              published_s, podnet_s, ratio, d[fp8 ? "mfu_of_fp8_peak" : "mfu"].get<double>() * 100,
              fp8 ? "FP8" : "BF16");
}

// Llama 3.1 trained with NeMo (Megatron-Core) on H100 in BF16, as NVIDIA's DGX Cloud benchmarking recipes
// publish it: NVIDIA/dgxc-benchmarking llama3.1/README.md at commit 741c886025a7665a1d690c05ff12ac29c1be7252
// (release 25.04, NeMo 25.02.01), the "Training step time (seconds per step)" rows, which the README reads at
// the last of 50 steps; sequence 8192, microbatch 1, synthetic data. The settings are the recipe's
// (llama3.1/llama31_utils.py, llama31_auto_configs, and NeMo's llama31_405b/llama3_70b recipes in performance
// mode): the table's TP, PP, CP, VP and batch; sequence parallelism, the distributed optimizer, gradients reduced
// in FP32, no activation recompute, TP communication overlapped (70B and 405B: MegatronCommOverlapCallback
// tp_comm_overlap=True), Megatron's rank order. Held out: none of these runs was used to choose anything. The
// figure compared is the step time (published / podnet: above 1 when podnet is faster), which does not depend
// on how FLOPs are counted (podnet's count is within 1 % of the README's per-sequence FLOPs for each size).
// The Llama 3.1 recipes' settings (above), shared with the FP8 rows below.
const char* const kNemoLlama31 =
    "--set workload.microbatch=1 --set workload.recompute=none --set workload.rank_order=tp-cp-dp-pp --set "
    "workload.zero=1 --set workload.bytes_per_grad=4";
const char* const kLlama8b = "--set workload.model=llama3-8b --set workload.tp=1 --set workload.pp=1 --set "
                             "workload.cp=2 --set workload.interleave=1 --set workload.stage_layers=even";
const char* const kLlama405b =
    "--set workload.model=llama3-405b --set workload.tp=8 --set workload.pp=8 --set workload.cp=2 --set "
    "workload.interleave=8 --set workload.stage_layers=auto --set workload.tp_comm_overlap=true";

TEST(PublishedRuns, NemoLlama31HeldOut) {
  struct N {
    const char* name;
    double published_s;
    const char* model;  // the model's settings (k8b, k70b, k405b)
    const char* set;
  };
  const char* common = kNemoLlama31;
  const char* k8b = kLlama8b;
  const char* k70b =
      "--set workload.model=llama3-70b --set workload.tp=4 --set workload.pp=4 --set workload.cp=2 --set "
      "workload.interleave=5 --set workload.stage_layers=even --set workload.tp_comm_overlap=true";
  const char* k405b = kLlama405b;
  const std::vector<N> rows = {
      {"8B, 8 GPUs", 12.27, k8b, "--set workload.dp=4 --set workload.global_batch=128"},
      {"8B, 128 GPUs", 12.33, k8b, "--set workload.dp=64 --set workload.global_batch=2048"},
      {"70B, 64 GPUs", 14.66, k70b, "--set workload.dp=2 --set workload.global_batch=128"},
      {"70B, 2048 GPUs", 14.66, k70b, "--set workload.dp=64 --set workload.global_batch=4096"},
      {"405B, 512 GPUs", 19.78, k405b, "--set workload.dp=4 --set workload.global_batch=256"},
      {"405B, 2048 GPUs", 19.87, k405b, "--set workload.dp=16 --set workload.global_batch=1024"},
  };
  for (const N& r : rows)
    expect_nemo_step(std::string("Llama 3.1 ") + r.name, r.published_s, fmt::format("{} {} {}", common, r.model, r.set),
                     0.9, 1.1);
}

// Nemotron-4 15B and 340B trained with NeMo on H100 in BF16, from the same recipes: NVIDIA/dgxc-benchmarking
// nemotron/README.md at commit 741c886025a7665a1d690c05ff12ac29c1be7252 (release 25.04, NeMo 25.02.01), the
// "Training step time (seconds per step)" rows, read at the last of 50 steps; sequence 4096, synthetic data.
// The settings are the recipe's (nemotron/launch.sh: 15B TP2 PP1 microbatch 2 and batch = 4 x GPUs; 340B TP8
// PP8 VP12 microbatch 1 and batch = GPUs / 4) and NeMo's nemotron4 recipes in performance mode: sequence
// parallelism, the distributed optimizer, TP communication overlapped, no recompute, Megatron's rank order,
// the layers split evenly. Gradients are reduced in BF16 (workload.bytes_per_grad=2): NeMo's recipe versions
// differ on it (bf16_mixed reduces in FP32; performance modes set grad_reduce_in_fp32 = False), and with FP32
// gradients podnet's memory model refuses the 16-GPU 15B row (89.2 GB), which ran on 80 GB parts; the step
// times differ by under 1 % (docs/contributing/validation/training-throughput.md). The models are podnet's nemotron4
// presets (NeMo's Nemotron4Config15B / 340B). Held out: none of these runs was used to choose anything. The Nemotron-4
// recipes' settings (above), shared with the FP8 rows below.
const char* const kNemoNemotron =
    "--set workload.recompute=none --set workload.rank_order=tp-cp-dp-pp --set workload.zero=1 --set "
    "workload.bytes_per_grad=2 --set workload.sequence_parallel=true --set workload.tp_comm_overlap=true --set "
    "workload.stage_layers=even";
const char* const kNemotron15b =
    "--set workload.model=nemotron4-15b --set workload.tp=2 --set workload.pp=1 --set workload.interleave=1 --set "
    "workload.microbatch=2";
const char* const kNemotron340b =
    "--set workload.model=nemotron4-340b --set workload.tp=8 --set workload.pp=8 --set workload.interleave=12 "
    "--set workload.microbatch=1";

TEST(PublishedRuns, NemotronHeldOut) {
  struct N {
    const char* name;
    double published_s;
    const char* set;
  };
  const char* common = kNemoNemotron;
  const char* k15b = kNemotron15b;
  const char* k340b = kNemotron340b;
  // 15B: d = GPUs / 2, batch 4 x GPUs (4 microbatches of 2 per replica); 340B: d = GPUs / 64, batch GPUs / 4
  // (16 microbatches per pipeline).
  const std::vector<std::pair<N, const char*>> rows = {
      {{"15B, 16 GPUs", 2.66, "--set workload.dp=8 --set workload.global_batch=64"}, k15b},
      {{"15B, 256 GPUs", 2.68, "--set workload.dp=128 --set workload.global_batch=1024"}, k15b},
      {{"15B, 2048 GPUs", 2.78, "--set workload.dp=1024 --set workload.global_batch=8192"}, k15b},
      {{"340B, 256 GPUs", 4.36, "--set workload.dp=4 --set workload.global_batch=64"}, k340b},
      {{"340B, 2048 GPUs", 4.43, "--set workload.dp=32 --set workload.global_batch=512"}, k340b},
  };
  for (const auto& [r, model] : rows)
    expect_nemo_step(std::string("Nemotron-4 ") + r.name, r.published_s, fmt::format("{} {} {}", common, model, r.set),
                     0.9, 1.1);
}

// GPT-3 175B trained with NeMo on H100 in BF16: NVIDIA/dgxc-benchmarking nemo_megatron/README_175b.md at commit
// 741c886025a7665a1d690c05ff12ac29c1be7252 (release 25.04), "Training step time (seconds per step)" at step 50:
// TP4 PP8 VP6, microbatch 1, batch = 2 x GPUs (64 microbatches per pipeline), sequence 2048. NeMo's GPTConfig175B
// trains without dropout (hidden_dropout = attention_dropout = 0, nemo/collections/llm/gpt/model/base.py) and its
// gpt3_175b recipe in performance mode overlaps TP communication and reduces gradients in BF16
// (grad_reduce_in_fp32 = False); sequence parallelism, the distributed optimizer, no recompute. Held out.
const char* const kNemoGpt3 =
    "--set workload.model=gpt3-175b --set workload.seq=2048 --set workload.dropout=false --set workload.tp=4 "
    "--set workload.pp=8 --set workload.interleave=6 --set workload.microbatch=1 --set workload.recompute=none "
    "--set workload.rank_order=tp-cp-dp-pp --set workload.zero=1 --set workload.bytes_per_grad=2 --set "
    "workload.sequence_parallel=true --set workload.tp_comm_overlap=true --set workload.stage_layers=even";

TEST(PublishedRuns, NemoGpt3HeldOut) {
  const std::string common = kNemoGpt3;
  // d = GPUs / 32, batch 2 x GPUs.
  expect_nemo_step("GPT-3 175B, 128 GPUs", 8.309, common + " --set workload.dp=4 --set workload.global_batch=256", 0.9,
                   1.1);
  expect_nemo_step("GPT-3 175B, 2048 GPUs", 8.49, common + " --set workload.dp=64 --set workload.global_batch=4096",
                   0.9, 1.1);
}

// FP8 training with NeMo on H100 (workload.precision fp8: TransformerEngine's FP8 GEMMs in the transformer
// layers, NeMo's bf16_with_fp8_mixed), from the same recipes and release as the BF16 rows above
// (NVIDIA/dgxc-benchmarking at commit 741c886025a7665a1d690c05ff12ac29c1be7252, release 25.04: the "FP8" tables
// of nemo_megatron/README_175b.md, llama3.1/README.md and nemotron/README.md, step time at the last of 50
// steps). The settings are those of the BF16 rows, except Llama 3.1 70B, whose FP8 recipe runs TP4 PP8 CP1 VP5
// (llama3.1/llama31_utils.py: `if args.compute_dtype == "fp8": pp_size = 8 ... cp_size = 1`).

// The fit: the H100 preset's fp8_efficiency (workload/model.cpp) is the least-squares fit on log(podnet /
// published) over these four GPT-3 175B FP8 steps, batch 2 x GPUs (d = GPUs / 32; the 512-GPU row, whose batch
// the README prints as 1204, is left out as in the BF16 rows). The fit leaves them within 4 %.
TEST(PublishedRuns, NemoFp8Gpt3RowsTheFitUsed) {
  const std::vector<std::pair<int, double>> rows = {{128, 5.626}, {256, 5.725}, {1024, 5.82}, {2048, 5.96}};
  for (const auto& [gpus, published] : rows)
    expect_nemo_step(fmt::format("GPT-3 175B FP8, {} GPUs", gpus), published,
                     fmt::format("{} --set workload.precision=fp8 --set workload.dp={} --set workload.global_batch={}",
                                 kNemoGpt3, gpus / 32, 2 * gpus),
                     0.96, 1.04);
}

// Held out: the Llama 3.1 and Nemotron-4 FP8 steps, none used to choose anything, each within 10 %.
TEST(PublishedRuns, NemoFp8HeldOut) {
  const std::string llama = std::string("--set workload.precision=fp8 ") + kNemoLlama31;
  const std::string nemotron = std::string("--set workload.precision=fp8 ") + kNemoNemotron;
  const char* k8b = kLlama8b;
  const char* k70b =
      "--set workload.model=llama3-70b --set workload.tp=4 --set workload.pp=8 --set workload.cp=1 --set "
      "workload.interleave=5 --set workload.stage_layers=even --set workload.tp_comm_overlap=true";
  const char* k405b = kLlama405b;
  const char* k15b = kNemotron15b;
  const char* k340b = kNemotron340b;
  struct R {
    const char* name;
    double published_s;
    const std::string& common;
    const char* model;
    const char* set;
  };
  const std::vector<R> rows = {
      {"Llama 3.1 8B FP8, 8 GPUs", 9.33, llama, k8b, "--set workload.dp=4 --set workload.global_batch=128"},
      {"Llama 3.1 8B FP8, 128 GPUs", 9.54, llama, k8b, "--set workload.dp=64 --set workload.global_batch=2048"},
      {"Llama 3.1 70B FP8, 64 GPUs", 9.86, llama, k70b, "--set workload.dp=2 --set workload.global_batch=128"},
      {"Llama 3.1 70B FP8, 2048 GPUs", 10.15, llama, k70b, "--set workload.dp=64 --set workload.global_batch=4096"},
      {"Llama 3.1 405B FP8, 512 GPUs", 12.37, llama, k405b, "--set workload.dp=4 --set workload.global_batch=256"},
      {"Llama 3.1 405B FP8, 2048 GPUs", 12.56, llama, k405b, "--set workload.dp=16 --set workload.global_batch=1024"},
      {"Nemotron-4 15B FP8, 16 GPUs", 1.98, nemotron, k15b, "--set workload.dp=8 --set workload.global_batch=64"},
      {"Nemotron-4 15B FP8, 256 GPUs", 2.00, nemotron, k15b, "--set workload.dp=128 --set workload.global_batch=1024"},
      {"Nemotron-4 15B FP8, 2048 GPUs", 2.09, nemotron, k15b,
       "--set workload.dp=1024 --set workload.global_batch=8192"},
      {"Nemotron-4 340B FP8, 256 GPUs", 2.93, nemotron, k340b, "--set workload.dp=4 --set workload.global_batch=64"},
      {"Nemotron-4 340B FP8, 2048 GPUs", 3.05, nemotron, k340b, "--set workload.dp=32 --set workload.global_batch=512"},
  };
  for (const R& r : rows)
    expect_nemo_step(r.name, r.published_s, fmt::format("{} {} {}", r.common, r.model, r.set), 0.9, 1.1);
}

// podnet's default all-reduce on one H100 server (`podnet bench aipod-16k --gpus 0-7`, flow engine: NVLS from
// 2 MiB) against four measured all_reduce_perf tables of four H100 servers (tests/data/nccl-tests/README.md
// names them). NVLS's launch and per-stage cost (collective/nvls.hpp) were fitted on the DGX table alone; the
// other three are held out. Every size from 2 MiB to 8 GiB that a table has is within 10 % (out-of-place
// busbw); before that fit, 2 MiB was at 0.88-0.91 and 32 MiB at 1.13-1.14 of them.
TEST(PublishedNccl, OneServerAllReduceWithinTenPercentOfFourTables) {
  const auto res = run("bench aipod-16k --gpus 0-7 --min 2MiB --max 8GiB --factor 2 --format json");
  ASSERT_EQ(res.status, 0) << res.out;
  std::map<int64_t, double> podnet;
  const nlohmann::json doc = nlohmann::json::parse(res.out);
  for (const auto& row : doc["rows"]) {
    EXPECT_EQ(row["algorithm"], "nvls") << row["bytes"];
    podnet[row["bytes"].get<int64_t>()] = row["busbw_gbyte_per_s"].get<double>();
  }
  ASSERT_EQ(podnet.size(), 13u);  // 2 MiB .. 8 GiB by 2
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  int compared = 0;
  for (const char* file : {"h100-1node-allreduce-dgx.log", "h100-1node-allreduce.log",
                           "h100-1node-allreduce-aws-p5.log", "h100-1node-allreduce-voltage-park.log"}) {
    const auto logs = study::read_nccl_tests(dir + file);
    ASSERT_EQ(logs.size(), 1u) << file;
    // The AWS excerpt prints no device lines (its job ran mpirun -np 8 -N 8: 8 ranks on one node).
    if (logs[0].nranks() > 0) {
      EXPECT_EQ(logs[0].nranks(), 8) << file;
    }
    double lo = 9, hi = 0;
    for (const auto& r : logs[0].rows) {
      const auto it = podnet.find(r.bytes);
      if (it == podnet.end()) continue;
      const double ratio = it->second / r.out_of_place.busbw_gbyte_per_s;
      EXPECT_GE(ratio, 0.9) << file << " at " << r.bytes << " B";
      EXPECT_LE(ratio, 1.1) << file << " at " << r.bytes << " B";
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
      ++compared;
    }
    std::printf("  %-40s podnet / measured busbw %.3f - %.3f\n", file, lo, hi);
  }
  // DGX 13 sizes, nccl-tests#290 6 (128 MiB - 4 GiB), AWS p5 13, Voltage Park 13.
  EXPECT_EQ(compared, 45);
}

// podnet's out-of-place busbw (GB/s) by size: `podnet bench aipod-16k --op OP --gpus GPUS --min 32MiB --max 16GiB
// --factor 2` on the flow engine (empty, with a failure, when the command fails).
std::map<int64_t, double> bench_busbw(const std::string& op, const std::string& gpus) {
  const auto res =
      run(fmt::format("bench aipod-16k --op {} --gpus {} --min 32MiB --max 16GiB --factor 2 --format json", op, gpus));
  EXPECT_EQ(res.status, 0) << res.out;
  std::map<int64_t, double> podnet;
  if (res.status != 0) return podnet;
  const nlohmann::json doc = nlohmann::json::parse(res.out);
  for (const auto& row : doc["rows"]) podnet[row["bytes"].get<int64_t>()] = row["busbw_gbyte_per_s"].get<double>();
  return podnet;
}

// GPUs a node -> podnet's --gpus: the first `per` GPUs of each of the first ten servers (8 GPUs a server).
std::string ten_servers(int per) {
  std::string g;
  for (int s = 0; s < 10; ++s) g += fmt::format("{}{}-{}", s ? "," : "", 8 * s, 8 * s + per - 1);
  return g;
}

// podnet's default all-to-all, all-gather and reduce-scatter on one H100 server (`podnet bench aipod-16k --op OP
// --gpus 0-7`, flow engine) against one measured table of each (tests/data/nccl-tests/h100-1node-five-ops.log,
// NCCL 2.29.2, 32 MiB - 16 GiB). The all-to-all's launch and NVLink efficiency (collective/pairwise.hpp) were
// fitted on the median of ten such servers, this one among them (residual 4.2 % at most against the median; this
// server is 0.970-1.055); before that fit podnet was 1.07-1.48 x its measured busbw. All-gather and reduce-scatter
// (NCCL's ring, not fitted) likewise within 10 %, except the all-gather at 32 MiB: 1.108 (the measured all-gather is 11
// % slower there than the reduce-scatter of the same size, 123.4 against 111.5 us; podnet times both as the same ring).
// sendrecv's rate per p2p channel (pairwise.hpp) was fitted on this table's 32-256 MiB rows; before it podnet was 4.5 x
// the measured busbw at 64 MiB.
TEST(PublishedNccl, OneServerAllToAllAllGatherReduceScatterSendRecv) {
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  const auto logs = study::read_nccl_tests(dir + "h100-1node-five-ops.log");
  ASSERT_EQ(logs.size(), 5u);
  struct Case {
    const char* op;    // podnet --op
    const char* test;  // nccl-tests program
    double lo, hi;
  };
  int compared = 0;
  for (const Case& c : {Case{"alltoall", "alltoall", 0.9, 1.1}, Case{"allgather", "all_gather", 0.9, 1.1},
                        Case{"reducescatter", "reduce_scatter", 0.9, 1.1}, Case{"sendrecv", "sendrecv", 0.9, 1.1}}) {
    const std::map<int64_t, double> podnet = bench_busbw(c.op, "0-7");
    const auto log = std::find_if(logs.begin(), logs.end(), [&](const auto& l) { return l.test == c.test; });
    ASSERT_NE(log, logs.end()) << c.test;
    EXPECT_EQ(log->nranks(), 8);
    double lo = 9, hi = 0;
    for (const auto& r : log->rows) {
      // nccl-tests rounds all-gather, reduce-scatter and all-to-all sizes down to a multiple of 8 ranks x 8 B
      // (double): 32 MiB .. 16 GiB are such multiples, so every row is one of podnet's sizes.
      const auto it = podnet.find(r.bytes);
      ASSERT_NE(it, podnet.end()) << c.op << " " << r.bytes;
      const double ratio = it->second / r.out_of_place.busbw_gbyte_per_s;
      const bool outlier = std::string_view(c.op) == "allgather" && r.bytes == (int64_t{32} << 20);
      EXPECT_GE(ratio, outlier ? 1.0 : c.lo) << c.op << " at " << r.bytes << " B";
      EXPECT_LE(ratio, outlier ? 1.12 : c.hi) << c.op << " at " << r.bytes << " B";
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
      ++compared;
    }
    std::printf("  %-14s podnet / measured busbw %.3f - %.3f\n", c.op, lo, hi);
  }
  EXPECT_EQ(compared, 40);  // 10 sizes each
}

// podnet's sendrecv across servers against the ten-node sendrecv_perf tables of the same cluster
// (tests/data/nccl-tests/h100-10node-sendrecv.log: 1, 2, 4 and 8 GPUs on each of ten nodes, 32 MiB - 16 GiB,
// NCCL 2.29.2). The rate of a p2p channel through a NIC (collective/pairwise.hpp, kP2pNetChannelGBs) was fitted on
// these 40 rows; NCCL's channel counts are its source's (2, 2, 2 and 1 channels here). Before, podnet gave every row
// the NIC's 49.0 GB/s (1.87-3.22 x the measured). Every row within 10 %, but the 8-GPU one (each crossing pair
// changes rail through PXN and moves 16 % more on its one channel than the fit): held in [0.8, 0.9].
TEST(PublishedNccl, TenServerSendRecvOnNcclsNetworkChannels) {
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  const auto logs = study::read_nccl_tests(dir + "h100-10node-sendrecv.log");
  ASSERT_EQ(logs.size(), 4u);
  int compared = 0;
  for (const auto& log : logs) {
    const int per = log.nranks() / 10;
    ASSERT_TRUE(per == 1 || per == 2 || per == 4 || per == 8) << log.nranks();
    const std::map<int64_t, double> podnet = bench_busbw("sendrecv", ten_servers(per));
    double lo = 9, hi = 0;
    for (const auto& r : log.rows) {
      const auto it = podnet.find(r.bytes);
      ASSERT_NE(it, podnet.end()) << per << " GPUs a node, " << r.bytes;
      const double ratio = it->second / r.out_of_place.busbw_gbyte_per_s;
      EXPECT_GE(ratio, per == 8 ? 0.8 : 0.9) << per << " GPUs a node at " << r.bytes << " B";
      EXPECT_LE(ratio, per == 8 ? 0.9 : 1.1) << per << " GPUs a node at " << r.bytes << " B";
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
      ++compared;
    }
    std::printf("  %d GPUs a node  podnet / measured busbw %.3f - %.3f\n", per, lo, hi);
  }
  EXPECT_EQ(compared, 40);  // 10 sizes each (the test cut its 64 GiB maximum to the memory: 32 MiB - 16 GiB)
}

// podnet's all-reduce, all-gather, reduce-scatter and all-to-all over ten servers one GPU each (`--gpus 0-72:8`,
// flow engine) against the same cluster's tables (tests/data/nccl-tests/h100-10node-1gpu-four-ops.log, NCCL 2.29.2,
// 32 MiB - 16 GiB; nothing fitted on them). nccl-tests rounds the all-gather, reduce-scatter and all-to-all sizes
// down to whole elements per rank (33,554,400 B for 32 MiB): each is compared with podnet's power-of-two size at
// most 128 B away. The rings (NCCL's choice, NIC-bound from 256 MiB) are within 10 % but one size: the all-reduce
// at 64 MiB, 0.899 (podnet times it as NCCL's own model does, 2,829 against the model's 2,881 us; the run took
// 2,542). The all-to-all is 1.09-1.17 x fast, as with 2, 4 and 8 GPUs a server (the next test).
TEST(PublishedNccl, TenServersOneGpuEach) {
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  const auto logs = study::read_nccl_tests(dir + "h100-10node-1gpu-four-ops.log");
  ASSERT_EQ(logs.size(), 4u);
  struct Case {
    const char* op;    // podnet --op
    const char* test;  // nccl-tests program
    double lo, hi;
  };
  int compared = 0;
  for (const Case& c : {Case{"allreduce", "all_reduce", 0.89, 1.1}, Case{"allgather", "all_gather", 0.9, 1.1},
                        Case{"reducescatter", "reduce_scatter", 0.9, 1.1}, Case{"alltoall", "alltoall", 1.05, 1.2}}) {
    const std::map<int64_t, double> podnet = bench_busbw(c.op, "0-72:8");
    const auto log = std::find_if(logs.begin(), logs.end(), [&](const auto& l) { return l.test == c.test; });
    ASSERT_NE(log, logs.end()) << c.test;
    EXPECT_EQ(log->nranks(), 10);
    double lo = 9, hi = 0;
    for (const auto& r : log->rows) {
      const auto it = podnet.lower_bound(r.bytes);  // the power of two at or just above the rounded size
      ASSERT_NE(it, podnet.end()) << c.op << " " << r.bytes;
      ASSERT_LE(it->first - r.bytes, 128) << c.op << " " << r.bytes;
      const double ratio = it->second / r.out_of_place.busbw_gbyte_per_s;
      const bool outlier = std::string_view(c.op) == "allreduce" && r.bytes == (int64_t{64} << 20);
      EXPECT_GE(ratio, c.lo) << c.op << " at " << r.bytes << " B";
      EXPECT_LE(ratio, c.hi) << c.op << " at " << r.bytes << " B";
      if (std::string_view(c.op) == "allreduce" && !outlier) {
        EXPECT_GE(ratio, 0.9) << r.bytes;
      }
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
      ++compared;
    }
    std::printf("  %-14s podnet / measured busbw %.3f - %.3f\n", c.op, lo, hi);
  }
  EXPECT_EQ(compared, 40);  // 10 sizes each
}

// The time of an all-to-all as t = a + X / B, fitted by least squares on relative time over a table's sizes, where X
// is what each GPU sends off its server (S (n - ppn) / n): a is the constant (us), B the rate through its NIC (GB/s).
struct AllToAllFit {
  double a_us = 0, rate_gbs = 0;
};
AllToAllFit fit_alltoall(const std::vector<std::pair<int64_t, double>>& bytes_time_us, int ranks, int per_server) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const auto& [bytes, t] : bytes_time_us) {
    const double x = static_cast<double>(bytes) * (ranks - per_server) / ranks / 1e3;  // kB: kB / us = GB/s
    const double w = 1 / (t * t);
    sw += w, sx += w * x, sy += w * t, sxx += w * x * x, sxy += w * x * t;
  }
  const double slope = (sw * sxy - sx * sy) / (sw * sxx - sx * sx);
  return {(sy - slope * sx) / sw, 1 / slope};
}

// podnet's all-to-all over the ten servers with 1, 2, 4 and 8 GPUs each (the first GPUs of each server, each with
// its own NIC as in the runs, flow engine) against the same cluster's alltoall_perf tables
// (tests/data/nccl-tests/h100-10node-1gpu-four-ops.log for one GPU, h100-10node-alltoall.log for 2, 4 and 8;
// NCCL 2.29.2, 32 MiB - 16 GiB; nothing fitted on them). What they show, podnet's known miss: the measured rate
// through each NIC is 0.92-0.95 of the 49.0 GB/s payload rate of a 400G NIC that podnet gives (and that the same
// run's one-GPU ring all-reduce reaches), at every GPU count, and the constant grows from about 0.12 ms (10 and
// 20 ranks) to about 0.33 ms (40 and 80) where podnet's posts and launch give 0.06-0.19 ms. So podnet is 6-10 %
// fast from 512 MiB on and up to 1.33 x at 32 MiB. The rate gap does not follow NCCL's p2p channels (more of them
// as the GPUs a server grow): a two-server all-to-all of 8 GPUs each reaches the NICs' full rate
// (docs/contributing/validation/one-server.md, "Ten servers, one GPU each"). A model of it must move these bounds with
// the docs.
TEST(PublishedNccl, TenServerAllToAllAtOneToEightGpusAServer) {
  const std::string dir = std::string(PODNET_SOURCE_DIR) + "/tests/data/nccl-tests/";
  auto logs = study::read_nccl_tests(dir + "h100-10node-alltoall.log");
  ASSERT_EQ(logs.size(), 3u);
  for (const auto& l : study::read_nccl_tests(dir + "h100-10node-1gpu-four-ops.log"))
    if (l.test == "alltoall") logs.push_back(l);
  ASSERT_EQ(logs.size(), 4u);
  int compared = 0;
  for (const auto& log : logs) {
    ASSERT_EQ(log.test, "alltoall");
    const int per = log.nranks() / 10;
    ASSERT_TRUE(per == 1 || per == 2 || per == 4 || per == 8) << log.nranks();
    const std::map<int64_t, double> podnet = bench_busbw("alltoall", ten_servers(per));
    std::vector<std::pair<int64_t, double>> measured, ours;
    double lo = 9, hi = 0;
    for (const auto& r : log.rows) {
      const auto it = podnet.lower_bound(r.bytes);  // the power of two at or just above the rounded size
      ASSERT_NE(it, podnet.end()) << per << " " << r.bytes;
      ASSERT_LE(it->first - r.bytes, 1024) << per << " " << r.bytes;
      const double ratio = it->second / r.out_of_place.busbw_gbyte_per_s;
      EXPECT_GE(ratio, 1.02) << per << " GPUs a server at " << r.bytes;
      EXPECT_LE(ratio, it->first >= (int64_t{512} << 20) ? 1.12 : 1.4) << per << " GPUs a server at " << r.bytes;
      lo = std::min(lo, ratio), hi = std::max(hi, ratio);
      measured.emplace_back(r.bytes, r.out_of_place.time_us);
      // busbw = S / t x (n - 1) / n (nccl-tests), so t = S (n - 1) / n / busbw: GB/s = kB/us.
      const double n = log.nranks();
      ours.emplace_back(it->first, static_cast<double>(it->first) * (n - 1) / n / it->second / 1e3);
      ++compared;
    }
    const AllToAllFit m = fit_alltoall(measured, log.nranks(), per), p = fit_alltoall(ours, log.nranks(), per);
    std::printf("  %d GPUs a server  podnet / measured busbw %.3f - %.3f; t = a + X / B: measured a %.0f us, B %.2f "
                "GB/s; podnet a %.0f us, B %.2f GB/s\n",
                per, lo, hi, m.a_us, m.rate_gbs, p.a_us, p.rate_gbs);
    EXPECT_NEAR(p.rate_gbs, 49.02, 0.1);  // one 400G NIC's payload rate: podnet is NIC-bound at every GPU count
    EXPECT_LT(p.a_us, m.a_us);            // and its constant is below the measured one
  }
  EXPECT_EQ(compared, 40);  // 10 sizes each
}

}  // namespace
}  // namespace podnet::cli
