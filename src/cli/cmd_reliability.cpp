// `podnet reliability SCENARIO`: the interruption risk of a training job on
// the designed fabric, and checkpoint advice (model: src/reliability/).
// Flags -> --set -> study::reliability -> report.
#include "cli/common.hpp"
#include "core/error.hpp"
#include "report/html.hpp"
#include "report/reliability_report.hpp"
#include "report/web_assets.hpp"
#include "study/reliability.hpp"

namespace podnet::cli {

namespace {

int cmd_reliability(const Common& c, const std::string& html) {
  if (!html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  check_output_dir("--out", c.out_dir);
  check_output_file("--html", html);
  RunLabel label;
  const scenario::Setup s = load_setup(c, "reliability", label);
  const nlohmann::json doc = report::reliability_document(s, study::reliability(s));
  emit(c, s.scenario, doc, "reliability", report::write_reliability_table);
  if (!html.empty()) {
    write_out(
        "--html", html,
        report::html_page({{"kind", "reliability"}, {"document", doc}, {"goodput_curve", report::goodput_curve(doc)}},
                          "podnet reliability " + s.scenario.name));
    std::cerr << "podnet: wrote " << html << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_reliability_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto* rel = app.add_subcommand(
      "reliability",
      "interruption risk of a training job on the fabric, and checkpoint advice (Young/Daly, goodput; default "
      "scenario: aipod-16k)");
  c->scenario = kDefaultScenario;
  add_common(rel, *c, false);
  auto html = std::make_shared<std::string>();
  rel->add_option("--html", *html,
                  "also write a self-contained HTML report: interruptions by component, goodput against checkpoint "
                  "interval")
      ->type_name("FILE.html");
  rel->footer("Failure rates, recovery times and checkpoint costs are the scenario's `reliability:` section\n"
              "(see `podnet resolve SCENARIO`); a rate is an MTBF (50000h), FIT (1000FIT), annualized failure rate\n"
              "(2%/y: 2 % of the parts fail in a year) or monthly availability (99.9%).\n\n"
              "The keys of ordinary what-ifs (--set reliability.KEY=VALUE; `podnet list keys` lists them all):\n"
              "  job_gpus             GPUs of the job (default 0: every GPU of the fabric)\n"
              "  checkpoint_cost      time to write one checkpoint (default 5min)\n"
              "  restart_cost         time from an interruption to training again (default 10min)\n"
              "  checkpoint_interval  the job's own interval, shown beside Daly's optimum (e.g. 2h)\n"
              "  training_days        failure-free training time (default 30)\n"
              "  spare_rail           NIC failures fail over to a spare rail (default false)\n"
              "  gpu_mtbf, host_mtbf, nic_mtbf, switch_mtbf, optic_mtbf, ...  failure rate of each part\n\n"
              "Examples:\n  podnet reliability aipod-16k\n"
              "  podnet reliability aipod-16k --set reliability.job_gpus=4096 --set reliability.spare_rail=true\n"
              "  podnet reliability aipod-16k --set reliability.checkpoint_cost=1min --format json");
  rel->callback([&action, c, html] { action = [c, html] { return cmd_reliability(*c, *html); }; });
}

}  // namespace podnet::cli
