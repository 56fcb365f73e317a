#include "report/inference_report.hpp"

#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ostream>
#include <vector>

#include "report/report.hpp"
#include "report/train_report.hpp"

namespace podnet::report {

namespace {

// The p-th percentile in ms; null when no request has the figure (TPOT of one-token outputs).
nlohmann::json percentile_ms(const std::vector<double>& seconds, double p) {
  if (seconds.empty()) return nullptr;
  return round_to(workload::percentile(seconds, p) * 1e3, 4);
}

nlohmann::json percentiles_ms(const std::vector<double>& seconds) {
  return {{"p50", percentile_ms(seconds, 50)},
          {"p90", percentile_ms(seconds, 90)},
          {"p99", percentile_ms(seconds, 99)}};
}

// "1,024", or "512-2,048" for a range.
std::string tokens(const nlohmann::json& range) {
  const auto lo = range["min"].get<int64_t>(), hi = range["max"].get<int64_t>();
  return lo == hi ? thousands(lo) : thousands(lo) + "-" + thousands(hi);
}

// The latency target and the highest rate that meets it.
nlohmann::json target_document(const study::InferenceStudy& r) {
  const workload::InferenceConfig& c = r.config;
  const workload::RateSearch& f = r.search;
  const auto limit_ms = [](Time t) { return t > Time() ? nlohmann::json(round_to(t.seconds() * 1e3, 4)) : nullptr; };
  const double p = c.target.percentile;
  const workload::Latencies lat = workload::latencies(f.at, c.disaggregated);
  int64_t out_tokens = 0;
  for (const auto& q : f.at.requests) out_tokens += q.output;
  const double span = f.at.span.seconds();
  const char* missed = f.ttft_missed && f.tpot_missed ? "both"
                       : f.ttft_missed                ? "ttft"
                       : f.tpot_missed                ? "tpot"
                       : f.fell_behind                ? "pace"
                                                      : nullptr;
  nlohmann::json t = {{"percentile", round_to(p, 4)},
                      {"ttft_ms", limit_ms(c.target.ttft)},
                      {"tpot_ms", limit_ms(c.target.tpot)},
                      {"met", f.feasible},
                      {"rate_per_s", f.feasible ? nlohmann::json(round_to(f.rate, 6)) : nullptr},
                      {"missed_rate_per_s", f.missed_rate > 0 ? nlohmann::json(round_to(f.missed_rate, 6)) : nullptr},
                      {"missed", missed ? nlohmann::json(missed) : nullptr},
                      {"runs", f.runs}};
  // At the rate found (or, when none meets the target, at the lowest rate tried).
  t["at_rate"] = {{"rate_per_s", round_to(f.feasible ? f.rate : f.missed_rate, 6)},
                  {"requests", f.at_requests},
                  {"ttft_ms", percentile_ms(lat.ttft, p)},
                  {"tpot_ms", percentile_ms(lat.tpot, p)},
                  {"output_tokens_per_s", round_to(span > 0 ? static_cast<double>(out_tokens) / span : 0, 3)},
                  {"output_tokens_per_s_per_gpu",
                   round_to(span > 0 ? static_cast<double>(out_tokens) / span / static_cast<double>(c.gpus()) : 0, 3)}};
  return t;
}

// Requests per second: 91.00, 0.0123.
std::string rate(const nlohmann::json& v) {
  const double x = v.get<double>();
  return x >= 1 ? fixed(x, 2) : fmt::format("{:.3g}", x);
}

// The rate the seed's arrivals came at, when it strays from the asked one by 1 % or more: a line.
std::string drawn(const nlohmann::json& stream) {
  if (!stream.contains("drawn_rate_per_s")) return "";
  const double asked = stream["rate_per_s"].get<double>(), got = stream["drawn_rate_per_s"].get<double>();
  if (std::fabs(got - asked) < 0.01 * asked) return "";
  return fmt::format("  (the arrivals are random: seed {} drew them at {} per second, which the throughput below "
                     "follows)\n",
                     stream["seed"].get<uint64_t>(), rate(stream["drawn_rate_per_s"]));
}

std::string ms(const nlohmann::json& v) {
  if (v.is_null()) return "-";
  return fixed(v.get<double>(), v.get<double>() < 10 ? 2 : 1) + " ms";
}

}  // namespace

nlohmann::json inference_document(const scenario::Setup& s, const study::InferenceStudy& r) {
  const workload::InferenceConfig& c = r.config;
  const workload::ServingResult& sv = r.serving;
  nlohmann::json doc = new_document(context_of(s.scenario, "inference"));
  doc["model"] = {{"name", r.model.name},
                  {"params", round_to(r.model.params(), 0)},
                  {"gpu", r.gpu.name},
                  {"precision", c.fp8 ? "fp8" : "bf16"},
                  {"kv_precision", c.kv_fp8 ? "fp8" : "bf16"}};
  if (nlohmann::json rk = reshaped_keys(r.model); !rk.empty()) doc["model"]["reshaped"] = rk;
  doc["layout"] = {{"tp", c.tp},
                   {"pp", c.pp},
                   {"disaggregated", c.disaggregated},
                   {"replicas", c.disaggregated ? c.prefill_replicas + c.decode_replicas : c.replicas},
                   {"prefill_replicas", c.disaggregated ? c.prefill_replicas : c.replicas},
                   {"decode_replicas", c.disaggregated ? c.decode_replicas : c.replicas},
                   {"scheduler", c.chunked ? "chunked" : "prefill_first"},
                   {"gpus", c.gpus()},
                   {"fabric_gpus", r.fabric_gpus},
                   {"fabric_carries_traffic", r.fabric_carries}};
  if (r.pp_raised_from > 0) doc["layout"]["pp_raised_from"] = r.pp_raised_from;
  doc["memory"] = {{"weights_gb_per_gpu", round_to(r.weight_bytes_per_gpu / 1e9, 3)},
                   {"kv_cache_kb_per_token", round_to(r.kv_bytes_per_token / 1e3, 3)},
                   {"kv_capacity_tokens_per_replica", r.kv_capacity_tokens}};
  doc["single_request"] = {{"prompt_tokens", r.single_prompt},
                           {"ttft_ms", round_to(r.single_ttft.seconds() * 1e3, 4)},
                           {"ttft_network_ms", round_to(r.single_ttft_network.seconds() * 1e3, 4)},
                           {"tpot_ms", round_to(r.single_tpot.seconds() * 1e3, 4)},
                           {"tpot_network_ms", round_to(r.single_tpot_network.seconds() * 1e3, 4)}};
  if (c.disaggregated) doc["single_request"]["kv_transfer_ms"] = round_to(r.single_kv_transfer.seconds() * 1e3, 4);
  const workload::Latencies lat = workload::latencies(sv, c.disaggregated);
  int64_t out_tokens = 0, in_tokens = 0;
  for (const auto& q : sv.requests) {
    out_tokens += q.output;
    in_tokens += q.prompt;
  }
  const double span = sv.span.seconds();
  const auto replicas = static_cast<double>(c.disaggregated ? c.prefill_replicas + c.decode_replicas : c.replicas);
  const double n = static_cast<double>(std::max<size_t>(1, sv.requests.size()));
  doc["stream"] = {
      {"requests", c.requests},
      {"rate_per_s", round_to(c.rate, 6)},
      {"prompt_tokens",
       {{"min", c.prompt_lo}, {"max", c.prompt_hi}, {"mean", round_to(static_cast<double>(in_tokens) / n, 2)}}},
      {"output_tokens",
       {{"min", c.output_lo}, {"max", c.output_hi}, {"mean", round_to(static_cast<double>(out_tokens) / n, 2)}}},
      {"seed", c.seed}};
  // The rate the seed's draw came at: n arrivals over their first-to-last span (a Poisson draw of 1,000 strays
  // a few percent from the asked rate, which the served rate then shows).
  if (sv.requests.size() >= 2) {
    const double drawn_span = (sv.requests.back().arrival - sv.requests.front().arrival).seconds();
    if (drawn_span > 0) doc["stream"]["drawn_rate_per_s"] = round_to((n - 1) / drawn_span, 6);
  }
  if (c.lengths) {
    doc["stream"]["lengths_file"] = c.lengths_file;
    doc["stream"]["lengths_in_file"] = c.lengths->size();
  }
  // kSteadyLatencies median latencies of arrivals at least, or the stream is a burst the batches absorb.
  const double arrivals = c.rate > 0 ? static_cast<double>(c.requests) / c.rate : 0;
  const double median_e2e = lat.e2e.empty() ? 0 : workload::percentile(lat.e2e, 50);
  doc["stream"]["arrival_seconds"] = round_to(arrivals, 4);
  doc["stream"]["steady"] = arrivals >= workload::kSteadyLatencies * median_e2e;
  doc["latency"] = {{"ttft_ms", percentiles_ms(lat.ttft)},
                    {"tpot_ms", percentiles_ms(lat.tpot)},
                    {"e2e_ms", percentiles_ms(lat.e2e)}};
  if (c.disaggregated) doc["latency"]["kv_transfer_ms"] = percentiles_ms(lat.kv_transfer);
  doc["throughput"] = {{"output_tokens_per_s", round_to(span > 0 ? static_cast<double>(out_tokens) / span : 0, 3)},
                       {"output_tokens_per_s_per_gpu",
                        round_to(span > 0 ? static_cast<double>(out_tokens) / span / static_cast<double>(c.gpus()) : 0,
                                 3)},
                       {"input_tokens_per_s", round_to(span > 0 ? static_cast<double>(in_tokens) / span : 0, 3)},
                       {"requests_per_s", round_to(span > 0 ? static_cast<double>(sv.requests.size()) / span : 0, 6)}};
  doc["utilization"] = {{"busy", round_to(span > 0 ? sv.busy_seconds / (span * replicas) : 0, 6)},
                        {"network_share", round_to(sv.busy_seconds > 0 ? sv.network_seconds / sv.busy_seconds : 0, 6)},
                        {"mean_decode_batch", round_to(sv.mean_decode_batch, 3)},
                        {"max_batch", c.max_batch},
                        {"prefill_passes", sv.prefill_passes},
                        {"decode_passes", sv.decode_passes}};
  // Arrivals faster than the replicas serve: the queue grows for as long as the run lasts (the replicas never
  // idle, and they finish fewer requests a second than arrive; a short burst on idle replicas is not this).
  doc["stream"]["overloaded"] = doc["throughput"]["requests_per_s"].get<double>() < 0.95 * c.rate &&
                                doc["utilization"]["busy"].get<double>() > 0.98;
  if (r.searched) doc["target"] = target_document(r);
  doc["notes"] = {
      "each pass is timed as compute (FLOPs at compute_efficiency of the GPU's peak) or memory (weights read at "
      "memory_efficiency of HBM bandwidth, the KV cache at kv_read_efficiency), whichever is longer, plus "
      "layer_overhead per layer and its network part timed on the fabric",
      c.chunked ? "continuous batching, chunked prefill beside decode; every request reserves its prompt and output "
                  "tokens of KV cache; no preemption, no prefix caching, no speculative decoding"
                : "continuous batching, prefill first; every request reserves its prompt and output tokens of KV "
                  "cache; no preemption, no prefix caching, no speculative decoding",
      "the collectives of different replicas and the KV transfers are timed alone on an idle fabric"};
  return doc;
}

void write_inference_table(const nlohmann::json& d, std::ostream& out) {
  const auto& m = d["model"];
  const auto& l = d["layout"];
  out << fmt::format("podnet inference: {} ({:.1f}B params, {}) on {} x {} ({} of {} GPUs)\n", model_label(m),
                     m["params"].get<double>() / 1e9, m["precision"].get<std::string>(),
                     thousands(l["gpus"].get<int64_t>()), m["gpu"].get<std::string>(),
                     thousands(l["gpus"].get<int64_t>()), thousands(l["fabric_gpus"].get<int64_t>()));
  if (l["disaggregated"].get<bool>())
    out << fmt::format("  TP{} x PP{} replicas: {} prefill, {} decode (disaggregated)\n", l["tp"].get<int64_t>(),
                       l["pp"].get<int64_t>(), thousands(l["prefill_replicas"].get<int64_t>()),
                       thousands(l["decode_replicas"].get<int64_t>()));
  else
    out << fmt::format("  TP{} x PP{} replicas: {} (prefill and decode on each, {})\n", l["tp"].get<int64_t>(),
                       l["pp"].get<int64_t>(), thousands(l["replicas"].get<int64_t>()),
                       l["scheduler"] == "chunked" ? "chunked prefill beside decode" : "prefill first");
  if (l.contains("pp_raised_from"))
    out << fmt::format("  (PP{}, not the default PP{}: the weights do not fit fewer stages of TP{}; inference.tp and "
                       "inference.pp choose the layout)\n",
                       l["pp"].get<int64_t>(), l["pp_raised_from"].get<int64_t>(), l["tp"].get<int64_t>());
  const auto& mem = d["memory"];
  const double kv_kb = mem["kv_cache_kb_per_token"].get<double>();
  out << fmt::format("  weights {:.1f} GB per GPU; KV cache ({}) {} per token, {} tokens per replica\n\n",
                     mem["weights_gb_per_gpu"].get<double>(), m["kv_precision"].get<std::string>(),
                     kv_kb >= 1000 ? fixed(kv_kb / 1000, 2) + " MB" : fixed(kv_kb, 1) + " KB",
                     thousands(mem["kv_capacity_tokens_per_replica"].get<int64_t>()));
  const auto& one = d["single_request"];
  Table t1({"one request alone", "time", "communication"});
  const auto& prompts = d["stream"]["prompt_tokens"];
  t1.add({fmt::format("time to first token ({} prompt tokens{})", thousands(one["prompt_tokens"].get<int64_t>()),
                      d["stream"].contains("lengths_file")                      ? ", the file's median"
                      : prompts.is_object() && prompts["min"] != prompts["max"] ? ", the range's median"
                                                                                : ""),
          ms(one["ttft_ms"]), ms(one["ttft_network_ms"])});
  t1.add({"time per output token", ms(one["tpot_ms"]), ms(one["tpot_network_ms"])});
  if (one.contains("kv_transfer_ms")) t1.add({"KV cache transfer, prefill to decode", ms(one["kv_transfer_ms"]), ""});
  t1.write(out, "  ");
  // Where the communication runs: NVLink alone, or the fabric too (what a NIC or switch what-if can change).
  if (l.contains("fabric_carries_traffic") && !l["fabric_carries_traffic"].get<bool>())
    out << fmt::format("  (communication: TP{} inside one server, on NVLink; the fabric's NICs and switches carry none "
                       "of this layout's traffic, so a NIC or switch what-if changes nothing here)\n",
                       l["tp"].get<int64_t>());
  else out << "  (communication: NVLink inside a server, the fabric's NICs and switches between servers)\n";
  const auto& s = d["stream"];
  if (s.contains("lengths_file"))
    out << fmt::format("\n  {} requests at {} per second, lengths from {} ({} {}, in order; prompt {}, mean {}; "
                       "output {}, mean {} tokens):\n",
                       thousands(s["requests"].get<int64_t>()), rate(s["rate_per_s"]),
                       s["lengths_file"].get<std::string>(), thousands(s["lengths_in_file"].get<int64_t>()),
                       s["lengths_in_file"].get<int64_t>() == 1 ? "row" : "rows", tokens(s["prompt_tokens"]),
                       fixed(s["prompt_tokens"]["mean"].get<double>(), 0), tokens(s["output_tokens"]),
                       fixed(s["output_tokens"]["mean"].get<double>(), 0));
  else
    out << fmt::format("\n  {} requests at {} per second (prompt {}, output {} {}):\n{}",
                       thousands(s["requests"].get<int64_t>()), rate(s["rate_per_s"]), tokens(s["prompt_tokens"]),
                       tokens(s["output_tokens"]), tokens(s["output_tokens"]) == "1" ? "token" : "tokens", drawn(s));
  const double served = d["throughput"]["requests_per_s"].get<double>();
  if (s.value("overloaded", false))
    out << fmt::format(
        "  OVERLOADED: requests arrive at {} per second and the replicas serve about {}: the queue grows "
        "for as long as the run lasts, so the latencies below grow with --requests (lower --rate, or "
        "add replicas: inference.replicas)\n",
        rate(s["rate_per_s"]), fixed(served, 2));
  else if (!s["steady"].get<bool>())
    out << fmt::format("  (they arrive over {} s, under 30 median end-to-end latencies: a burst more than a steady "
                       "state; more requests, --requests, for steady figures)\n",
                       fixed(s["arrival_seconds"].get<double>(), 1));
  Table t2({"latency", "p50", "p90", "p99"});
  const auto row = [&](const char* label, const nlohmann::json& p) {
    t2.add({label, ms(p["p50"]), ms(p["p90"]), ms(p["p99"])});
  };
  const auto& lat = d["latency"];
  row("time to first token", lat["ttft_ms"]);
  row("time per output token", lat["tpot_ms"]);
  row("end to end", lat["e2e_ms"]);
  if (lat.contains("kv_transfer_ms")) row("KV cache transfer", lat["kv_transfer_ms"]);
  t2.write(out, "  ");
  if (lat.contains("kv_transfer_ms"))
    out << "  (each KV transfer is timed alone on an idle fabric: transfers do not queue behind each other)\n";
  const auto& th = d["throughput"];
  const auto& u = d["utilization"];
  out << fmt::format("\n  throughput          {} output tokens/s ({} per GPU), {} requests/s\n",
                     thousands(std::llround(th["output_tokens_per_s"].get<double>())),
                     fixed(th["output_tokens_per_s_per_gpu"].get<double>(), 1),
                     fixed(th["requests_per_s"].get<double>(), 2));
  // Busy is time in a pass: continuous batching runs passes while any request is in flight, so a lightly
  // loaded replica is busy too. The decode batch against its limit is what shows room to spare.
  out << fmt::format("  replicas busy       {:.1f}% of the time in a pass; mean decode batch {:.1f}{}\n",
                     100 * u["busy"].get<double>(), u["mean_decode_batch"].get<double>(),
                     u.contains("max_batch") ? " of at most " + thousands(u["max_batch"].get<int64_t>()) : "");
  if (u["busy"].get<double>() > 0.9)
    out << (d.contains("target") ? "  (a replica runs passes while any request is in flight, so busy is not load: the "
                                   "latency target below finds the highest rate the layout serves)\n"
                                 : "  (a replica runs passes while any request is in flight, so busy is not load: "
                                   "--target-ttft or --target-tpot finds the highest rate the layout serves)\n");
  out << fmt::format("  communication share {:.1f}% of the busy time\n", 100 * u["network_share"].get<double>());
  if (!d.contains("target")) return;
  const auto& t = d["target"];
  const std::string p = "p" + fixed(t["percentile"].get<double>(),
                                    t["percentile"].get<double>() == std::floor(t["percentile"].get<double>()) ? 0 : 1);
  std::vector<std::string> limits;
  // A target as given: 2,000 ms, 40 ms, 12.5 ms.
  const auto limit = [](const nlohmann::json& v) {
    const double x = v.get<double>();
    return x == std::floor(x) ? fixed(x, 0) + " ms" : ms(v);
  };
  if (!t["ttft_ms"].is_null()) limits.push_back(fmt::format("{} time to first token <= {}", p, limit(t["ttft_ms"])));
  if (!t["tpot_ms"].is_null()) limits.push_back(fmt::format("{} time per output token <= {}", p, limit(t["tpot_ms"])));
  out << fmt::format("\n  Latency target: {}\n", fmt::join(limits, ", "));
  const auto& a = t["at_rate"];
  const auto what = [](const nlohmann::json& m) -> std::string {
    if (m.is_null()) return "";
    const std::string k = m.get<std::string>();
    return k == "both"   ? "both targets"
           : k == "ttft" ? "time to first token"
           : k == "tpot" ? "time per output token"
                         : "the pace: the replicas fall behind the arrivals";
  };
  if (!t["met"].get<bool>()) {
    // What to try follows what missed: a prompt's length sets the first token's time, not the pace of the others
    // (each output token reads the weights and the KV cache once; a smaller decode batch shares that less).
    const bool ttft_missed = !t["ttft_ms"].is_null() && a["ttft_ms"].is_number() &&
                             a["ttft_ms"].get<double>() > t["ttft_ms"].get<double>();
    const bool tpot_missed = !t["tpot_ms"].is_null() && a["tpot_ms"].is_number() &&
                             a["tpot_ms"].get<double>() > t["tpot_ms"].get<double>();
    const bool alone_meets_tpot = tpot_missed && d["single_request"]["tpot_ms"].is_number() &&
                                  d["single_request"]["tpot_ms"].get<double>() <= t["tpot_ms"].get<double>();
    const std::string advice =
        tpot_missed && !ttft_missed ? alone_meets_tpot ? "try a smaller inference.max_batch, a larger inference.tp or "
                                                         "inference.precision=fp8"
                                                       : "try a larger inference.tp or inference.precision=fp8"
        : ttft_missed && !tpot_missed ? "try a larger inference.tp, inference.precision=fp8 or shorter prompts"
                                      : "try a larger inference.tp or inference.precision=fp8";
    out << fmt::format("  no rate meets it: at {} requests/s, {} time to first token {}, time per output token {}\n"
                       "  (one request alone: {} and {}); {}\n",
                       rate(a["rate_per_s"]), p, ms(a["ttft_ms"]), ms(a["tpot_ms"]), ms(d["single_request"]["ttft_ms"]),
                       ms(d["single_request"]["tpot_ms"]), advice);
    return;
  }
  out << fmt::format("  highest rate meeting it   {} requests/s", rate(t["rate_per_s"]));
  if (!t["missed_rate_per_s"].is_null())
    out << fmt::format(" ({} requests/s misses {})", rate(t["missed_rate_per_s"]), what(t["missed"]));
  out << "\n";
  out << fmt::format("  throughput at that rate   {} output tokens/s ({} per GPU)\n",
                     thousands(std::llround(a["output_tokens_per_s"].get<double>())),
                     fixed(a["output_tokens_per_s_per_gpu"].get<double>(), 1));
  out << fmt::format("  {:<26}time to first token {}, time per output token {}\n", p + " at that rate",
                     ms(a["ttft_ms"]), ms(a["tpot_ms"]));
  const auto requests = a["requests"].get<int64_t>();
  out << fmt::format("  search                    {} runs; {} requests at that rate ({} s of arrivals)\n",
                     t["runs"].get<int>(), thousands(requests),
                     fixed(static_cast<double>(requests) / t["rate_per_s"].get<double>(), 1));
}

}  // namespace podnet::report
