// `podnet reliability SCENARIO`: the interruption risk of a training job on
// the designed fabric, and checkpoint advice (model: src/reliability/).
#include <cmath>
#include <fmt/format.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"
#include "reliability/monte_carlo.hpp"
#include "reliability/risk.hpp"
#include "report/reliability_report.hpp"

namespace podnet::cli {

namespace {

using report::round_to;

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

nlohmann::json reliability_document(const scenario::Scenario& sc, const reliability::Config& cfg,
                                    const reliability::Inventory& inv, const reliability::Risk& risk,
                                    const reliability::CheckpointAdvice& adv,
                                    const reliability::InterruptionEstimate& mc,
                                    const reliability::TrainingEstimate& tr) {
  nlohmann::json doc = report::new_document(context_of(sc, "reliability"));
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
                              inv.job_gpus));
  notes.push_back("failure rates: reliability.*_mtbf (defaults derived from Llama 3's 419 interruptions in 54 days "
                  "on 16,384 GPUs; optics 1e6 h; switches 250,000 h assumed)");
  notes.push_back("absorbed failures stall the job for their recovery time; only a stall longer than "
                  "collective_timeout interrupts it");
  doc["notes"] = notes;
  return doc;
}

int cmd_reliability(const Common& c) {
  scenario::Scenario sc = load_scenario(c);
  topology::Topology t = sc.build_topology();
  const reliability::Config cfg = reliability_config(sc);
  reliability::Inventory inv;
  try {
    inv = reliability::count_inventory(t, cfg.job_gpus);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", sc.where(e.key()), e.what()));
  }
  const reliability::Risk risk = reliability::assess(inv, cfg);
  const reliability::CheckpointAdvice adv = reliability::advise(risk, cfg);
  const Rng rng(sc.seed);
  const auto mc = reliability::simulate_interruptions(risk.classes, cfg.duration_hours, cfg.trials,
                                                      rng.stream("reliability.interruptions"));
  const auto tr = reliability::simulate_training(cfg.training_hours, adv.interval_hours, cfg.checkpoint_cost_hours,
                                                 cfg.restart_cost_hours, risk.mtbi_hours, cfg.trials,
                                                 rng.stream("reliability.training"));
  emit(c, sc, reliability_document(sc, cfg, inv, risk, adv, mc, tr), "reliability", report::write_reliability_table);
  return kExitOk;
}

}  // namespace

void add_reliability_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* rel = app.add_subcommand(
      "reliability", "interruption risk of a training job on the fabric, and checkpoint advice (Young/Daly, goodput)");
  add_common(rel, *c, true);
  rel->footer(
      "Failure rates, recovery times and checkpoint costs are the scenario's `reliability:` section\n"
      "(see `podnet resolve SCENARIO`); a rate is an MTBF (50000h), FIT (1000FIT) or monthly availability (99.9%).\n\n"
      "Examples:\n  podnet reliability aipod-16k\n"
      "  podnet reliability aipod-16k --set reliability.job_gpus=4096 --set reliability.spare_rail=true\n"
      "  podnet reliability aipod-16k --set reliability.checkpoint_cost=1min --format json");
  rel->callback([&action, c] { action = [c] { return cmd_reliability(*c); }; });
}

}  // namespace podnet::cli
