// LLM serving on the fabric: the cost of one forward pass of a serving
// replica, and a request-level simulation of continuous batching that
// yields time to first token (TTFT), time per output token (TPOT) and
// throughput. The network's part of every pass is given by the caller
// (study/inference.cpp times it on the fabric with any engine).
//
// A replica is tp x pp GPUs holding the whole model. Co-located serving runs
// prefill and decode on every replica; disaggregated serving has a prefill
// pool and a decode pool, and moves each request's KV cache from the one to
// the other over the fabric.
//
// Cost of one forward pass over a batch (l layers, hidden h, a heads, g KV
// heads, vocabulary V; per layer the matmul parameters M = attention + the
// MLP of the experts a token uses; W bytes per weight, K bytes per KV element):
//   prefill of prompts s_i:   F = 2 l M sum(s_i) + 2 l h sum(s_i^2) + 2 h V n
//                             (causal attention: half of QK^T and AV; logits of the last token only)
//   decode of b requests with contexts c_j:
//                             F = 2 l M b + 4 l h sum(c_j) + 2 h V b
//                             bytes = W (l (attention + vectors) + V h + experts touched) + K' sum(c_j)
//   KV cache per token        K' = 2 l g (h / a) K      (keys and values of every layer; K = 2 B in BF16,
//                                                      1 B with inference.kv_precision=fp8)
//   experts touched per layer E (1 - (1 - k/E)^t) of E for t tokens with top-k routing (expectation,
//                             uniform routing); all of them for a dense model
//   time                      max(F / (tp peak e_c), weight bytes / (tp HBM e_m) + KV bytes read / (tp HBM e_a))
//                             + l t_l
//   e_a (inference.kv_read_efficiency, 0.7): decode attention kernels read the KV cache at 0.87 of HBM
//                             bandwidth (FlashAttention-2 split-KV, batch 64, 1,536 tokens of context: vLLM
//                             issue 9471's profile) down to 0.55 (FlashAttention-3 paged decode, batch 16,
//                             2,000-4,000 tokens: Dao-AILab/flash-attention issue 1572); 0.7 is between.
//   t_l (inference.layer_overhead, 40 us): what a pass costs per layer beside matmuls, KV reads and the
//                             network (norms, RoPE, activations, kernel floors, sampling). Fit on gpt-fast's
//                             batch-1 decode of Llama 2 7B (TP 1-8) and 70B (TP 2-8) on A100 (pytorch-labs/
//                             gpt-fast README): the measured time less podnet's is 41.8 us per layer by least
//                             squares (per row 33-45 us). No other row was used to set it.
// A pass crosses the pp stages one after another (no micro-batching inside a
// replica), so pp adds memory, not speed, as in serving engines' default
// pipeline mode. KV capacity per replica = tp pp (HBM x memory_fraction -
// weights per GPU) / K': every request holds its prompt + output tokens from
// admission to its end (no preemption), as vLLM's scheduler reserves them.
//
// Scheduling, inference.scheduler = prefill_first (vLLM's default before V1): an idle replica admits waiting
// requests first come first served while the batch has room (max_batch
// requests, max_batch_tokens prompt tokens, KV capacity) and runs their
// prefill as one pass; otherwise it runs one decode pass of every running
// request. A request arrives to the replica with the fewest requests
// outstanding (ties: the lowest index). Arrivals are Poisson at `rate`;
// prompt and output lengths uniform in their ranges, from the seed.
// scheduler = chunked (vLLM V1's chunked prefill, TensorRT-LLM's in-flight
// batching with chunked context), co-located only: every pass decodes every
// running request and fills the rest of max_batch_tokens (one token per
// decoding request) with prompt chunks, first the prompts already begun, then
// new requests first come first served (while max_batch and the KV cache
// allow). A request's first token comes with the pass that ends its prompt.
// A mixed pass costs
//   time = max((F_prefill + F_decode) / (tp peak e_c),
//              (W dense + experts the pass's tokens touch + K' chunk tokens) / (tp HBM e_m)
//              + K' sum c_j / (tp HBM e_a)) + l t_l
// where a chunk of c tokens after o tokens of its prompt has attention
// 2 l h (2 c o + c^2) (so one chunk of the whole prompt is the prefill above).
//
// Disaggregated: TTFT ends with the prefill pass (the first token is the
// prefill's); the KV transfer then delays the second token.
//
// Latency target (MLPerf Inference's Server scenario): the p-th percentile
// of TTFT and of TPOT over the requests at most the targets, TPOT of a
// request being (finish - first token) / (output - 1), as vLLM's
// benchmark_serving and MLPerf's loadgen define it. search_rate() finds the
// highest arrival rate that meets it: from `rate`, doubling or halving until
// one rate meets the target and another misses it, then bisecting
// (geometric mean) until they are within 1 %. The same seed draws the same
// exponential gaps at every rate, scaled by 1 / rate, so the runs differ by
// the rate alone. It reports the highest rate that met the target.
// A rate meets the target only if the replicas also keep pace with it
// (kept_up() >= kMinPace): with a target on TPOT alone, an overloaded
// stream queues in TTFT, which no target bounds, and a finite stream ends
// before its queue shows in the percentiles.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "workload/model.hpp"

namespace podnet::workload {

// The longest request stream simulate_serving() takes: 1000 h of arrivals (podnet's limit on a time).
inline constexpr double kMaxStreamSeconds = 3.6e6;

// The p-th percentile of TTFT and of TPOT at most these; a zero time sets no limit.
struct LatencyTarget {
  Time ttft, tpot;
  double percentile = 99;
  bool any() const { return ttft > Time() || tpot > Time(); }
};

struct InferenceConfig {
  int64_t tp = 8, pp = 1;
  int64_t replicas = 1;  // co-located replicas
  bool disaggregated = false;
  int64_t prefill_replicas = 1, decode_replicas = 1;
  int64_t max_batch = 256;          // requests decoded together
  int64_t max_batch_tokens = 8192;  // prompt tokens in one prefill pass
  double rate = 1;                  // requests per second
  int64_t requests = 1000;
  int64_t prompt_lo = 1024, prompt_hi = 1024;
  int64_t output_lo = 256, output_hi = 256;
  double compute_efficiency = 0.5;                  // of the GPU's dense peak, in prefill and decode matmuls
  double memory_efficiency = 0.8;                   // of HBM bandwidth when a pass reads the weights
  double kv_read_efficiency = 0.7;                  // of HBM bandwidth when attention reads the KV cache
  Time layer_overhead = Time::from_seconds(40e-6);  // per layer of every pass
  double memory_fraction = 0.9;                     // of HBM for weights and KV cache (the rest: activations, runtime)
  bool fp8 = false;      // weights and matmuls in FP8 (else BF16); KV cache and activations BF16
  bool chunked = false;  // scheduler: chunked prefill mixed with decode (else prefill first)
  bool kv_fp8 = false;   // KV cache in FP8 (else BF16)
  LatencyTarget target;  // none by default: no rate search
  // Each request's (prompt, output) tokens from inference.lengths_file, in order and again from the top; then
  // prompt_lo..output_hi are the file's least and most. Null: lengths uniform in the ranges.
  std::string lengths_file;
  std::shared_ptr<const std::vector<std::pair<int64_t, int64_t>>> lengths;
  uint64_t seed = 1;
  int64_t gpus() const { return tp * pp * (disaggregated ? prefill_replicas + decode_replicas : replicas); }
};

// The scenario's `inference:` section.
std::vector<ParamSpec> inference_params();
InferenceConfig inference_from(const Params& p, uint64_t seed);

// A lengths file (inference.lengths_file): a CSV whose header names a prompt column (prompt, prompt_tokens,
// input, input_tokens, input_len, or an Azure LLM inference trace's ContextTokens) and an output column
// (output, output_tokens, output_len, generated_tokens, GeneratedTokens), in any case and order; other
// columns (TIMESTAMP) are ignored. One request per line, whole token counts from 1 to 10^7, at most
// kMaxLengthRows. InputError "LABEL:LINE: ..." naming the cell and what was expected.
using RequestLengths = std::vector<std::pair<int64_t, int64_t>>;
inline constexpr size_t kMaxLengthRows = 1'000'000;
RequestLengths parse_request_lengths(const std::string& text, const std::string& label);
// Sets c's lengths and its prompt and output ranges to the file's least and most.
void use_request_lengths(InferenceConfig& c, RequestLengths lengths);

// The closed forms of one replica (see the file comment).
class ServingCost {
 public:
  ServingCost(const ModelSpec& m, const GpuSpec& g, const InferenceConfig& c);
  double weight_bytes() const;          // the whole model
  double weight_bytes_per_gpu() const;  // / (tp pp)
  double kv_bytes_per_token() const;    // K'
  int64_t kv_capacity_tokens() const;   // per replica (0 when the weights leave no room)
  // Compute and memory time of one pass, the network's part excluded.
  Time prefill(int64_t tokens, double tokens_squared, int64_t requests) const;
  Time decode(int64_t batch, int64_t context_tokens) const;
  // A chunked scheduler's pass: prompt chunks of `prefill_tokens` in all (attention term `prefill_squared`,
  // 2 c o + c^2 summed over the chunks; `prompts_ending` of them end their prompt and compute logits) beside
  // `batch` decoding requests with `context_tokens` of context. With no chunk it is decode().
  Time mixed(int64_t prefill_tokens, double prefill_squared, int64_t prompts_ending, int64_t batch,
             int64_t context_tokens) const;
  double prefill_flops(int64_t tokens, double tokens_squared, int64_t requests) const;
  double decode_flops(int64_t batch, int64_t context_tokens) const;
  double decode_bytes(int64_t batch, int64_t context_tokens) const;  // weights and KV cache read
  Time overhead() const;                                             // layers x layer_overhead, every pass
  double kv_read_seconds(int64_t context_tokens) const;              // at kv_read_efficiency
  const ModelSpec& model() const { return m_; }
  const GpuSpec& gpu() const { return g_; }

 private:
  double expert_weight_bytes(int64_t tokens) const;  // the experts `tokens` tokens touch, all layers
  ModelSpec m_;                                      // copies: a cost outlives the specs it was made from
  GpuSpec g_;
  InferenceConfig c_;
};

// The network's part of a pass over `tokens` tokens on one replica (its TP
// all-reduces, MoE all-to-alls and pipeline sends), and the KV transfer of a
// prompt of `tokens` tokens from a prefill to a decode replica.
struct ServingNetwork {
  std::function<Time(int64_t tokens)> pass;
  std::function<Time(int64_t tokens)> kv_transfer;
};

struct RequestRecord {
  Time arrival, first_token, finish;
  int64_t prompt = 0, output = 0;
  Time kv_transfer;  // disaggregated only
};

struct ServingResult {
  std::vector<RequestRecord> requests;  // in arrival order
  Time span;                            // first arrival to last finish
  double busy_seconds = 0;              // summed over replicas
  double network_seconds = 0;           // the network's part of busy_seconds
  int64_t prefill_passes = 0, decode_passes = 0;
  double mean_decode_batch = 0;
};

// The refusals simulate_serving() makes before it simulates: weights that leave no KV cache, a request
// larger than a replica's cache, a prompt over max_batch_tokens (prefill first). ParamError naming the key.
void check_serving(const ServingCost& cost, const InferenceConfig& c);

// Simulates the request stream; deterministic for a config (its seed).
// InputError when a request cannot fit a replica's KV cache, naming the keys.
ServingResult simulate_serving(const ServingCost& cost, const InferenceConfig& c, const ServingNetwork& net);

// The p-th percentile (0..100) by nearest rank of `v` (sorted copy); 0 for none.
double percentile(std::vector<double> v, double p);

// Each request's latencies in seconds, in arrival order. tpot has one entry per request of two or more
// output tokens; kv_transfer is empty unless the layout is disaggregated.
struct Latencies {
  std::vector<double> ttft, tpot, e2e, kv_transfer;
};
Latencies latencies(const ServingResult& r, bool disaggregated);

// The pace the replicas keep: requests finishing in the middle 80 % of the stream's arrival window, that
// window shifted by the median end-to-end latency, over the requests arriving in it. About 1 when the
// replicas keep up (in steady state what arrives in a window finishes one latency later); the ratio of
// service to arrival rate when they fall behind. 1 for streams under kMinRequestsToJudgePace requests.
inline constexpr size_t kMinRequestsToJudgePace = 50;
// Each run of the search lasts at least this many median end-to-end latencies of arrivals (more requests
// than inference.requests when needed, at most kMaxSearchRequests): a shorter stream is a burst that the
// batches absorb (1,000 requests to 8 replicas of Llama 3 70B passed at more than twice the rate they sustain
// in steady state). At 30, kept_up()'s window holds 24 latencies of arrivals against about one at each edge, where
// requests cross it: its noise is about 1 / (24 sqrt(requests in flight)), 1.3 % for 10 in flight, well
// inside kMinPace's 5 %.
inline constexpr double kSteadyLatencies = 30;
inline constexpr int64_t kMaxSearchRequests = 200'000;
inline constexpr double kMinPace = 0.95;
double kept_up(const ServingResult& r);

// The highest request rate meeting a latency target (see the file comment).
struct RateSearch {
  bool feasible = false;                          // some rate met the target
  double rate = 0;                                // requests per second: the highest rate tried that met it
  double missed_rate = 0;                         // the lowest rate tried that missed it
  bool ttft_missed = false, tpot_missed = false;  // what missed_rate missed
  bool fell_behind = false;                       // at missed_rate, the replicas did not keep pace
  ServingResult at;                               // the run at `rate` (at the lowest rate tried when infeasible)
  int64_t at_requests = 0;                        // its requests
  int runs = 0;
};
// The target is c.target; on_run(run, rate, met, runs expected in all or 0 while not known) after each run.
RateSearch search_rate(const ServingCost& cost, const InferenceConfig& c, const ServingNetwork& net,
                       const std::function<void(int, double, bool, int)>& on_run = {});

}  // namespace podnet::workload
