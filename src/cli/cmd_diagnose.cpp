// `podnet diagnose SCENARIO`: probe the fabric for the scenario's hidden
// `faults:`, localize silent loss, check PFC deadlock freedom; or localize a
// probe file; or evaluate localization over seeded random faults.
// Flags -> study::diagnose -> report.
#include <cstdlib>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/common.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "diagnose/probe_csv.hpp"
#include "report/diagnose_report.hpp"
#include "report/html.hpp"
#include "report/web_assets.hpp"
#include "study/diagnose.hpp"

namespace podnet::cli {

namespace {

struct DiagnoseOptions {
  std::string mode = "statistical";
  std::string mesh = "rail";
  int targets = 4, ports = 8;
  double rate = 1000;
  std::string duration = "300s", round = "10s";
  double background = 0;
  double alpha = 1e-3;
  std::string delay_threshold = "2us";
  std::string probes_in, probes_out;
  int evaluate = 0, faults = 1;
  std::string fault_kind = "link";
  double loss = 1e-3;
  bool cbd = true;  // --deadlock-check (the default), --deadlock-check=false or --no-deadlock-check
  std::string html;
};

Time parse_duration(const std::string& text, const char* option) {
  Time t;
  std::string expected;
  if (!parse_time(text, t, expected) || t.ps <= 0)
    throw InputError(
        fmt::format("{} '{}': expected a duration above 0{}", option, text, expected.empty() ? "" : ", " + expected));
  return t;
}

int cmd_diagnose(const Common& c, const DiagnoseOptions& o) {
  check_output_dir("--out", c.out_dir);
  check_output_file("--probes-out", o.probes_out);
  check_output_file("--html", o.html);
  study::DiagnoseRequest req;
  req.probe_mode = o.mode;
  req.probe.mesh = o.mesh;
  req.probe.targets = o.targets;
  req.probe.ports = o.ports;
  req.probe.rate = o.rate;
  req.probe.duration = parse_duration(o.duration, "--duration");
  req.probe.round = parse_duration(o.round, "--round");
  req.probe.background = o.background;
  req.localize.alpha = o.alpha;
  req.delay_threshold_s = parse_duration(o.delay_threshold, "--delay-threshold").seconds();
  if (!(o.alpha > 0 && o.alpha < 1)) throw InputError(fmt::format("--alpha {}: expected 0 < alpha < 1", o.alpha));
  req.evaluate = o.evaluate;
  req.faults = o.faults;
  req.fault_kind = o.fault_kind;
  req.loss = o.loss;
  req.cbd = o.cbd;
  if (!o.probes_in.empty()) {
    req.probes_text = read_input_file(o.probes_in, "--probes " + o.probes_in, "a CSV of probe results");
    req.probes_source = o.probes_in;
    if (req.probes_text.empty()) throw InputError(fmt::format("{}: the file is empty", o.probes_in));
  }
  // --probes-out and --html were checked above without touching an existing file; they are written once the
  // run has succeeded, so a failed run leaves previous files as they were.
  if (!o.probes_out.empty()) {
    if (o.evaluate > 0 || !o.probes_in.empty())
      throw InputError("--probes-out writes one simulated run: not with --evaluate or --probes");
    req.keep_probes = true;
  }
  if (!o.html.empty() && !report::dashboard_installed())
    throw InputError(std::string("--html: ") + report::kDashboardMissing);
  RunLabel label;
  const scenario::Setup s = load_setup(c, "diagnose", label);
  const study::DiagnoseResult r = study::diagnose(s, req, study_progress("diagnose", label));
  if (!o.probes_out.empty() && r.mesh_data && r.run_data) {
    std::ofstream probes_out = open_out(o.probes_out);
    diagnose::write_probe_csv(probes_out, s.fabric, *r.mesh_data, *r.run_data);
    close_out(probes_out, "--probes-out", o.probes_out);
  }
  const nlohmann::json doc = report::diagnose_document(s, r);
  emit(c, s.scenario, doc, "diagnose", report::write_diagnose_table);
  if (!o.html.empty()) {
    write_out("--html", o.html,
              report::html_page({{"kind", "diagnose"},
                                 {"document", doc},
                                 {"drawing", report::fabric_drawing(s.fabric)},
                                 {"suspects", report::suspects_on_drawing(s.fabric, r)}},
                                "podnet diagnose " + s.scenario.name));
    std::cerr << "podnet: wrote " << o.html << "\n";
  }
  return kExitOk;
}

}  // namespace

void add_diagnose_command(CLI::App& app, Action& action) {
  auto c = std::make_shared<Common>();
  auto o = std::make_shared<DiagnoseOptions>();
  auto* cmd = app.add_subcommand("diagnose",
                                 "find silent faults by probing (localize loss to links and switches), check PFC "
                                 "deadlock freedom");
  add_common(cmd, *c, true);
  cmd->add_option("--mode", o->mode,
                  "statistical (each probe's loss drawn from its path: any size) or packet (every probe on the "
                  "packet engine: small fabrics, to check the statistical mode)")
      ->capture_default_str();
  cmd->add_option("--probe", o->mesh,
                  "who probes whom: full-mesh, rail (each NIC probes --targets NICs of its rail), "
                  "leaf-mesh (every pair of leaves)")
      ->capture_default_str();
  cmd->add_option("--targets", o->targets, "rail mesh: targets per NIC")->capture_default_str();
  cmd->add_option("--ports", o->ports, "UDP source ports per pair (ECMP paths covered)")->capture_default_str();
  cmd->add_option("--rate", o->rate, "probes per second sent by each NIC")->capture_default_str();
  cmd->add_option("--duration", o->duration, "simulated probing time")->capture_default_str();
  cmd->add_option("--round", o->round, "localization runs after every round")->capture_default_str();
  cmd->add_option("--background", o->background, "loss per link crossing on healthy links (noise)")
      ->capture_default_str();
  cmd->add_option("--alpha", o->alpha, "false-alarm level of the localization test")->capture_default_str();
  cmd->add_option("--delay-threshold", o->delay_threshold,
                  "a probe is slow when its median RTT exceeds the fabric's base RTT by more than this")
      ->capture_default_str();
  cmd->add_option("--probes", o->probes_in,
                  "localize this probe results CSV (yours or --probes-out's) instead of simulating");
  cmd->add_option("--probes-out", o->probes_out, "write the simulated probe results as CSV");
  auto* evaluate =
      cmd->add_option("--evaluate", o->evaluate, "N seeded trials with random hidden faults: precision, recall, time");
  // These only shape --evaluate's trials: without it they would be accepted and ignored.
  cmd->add_option("--faults", o->faults, "--evaluate: hidden faults per trial")->capture_default_str()->needs(evaluate);
  cmd->add_option("--fault-kind", o->fault_kind, "--evaluate: link, switch or mixed")
      ->capture_default_str()
      ->needs(evaluate);
  cmd->add_option("--loss", o->loss, "--evaluate: drop probability of each hidden fault (0.001 or 0.1%)")
      ->type_name("PROBABILITY")
      ->capture_default_str()
      // A percentage as --fail-links and fraction: take it (1% is 0.01).
      ->transform(CLI::Validator(
          [](std::string& v) -> std::string {
            if (v.empty() || v.back() != '%') return {};
            char* end = nullptr;
            const double p = std::strtod(v.c_str(), &end);
            if (end != v.c_str() + v.size() - 1) return "expected a probability such as 0.001 or 0.1%, got '" + v + "'";
            v = fmt::format("{}", p / 100);
            return {};
          },
          ""))
      ->needs(evaluate);
  // As sweep and diff name it (--deadlock-check=false), and --no-deadlock-check as before.
  cmd->add_flag("--deadlock-check,!--no-deadlock-check", o->cbd,
                "the cyclic buffer dependency check (on unless --deadlock-check=false or --no-deadlock-check)");
  cmd->add_option("--html", o->html,
                  "also write a self-contained HTML report: the suspects drawn on the fabric, every figure")
      ->type_name("FILE.html");
  cmd->footer("Faults to find are the scenario's `faults:` list, e.g.\n"
              "  faults:\n"
              "    - {kind: drop, link: \"su000-leaf-r0:Ethernet1/65\", probability: 0.001}\n"
              "    - {kind: corrupt, switch: \"pod000-spine-r0-000\", probability: 0.0005}\n"
              "Probe files: columns src,dst,sport,sent,lost,rtt_p50_us,rtt_p99_us,path,return_path "
              "(docs/commands/diagnose.md).\n\n"
              "Examples:\n"
              "  podnet diagnose aipod-16k --evaluate 100\n"
              "  podnet diagnose aipod-16k --evaluate 100 --faults 3 --fault-kind mixed\n"
              "  podnet diagnose my-fabric.yaml --probes-out probes.csv\n"
              "  podnet diagnose my-fabric.yaml --probes probes.csv\n"
              "  podnet diagnose my-fabric.yaml --mode packet --probe full-mesh --duration 2s --round 100ms\n"
              "  podnet diagnose torus-3d-4k --duration 10s      (the deadlock check finds the ring cycles)");
  cmd->callback([&action, c, o] { action = [c, o] { return cmd_diagnose(*c, *o); }; });
}

}  // namespace podnet::cli
