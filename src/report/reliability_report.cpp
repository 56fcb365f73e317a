#include "report/reliability_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <ostream>
#include <vector>

#include "core/units.hpp"
#include "reliability/checkpoint.hpp"
#include "report/report.hpp"

namespace podnet::report {

namespace {

// Days of training, to a hundred years; past it the figure is no forecast ("9.16e+16 days").
std::string days_text(double days) {
  return days > 36500 ? std::string("more than 100 years") : fixed_or_exp(days, 2) + " days";
}

// Rounds to `digits` significant digits (rates and counts span many decades).
double sig(double v, int digits = 6) {
  if (v == 0 || !std::isfinite(v)) return v;
  const int decimals = digits - 1 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  return round_to(v, std::max(decimals, 0));
}

// +inf (nothing interrupts) is JSON null.
nlohmann::json finite_or_null(double v, int digits = 6) {
  return std::isfinite(v) ? nlohmann::json(sig(v, digits)) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json checkpoint_io_json(const reliability::CheckpointIo& io) {
  nlohmann::json j = {{"bytes", round_to(io.bytes, 0)},
                      {"write_minutes", round_to(io.write_s / 60, 4)},
                      {"read_minutes", round_to(io.read_s / 60, 4)},
                      {"write_bound", io.write_bound},
                      {"read_bound", io.read_bound},
                      {"frontend_gbyte_per_s", round_to(io.frontend_Bps / 1e9, 3)},
                      {"storage_write_gbyte_per_s", round_to(io.storage_write_Bps / 1e9, 3)},
                      {"storage_read_gbyte_per_s", round_to(io.storage_read_Bps / 1e9, 3)},
                      {"overhead_seconds", round_to(io.overhead_s, 3)},
                      {"mode", io.async ? "async" : "sync"}};
  if (io.async) j["snapshot_seconds"] = round_to(io.snapshot_s, 4);
  if (io.behind_training)
    j["behind_training"] = {{"transfer_minutes", round_to(io.write_behind_s / 60, 6)},
                            {"training_slowdown", round_to(io.training_slowdown, 6)},
                            {"training_lost_seconds", round_to(io.training_lost_s, 4)}};
  if (!io.simulated_by.empty()) {
    j["simulated"] = {{"network", io.network},
                      {"engine", io.simulated_by},
                      {"routing", io.routing},
                      {"flows", io.flows},
                      {"write_gbyte_per_s", round_to(io.write_Bps / 1e9, 3)},
                      {"read_gbyte_per_s", round_to(io.read_Bps / 1e9, 3)}};
  }
  return j;
}

namespace {

std::string transfer_text(const nlohmann::json& io) {
  if (io.contains("simulated")) {
    const auto& sim = io["simulated"];
    return fmt::format("checkpoint of {:.2f} TB simulated on {} ({} engine, {} routing, {} flows): written in {} "
                       "min at {} GB/s ({} bound it), read in {} min at {} GB/s ({}), each with {} s of overhead",
                       io["bytes"].get<double>() / 1e12,
                       sim.value("network", "frontend") == "backend" ? "the back end, storage converged"
                                                                     : "the frontend network",
                       sim["engine"].get<std::string>(), sim["routing"].get<std::string>(),
                       thousands(sim["flows"].get<int64_t>()), fixed(io["write_minutes"].get<double>(), 1),
                       fixed(sim["write_gbyte_per_s"].get<double>(), 1), io["write_bound"].get<std::string>(),
                       fixed(io["read_minutes"].get<double>(), 1), fixed(sim["read_gbyte_per_s"].get<double>(), 1),
                       io["read_bound"].get<std::string>(), fixed(io["overhead_seconds"].get<double>(), 0));
  }
  // Each time is the data's move plus the fixed overhead (storage.checkpoint_overhead): say both parts.
  const double overhead = io["overhead_seconds"].get<double>();
  const auto part = [&](const char* minutes, const char* bound) {
    const double m = io[minutes].get<double>();
    return fmt::format("{}: {} moving the data ({} bound it) + {} s of overhead", checkpoint_minutes_text(m),
                       checkpoint_minutes_text(std::max(0.0, m - overhead / 60)), io[bound].get<std::string>(),
                       fixed(overhead, 0));
  };
  return fmt::format("checkpoint of {:.2f} TB over the storage network: written in {}; read in {}",
                     io["bytes"].get<double>() / 1e12, part("write_minutes", "write_bound"),
                     part("read_minutes", "read_bound"));
}

}  // namespace

std::string checkpoint_io_text(const nlohmann::json& io) {
  // Asynchronous: what the job stops for, and what the write behind it costs instead.
  if (io.value("mode", "sync") != "async") return transfer_text(io);
  if (io.contains("behind_training")) {
    // Converged: the write shares the back end with training and costs it time (storage.hpp).
    const auto& b = io["behind_training"];
    return transfer_text(io) +
           fmt::format("; asynchronous on the back end: the job stops {} s to copy its shards to host memory; the "
                       "write's bytes move in {} behind training and slow it by {}% meanwhile, so each checkpoint "
                       "costs {} s of training besides the copy; an interruption also loses the write in flight",
                       fixed(io["snapshot_seconds"].get<double>(), 2),
                       checkpoint_minutes_text(b["transfer_minutes"].get<double>()),
                       fixed(100 * (b["training_slowdown"].get<double>() - 1), 1),
                       fixed(b["training_lost_seconds"].get<double>(), 1));
  }
  return transfer_text(io) +
         fmt::format("; asynchronous: the job stops {} s to copy its shards to host memory, the write runs behind "
                     "training, and an interruption also loses the write in flight",
                     fixed(io["snapshot_seconds"].get<double>(), 2));
}

nlohmann::json reliability_document(const scenario::Setup& s, const study::ReliabilityResult& r) {
  const reliability::Config& cfg = r.config;
  const reliability::Inventory& inv = r.inventory;
  const reliability::Risk& risk = r.risk;
  const reliability::CheckpointAdvice& adv = r.advice;
  const reliability::InterruptionEstimate& mc = r.interruptions;
  const reliability::TrainingEstimate& tr = r.training;
  nlohmann::json doc = new_document(context_of(s.scenario, "reliability"));
  doc["job"] = {{"gpus", inv.job_gpus}, {"fabric_gpus", inv.fabric_gpus}, {"servers", inv.servers}};
  doc["duration_days"] = sig(cfg.duration_hours / 24);
  doc["interruption_rate_per_hour"] = sig(risk.interrupt_rate);
  doc["interruption_probability"] = round_to(risk.probability, 6);
  doc["expected_interruptions"] = sig(risk.expected_interruptions);
  doc["mtbi_hours"] = finite_or_null(risk.mtbi_hours);
  nlohmann::json by = nlohmann::json::object();
  int order = 0;
  for (const auto& c : risk.classes) {
    nlohmann::json row = {
        {"order", order++},
        {"label", c.component.label},
        {"role", reliability::role_name(c.component.role)},
        {"count", c.component.count},
        {"rate_per_hour", sig(c.rate_per_hour)},
        {"mtbf_hours", finite_or_null(c.rate_per_hour > 0 ? 1.0 / c.rate_per_hour : INFINITY)},
        {"interrupts", c.interrupts},
        {"share", round_to(c.share, 6)},
        {"expected_failures", sig(c.expected_failures)},
        {"expected_interruptions", sig(c.expected_interruptions)},
    };
    row["recovery_seconds"] = c.always ? nlohmann::json(nullptr) : nlohmann::json(sig(c.recovery_s));
    by[c.component.key] = row;
  }
  doc["by_component"] = by;
  doc["absorbed"] = {{"expected_failures", sig(risk.absorbed_failures)},
                     {"stall_seconds", sig(risk.stall_hours * 3600)}};
  doc["settings"] = {{"spare_rail", cfg.spare_rail},
                     {"collective_timeout_seconds", sig(cfg.collective_timeout_s)},
                     {"link_recovery_seconds", sig(cfg.link_recovery_s)},
                     {"switch_recovery_seconds", sig(cfg.switch_recovery_s)},
                     {"rail_failover_seconds", sig(cfg.rail_failover_s)}};
  doc["checkpoint"] = {
      {"model", "Daly (2006) interval; goodput = tau / (M e^(R/M) (e^((tau+delta)/M) - 1))"},
      {"checkpoint_cost_minutes", sig(cfg.checkpoint_cost_hours * 60)},
      {"restart_cost_minutes", sig(cfg.restart_cost_hours * 60)},
      {"interval_minutes", finite_or_null(adv.interval_hours * 60)},
      {"young_interval_minutes", finite_or_null(adv.young_interval_hours * 60)},
      {"goodput", round_to(adv.goodput, 6)},
      {"goodput_young", round_to(adv.goodput_young, 6)},
  };
  if (adv.chosen_interval_hours > 0)
    doc["checkpoint"]["yours"] = {{"interval_minutes", sig(adv.chosen_interval_hours * 60)},
                                  {"goodput", round_to(adv.goodput_chosen, 6)},
                                  {"days_to_train_with_failures", finite_or_null(adv.days_to_train_chosen)}};
  if (r.checkpoint_io) doc["checkpoint"]["storage"] = checkpoint_io_json(*r.checkpoint_io);
  doc["training_days"] = sig(cfg.training_hours / 24);
  doc["days_to_train_with_failures"] = finite_or_null(adv.days_to_train);

  nlohmann::json m = {{"trials", mc.trials}, {"trials_requested", mc.requested}, {"training_trials", tr.trials}};
  if (!mc.reduced.empty()) m["reduced"] = mc.reduced;
  if (!tr.reduced.empty()) m["training_reduced"] = tr.reduced;
  if (mc.simulated) {
    m["interruption_probability"] = round_to(mc.probability, 6);
    m["ci95_low"] = round_to(mc.ci95_low, 6);
    m["ci95_high"] = round_to(mc.ci95_high, 6);
    m["expected_interruptions"] = sig(mc.mean_interruptions);
    m["expected_interruptions_ci95_low"] = sig(mc.mean_ci95_low);
    m["expected_interruptions_ci95_high"] = sig(mc.mean_ci95_high);
    m["absorbed_failures"] = sig(mc.mean_absorbed);
  } else {
    m["skipped"] = mc.skipped;
  }
  if (tr.simulated) {
    m["goodput"] = round_to(tr.goodput, 6);
    m["goodput_ci95_low"] = round_to(tr.goodput_ci95_low, 6);
    m["goodput_ci95_high"] = round_to(tr.goodput_ci95_high, 6);
    m["days_to_train_with_failures"] = sig(tr.mean_wall_hours / 24);
  } else {
    m["training_skipped"] = tr.skipped;
  }
  doc["monte_carlo"] = m;

  nlohmann::json notes = nlohmann::json::array();
  notes.push_back(fmt::format("job = the first {} GPUs by rank and the servers, NICs, leaves and upper fabric on "
                              "their paths",
                              thousands(inv.job_gpus)));
  if (!r.job_refused.empty())
    notes.push_back(fmt::format("podnet train refuses this job: {}. The figures above count its GPUs, servers and "
                                "fabric all the same",
                                r.job_refused));
  if (adv.goodput < 0.5)  // less than half the wall time trains: the job is too large for these failure rates
    notes.push_back(fmt::format(
        "one synchronous job on {} GPUs trains {} of the time: an interruption every {} against a {} "
        "restart; a smaller job (reliability.job_gpus), faster restarts and checkpoints "
        "(reliability.restart_cost, reliability.checkpoint_cost) or a spare rail (reliability.spare_rail) raise it",
        thousands(inv.job_gpus), fixed(adv.goodput * 100, 2) + "%", minutes_text(risk.mtbi_hours * 60),
        minutes_text(cfg.restart_cost_hours * 60)));
  if (reliability::beyond_model(cfg.checkpoint_cost_hours, cfg.restart_cost_hours, risk.mtbi_hours))
    notes.push_back(fmt::format(
        "the checkpoint advice is out of its model's range: an interruption every {} is less than a checkpoint "
        "({}) and a restart ({}) take together, so the job spends nearly all its time checkpointing and "
        "restarting; the interval and days above only say how far out of range it is",
        duration_text(risk.mtbi_hours), minutes_text(cfg.checkpoint_cost_hours * 60),
        minutes_text(cfg.restart_cost_hours * 60)));
  // A scenario of several jobs: this is one job's risk, of reliability.job_gpus (two-jobs' 24 + 24 GPUs read as one
  // job of 64, and nothing said so).
  if (!s.scenario.jobs.empty()) {
    std::vector<std::string> each;
    for (const auto& j : s.scenario.jobs) each.push_back(fmt::format("{} {}", j.name, thousands(j.gpus)));
    notes.push_back(fmt::format(
        "the scenario runs {} ({} GPUs): this is the risk of one job of {} GPUs (reliability.job_gpus{}); set "
        "reliability.job_gpus to a job's GPUs for its own",
        plural(static_cast<int64_t>(s.scenario.jobs.size()), "job", "jobs"), fmt::join(each, ", "),
        thousands(inv.job_gpus), cfg.job_gpus == 0 ? " 0: every GPU" : ""));
  }
  notes.push_back("failure rates: reliability.*_mtbf (defaults derived from Llama 3's 419 interruptions in 54 days "
                  "on 16,384 GPUs, 233 in 30 days, for GPUs, software, hosts, NICs and cables; optics 1e6 h and "
                  "switches 250,000 h are assumed and counted on top of them)");
  notes.push_back("absorbed failures stall the job for their recovery time; only a stall longer than "
                  "collective_timeout interrupts it");
  notes.push_back("a stall is the longest any flow waits: through a switch with a tier above it, flows coming down "
                  "wait for routing to converge (network.convergence), flows going up are moved by the switch below "
                  "(network.local_repair), so traffic that stays under one spine layer, as a bench within a pod, "
                  "sees the shorter");
  doc["notes"] = notes;
  return doc;
}

namespace {

// Counts per window: more decimals for small numbers.
std::string count_text(double v) {
  if (v == 0) return "0";
  if (v < 0.0001) return "< 0.0001";
  if (v < 0.01) return fixed(v, 4);  // 0.0064, as a table of decimals reads (not 6.4e-03)
  return fixed(v, v < 10 ? 2 : 1);
}

std::string percent(double p, int decimals = 1) { return fixed(p * 100, decimals) + "%"; }

std::string seconds_text(double s) {
  if (s >= 3600) return fixed(s / 3600, 2) + " h";
  if (s >= 60) return fixed(s / 60, 1) + " min";
  if (s >= 1) return fixed(s, 1) + " s";
  if (s >= 1e-3) return fixed(s * 1e3, 1) + " ms";
  return fixed(s * 1e6, 1) + " us";
}

}  // namespace

std::string duration_text(double hours) {
  if (hours < 1) return fixed(hours * 60, 1) + " min";
  if (hours < 48) return fixed(hours, 2) + " h";
  return fixed(hours / 24, 2) + " days";
}

void write_reliability_table(const nlohmann::json& d, std::ostream& out) {
  const auto& run = d["run"];
  const auto& job = d["job"];
  const double days = d["duration_days"].get<double>();
  const std::string window = fixed(days, days == std::floor(days) ? 0 : 2) + " d";
  out << fmt::format("podnet reliability: {} (job of {} of {} GPUs on {}; window {} days)\n\n",
                     run["scenario"].get<std::string>(), thousands(job["gpus"].get<int64_t>()),
                     thousands(job["fabric_gpus"].get<int64_t>()),
                     plural(job["servers"].get<int64_t>(), "server", "servers"),
                     fixed(days, days == std::floor(days) ? 0 : 2));

  std::vector<std::pair<int, std::string>> keys;
  for (auto it = d["by_component"].begin(); it != d["by_component"].end(); ++it)
    keys.emplace_back(it.value()["order"].get<int>(), it.key());
  std::sort(keys.begin(), keys.end());
  const double timeout = d["settings"]["collective_timeout_seconds"].get<double>();
  Table t(
      {"component", "in job", "MTBF (h)", "interrupts?", "share", "failures / " + window, "interruptions / " + window});
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
  Table s({"", "closed form", "Monte Carlo (95% CI)"});
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
  s.add({"absorbed failures (routed around / failed over)",
         count_text(d["absorbed"]["expected_failures"].get<double>()),
         mc_ok ? count_text(mc["absorbed_failures"].get<double>()) : ""});
  s.add({"  stalling the job in total", seconds_text(d["absorbed"]["stall_seconds"].get<double>()), ""});
  s.write(out, "  ");
  // The risk model counts the back end's parts; a frontend's own failures (its switches, NICs and the storage
  // nodes) would stop data loading and checkpoints, which it does not model.
  if (d["checkpoint"].contains("storage") && d["checkpoint"]["storage"].contains("simulated") &&
      d["checkpoint"]["storage"]["simulated"].value("network", "frontend") == "frontend")
    out << "  note: the components above are the back end's; the frontend's switches and NICs and the storage nodes "
           "are not in the risk model\n";
  out << "\n";

  const auto& ck = d["checkpoint"];
  const bool tr_ok = mc.contains("goodput");
  out << fmt::format("  checkpoint advice (checkpoint {}, restart {}, MTBI as above):\n",
                     checkpoint_minutes_text(ck["checkpoint_cost_minutes"].get<double>()),
                     minutes_text(ck["restart_cost_minutes"].get<double>()));
  if (ck.contains("storage")) out << "  (" << checkpoint_io_text(ck["storage"]) << ")\n";
  Table k({"", "closed form", "Monte Carlo (95% CI)"});
  const bool shorter = !ck["interval_minutes"].is_null() &&
                       ck["interval_minutes"].get<double>() < ck["checkpoint_cost_minutes"].get<double>();
  k.add({"checkpoint every (Daly)",
         ck["interval_minutes"].is_null()
             ? "never"
             : minutes_text(ck["interval_minutes"].get<double>()) + (shorter ? " (shorter than a checkpoint)" : ""),
         ""});
  k.add({"  Young's first-order interval",
         ck["young_interval_minutes"].is_null() ? "never" : minutes_text(ck["young_interval_minutes"].get<double>()),
         ""});
  k.add({"goodput (useful / wall time)", percent(ck["goodput"].get<double>(), 2),
         tr_ok ? fmt::format("{} ({} - {})", percent(mc["goodput"].get<double>(), 2),
                             percent(mc["goodput_ci95_low"].get<double>(), 2),
                             percent(mc["goodput_ci95_high"].get<double>(), 2))
               : ""});
  const double train = d["training_days"].get<double>();
  // Out of the checkpoint model's range (interruptions more often than a checkpoint and a restart take): the days
  // only say how far out; the cell says so, not only the note below (62 years to two decimals read as a forecast).
  const bool beyond = !d["mtbi_hours"].is_null() &&
                      reliability::beyond_model(ck["checkpoint_cost_minutes"].get<double>() / 60,
                                                ck["restart_cost_minutes"].get<double>() / 60,
                                                d["mtbi_hours"].get<double>());
  k.add({fmt::format("{} days of training take", fixed(train, train == std::floor(train) ? 0 : 2)),
         d["days_to_train_with_failures"].is_null() ? "never"
                                                    : days_text(d["days_to_train_with_failures"].get<double>()) +
                                                          (beyond ? " (out of the model's range: see the notes)" : ""),
         tr_ok ? days_text(mc["days_to_train_with_failures"].get<double>()) : ""});
  if (ck.contains("yours")) {  // reliability.checkpoint_interval: the job's own interval beside Daly's
    const auto& y = ck["yours"];
    k.add({fmt::format("at your interval, every {} (reliability.checkpoint_interval)",
                       seconds_text(y["interval_minutes"].get<double>() * 60)),
           "", ""});
    k.add({"  goodput", percent(y["goodput"].get<double>(), 2), ""});
    k.add({fmt::format("  {} days of training take", fixed(train, train == std::floor(train) ? 0 : 2)),
           y["days_to_train_with_failures"].is_null() ? "never"
                                                      : days_text(y["days_to_train_with_failures"].get<double>()),
           ""});
  }
  k.write(out, "  ");
  // The window is reliability.training_days, not the job's length: say where the whole run is.
  out << fmt::format("  ({} days: reliability.training_days; `podnet train` gives this job's whole run with failures, "
                     "or set training_days to its failure-free days)\n",
                     fixed(train, train == std::floor(train) ? 0 : 2));
  out << "\n";
  if (!mc_ok && mc.contains("skipped"))
    out << "  note: Monte Carlo skipped: " << mc["skipped"].get<std::string>() << "\n";
  if (!tr_ok && mc.contains("training_skipped"))
    out << "  note: training Monte Carlo skipped: " << mc["training_skipped"].get<std::string>() << "\n";
  if (mc_ok || tr_ok)  // (none run: the notes above say why)
    out << fmt::format("  note: Monte Carlo: {} trials ({} for training), seed {}\n", trials,
                       thousands(mc["training_trials"].get<int64_t>()), run["seed"].get<uint64_t>());
  if (mc.contains("reduced") && mc_ok) out << "  note: Monte Carlo: " << mc["reduced"].get<std::string>() << "\n";
  if (mc.contains("training_reduced") && tr_ok)
    out << "  note: training Monte Carlo: " << mc["training_reduced"].get<std::string>() << "\n";
  for (const auto& n : d["notes"]) out << "  note: " << n.get<std::string>() << "\n";
}

}  // namespace podnet::report
