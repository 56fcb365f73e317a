// Closed forms of the serving model (inference.hpp), derived by hand, and the
// scheduler's wiring on streams whose timeline can be followed step by step.
#include "workload/inference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace podnet::workload {
namespace {

// A small dense model whose figures are easy to follow by hand: l = 2, h = 1024, a = 8, g = 2 (head 128),
// f = 4096 SwiGLU, V = 1000, untied embeddings, RMSNorm.
ModelSpec toy() {
  ModelSpec m;
  m.name = "toy";
  m.layers = 2;
  m.hidden = 1024;
  m.heads = 8;
  m.kv_heads = 2;
  m.ffn = 4096;
  m.vocab = 1000;
  m.seq = 2048;
  m.gated_mlp = true;
  m.biases = false;
  m.tied_embeddings = false;
  m.learned_positions = false;
  return m;
}

// 1e15 FLOP/s, 1e12 B/s, 10 GB: round figures.
GpuSpec round_gpu() {
  GpuSpec g;
  g.name = "round";
  g.peak_flops = 1e15;
  g.hbm_bytes = 10'000'000'000;
  g.hbm_bandwidth = 1e12;
  return g;
}

InferenceConfig one_gpu() {
  InferenceConfig c;
  c.tp = 1;
  c.compute_efficiency = 1;
  c.memory_efficiency = 1;
  c.kv_read_efficiency = 1;
  c.layer_overhead = Time();  // the tests below derive the roofline alone; LayerOverhead... adds the two terms
  c.memory_fraction = 1;
  return c;
}

TEST(Inference, KvCacheWeightsAndCapacityByHand) {
  const ModelSpec m = toy();
  const GpuSpec g = round_gpu();
  const ServingCost cost(m, g, one_gpu());
  // K' = 2 l g (h/a) x 2 B = 2 x 2 x 2 x 128 x 2 = 2,048 B per token.
  EXPECT_DOUBLE_EQ(cost.kv_bytes_per_token(), 2048);
  // Per layer: attention 2h^2 + 2h(gh/a) = 2,097,152 + 524,288; MLP 3hf = 12,582,912; norms 2h = 2,048.
  // Embeddings 2Vh = 2,048,000. Params = 2 x 15,206,400 + 2,048,000 = 32,460,800; BF16: 64,921,600 B.
  EXPECT_DOUBLE_EQ(cost.weight_bytes(), 64'921'600);
  // Capacity: (10e9 - 64,921,600) / 2,048 = 4,851,112.5 -> 4,851,112 tokens.
  EXPECT_EQ(cost.kv_capacity_tokens(), 4'851'112);
  InferenceConfig tp2 = one_gpu();
  tp2.tp = 2;
  EXPECT_DOUBLE_EQ(ServingCost(m, g, tp2).weight_bytes_per_gpu(), 32'460'800);
  EXPECT_EQ(ServingCost(m, g, tp2).kv_capacity_tokens(), 9'733'925);  // 2 x (10e9 - 32,460,800) / 2,048
  // An FP8 KV cache: K = 1 B, K' = 1,024 B; (10e9 - 64,921,600) / 1,024 = 9,702,225 tokens, twice as many.
  InferenceConfig kv8 = one_gpu();
  kv8.kv_fp8 = true;
  EXPECT_DOUBLE_EQ(ServingCost(m, g, kv8).kv_bytes_per_token(), 1024);
  EXPECT_EQ(ServingCost(m, g, kv8).kv_capacity_tokens(), 9'702'225);
}

TEST(Inference, PrefillAndDecodeTimesByHand) {
  const ModelSpec m = toy();
  const ServingCost cost(m, round_gpu(), one_gpu());
  // Matmul params per layer M = 2,621,440 + 12,582,912 = 15,204,352.
  // Prefill of one 1,000-token prompt: 2 l M s + 2 l h s^2 + 2 h V
  //   = 60,817,408,000 + 4,096,000,000 + 2,048,000 = 64,915,456,000 FLOP -> 64.915456 us at 1e15.
  EXPECT_DOUBLE_EQ(cost.prefill_flops(1000, 1e6, 1), 64'915'456'000);
  // Its memory side: weights 64,921,600 + KV 2,048,000 B = 66.9696 us at 1e12 B/s: longer, so it sets the time.
  EXPECT_EQ(cost.prefill(1000, 1e6, 1), Time::from_seconds(66'969'600 / 1e12));
  // Decode of one request with 1,000 tokens of context: bytes = 2 (l (attention + norms) + V h) + MLP + KV
  //   = 2 (2 x 2,623,488 + 1,024,000) + 2 x 2 x 12,582,912 + 2,048 x 1,000
  //   = 12,541,952 + 50,331,648 + 2,048,000 = 64,921,600 (the input embedding is a lookup, not read whole).
  const double bytes = 2.0 * (2 * (2'621'440 + 2'048) + 1000 * 1024) + 2.0 * 2 * 12'582'912 + 2048.0 * 1000;
  EXPECT_DOUBLE_EQ(cost.decode_bytes(1, 1000), bytes);
  EXPECT_EQ(cost.decode(1, 1000), Time::from_seconds(bytes / 1e12));  // memory-bound at batch 1
  // Compute: 2 l M + 4 l h c + 2 h V = 60,817,408 + 8,192,000 + 2,048,000 FLOP: 71 ns, far below the reads.
  EXPECT_DOUBLE_EQ(cost.decode_flops(1, 1000), 71'057'408);
}

TEST(Inference, LayerOverheadAndAttentionEfficiencyByHand) {
  const ModelSpec m = toy();  // 2 layers
  InferenceConfig c = one_gpu();
  c.kv_read_efficiency = 0.5;
  c.layer_overhead = Time::from_seconds(40e-6);
  const ServingCost cost(m, round_gpu(), c);
  // Every pass pays 2 layers x 40 us = 80 us beside the roofline.
  EXPECT_EQ(cost.overhead(), Time::from_seconds(80e-6));
  // Prefill of 1,000 tokens: 66.9696 us of reads (the KV cache is written, at memory_efficiency) + 80 us.
  EXPECT_EQ(cost.prefill(1000, 1e6, 1), Time::from_seconds(66'969'600 / 1e12) + Time::from_seconds(80e-6));
  // Decode at 1,000 tokens of context: weights 62,873,600 B at 1e12 B/s = 62.8736 us; the KV cache, 2,048,000 B,
  // at half the bandwidth = 4.096 us; + 80 us = 146.9696 us.
  EXPECT_EQ(cost.kv_read_seconds(1000), 4.096e-6);
  EXPECT_EQ(cost.decode(1, 1000), Time::from_seconds(62'873'600 / 1e12 + 4.096e-6) + Time::from_seconds(80e-6));
  // A chunked pass of 100 prompt tokens beside that request: weights + the chunk's KV written (204,800 B) at
  // 1e12, the context read at 5e11, + 80 us.
  EXPECT_EQ(cost.mixed(100, 1e4, 0, 1, 1000),
            Time::from_seconds((62'873'600 + 204'800) / 1e12 + 4.096e-6) + Time::from_seconds(80e-6));
}

TEST(Inference, MoeDecodeReadsTheExpertsItsTokensTouch) {
  ModelSpec m = toy();
  m.experts = 8;
  m.top_k = 2;
  const ServingCost cost(m, round_gpu(), one_gpu());
  // One token touches 2 of 8 experts: E (1 - (1 - k/E)^1) = 2. 64 tokens touch 8 (1 - 0.75^64) = 8 - 8e-8.
  const double one_expert = 2.0 * 3 * 1024 * 4096;  // BF16 bytes per layer
  const double router = 2.0 * 1024 * 8;
  const double base = cost.decode_bytes(1, 0) - 2 * (2 * one_expert + router);
  EXPECT_NEAR(cost.decode_bytes(64, 0) - base, 2 * (8 * (1 - std::pow(0.75, 64)) * one_expert + router), 1e-3);
}

TEST(Inference, OneRequestAloneFollowsThePasses) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.requests = 1;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 4;
  const ServingCost cost(m, round_gpu(), c);
  ServingNetwork net;
  net.pass = [](int64_t tokens) { return Time::from_seconds(1e-6 * static_cast<double>(tokens)); };  // 1 us a token
  const ServingResult r = simulate_serving(cost, c, net);
  ASSERT_EQ(r.requests.size(), 1u);
  const RequestRecord& q = r.requests[0];
  // TTFT: the prefill pass and its network part (1,000 us); then 3 decode passes of context 1,001..1,003.
  const Time first = cost.prefill(1000, 1e6, 1) + Time::from_seconds(1e-3);
  EXPECT_EQ(q.first_token - q.arrival, first);
  Time decode;
  for (int64_t ctx = 1001; ctx <= 1003; ++ctx) decode = decode + cost.decode(1, ctx) + Time::from_seconds(1e-6);
  EXPECT_EQ(q.finish - q.first_token, decode);
  EXPECT_EQ(r.prefill_passes, 1);
  EXPECT_EQ(r.decode_passes, 3);
  EXPECT_DOUBLE_EQ(r.mean_decode_batch, 1);
  EXPECT_NEAR(r.network_seconds, 1e-3 + 3e-6, 1e-12);
}

TEST(Inference, ADisaggregatedRequestWaitsForItsKvCache) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.disaggregated = true;
  c.requests = 1;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 2;
  const ServingCost cost(m, round_gpu(), c);
  ServingNetwork net;
  net.kv_transfer = [](int64_t) { return Time::from_seconds(5e-3); };
  const ServingResult r = simulate_serving(cost, c, net);
  const RequestRecord& q = r.requests[0];
  EXPECT_EQ(q.first_token - q.arrival, cost.prefill(1000, 1e6, 1));  // the first token is the prefill's
  EXPECT_EQ(q.kv_transfer, Time::from_seconds(5e-3));
  EXPECT_EQ(q.finish - q.first_token, Time::from_seconds(5e-3) + cost.decode(1, 1001));  // then one decode
}

TEST(Inference, RefusesWhatAReplicaCannotHoldAndIsDeterministic) {
  ModelSpec m = toy();
  GpuSpec small = round_gpu();
  small.hbm_bytes = 60'000'000;  // below the 64.9 MB of weights
  InferenceConfig c = one_gpu();
  try {
    (void)simulate_serving(ServingCost(m, small, c), c, {});
    ADD_FAILURE() << "expected a refusal";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "inference.tp");
    EXPECT_NE(std::string(e.what()).find("the weights of toy (0.1 GB in bf16)"), std::string::npos) << e.what();
  }
  c.requests = 200;
  c.rate = 50;
  c.prompt_lo = 100;
  c.prompt_hi = 900;
  c.output_lo = 10;
  c.output_hi = 50;
  const ServingCost cost(m, round_gpu(), c);
  const ServingResult a = simulate_serving(cost, c, {}), b = simulate_serving(cost, c, {});
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) EXPECT_EQ(a.requests[i].finish, b.requests[i].finish) << i;
  // 1,000 requests at 1e-6 per second would arrive over 1e9 s, past int64 picoseconds (-1.2e9 ms TTFTs).
  InferenceConfig slow = c;
  slow.requests = 1000;
  slow.rate = 1e-6;
  try {
    (void)simulate_serving(cost, slow, {});
    ADD_FAILURE() << "expected a refusal";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "inference.rate");
    EXPECT_NE(std::string(e.what()).find("arrive over more than 1,000 hours"), std::string::npos) << e.what();
  }
  EXPECT_EQ(percentile({3, 1, 2, 4}, 50), 2);
  EXPECT_EQ(percentile({3, 1, 2, 4}, 99), 4);
}

// A prefill-only stream (one output token) of equal prompts, one prompt per pass, is an M/D/1 queue: every
// request is served in P = the prefill of 1,000 tokens (66.97 us, memory-bound, see above), so no rate above
// 1 / P = 14,932 requests/s keeps the queue bounded, and 20,000 requests at even 1 % above it leave the last
// ones 200 P late. With a target of 11 P on the 99th percentile TTFT, the rate found is below 1 / P and
// above half of it (the M/D/1 mean wait at load 0.5 is 0.5 P); it meets the target, the next rate tried,
// within 1 %, misses it.
TEST(Inference, TheRateSearchStopsBelowAPrefillQueuesCapacity) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.requests = 20'000;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 1;
  c.max_batch_tokens = 1000;
  const ServingCost cost(m, round_gpu(), c);
  const Time P = cost.prefill(1000, 1e6, 1);
  const double capacity = 1 / P.seconds();
  c.target.ttft = P * 11;
  const RateSearch f = search_rate(cost, c, {});
  ASSERT_TRUE(f.feasible);
  EXPECT_LT(f.rate, capacity);
  EXPECT_GT(f.rate, 0.5 * capacity);
  EXPECT_GT(f.missed_rate, f.rate);
  EXPECT_LE(f.missed_rate, f.rate * 1.01);
  EXPECT_TRUE(f.ttft_missed);
  EXPECT_FALSE(f.tpot_missed);  // no target on it (and no request has a second token)
  EXPECT_LE(percentile(latencies(f.at, false).ttft, 99), c.target.ttft.seconds());
  InferenceConfig over = c;
  over.rate = f.missed_rate;
  EXPECT_GT(percentile(latencies(simulate_serving(cost, over, {}), false).ttft, 99), c.target.ttft.seconds());
  // The same search again: the same answer.
  EXPECT_EQ(search_rate(cost, c, {}).rate, f.rate);
}

// A target one request alone cannot meet: no rate does. From 1 request/s the search halves down to the
// least rate, at which 50 requests are expected to arrive over 100 h: 50 x 10 / 3.6e6 s = 1.39e-4 per
// second (2^-12 is 2.4e-4, the 13th halving stops there: 14 runs), and says which target missed.
TEST(Inference, ATargetOneRequestAloneMissesIsMetByNoRate) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.requests = 50;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 4;
  const ServingCost cost(m, round_gpu(), c);
  c.target.tpot = Time::from_seconds(cost.decode(1, 1001).seconds() / 2);  // half of the fastest decode pass
  int calls = 0;
  const RateSearch f = search_rate(cost, c, {}, [&](int run, double, bool met, int total) {
    EXPECT_EQ(run, ++calls);
    EXPECT_FALSE(met);
    EXPECT_EQ(total, 0);  // never bracketed
  });
  EXPECT_FALSE(f.feasible);
  EXPECT_EQ(f.runs, 14);
  EXPECT_EQ(calls, 14);
  EXPECT_DOUBLE_EQ(f.missed_rate, 500 / 3.6e6);
  EXPECT_TRUE(f.tpot_missed);
  EXPECT_FALSE(f.ttft_missed);
  EXPECT_EQ(f.at.requests.size(), 50u);  // the run at the lowest rate tried, for the report
}

// A target on TPOT alone: an overloaded stream queues in TTFT, which nothing bounds. With chunked prefill
// every pass decodes, so TPOT stays about one pass however long the queue. The replica must keep pace too:
// every request needs a pass of 1,000 prompt tokens (the token budget), P, so no rate above 1 / P is
// sustained (within the 5 % kMinPace allows); the search stops there because the replica fell behind, not
// because of the target.
TEST(Inference, TheRateSearchRefusesARateTheReplicasFallBehind) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.chunked = true;
  c.requests = 5000;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 2;
  c.max_batch_tokens = 1000;
  const ServingCost cost(m, round_gpu(), c);
  const Time P = cost.prefill(1000, 1e6, 1);
  c.target.tpot = P * 5;
  const RateSearch f = search_rate(cost, c, {});
  ASSERT_TRUE(f.feasible);
  EXPECT_LT(f.rate, 1.05 / P.seconds());  // kMinPace lets a stream fall behind by 5 % at most
  EXPECT_GT(f.rate, 0.9 / P.seconds());
  EXPECT_TRUE(f.fell_behind);
  EXPECT_FALSE(f.tpot_missed);
  EXPECT_GE(kept_up(f.at), kMinPace);
  // At twice the capacity the pace is the service rate over the arrival rate, 1/2: what arrives in the
  // middle 80 % of the window, 0.8 N, against the 0.4 N the replica serves in the window shifted by the
  // median latency (the middle request's).
  InferenceConfig over = c;
  over.rate = 2 / P.seconds();
  EXPECT_NEAR(kept_up(simulate_serving(cost, over, {})), 0.5, 0.03);
}

// Chunked prefill, one request: a 1,000-token prompt in passes of at most 512 tokens is two chunks, 512
// tokens then 488 after them (attention 2 c o + c^2 = 2 x 488 x 512 + 488^2), and its first token comes with
// the second. A mixed pass without a chunk is a decode pass.
TEST(Inference, AChunkedPromptTakesTwoPassesThenDecodes) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.chunked = true;
  c.max_batch_tokens = 512;
  c.requests = 1;
  c.prompt_lo = c.prompt_hi = 1000;
  c.output_lo = c.output_hi = 3;
  const ServingCost cost(m, round_gpu(), c);
  EXPECT_EQ(cost.mixed(0, 0, 0, 3, 3000), cost.decode(3, 3000));
  const ServingResult r = simulate_serving(cost, c, {});
  const RequestRecord& q = r.requests[0];
  const Time first = cost.mixed(512, 512.0 * 512, 0, 0, 0) + cost.mixed(488, 2.0 * 488 * 512 + 488.0 * 488, 1, 0, 0);
  EXPECT_EQ(q.first_token - q.arrival, first);
  EXPECT_EQ(q.finish - q.first_token, cost.decode(1, 1001) + cost.decode(1, 1002));
  EXPECT_EQ(r.prefill_passes, 2);
  EXPECT_EQ(r.decode_passes, 2);
  // The same prompt in one pass costs the prefill-first pass's FLOPs: 2 l M s + 2 l h s^2 + 2 h V.
  EXPECT_DOUBLE_EQ(cost.prefill_flops(1000, 1e6, 1),
                   cost.prefill_flops(512, 512.0 * 512, 0) + cost.prefill_flops(488, 2.0 * 488 * 512 + 488.0 * 488, 1));
}

// Chunked prefill, two requests nanoseconds apart (1e9 per second): the first prefills alone (the second
// arrives while it runs); the next pass decodes the first's second token beside the second's whole prompt
// (a mixed pass); the third decodes both, and ends the first (3 output tokens).
TEST(Inference, AChunkedPassDecodesBesideANewPrompt) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.chunked = true;
  c.requests = 2;
  c.rate = 1e9;
  c.prompt_lo = c.prompt_hi = 100;
  c.output_lo = c.output_hi = 3;
  const ServingCost cost(m, round_gpu(), c);
  const ServingResult r = simulate_serving(cost, c, {});
  const RequestRecord &a = r.requests[0], &b = r.requests[1];
  ASSERT_GT(b.arrival, a.arrival);
  const Time pass1 = cost.mixed(100, 1e4, 1, 0, 0);
  ASSERT_LT(b.arrival, a.arrival + pass1);
  const Time pass2 = cost.mixed(100, 1e4, 1, 1, 101);  // the first's context: 100 + its first token
  const Time pass3 = cost.decode(2, 102 + 101);
  EXPECT_EQ(a.first_token, a.arrival + pass1);
  EXPECT_EQ(b.first_token, a.arrival + pass1 + pass2);
  EXPECT_EQ(a.finish, a.arrival + pass1 + pass2 + pass3);
  EXPECT_EQ(b.finish, a.arrival + pass1 + pass2 + pass3 + cost.decode(1, 102));
}

TEST(Inference, ARequestLongerThanTheModelsContextIsRefused) {
  ModelSpec m = toy();  // seq 2,048, no context of its own: it serves 2,048 tokens
  InferenceConfig c = one_gpu();
  c.prompt_lo = c.prompt_hi = 2000;
  c.output_lo = c.output_hi = 100;
  try {
    check_serving(ServingCost(m, round_gpu(), c), c);
    ADD_FAILURE() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(e.key(), "inference.prompt");
    EXPECT_EQ(std::string(e.what()),
              "a request of 2,000 prompt and 100 output tokens is longer than toy serves (2,048 tokens); expected "
              "shorter requests, or workload.context if the model is served with a longer context");
  }
  m.context = 4096;
  EXPECT_NO_THROW(check_serving(ServingCost(m, round_gpu(), c), c));
}

TEST(Inference, TensorParallelismSplitsTheHeadsAsVllmDoes) {
  // toy: 8 attention heads, 2 key/value heads. TP4 replicates each KV head on 2 ranks, so the cache splits over
  // 2 ranks, not 4: 2 x (10e9 - 64,921,600 / 4) / 2,048 = 9,749,775 tokens (TP2 gives 9,733,925 above).
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.tp = 4;
  EXPECT_EQ(ServingCost(m, round_gpu(), c).kv_capacity_tokens(), 9'749'775);
  EXPECT_NO_THROW(check_serving(ServingCost(m, round_gpu(), c), c));
  // TP3 splits neither the 8 heads nor the 2 KV heads; TP8 splits the heads and replicates the KV heads.
  const auto refused = [&](int64_t tp) {
    c.tp = tp;
    try {
      check_serving(ServingCost(m, round_gpu(), c), c);
    } catch (const ParamError& e) {
      return e.key() + ": " + e.what();
    }
    return std::string();
  };
  EXPECT_EQ(refused(3), "inference.tp: toy has 8 attention heads, which TP3 does not split evenly; expected a tp "
                        "dividing 8");
  EXPECT_EQ(refused(8), "");
  ModelSpec odd = toy();
  odd.kv_heads = 4;
  odd.heads = 12;
  c.tp = 6;
  try {
    check_serving(ServingCost(odd, round_gpu(), c), c);
    ADD_FAILURE() << "expected a ParamError";
  } catch (const ParamError& e) {
    EXPECT_EQ(std::string(e.what()), "toy has 4 key/value heads: TP6 neither splits them evenly nor replicates each "
                                     "to whole ranks; expected a tp dividing 4 or a multiple of it");
  }
}

TEST(Inference, LengthsFromAnAzureTraceOrAPlainCsv) {
  // The Azure LLM inference trace's columns (TIMESTAMP ignored), CRLF line ends and a blank line.
  const RequestLengths azure =
      parse_request_lengths("TIMESTAMP,ContextTokens,GeneratedTokens\r\n2023-11-16 18:15:46.6805900,4808,10\r\n\r\n"
                            "2023-11-16 18:15:50.9951690,3180,8\r\n",
                            "azure.csv");
  ASSERT_EQ(azure.size(), 2u);
  EXPECT_EQ(azure[0], std::make_pair(int64_t{4808}, int64_t{10}));
  EXPECT_EQ(azure[1], std::make_pair(int64_t{3180}, int64_t{8}));
  // Any case and order of the columns.
  const RequestLengths plain = parse_request_lengths("Output, Prompt\n256, 1024\n", "p.csv");
  EXPECT_EQ(plain.at(0), std::make_pair(int64_t{1024}, int64_t{256}));
  // A spreadsheet's CSV: a byte order mark, quoted header and cells; "" is a quote inside a quoted cell.
  const RequestLengths sheet =
      parse_request_lengths("\xEF\xBB\xBF\"prompt\",\"output\",\"note\"\r\n\"1024\", \"7\" ,\"a \"\"b\"\", c\"\r\n",
                            "s.csv");
  EXPECT_EQ(sheet.at(0), std::make_pair(int64_t{1024}, int64_t{7}));

  const auto refusal = [](const std::string& text) {
    try {
      (void)parse_request_lengths(text, "f.csv");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(accepted)");
  };
  EXPECT_EQ(refusal(""), "f.csv: empty; expected a header and one request per line");
  EXPECT_EQ(refusal("prompt,output\n"), "f.csv: a header and no request; expected one request per line");
  EXPECT_EQ(refusal("prompt,tokens\n1,2\n").rfind("f.csv:1: expected a header naming the prompt and output", 0), 0u);
  EXPECT_NE(refusal("prompt,tokens\n").find("found no output column"), std::string::npos);
  EXPECT_EQ(refusal("prompt,output\n10,5\n12\n"), "f.csv:3: 1 cells, the header has 2; expected one request per line");
  EXPECT_EQ(refusal("prompt,output\n10,0\n"),
            "f.csv:2: output tokens '0': expected a whole number from 1 to 10,000,000");
  EXPECT_EQ(refusal("prompt,output\n1e3,5\n"),
            "f.csv:2: prompt tokens '1e3': expected a whole number from 1 to 10,000,000");
  EXPECT_EQ(refusal("prompt,output\n\"1,024\",5\n"),
            "f.csv:2: prompt tokens '1,024': expected a whole number from 1 to 10,000,000");
}

TEST(Inference, RequestsTakeTheFileRowsInOrderAndAgain) {
  const ModelSpec m = toy();
  InferenceConfig c = one_gpu();
  c.requests = 5;
  c.rate = 1000;
  use_request_lengths(c, {{100, 3}, {40, 9}});
  // The ranges the checks and the report read are the file's least and most.
  EXPECT_EQ(c.prompt_lo, 40);
  EXPECT_EQ(c.prompt_hi, 100);
  EXPECT_EQ(c.output_lo, 3);
  EXPECT_EQ(c.output_hi, 9);
  const ServingCost cost(m, round_gpu(), c);
  ServingNetwork net;
  net.pass = [](int64_t) { return Time(); };
  const ServingResult r = simulate_serving(cost, c, net);
  ASSERT_EQ(r.requests.size(), 5u);
  const int64_t prompts[] = {100, 40, 100, 40, 100}, outputs[] = {3, 9, 3, 9, 3};
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(r.requests[i].prompt, prompts[i]) << i;
    EXPECT_EQ(r.requests[i].output, outputs[i]) << i;
  }
}

}  // namespace
}  // namespace podnet::workload
