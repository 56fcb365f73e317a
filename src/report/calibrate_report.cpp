#include "report/calibrate_report.hpp"

#include <fmt/format.h>
#include <ostream>

#include "report/report.hpp"

namespace podnet::report {

void write_calibrate_table(const nlohmann::json& d, std::ostream& out) {
  const auto& c = d["calibrate"];
  out << fmt::format("podnet calibrate: {} on the {} engine, {} simulations in {}\n",
                     d["run"]["scenario"].get<std::string>(), c["engine"].get<std::string>(),
                     thousands(c["evaluations"].get<int64_t>()), plural(c["sweeps"].get<int64_t>(), "sweep", "sweeps"));
  out << "  optimizer: " << c["optimizer"].get<std::string>() << "\n\n";
  Table k({"key", "start", "fitted", "fitted / start", "bounds"});
  for (const auto& x : c["keys"])
    k.add({x["key"].get<std::string>(), x["start"].get<std::string>(), x["fitted"].get<std::string>(),
           fixed(x["ratio"].get<double>(), 4), x["lo"].get<std::string>() + " .. " + x["hi"].get<std::string>()});
  k.write(out, "  ");
  const auto& logs = c["logs"];
  for (size_t i = 0; i < logs.size(); ++i) {
    const auto& l = logs[i];
    out << fmt::format("\n  {}: {} on {} x {}\n", l["source"].get<std::string>(), l["op"].get<std::string>(),
                       plural(l["hosts"].get<int64_t>(), "host", "hosts"),
                       plural(l["ranks_per_host"].get<int64_t>(), "GPU", "GPUs"));
    const std::string log_algo = l["log_algo"].get<std::string>();
    const std::string log_proto = l["log_proto"].get<std::string>();
    if (log_algo.empty())
      out << "    the log does not say which algorithm NCCL ran (no NCCL_ALGO in it): podnet timed its own choice\n";
    else
      out << fmt::format(
          "    the log ran NCCL_ALGO={}{}: {}\n", log_algo, log_proto.empty() ? "" : " NCCL_PROTO=" + log_proto,
          l["log_algo_applied"].get<bool>()
              ? "podnet timed the same"
              : "not applied (the scenario or --set chose collective.algorithms, or NCCL's model is off)");
    const std::string log_ran = log_algo.empty() ? "not in log" : log_algo;
    Table t({"size (B)", "log time (us)", "log busbw (GB/s)", "podnet time (us)", "podnet busbw (GB/s)", "podnet / log",
             "podnet timed", "log ran"});
    for (const auto& r : c["rows"]) {
      if (r["log"].get<size_t>() != i) continue;
      const std::string proto = r["protocol"].get<std::string>();
      t.add({thousands(r["bytes"].get<int64_t>()), fixed(r["log_time_us"].get<double>(), 2),
             fixed(r["log_busbw_gbyte_per_s"].get<double>(), 2), fixed(r["fit_time_us"].get<double>(), 2),
             fixed(r["fit_busbw_gbyte_per_s"].get<double>(), 2), fixed(r["ratio"].get<double>(), 3),
             r["algorithm"].get<std::string>() + (proto.empty() ? "" : " / " + proto), log_ran});
    }
    t.write(out, "    ");
  }
  out << fmt::format("\n  residual (podnet busbw / log busbw - 1) over {} sizes: rms {}% at the fitted values "
                     "({}% at the start), max {}%\n",
                     c["rows"].size(), fixed(100 * c["rms_fit"].get<double>(), 2),
                     fixed(100 * c["rms_start"].get<double>(), 2), fixed(100 * c["max_abs_fit"].get<double>(), 2));
  for (const auto& n : c["notes"]) out << "  note: " << n.get<std::string>() << "\n";
  for (const auto& n : c["doubts"]) out << "  not trusted: " << n.get<std::string>() << "\n";
}

nlohmann::json calibrate_json(const study::Calibration& c) {
  nlohmann::json keys = nlohmann::json::array();
  for (const auto& k : c.keys)
    keys.push_back({{"key", k.key},
                    {"start", k.start_text},
                    {"fitted", k.text},
                    {"lo", k.lo_text},
                    {"hi", k.hi_text},
                    {"ratio", round_to(k.start != 0 ? k.value / k.start : 0, 6)}});
  nlohmann::json logs = nlohmann::json::array();
  for (const auto& l : c.logs)
    logs.push_back({{"source", l.source},
                    {"op", l.op},
                    {"hosts", l.hosts},
                    {"ranks_per_host", l.ranks_per_host},
                    {"log_algo", l.log_algo},
                    {"log_proto", l.log_proto},
                    {"log_algo_applied", l.log_algo_applied},
                    {"log_proto_applied", l.log_proto_applied}});
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : c.rows)
    rows.push_back({{"log", r.log},
                    {"line", r.line},
                    {"bytes", r.bytes},
                    {"log_time_us", round_to(r.log_time_us, 3)},
                    {"log_busbw_gbyte_per_s", round_to(r.log_busbw, 4)},
                    {"start_time_us", round_to(r.start_time_us, 3)},
                    {"fit_time_us", round_to(r.fit_time_us, 3)},
                    {"fit_busbw_gbyte_per_s", round_to(r.fit_busbw, 4)},
                    {"ratio", round_to(r.ratio, 4)},
                    {"algorithm", r.algorithm},
                    {"protocol", r.protocol}});
  return {{"engine", c.engine},
          {"keys", keys},
          {"logs", logs},
          {"rows", rows},
          {"rms_start", round_to(c.rms_start, 6)},
          {"rms_fit", round_to(c.rms_fit, 6)},
          {"max_abs_fit", round_to(c.max_abs_fit, 6)},
          {"evaluations", c.evaluations},
          {"refused", c.refused},
          {"sweeps", c.sweeps},
          {"notes", c.notes},
          {"trusted", c.doubts.empty()},
          {"doubts", c.doubts},
          {"max_trusted_rms", study::kMaxTrustedRms},
          {"optimizer", "cyclic coordinate descent, golden-section line search per key (24 steps, log space for "
                        "positive bounds), sweeps until no key moves by 1e-4 of its range (at most 8)"},
          {"residual", "busbw_podnet / busbw_log - 1 = time_log / time_podnet - 1, per size"}};
}

nlohmann::json calibrate_training_json(const study::TrainingCalibration& c) {
  const auto& s = c.steps;
  return {{"source", c.source},
          {"format", c.format},
          {"engine", c.engine},
          {"job", {{"gpus", c.gpus}, {"global_batch", c.global_batch}, {"seq", c.seq}}},
          {"steps",
           {{"kept", s.kept},
            {"warmup", s.warmup},
            {"other_batch", s.other_batch},
            {"runs", s.runs},
            {"interval", s.interval},
            {"first_iteration", s.first},
            {"last_iteration", s.last},
            {"median_s", round_to(s.median, 9)},
            {"mean_s", round_to(s.mean, 9)},
            {"p5_s", round_to(s.p5, 9)},
            {"p95_s", round_to(s.p95, 9)},
            {"min_s", round_to(s.min, 9)},
            {"max_s", round_to(s.max, 9)},
            {"robust_cv", round_to(s.robust_cv, 6)}}},
          {"key",
           {{"key", c.key.key},
            {"start", c.key.start_text},
            {"fitted", c.key.text},
            {"lo", c.key.lo_text},
            {"hi", c.key.hi_text},
            {"ratio", round_to(c.key.start != 0 ? c.key.value / c.key.start : 0, 6)}}},
          {"jitter", c.jitter_fitted ? nlohmann::json{{"jitter_cv", round_to(c.jitter_cv, 6)},
                                                      {"start", round_to(c.jitter_start, 6)},
                                                      {"speed_cv", round_to(c.speed_cv, 6)},
                                                      {"steps", study::kJitterSteps},
                                                      {"podnet_cv", round_to(c.podnet_step_cv, 6)}}
                                     : nlohmann::json(nullptr)},
          {"log_s", round_to(c.log_seconds, 9)},
          {"start_s", round_to(c.start_seconds, 9)},
          {"fit_s", round_to(c.fit_seconds, 9)},
          {"fit_step0_s", round_to(c.fit_step0_seconds, 9)},  // what `podnet train` reports (workload.step 0)
          {"start_mfu", round_to(c.start_mfu, 6)},
          {"fit_mfu", round_to(c.fit_mfu, 6)},
          {"evaluations", c.evaluations},
          {"notes", c.notes},
          {"trusted", c.doubts.empty()},
          {"doubts", c.doubts},
          {"max_trusted_step_cv", study::kMaxTrustedStepCv},
          {"method", "false position (Illinois) on ln T(x) = ln t_log, t_log the steady steps' median"}};
}

void write_calibrate_training_table(const nlohmann::json& d, std::ostream& out) {
  const auto& c = d["calibrate_training"];
  const auto& s = c["steps"];
  const auto& j = c["job"];
  const auto ms = [](double seconds) { return fixed(seconds * 1e3, 1) + " ms"; };
  out << fmt::format("podnet calibrate: {} against {} ({}), {} engine, {} simulations\n",
                     d["run"]["scenario"].get<std::string>(), c["source"].get<std::string>(),
                     c["format"].get<std::string>(), c["engine"].get<std::string>(), c["evaluations"].get<int64_t>());
  const int64_t interval = s["interval"].get<int64_t>();
  out << fmt::format("  the log: {} steady steps (iterations {} to {}{}), median {}, p5 {}, p95 {}, spread {}% "
                     "(robust CV); left out {} as warm-up{}\n",
                     s["kept"].get<int64_t>(), thousands(s["first_iteration"].get<int64_t>()),
                     thousands(s["last_iteration"].get<int64_t>()),
                     interval > 1 ? fmt::format(", a line every {} iterations", interval) : std::string(),
                     ms(s["median_s"].get<double>()), ms(s["p5_s"].get<double>()), ms(s["p95_s"].get<double>()),
                     fixed(100 * s["robust_cv"].get<double>(), 2), s["warmup"].get<int64_t>(),
                     s["other_batch"].get<int64_t>() > 0
                         ? fmt::format(", {} at another global batch", s["other_batch"].get<int64_t>())
                         : std::string());
  out << fmt::format("  the job: {} GPUs, global batch {} x seq {}\n\n", thousands(j["gpus"].get<int64_t>()),
                     thousands(j["global_batch"].get<int64_t>()), thousands(j["seq"].get<int64_t>()));
  const auto& k = c["key"];
  Table kt({"key", "start", "fitted", "fitted / start", "bounds"});
  kt.add({k["key"].get<std::string>(), k["start"].get<std::string>(), k["fitted"].get<std::string>(),
          fixed(k["ratio"].get<double>(), 4), k["lo"].get<std::string>() + " .. " + k["hi"].get<std::string>()});
  const auto& jit = c["jitter"];
  if (!jit.is_null())
    kt.add({"workload.jitter_cv", fixed_or_exp(jit["start"].get<double>(), 4),
            fixed_or_exp(jit["jitter_cv"].get<double>(), 4), "-", fmt::format("0 .. {}", study::kMaxFittedJitterCv)});
  kt.write(out, "  ");
  out << "\n";
  Table t({"", "log", "podnet at start", "podnet fitted"});
  t.add({"step time", ms(c["log_s"].get<double>()), ms(c["start_s"].get<double>()), ms(c["fit_s"].get<double>())});
  t.add({"podnet / log", "-", fixed(c["start_s"].get<double>() / c["log_s"].get<double>(), 4),
         fixed(c["fit_s"].get<double>() / c["log_s"].get<double>(), 4)});
  t.add({"MFU", "-", fixed(100 * c["start_mfu"].get<double>(), 1) + "%",
         fixed(100 * c["fit_mfu"].get<double>(), 1) + "%"});
  if (!jit.is_null())
    t.add({fmt::format("step spread ({} steps)", jit["steps"].get<int>()),
           fixed(100 * s["robust_cv"].get<double>(), 2) + "%", "-",
           fixed(100 * jit["podnet_cv"].get<double>(), 2) + "%"});
  t.write(out, "  ");
  out << "\n";
  for (const auto& n : c["notes"]) out << "  note: " << n.get<std::string>() << "\n";
  for (const auto& n : c["doubts"]) out << "  not trusted: " << n.get<std::string>() << "\n";
}

}  // namespace podnet::report
