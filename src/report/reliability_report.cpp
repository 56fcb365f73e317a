#include "report/reliability_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <ostream>
#include <vector>

#include "core/units.hpp"
#include "report/report.hpp"

namespace podnet::report {

namespace {

// Counts per window: more decimals for small numbers.
std::string count_text(double v) {
  if (v == 0) return "0";
  if (v < 0.01) return fmt::format("{:.1e}", v);
  return fixed(v, v < 10 ? 2 : 1);
}

std::string percent(double p, int decimals = 1) { return fixed(p * 100, decimals) + " %"; }

std::string seconds_text(double s) {
  if (s >= 3600) return fixed(s / 3600, 2) + " h";
  if (s >= 60) return fixed(s / 60, 1) + " min";
  if (s >= 1) return fixed(s, 1) + " s";
  if (s >= 1e-3) return fixed(s * 1e3, 1) + " ms";
  return format_time(Time::from_seconds(s));
}

std::string duration_text(double hours) {
  if (hours < 1) return fixed(hours * 60, 1) + " min";
  if (hours < 48) return fixed(hours, 2) + " h";
  return fixed(hours / 24, 2) + " days";
}

}  // namespace

void write_reliability_table(const nlohmann::json& d, std::ostream& out) {
  const auto& run = d["run"];
  const auto& job = d["job"];
  const double days = d["duration_days"].get<double>();
  const std::string window = fixed(days, days == std::floor(days) ? 0 : 2) + " d";
  out << fmt::format("podnet reliability: {} (job of {} of {} GPUs on {} servers; window {} days)\n\n",
                     run["scenario"].get<std::string>(), thousands(job["gpus"].get<int64_t>()),
                     thousands(job["fabric_gpus"].get<int64_t>()), thousands(job["servers"].get<int64_t>()),
                     fixed(days, days == std::floor(days) ? 0 : 2));

  std::vector<std::pair<int, std::string>> keys;
  for (auto it = d["by_component"].begin(); it != d["by_component"].end(); ++it)
    keys.emplace_back(it.value()["order"].get<int>(), it.key());
  std::sort(keys.begin(), keys.end());
  const double timeout = d["settings"]["collective_timeout_seconds"].get<double>();
  Table t({"component", "in job", "MTBF (h)", "interrupts?", "share", "failures / " + window,
           "interruptions / " + window});
  for (const auto& [order, key] : keys) {
    const auto& c = d["by_component"][key];
    const bool interrupts = c["interrupts"].get<bool>();
    std::string why = interrupts ? "yes" : "no";
    if (!c["recovery_seconds"].is_null()) {
      const double rec = c["recovery_seconds"].get<double>();
      why += interrupts ? fmt::format(": {} > {} timeout", seconds_text(rec), seconds_text(timeout))
                        : fmt::format(": {} stall", seconds_text(rec));
    }
    t.add({c["label"].get<std::string>(), thousands(c["count"].get<int64_t>()),
           c["mtbf_hours"].is_null() ? "never" : thousands(std::llround(c["mtbf_hours"].get<double>())), why,
           interrupts ? percent(c["share"].get<double>()) : "", count_text(c["expected_failures"].get<double>()),
           count_text(c["expected_interruptions"].get<double>())});
  }
  t.add({"total (interrupting)", "", "", "", percent(d["expected_interruptions"].get<double>() > 0 ? 1.0 : 0.0), "",
         count_text(d["expected_interruptions"].get<double>())});
  t.write(out, "  ");
  out << "\n";

  const auto& mc = d["monte_carlo"];
  const auto trials = thousands(mc["trials"].get<int64_t>());
  Table s({"", "closed form", "Monte Carlo (95 % CI)"});
  const bool mc_ok = mc.contains("interruption_probability");
  s.add({fmt::format("P(at least one interruption in {} days)", fixed(days, days == std::floor(days) ? 0 : 2)),
         percent(d["interruption_probability"].get<double>(), 2),
         mc_ok ? fmt::format("{} ({} - {})", percent(mc["interruption_probability"].get<double>(), 2),
                             percent(mc["ci95_low"].get<double>(), 2), percent(mc["ci95_high"].get<double>(), 2))
               : ""});
  s.add({"expected interruptions", count_text(d["expected_interruptions"].get<double>()),
         mc_ok ? fmt::format("{} ({} - {})", count_text(mc["expected_interruptions"].get<double>()),
                             count_text(mc["expected_interruptions_ci95_low"].get<double>()),
                             count_text(mc["expected_interruptions_ci95_high"].get<double>()))
               : ""});
  s.add({"mean time between interruptions (MTBI)",
         d["mtbi_hours"].is_null() ? "never" : duration_text(d["mtbi_hours"].get<double>()), ""});
  s.add({"absorbed failures (routed around / failed over)", count_text(d["absorbed"]["expected_failures"].get<double>()),
         mc_ok ? count_text(mc["absorbed_failures"].get<double>()) : ""});
  s.add({"  stalling the job in total", seconds_text(d["absorbed"]["stall_seconds"].get<double>()), ""});
  s.write(out, "  ");
  out << "\n";

  const auto& ck = d["checkpoint"];
  const bool tr_ok = mc.contains("goodput");
  out << fmt::format("  checkpoint advice (checkpoint {} min, restart {} min, MTBI as above):\n",
                     fixed(ck["checkpoint_cost_minutes"].get<double>(), 1),
                     fixed(ck["restart_cost_minutes"].get<double>(), 1));
  Table k({"", "closed form", "Monte Carlo (95 % CI)"});
  k.add({"checkpoint every (Daly)",
         ck["interval_minutes"].is_null() ? "never" : fixed(ck["interval_minutes"].get<double>(), 1) + " min", ""});
  k.add({"  Young's first-order interval",
         ck["young_interval_minutes"].is_null() ? "never"
                                                : fixed(ck["young_interval_minutes"].get<double>(), 1) + " min",
         ""});
  k.add({"goodput (useful / wall time)", percent(ck["goodput"].get<double>(), 2),
         tr_ok ? fmt::format("{} ({} - {})", percent(mc["goodput"].get<double>(), 2),
                             percent(mc["goodput_ci95_low"].get<double>(), 2),
                             percent(mc["goodput_ci95_high"].get<double>(), 2))
               : ""});
  const double train = d["training_days"].get<double>();
  k.add({fmt::format("{} days of training take", fixed(train, train == std::floor(train) ? 0 : 2)),
         d["days_to_train_with_failures"].is_null() ? "never"
                                                    : fixed(d["days_to_train_with_failures"].get<double>(), 2) + " days",
         tr_ok ? fixed(mc["days_to_train_with_failures"].get<double>(), 2) + " days" : ""});
  k.write(out, "  ");
  out << "\n";
  if (!mc_ok && mc.contains("skipped")) out << "  note: Monte Carlo skipped: " << mc["skipped"].get<std::string>() << "\n";
  if (!tr_ok && mc.contains("training_skipped"))
    out << "  note: training Monte Carlo skipped: " << mc["training_skipped"].get<std::string>() << "\n";
  out << fmt::format("  note: Monte Carlo: {} trials ({} for training), seed {}\n", trials,
                     thousands(mc["training_trials"].get<int64_t>()), run["seed"].get<uint64_t>());
  if (mc.contains("reduced") && mc_ok) out << "  note: Monte Carlo: " << mc["reduced"].get<std::string>() << "\n";
  if (mc.contains("training_reduced") && tr_ok)
    out << "  note: training Monte Carlo: " << mc["training_reduced"].get<std::string>() << "\n";
  for (const auto& n : d["notes"]) out << "  note: " << n.get<std::string>() << "\n";
}

}  // namespace podnet::report
