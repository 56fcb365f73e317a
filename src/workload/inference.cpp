#include "workload/inference.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <deque>
#include <fmt/format.h>
#include <limits>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace podnet::workload {

std::vector<ParamSpec> inference_params() {
  constexpr double kBig = 1e300;
  return {
      {"tp", ParamType::Int, "8", "tensor-parallel GPUs of a serving replica", 1, 1024},
      {"pp", ParamType::Int, "1", "pipeline stages of a replica (more memory for weights and KV cache, not speed)", 1,
       1024},
      {"replicas", ParamType::Int, "1", "co-located replicas (prefill and decode on each)", 1, 1e6},
      {"disaggregated", ParamType::Bool, "false",
       "separate prefill and decode pools; each request's KV cache crosses the fabric between them"},
      {"prefill_replicas", ParamType::Int, "1", "replicas of the prefill pool (disaggregated)", 1, 1e6},
      {"decode_replicas", ParamType::Int, "1", "replicas of the decode pool (disaggregated)", 1, 1e6},
      {"max_batch", ParamType::Int, "256", "requests a replica decodes together at most", 1, 1e6},
      {"max_batch_tokens", ParamType::Int, "8192", "prompt tokens of one prefill pass at most", 1, 1e8},
      {"rate", ParamType::Real, "1", "requests per second arriving (Poisson)", 1e-6, 1e9},
      {"requests", ParamType::Int, "1000", "requests simulated", 1, 1e7},
      {"prompt", ParamType::Int, "1024", "prompt tokens of a request (the least, with prompt_max)", 1, 1e7},
      {"prompt_max",
       ParamType::Int,
       "",
       "prompt tokens at most: lengths uniform in [prompt, prompt_max]",
       1,
       1e7,
       {},
       true},
      {"output", ParamType::Int, "256", "output tokens of a request (the least, with output_max)", 1, 1e7},
      {"output_max",
       ParamType::Int,
       "",
       "output tokens at most: lengths uniform in [output, output_max]",
       1,
       1e7,
       {},
       true},
      {"compute_efficiency", ParamType::Real, "0.5", "achieved fraction of the GPU's dense peak in matmuls", 0.001, 1},
      {"memory_efficiency", ParamType::Real, "0.8", "achieved fraction of HBM bandwidth when a pass reads the weights",
       0.001, 1},
      {"kv_read_efficiency", ParamType::Real, "0.7",
       "achieved fraction of HBM bandwidth when attention reads the KV cache (decode kernels measure 0.55-0.87)", 0.001,
       1},
      {"layer_overhead", ParamType::Time, "40us",
       "fixed time per layer of every pass, beside matmuls, KV reads and the network: norms, RoPE, activations, "
       "kernel floors, sampling (fit on gpt-fast's batch-1 decode; training's workload.layer_overhead is its own fit)",
       0, 1},
      {"memory_fraction", ParamType::Real, "0.9", "fraction of HBM for weights and KV cache", 0.01, 1},
      {"precision",
       ParamType::String,
       "bf16",
       "weights and matmuls: bf16 or fp8 (activations bf16; the KV cache is kv_precision)",
       -kBig,
       kBig,
       {"bf16", "fp8"}},
      {"kv_precision",
       ParamType::String,
       "bf16",
       "the KV cache: bf16, or fp8 (as FP8 checkpoints quantized with NVIDIA ModelOpt keep it)",
       -kBig,
       kBig,
       {"bf16", "fp8"}},
      {"scheduler",
       ParamType::String,
       "prefill_first",
       "prefill_first: a pass prefills waiting prompts or decodes (vLLM before V1); chunked: every pass decodes "
       "and fills max_batch_tokens with prompt chunks (vLLM V1, TensorRT-LLM in-flight batching); co-located only",
       -kBig,
       kBig,
       {"prefill_first", "chunked"}},
      {"target_ttft",
       ParamType::Time,
       "",
       "a latency target: the target_percentile of time to first token at most this; podnet then searches the "
       "highest request rate that meets the target",
       -kBig,
       kBig,
       {},
       true},
      {"target_tpot",
       ParamType::Time,
       "",
       "a latency target: the target_percentile of time per output token at most this (with or without "
       "target_ttft)",
       -kBig,
       kBig,
       {},
       true},
      {"target_percentile", ParamType::Real, "99", "the percentile the latency targets hold at (MLPerf: 99)", 1, 100},
      {"lengths_file",
       ParamType::String,
       "",
       "a CSV file of each request's prompt and output tokens (a header naming them: prompt,output, or an Azure "
       "LLM inference trace's ContextTokens,GeneratedTokens), taken in order and again from the top; replaces "
       "prompt, prompt_max, output and output_max. A relative path: in a scenario file, the file's; with --set, the "
       "working directory's",
       -kBig,
       kBig,
       {},
       true},
  };
}

InferenceConfig inference_from(const Params& p, uint64_t seed) {
  InferenceConfig c;
  c.tp = p.get_int("tp");
  c.pp = p.get_int("pp");
  c.replicas = p.get_int("replicas");
  c.disaggregated = p.get_bool("disaggregated");
  c.prefill_replicas = p.get_int("prefill_replicas");
  c.decode_replicas = p.get_int("decode_replicas");
  c.max_batch = p.get_int("max_batch");
  c.max_batch_tokens = p.get_int("max_batch_tokens");
  c.rate = p.get_real("rate");
  c.requests = p.get_int("requests");
  c.prompt_lo = p.get_int("prompt");
  c.prompt_hi = p.has("prompt_max") ? p.get_int("prompt_max") : c.prompt_lo;
  c.output_lo = p.get_int("output");
  c.output_hi = p.has("output_max") ? p.get_int("output_max") : c.output_lo;
  if (c.prompt_hi < c.prompt_lo)
    throw ParamError("inference.prompt_max",
                     fmt::format("{} is below inference.prompt = {}; expected at least it", c.prompt_hi, c.prompt_lo));
  if (c.output_hi < c.output_lo)
    throw ParamError("inference.output_max",
                     fmt::format("{} is below inference.output = {}; expected at least it", c.output_hi, c.output_lo));
  c.compute_efficiency = p.get_real("compute_efficiency");
  c.memory_efficiency = p.get_real("memory_efficiency");
  c.kv_read_efficiency = p.get_real("kv_read_efficiency");
  c.layer_overhead = p.get_time("layer_overhead");
  // A fixed cost per layer beyond 10 ms is no GPU's; far beyond it a long stream's times overflow.
  if (c.layer_overhead < Time() || c.layer_overhead > Time::from_seconds(0.01))
    throw ParamError("inference.layer_overhead",
                     fmt::format("{}: expected 0 to 10ms (measured engines: tens of microseconds)",
                                 format_time(c.layer_overhead)));
  c.memory_fraction = p.get_real("memory_fraction");
  c.fp8 = p.get_string("precision") == "fp8";
  c.chunked = p.get_string("scheduler") == "chunked";
  c.kv_fp8 = p.get_string("kv_precision") == "fp8";
  if (c.chunked && c.disaggregated)
    throw ParamError("inference.scheduler",
                     "chunked prefill mixes prefill and decode on one replica; a disaggregated layout separates them: "
                     "expected prefill_first with inference.disaggregated=true");
  if (p.has("target_ttft")) c.target.ttft = p.get_time("target_ttft");
  if (p.has("target_tpot")) c.target.tpot = p.get_time("target_tpot");
  for (const char* key : {"target_ttft", "target_tpot"})
    if (p.has(key) && p.get_time(key) <= Time())
      throw ParamError(std::string("inference.") + key, "expected a time above zero, e.g. 2s or 200ms");
  c.target.percentile = p.get_real("target_percentile");
  if (p.has("lengths_file")) c.lengths_file = p.get_string("lengths_file");
  c.seed = seed;
  return c;
}

namespace {

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// The cells of one CSV line, trimmed; a cell in double quotes may hold commas ("" is a quote).
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> out;
  std::string cell;
  bool quoted = false, was_quoted = false;
  for (size_t i = 0; i <= line.size(); ++i) {
    const char ch = i < line.size() ? line[i] : ',';
    if (quoted) {
      if (ch == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (ch == '"') {
        quoted = false;
      } else if (i < line.size()) {
        cell += ch;
      }
      continue;
    }
    if (ch == '"' && !was_quoted && cell.find_first_not_of(" \t") == std::string::npos) {
      cell.clear();
      quoted = was_quoted = true;
    } else if (ch == ',') {
      if (!was_quoted) {
        while (!cell.empty() && (cell.back() == ' ' || cell.back() == '\t' || cell.back() == '\r')) cell.pop_back();
        size_t b = 0;
        while (b < cell.size() && (cell[b] == ' ' || cell[b] == '\t')) ++b;
        cell.erase(0, b);
      }
      out.push_back(cell);
      cell.clear();
      was_quoted = false;
    } else if (!was_quoted || (ch != ' ' && ch != '\t' && ch != '\r')) {
      cell += ch;
    }
  }
  return out;
}

}  // namespace

RequestLengths parse_request_lengths(const std::string& text, const std::string& label) {
  static const std::vector<std::string> kPrompt = {"prompt",       "prompt_tokens", "input",
                                                   "input_tokens", "input_len",     "contexttokens"};
  static const std::vector<std::string> kOutput = {"output", "output_tokens", "output_len", "generated_tokens",
                                                   "generatedtokens"};
  RequestLengths out;
  // A UTF-8 byte order mark (spreadsheets write one) is not part of the header.
  const std::string_view bom = "\xEF\xBB\xBF";
  const size_t start = text.compare(0, bom.size(), bom) == 0 ? bom.size() : 0;
  int64_t prompt_col = -1, output_col = -1;
  size_t width = 0;
  int64_t line_no = 0;
  size_t at = start;
  while (at <= text.size()) {
    const size_t nl = text.find('\n', at);
    const std::string line = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    at = nl == std::string::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    const std::vector<std::string> row = cells(line);
    if (row.size() == 1 && row[0].empty()) continue;  // a blank line
    if (prompt_col < 0) {                             // the header
      for (size_t i = 0; i < row.size(); ++i) {
        const std::string name = lower(row[i]);
        if (prompt_col < 0 && std::find(kPrompt.begin(), kPrompt.end(), name) != kPrompt.end())
          prompt_col = static_cast<int64_t>(i);
        if (output_col < 0 && std::find(kOutput.begin(), kOutput.end(), name) != kOutput.end())
          output_col = static_cast<int64_t>(i);
      }
      if (prompt_col < 0 || output_col < 0)
        throw InputError(fmt::format("{}:{}: expected a header naming the prompt and output token columns (prompt "
                                     "and output, or an Azure LLM inference trace's ContextTokens and "
                                     "GeneratedTokens); found no {} column",
                                     label, line_no, prompt_col < 0 ? "prompt" : "output"));
      width = row.size();
      continue;
    }
    if (row.size() != width)
      throw InputError(fmt::format("{}:{}: {} cells, the header has {}; expected one request per line", label, line_no,
                                   row.size(), width));
    if (out.size() >= kMaxLengthRows)
      throw InputError(fmt::format("{}: more than {} requests; expected at most that many lines", label,
                                   thousands(static_cast<int64_t>(kMaxLengthRows))));
    std::pair<int64_t, int64_t> r;
    for (const bool prompt : {true, false}) {
      const std::string& cell = row[static_cast<size_t>(prompt ? prompt_col : output_col)];
      int64_t v = 0;
      const auto [end, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), v);
      if (ec != std::errc() || end != cell.data() + cell.size() || v < 1 || v > 10'000'000)
        throw InputError(fmt::format("{}:{}: {} tokens '{}': expected a whole number from 1 to 10,000,000", label,
                                     line_no, prompt ? "prompt" : "output", cell.substr(0, 40)));
      (prompt ? r.first : r.second) = v;
    }
    out.push_back(r);
  }
  if (prompt_col < 0) throw InputError(fmt::format("{}: empty; expected a header and one request per line", label));
  if (out.empty()) throw InputError(fmt::format("{}: a header and no request; expected one request per line", label));
  return out;
}

void use_request_lengths(InferenceConfig& c, RequestLengths lengths) {
  c.prompt_lo = c.output_lo = INT64_MAX;
  c.prompt_hi = c.output_hi = 0;
  for (const auto& [p, o] : lengths) {
    c.prompt_lo = std::min(c.prompt_lo, p);
    c.prompt_hi = std::max(c.prompt_hi, p);
    c.output_lo = std::min(c.output_lo, o);
    c.output_hi = std::max(c.output_hi, o);
  }
  c.lengths = std::make_shared<const RequestLengths>(std::move(lengths));
}

// ---------------------------------------------------------------- closed forms

ServingCost::ServingCost(const ModelSpec& m, const GpuSpec& g, const InferenceConfig& c) : m_(m), g_(g), c_(c) {}

double ServingCost::weight_bytes() const { return m_.params() * (c_.fp8 ? 1.0 : 2.0); }

double ServingCost::weight_bytes_per_gpu() const { return weight_bytes() / static_cast<double>(c_.tp * c_.pp); }

double ServingCost::kv_bytes_per_token() const {
  const double head_dim = static_cast<double>(m_.hidden) / static_cast<double>(m_.heads);
  return 2.0 * static_cast<double>(m_.layers) * static_cast<double>(m_.kv_heads) * head_dim * (c_.kv_fp8 ? 1.0 : 2.0);
}

int64_t ServingCost::kv_capacity_tokens() const {
  const double free = static_cast<double>(g_.hbm_bytes) * c_.memory_fraction - weight_bytes_per_gpu();
  if (free <= 0) return 0;
  // TP splits the key/value heads; past kv_heads ranks each head is replicated (vLLM), so the cache splits
  // over at most kv_heads of them.
  const int64_t split = m_.kv_heads > 0 ? std::min(c_.tp, m_.kv_heads) : c_.tp;
  return static_cast<int64_t>(std::floor(free * static_cast<double>(split * c_.pp) / kv_bytes_per_token()));
}

double ServingCost::expert_weight_bytes(int64_t tokens) const {
  const double w = c_.fp8 ? 1.0 : 2.0, l = static_cast<double>(m_.layers);
  const double one = (m_.gated_mlp ? 3.0 : 2.0) * static_cast<double>(m_.hidden) * static_cast<double>(m_.ffn);
  if (!m_.moe()) return w * l * one;
  const double e = static_cast<double>(m_.experts), k = static_cast<double>(m_.top_k);
  const double touched = e * (1.0 - std::pow(1.0 - k / e, static_cast<double>(tokens)));
  return w * l * (one * touched + static_cast<double>(m_.hidden) * e);  // + the router
}

double ServingCost::prefill_flops(int64_t tokens, double tokens_squared, int64_t requests) const {
  const double l = static_cast<double>(m_.layers), h = static_cast<double>(m_.hidden);
  const double matmul = m_.attention_params_per_layer() + m_.mlp_active_params_per_layer();
  return 2 * l * matmul * static_cast<double>(tokens) + 2 * l * h * tokens_squared +
         2 * h * static_cast<double>(m_.vocab) * static_cast<double>(requests);
}

double ServingCost::decode_flops(int64_t batch, int64_t context_tokens) const {
  const double l = static_cast<double>(m_.layers), h = static_cast<double>(m_.hidden);
  const double matmul = m_.attention_params_per_layer() + m_.mlp_active_params_per_layer();
  return 2 * l * matmul * static_cast<double>(batch) + 4 * l * h * static_cast<double>(context_tokens) +
         2 * h * static_cast<double>(m_.vocab) * static_cast<double>(batch);
}

double ServingCost::decode_bytes(int64_t batch, int64_t context_tokens) const {
  const double w = c_.fp8 ? 1.0 : 2.0, l = static_cast<double>(m_.layers);
  const double dense = l * (m_.attention_params_per_layer() + m_.vector_params_per_layer()) +
                       static_cast<double>(m_.vocab) * static_cast<double>(m_.hidden);
  return w * dense + expert_weight_bytes(batch) + kv_bytes_per_token() * static_cast<double>(context_tokens);
}

namespace {
double peak(const GpuSpec& g, bool fp8) { return fp8 && g.fp8_peak_flops > 0 ? g.fp8_peak_flops : g.peak_flops; }
}  // namespace

Time ServingCost::overhead() const { return c_.layer_overhead * m_.layers; }

double ServingCost::kv_read_seconds(int64_t context_tokens) const {
  return kv_bytes_per_token() * static_cast<double>(context_tokens) /
         (static_cast<double>(c_.tp) * g_.hbm_bandwidth * c_.kv_read_efficiency);
}

Time ServingCost::prefill(int64_t tokens, double tokens_squared, int64_t requests) const {
  const double tp = static_cast<double>(c_.tp);
  const double compute =
      prefill_flops(tokens, tokens_squared, requests) / (tp * peak(g_, c_.fp8) * c_.compute_efficiency);
  const double memory = (weight_bytes() + kv_bytes_per_token() * static_cast<double>(tokens)) /
                        (tp * g_.hbm_bandwidth * c_.memory_efficiency);
  return Time::from_seconds(std::max(compute, memory)) + overhead();
}

Time ServingCost::decode(int64_t batch, int64_t context_tokens) const {
  const double tp = static_cast<double>(c_.tp);
  const double compute = decode_flops(batch, context_tokens) / (tp * peak(g_, c_.fp8) * c_.compute_efficiency);
  const double kv = kv_bytes_per_token() * static_cast<double>(context_tokens);
  const double memory = (decode_bytes(batch, context_tokens) - kv) / (tp * g_.hbm_bandwidth * c_.memory_efficiency) +
                        kv_read_seconds(context_tokens);
  return Time::from_seconds(std::max(compute, memory)) + overhead();
}

Time ServingCost::mixed(int64_t prefill_tokens, double prefill_squared, int64_t prompts_ending, int64_t batch,
                        int64_t context_tokens) const {
  if (prefill_tokens == 0) return decode(batch, context_tokens);
  const double tp = static_cast<double>(c_.tp);
  const double flops =
      prefill_flops(prefill_tokens, prefill_squared, prompts_ending) + decode_flops(batch, context_tokens);
  const double compute = flops / (tp * peak(g_, c_.fp8) * c_.compute_efficiency);
  const double w = c_.fp8 ? 1.0 : 2.0, l = static_cast<double>(m_.layers);
  const double dense = l * (m_.attention_params_per_layer() + m_.vector_params_per_layer()) +
                       static_cast<double>(m_.vocab) * static_cast<double>(m_.hidden);
  const double bytes = w * dense + expert_weight_bytes(batch + prefill_tokens) +
                       kv_bytes_per_token() * static_cast<double>(prefill_tokens);
  const double memory = bytes / (tp * g_.hbm_bandwidth * c_.memory_efficiency) + kv_read_seconds(context_tokens);
  return Time::from_seconds(std::max(compute, memory)) + overhead();
}

// ---------------------------------------------------------------- serving

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
  return v[std::min(v.size() - 1, rank == 0 ? 0 : rank - 1)];
}

namespace {

struct Replica {
  bool prefill = true, decode = true;  // the passes it runs
  Time free_at;
  std::deque<int64_t> waiting;  // requests, first come first served
  std::vector<int64_t> running;
  std::vector<int64_t> prefilling;  // chunked: admitted, their prompt begun, in admission order
  int64_t kv_used = 0;              // tokens reserved
  int64_t outstanding() const { return static_cast<int64_t>(waiting.size() + running.size() + prefilling.size()); }
};

}  // namespace

void check_serving(const ServingCost& cost, const InferenceConfig& c) {
  // vLLM's rule: TP splits the attention heads evenly, and the key/value heads evenly or each to whole ranks.
  const ModelSpec& m = cost.model();
  if (m.heads % c.tp != 0)
    throw ParamError("inference.tp", fmt::format("{} has {} attention heads, which TP{} does not split evenly; "
                                                 "expected a tp dividing {}",
                                                 m.name, m.heads, c.tp, m.heads));
  if (m.kv_heads > 0 && m.kv_heads % c.tp != 0 && c.tp % m.kv_heads != 0)
    throw ParamError("inference.tp",
                     fmt::format("{} has {} key/value heads: TP{} neither splits them evenly nor replicates each "
                                 "to whole ranks; expected a tp dividing {} or a multiple of it",
                                 m.name, m.kv_heads, c.tp, m.kv_heads));
  const int64_t capacity = cost.kv_capacity_tokens();
  if (capacity <= 0)
    throw ParamError(
        "inference.tp",
        fmt::format("the weights of {} ({:.1f} GB in {}) need {:.1f} GB per GPU on TP{} x PP{} ({} "
                    "GPUs), more than {:.0f}% of the {:.1f} GB ({:.0f} GiB) on each {}: raise inference.tp or "
                    "inference.pp, set inference.precision=fp8, or serve a smaller workload.model",
                    cost.model().name, cost.weight_bytes() / 1e9, c.fp8 ? "fp8" : "bf16",
                    cost.weight_bytes_per_gpu() / 1e9, c.tp, c.pp, c.tp * c.pp, 100 * c.memory_fraction,
                    static_cast<double>(cost.gpu().hbm_bytes) / 1e9,
                    static_cast<double>(cost.gpu().hbm_bytes) / 1073741824.0, cost.gpu().name));
  const int64_t context = cost.model().max_context();
  if (c.prompt_hi + c.output_hi > context)
    throw ParamError(c.lengths                   ? "inference.lengths_file"
                     : c.prompt_hi > c.prompt_lo ? "inference.prompt_max"
                                                 : "inference.prompt",
                     fmt::format("a request of {} prompt and {} output tokens is longer than {} serves ({} tokens); "
                                 "expected shorter requests, or workload.context if the model is served with a longer "
                                 "context",
                                 thousands(c.prompt_hi), thousands(c.output_hi), cost.model().name,
                                 thousands(context)));
  if (c.prompt_hi + c.output_hi > capacity)
    throw ParamError(c.lengths ? "inference.lengths_file" : "inference.prompt",
                     fmt::format("a request of {} prompt and {} output tokens needs {} tokens of KV cache, more than "
                                 "a replica holds ({} tokens, {:.1f} MB each): shorten the requests, or raise "
                                 "inference.tp or inference.pp",
                                 thousands(c.prompt_hi), thousands(c.output_hi), thousands(c.prompt_hi + c.output_hi),
                                 thousands(capacity), cost.kv_bytes_per_token() / 1e6));
  if (!c.chunked && c.prompt_hi > c.max_batch_tokens)
    throw ParamError("inference.max_batch_tokens",
                     fmt::format("{} is below the longest prompt ({} tokens{}); expected at least it, or "
                                 "inference.scheduler=chunked, which splits a prompt over passes",
                                 thousands(c.max_batch_tokens), thousands(c.prompt_hi),
                                 c.lengths ? ", in inference.lengths_file" : ""));
}

ServingResult simulate_serving(const ServingCost& cost, const InferenceConfig& c, const ServingNetwork& net) {
  ServingResult out;
  check_serving(cost, c);
  const int64_t capacity = cost.kv_capacity_tokens();

  // The request stream.
  Rng rng = Rng(c.seed).stream("inference");
  out.requests.resize(static_cast<size_t>(c.requests));
  double t = 0;
  for (auto& r : out.requests) {
    t += rng.exponential(c.rate);
    // Times are int64 picoseconds; podnet's limit on a time is 1000 h (core/units.hpp).
    if (t > kMaxStreamSeconds)
      throw ParamError("inference.rate",
                       fmt::format("{} requests at {:.3g} per second arrive over more than 1,000 hours; expected a "
                                   "higher rate or fewer requests (inference.requests)",
                                   thousands(c.requests), c.rate));
    r.arrival = Time::from_seconds(t);
    if (c.lengths) {  // the file's rows in order, again from the top
      const auto& [prompt, output] = (*c.lengths)[static_cast<size_t>(&r - out.requests.data()) % c.lengths->size()];
      r.prompt = prompt;
      r.output = output;
      continue;
    }
    r.prompt = c.prompt_lo + static_cast<int64_t>(rng.below(static_cast<uint64_t>(c.prompt_hi - c.prompt_lo + 1)));
    r.output = c.output_lo + static_cast<int64_t>(rng.below(static_cast<uint64_t>(c.output_hi - c.output_lo + 1)));
  }
  std::vector<int64_t> generated(out.requests.size(), 0);
  std::vector<int64_t> prefilled(out.requests.size(), 0);  // chunked: prompt tokens done
  std::vector<Time> ready(out.requests.size());            // when a request may join a decode batch

  std::vector<Replica> reps;
  if (c.disaggregated) {
    reps.resize(static_cast<size_t>(c.prefill_replicas + c.decode_replicas));
    for (size_t i = 0; i < reps.size(); ++i) {
      const bool p = static_cast<int64_t>(i) < c.prefill_replicas;
      reps[i].prefill = p;
      reps[i].decode = !p;
    }
  } else {
    reps.resize(static_cast<size_t>(c.replicas));
  }
  // The replica of `kind` (prefill / decode) with the fewest requests outstanding.
  const auto least = [&](bool prefill) {
    size_t best = reps.size();
    for (size_t i = 0; i < reps.size(); ++i)
      if ((prefill ? reps[i].prefill : reps[i].decode) &&
          (best == reps.size() || reps[i].outstanding() < reps[best].outstanding()))
        best = i;
    return best;
  };
  // When replica r can start its next pass, Time::max() when it has nothing to do.
  const auto next_start = [&](const Replica& r) {
    Time at = Time::max();
    if (!r.running.empty() || !r.prefilling.empty()) at = r.free_at;
    if (r.waiting.empty()) return at;
    // A prefill replica's queue is in arrival order: its front is ready first. A decode replica's KV caches
    // land in any order.
    if (r.prefill) return std::min(at, std::max(r.free_at, ready[static_cast<size_t>(r.waiting.front())]));
    for (int64_t q : r.waiting) at = std::min(at, std::max(r.free_at, ready[static_cast<size_t>(q)]));
    return at;
  };

  size_t next = 0, done = 0;
  // The KV cache a replica's running requests read: their prompts and the tokens generated so far.
  const auto context_of = [&](const Replica& rep) {
    int64_t context = 0;
    for (int64_t q : rep.running)
      context += out.requests[static_cast<size_t>(q)].prompt + generated[static_cast<size_t>(q)];
    return context;
  };
  // One decode step of a replica's running requests, ending at `end`: each generates a token, those done
  // leave (and free their cache); the ones still decoding are returned.
  const auto decode_running = [&](Replica& rep, Time end) {
    std::vector<int64_t> still;
    for (int64_t q : rep.running) {
      RequestRecord& rq = out.requests[static_cast<size_t>(q)];
      if (++generated[static_cast<size_t>(q)] >= rq.output) {
        rq.finish = end;
        rep.kv_used -= rq.prompt + rq.output;
        ++done;
      } else {
        still.push_back(q);
      }
    }
    return still;
  };
  int64_t batch_sum = 0;
  while (done < out.requests.size()) {
    size_t pick = reps.size();
    Time at = Time::max();
    for (size_t i = 0; i < reps.size(); ++i) {
      const Time s = next_start(reps[i]);
      if (s < at) {
        at = s;
        pick = i;
      }
    }
    if (next < out.requests.size() && out.requests[next].arrival <= at) {  // an arrival first
      const size_t r = least(true);
      ready[next] = out.requests[next].arrival;
      reps[r].waiting.push_back(static_cast<int64_t>(next));
      ++next;
      continue;
    }
    if (pick == reps.size()) throw Error("inference: internal: no replica can run and no request arrives");
    Replica& rep = reps[pick];
    if (c.chunked) {
      // Every running request decodes; prompt chunks fill the rest of the token budget: the prompts begun
      // first, then new requests first come first served while the batch and the cache have room.
      int64_t budget = c.max_batch_tokens - static_cast<int64_t>(rep.running.size());
      int64_t chunk_tokens = 0, ending = 0;
      double squared = 0;
      std::vector<std::pair<int64_t, int64_t>> chunks;  // request, tokens
      const auto take = [&](int64_t q) {
        const auto i = static_cast<size_t>(q);
        const int64_t left = out.requests[i].prompt - prefilled[i];
        const int64_t n = std::min(left, budget);
        if (n <= 0) return;
        const auto o = static_cast<double>(prefilled[i]), k = static_cast<double>(n);
        squared += 2 * k * o + k * k;
        chunk_tokens += n;
        budget -= n;
        if (n == left) ++ending;
        chunks.emplace_back(q, n);
      };
      for (int64_t q : rep.prefilling)
        if (budget > 0) take(q);
      while (budget > 0 && !rep.waiting.empty()) {
        const auto q = static_cast<size_t>(rep.waiting.front());
        const int64_t need = out.requests[q].prompt + out.requests[q].output;
        if (ready[q] > at || rep.kv_used + need > capacity ||
            static_cast<int64_t>(rep.running.size() + rep.prefilling.size()) >= c.max_batch)
          break;
        rep.kv_used += need;
        rep.prefilling.push_back(rep.waiting.front());
        rep.waiting.pop_front();
        take(rep.prefilling.back());
      }
      const auto b = static_cast<int64_t>(rep.running.size());
      if (chunks.empty() && b == 0) throw Error("inference: internal: a chunked pass with nothing to run");
      const int64_t context = context_of(rep);
      const Time comm = net.pass ? net.pass(chunk_tokens + b) : Time();
      const Time took = cost.mixed(chunk_tokens, squared, ending, b, context) + comm;
      const Time end = at + took;
      if (b > 0) ++out.decode_passes, batch_sum += b;
      if (!chunks.empty()) ++out.prefill_passes;
      std::vector<int64_t> still = decode_running(rep, end);
      for (const auto& [q, n] : chunks) {
        const auto i = static_cast<size_t>(q);
        RequestRecord& rq = out.requests[i];
        if ((prefilled[i] += n) < rq.prompt) continue;
        rq.first_token = end;
        generated[i] = 1;
        rep.prefilling.erase(std::find(rep.prefilling.begin(), rep.prefilling.end(), q));
        if (rq.output == 1) {
          rq.finish = end;
          rep.kv_used -= rq.prompt + rq.output;
          ++done;
        } else {
          still.push_back(q);  // decodes from the next pass on
        }
      }
      rep.running = std::move(still);
      rep.free_at = end;
      out.busy_seconds += took.seconds();
      out.network_seconds += comm.seconds();
      continue;
    }
    // Prefill first: admit what has arrived (FCFS) while the batch has room.
    std::vector<int64_t> admitted;
    int64_t tokens = 0;
    double squared = 0;
    if (rep.prefill) {
      while (!rep.waiting.empty()) {
        const auto q = static_cast<size_t>(rep.waiting.front());
        const RequestRecord& rq = out.requests[q];
        if (ready[q] > at) break;
        const int64_t need = rq.prompt + rq.output;
        if (tokens + rq.prompt > c.max_batch_tokens || rep.kv_used + need > capacity ||
            static_cast<int64_t>(rep.running.size() + admitted.size()) >= c.max_batch)
          break;
        tokens += rq.prompt;
        squared += static_cast<double>(rq.prompt) * static_cast<double>(rq.prompt);
        rep.kv_used += need;
        admitted.push_back(rep.waiting.front());
        rep.waiting.pop_front();
      }
    } else {  // a decode replica takes transferred requests into its batch
      for (auto it = rep.waiting.begin(); it != rep.waiting.end();) {
        const auto q = static_cast<size_t>(*it);
        const int64_t need = out.requests[q].prompt + out.requests[q].output;
        if (ready[q] <= at && rep.kv_used + need <= capacity &&
            static_cast<int64_t>(rep.running.size()) < c.max_batch) {
          rep.kv_used += need;
          rep.running.push_back(*it);
          it = rep.waiting.erase(it);
        } else {
          ++it;
        }
      }
    }
    Time took, comm;
    if (!admitted.empty()) {
      comm = net.pass ? net.pass(tokens) : Time();
      took = cost.prefill(tokens, squared, static_cast<int64_t>(admitted.size())) + comm;
      ++out.prefill_passes;
      const Time end = at + took;
      for (int64_t q : admitted) {
        RequestRecord& rq = out.requests[static_cast<size_t>(q)];
        rq.first_token = end;
        generated[static_cast<size_t>(q)] = 1;
        if (rq.output == 1) {
          rq.finish = end;
          rep.kv_used -= rq.prompt + rq.output;
          ++done;
        } else if (c.disaggregated) {
          rep.kv_used -= rq.prompt + rq.output;  // the cache leaves for a decode replica
          rq.kv_transfer = net.kv_transfer ? net.kv_transfer(rq.prompt) : Time();
          ready[static_cast<size_t>(q)] = end + rq.kv_transfer;
          reps[least(false)].waiting.push_back(q);
        } else {
          rep.running.push_back(q);
        }
      }
    } else if (!rep.running.empty()) {
      const int64_t context = context_of(rep);
      const auto b = static_cast<int64_t>(rep.running.size());
      comm = net.pass ? net.pass(b) : Time();
      took = cost.decode(b, context) + comm;
      ++out.decode_passes;
      batch_sum += b;
      const Time end = at + took;
      rep.running = decode_running(rep, end);
    } else {
      // Nothing fits now (a decode replica's cache is full of transfers still landing): wait for the next.
      Time wake = Time::max();
      for (int64_t q : rep.waiting)
        if (ready[static_cast<size_t>(q)] > at) wake = std::min(wake, ready[static_cast<size_t>(q)]);
      if (wake == Time::max()) throw Error("inference: internal: a replica has work it can never start");
      rep.free_at = wake;
      continue;
    }
    rep.free_at = at + took;
    out.busy_seconds += took.seconds();
    out.network_seconds += comm.seconds();
  }
  Time last;
  for (const auto& r : out.requests) last = std::max(last, r.finish);
  out.span = out.requests.empty() ? Time() : last - out.requests.front().arrival;
  out.mean_decode_batch = out.decode_passes ? static_cast<double>(batch_sum) / static_cast<double>(out.decode_passes)
                                            : 0;
  return out;
}

// ---------------------------------------------------------------- latency target

Latencies latencies(const ServingResult& r, bool disaggregated) {
  Latencies l;
  for (const auto& q : r.requests) {
    l.ttft.push_back((q.first_token - q.arrival).seconds());
    if (q.output > 1) l.tpot.push_back((q.finish - q.first_token).seconds() / static_cast<double>(q.output - 1));
    l.e2e.push_back((q.finish - q.arrival).seconds());
    if (disaggregated) l.kv_transfer.push_back(q.kv_transfer.seconds());
  }
  return l;
}

double kept_up(const ServingResult& r) {
  const size_t n = r.requests.size();
  if (n < kMinRequestsToJudgePace) return 1;
  const double d = percentile(latencies(r, false).e2e, 50);
  const size_t i0 = n / 10, i1 = n - 1 - n / 10;  // arrivals are in order
  const double a0 = r.requests[i0].arrival.seconds() + d, a1 = r.requests[i1].arrival.seconds() + d;
  const auto finished = static_cast<double>(std::count_if(r.requests.begin(), r.requests.end(), [&](const auto& q) {
    return q.finish.seconds() >= a0 && q.finish.seconds() <= a1;
  }));
  return finished / static_cast<double>(i1 - i0 + 1);
}

RateSearch search_rate(const ServingCost& cost, const InferenceConfig& c, const ServingNetwork& net,
                       const std::function<void(int, double, bool, int)>& on_run) {
  // inference.rate's range; and the expected stream at most a tenth of the longest simulate_serving takes.
  const double kMinRate = std::max(1e-6, 10 * static_cast<double>(c.requests) / kMaxStreamSeconds);
  constexpr double kMaxRate = 1e9, kStep = 1.01;
  constexpr int kMaxRuns = 80;
  RateSearch out;
  InferenceConfig at = c;
  double lo = 0, hi = 0;  // met at lo (when > 0), missed at hi (when > 0)
  // The runs the search will take in all, once a rate met the target and another missed it (0 before).
  const auto expected = [&] {
    if (lo <= 0 || hi <= 0) return 0;
    return out.runs + std::max(0, static_cast<int>(std::ceil(std::log2(std::log(hi / lo) / std::log(kStep)))));
  };
  // Runs the stream at `rate`; true when it meets the target.
  const auto meets = [&](double rate, ServingResult& result, bool& ttft_missed, bool& tpot_missed, bool& behind) {
    ++out.runs;
    at.rate = rate;
    at.requests = c.requests;
    result = simulate_serving(cost, at, net);
    Latencies l = latencies(result, c.disaggregated);
    // A stream shorter than kSteadyLatencies median latencies is a burst the replicas absorb, not a steady
    // state: run it again that long.
    const double window = static_cast<double>(at.requests) / rate;
    const double steady = kSteadyLatencies * percentile(l.e2e, 50);
    if (window < steady && at.requests < kMaxSearchRequests) {
      at.requests = std::min<int64_t>(kMaxSearchRequests, static_cast<int64_t>(std::ceil(steady * rate)));
      result = simulate_serving(cost, at, net);
      l = latencies(result, c.disaggregated);
    }
    const double p = c.target.percentile;
    ttft_missed = c.target.ttft > Time() && percentile(l.ttft, p) > c.target.ttft.seconds();
    tpot_missed = c.target.tpot > Time() && percentile(l.tpot, p) > c.target.tpot.seconds();
    behind = kept_up(result) < kMinPace;
    return !ttft_missed && !tpot_missed && !behind;
  };
  ServingResult result;
  bool tm = false, pm = false, bm = false;
  // The run just made becomes the one reported.
  const auto keep = [&] {
    out.at = std::move(result);
    out.at_requests = at.requests;
  };
  const auto met = [&](double rate) {
    out.feasible = true;
    out.rate = lo = rate;
    keep();
    if (on_run) on_run(out.runs, rate, true, expected());
  };
  const auto missed = [&](double rate) {
    out.missed_rate = hi = rate;
    out.ttft_missed = tm;
    out.tpot_missed = pm;
    out.fell_behind = bm;
    if (on_run) on_run(out.runs, rate, false, expected());
  };
  double r = std::clamp(c.rate, kMinRate, kMaxRate);
  if (meets(r, result, tm, pm, bm)) {
    met(r);
    while (hi == 0 && r < kMaxRate && out.runs < kMaxRuns) {
      r = std::min(kMaxRate, r * 2);
      if (meets(r, result, tm, pm, bm)) met(r);
      else missed(r);
    }
  } else {
    missed(r);
    keep();  // reported when no rate meets the target
    while (lo == 0 && r > kMinRate && out.runs < kMaxRuns) {
      r = std::max(kMinRate, r / 2);
      if (meets(r, result, tm, pm, bm)) {
        met(r);
      } else {
        missed(r);
        keep();
      }
    }
  }
  while (lo > 0 && hi > 0 && hi > lo * kStep && out.runs < kMaxRuns) {
    r = std::sqrt(lo * hi);
    if (meets(r, result, tm, pm, bm)) met(r);
    else missed(r);
  }
  return out;
}

}  // namespace podnet::workload
