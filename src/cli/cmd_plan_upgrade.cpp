// `podnet plan-upgrade SCENARIO`: a rolling upgrade of one switch tier under the running job: what each
// step costs, what the whole upgrade costs, the recommended plan (model: src/study/upgrade.hpp).
// Flags -> --set maintenance.* -> study::plan_upgrade -> report.
#include <fmt/format.h>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/upgrade_report.hpp"
#include "study/upgrade.hpp"

namespace podnet::cli {

namespace {

struct UpgradeOptions {
  std::string network, tier, batches, step_time, negligible, runs, engine;
};

int cmd_plan_upgrade(Common c, const UpgradeOptions& o) {
  check_output_dir("--out", c.out_dir);
  if (!o.network.empty()) set_by(c, "--network", "maintenance.network", o.network);
  if (!o.tier.empty()) set_by(c, "--tier", "maintenance.tier", o.tier);
  if (!o.batches.empty()) set_by(c, "--batches", "maintenance.batches", "[" + o.batches + "]");
  if (!o.step_time.empty()) set_by(c, "--step-time", "maintenance.step_time", o.step_time);
  if (!o.negligible.empty()) set_by(c, "--negligible", "maintenance.negligible", o.negligible);
  if (!o.runs.empty()) set_by(c, "--runs", "maintenance.runs", o.runs);
  if (!o.engine.empty()) set_by(c, "--engine", "network.engine", o.engine);
  RunLabel label;
  const scenario::Setup s = load_setup(c, "plan-upgrade", label);
  const nlohmann::json doc = report::upgrade_document(s, study::plan_upgrade(s, study_progress("plan-upgrade", label)));
  emit(c, s.scenario, doc, "plan-upgrade", report::write_upgrade_table);
  return kExitOk;
}

}  // namespace

void add_plan_upgrade_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<UpgradeOptions>();
  auto* cmd = app.add_subcommand(
      "plan-upgrade",
      "a rolling upgrade of one switch tier under the running job: each step's slowdown, the total extra "
      "training time, and the batch size and grouping to use");
  add_common(cmd, *c, true);
  cmd->add_option("--network", o->network,
                  "backend | frontend: whose switches are upgraded; the frontend's cost the job through its data "
                  "loading and checkpoints (maintenance.network)")
      ->type_name("NETWORK");
  cmd->add_option("--tier", o->tier, "the switch tier to upgrade: leaf, spine, super_spine, ... (maintenance.tier)")
      ->type_name("TIER");
  cmd->add_option("--batches", o->batches,
                  "switches drained together, one plan per size, e.g. 1,4,16 (maintenance.batches)")
      ->type_name("N,N,...");
  cmd->add_option("--step-time", o->step_time,
                  "how long one step keeps its switches out: drain, upgrade, reboot, checks (maintenance.step_time)")
      ->type_name("TIME");
  cmd->add_option("--negligible", o->negligible,
                  "extra training time that counts as none: within it of the least costly plan, the shortest "
                  "window is recommended (maintenance.negligible)")
      ->type_name("TIME");
  cmd->add_option("--runs", o->runs,
                  "steps of each plan simulated, evenly spaced; the others take their mean (0: every step; "
                  "maintenance.runs)")
      ->type_name("N");
  cmd->add_option("--engine", o->engine, "flow | packet: the engine that times each step (sets network.engine)");
  cmd->footer(
      "A step drains its switches before the iteration runs (routing avoids them) and times the scenario's\n"
      "training job on the rest. The job runs at 1/slowdown of its speed while a step lasts, so each step costs\n"
      "step_time x (1 - 1/slowdown) of training time. The recommended plan has the shortest window among\n"
      "those within --negligible (1 min) of the least extra training time. `packed` drains neighbouring switches\n"
      "(one plane); "
      "`spread` takes one from each stretch of the tier. On the frontend (--network frontend) a step slows the\n"
      "job's data loading and its checkpoint writes instead. docs/commands/plan-upgrade.md explains the model.\n\n"
      "Examples:\n"
      "  podnet plan-upgrade aipod-16k\n"
      "  podnet plan-upgrade aipod-16k --tier super_spine --batches 1,8,32 --step-time 45min\n"
      "  podnet plan-upgrade leafspine-8k --set topology.gpus=1024 --set workload.model=llama3-70b --runs 0\n"
      "  podnet plan-upgrade aipod-16k --format json\n"
      "  podnet plan-upgrade aipod-16k --network frontend --set frontend.nics=2 --set frontend.storage_nodes=16");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_plan_upgrade(*c, *o); }; });
}

}  // namespace podnet::cli
