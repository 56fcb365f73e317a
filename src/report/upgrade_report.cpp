#include "report/upgrade_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <ostream>

#include "report/report.hpp"

namespace podnet::report {

namespace {

constexpr size_t kStepsShown = 16;

// Hours as a person reads them: seconds below a minute (nothing is "0.0 s"), minutes below an hour.
std::string duration(double hours) {
  // Below a second, two decimals: sixteen steps of 0.04 s read 0.0 s each beside their total of 0.6 s.
  if (hours > 0 && hours < 1.0 / 3600) return fixed(hours * 3600, 2) + " s";
  if (hours < 1.0 / 60) return fixed(hours * 3600, 1) + " s";
  if (hours < 1) return fixed(hours * 60, 1) + " min";
  return fixed(hours, 1) + " h";
}

// A slowdown, or the job stopping: "1.157x", "stops the job".
std::string slowdown_text(const nlohmann::json& v) {
  return v.is_null() ? "stops the job" : fixed(v.get<double>(), 3) + "x";
}

std::string plan_name(const nlohmann::json& p) {
  const int64_t b = p["batch"].get<int64_t>();
  if (b == 1) return "1 at a time";
  return fmt::format("{} at a time, {}", thousands(b), p["grouping"].get<std::string>());
}

nlohmann::json plan_json(const study::UpgradePlan& p, bool steps, bool frontend) {
  nlohmann::json j = {{"batch", p.batch},
                      {"grouping", p.grouping},
                      {"steps", p.steps.size()},
                      {"simulated_steps", p.simulated},
                      // null: a step (worst) or every step (mean) stops the job
                      {"worst_slowdown",
                       p.stopping_steps > 0 ? nlohmann::json(nullptr) : nlohmann::json(round_to(p.worst_slowdown, 6))},
                      {"mean_slowdown", p.stopping_steps == static_cast<int64_t>(p.steps.size())
                                            ? nlohmann::json(nullptr)
                                            : nlohmann::json(round_to(p.mean_slowdown, 6))},
                      {"stopping_steps", p.stopping_steps},
                      {"extra_hours", round_to(p.extra_hours, 6)},
                      {"window_hours", round_to(p.window_hours, 6)}};
  if (frontend) j["worst_checkpoint_write_minutes"] = round_to(p.worst_write_s / 60, 6);
  if (!steps) return j;
  nlohmann::json list = nlohmann::json::array();
  for (const auto& st : p.steps) {
    nlohmann::json s = {{"switches", st.switches},
                        {"slowdown", st.stops_job ? nlohmann::json(nullptr) : nlohmann::json(round_to(st.slowdown, 6))},
                        {"simulated", st.simulated},
                        {"extra_hours", round_to(st.extra_hours, 6)}};
    if (frontend && !st.stops_job) {
      if (st.simulated) s["data_read_ms"] = round_to(st.data_read_s * 1e3, 6);
      s["checkpoint_write_minutes"] = round_to(st.checkpoint_write_s / 60, 6);
    }
    if (st.stops_job && !st.failure.empty()) s["failure"] = st.failure;
    list.push_back(std::move(s));
  }
  j["step_list"] = std::move(list);
  return j;
}

}  // namespace

nlohmann::json upgrade_document(const scenario::Setup& s, const study::UpgradeResult& r) {
  nlohmann::json doc = new_document(context_of(s.scenario, "plan-upgrade"));
  const bool frontend = r.request.network == "frontend";
  doc["network"] = r.request.network;
  doc["tier"] = r.request.tier;
  doc["switches"] = r.switches;
  doc["step_time_minutes"] = round_to(r.request.step_time.seconds() / 60, 6);
  // A step that stops the job: the step, a checkpoint before it and a restart after it.
  doc["stopping_step_minutes"] = round_to(r.stop_hours * 60, 6);
  doc["job"] = {{"gpus", r.gpus}, {"iteration_ms", round_to(r.baseline.seconds() * 1e3, 6)}};
  if (frontend) {
    const bool every = std::isfinite(r.checkpoint_interval_hours);
    doc["job"]["data_read_ms"] = round_to(r.data_read_s * 1e3, 6);
    doc["job"]["checkpoint_write_minutes"] = round_to(r.checkpoint_write_s / 60, 6);
    doc["job"]["checkpoint_mode"] = r.async_checkpoints ? "async" : "sync";
    doc["job"]["checkpoint_interval_minutes"] = every ? nlohmann::json(round_to(r.checkpoint_interval_hours * 60, 6))
                                                      : nlohmann::json(nullptr);
  }
  doc["iterations_simulated"] = r.runs;
  doc["steps_simulated_per_plan"] = r.request.runs;
  doc["batches_left_out"] = r.left_out;
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& p : r.plans) plans.push_back(plan_json(p, true, frontend));
  doc["plans"] = std::move(plans);
  doc["best"] = plan_json(r.plans[r.best], false, frontend);
  doc["least_extra"] = plan_json(r.plans[r.least], false, frontend);
  doc["negligible_minutes"] = round_to(r.request.negligible.seconds() / 60, 6);
  return doc;
}

void write_upgrade_table(const nlohmann::json& d, std::ostream& out) {
  const bool frontend = d.value("network", "backend") == "frontend";
  const auto& job = d["job"];
  out << fmt::format("rolling upgrade of the {}{} tier: {} switches, {} a step, under a job of {} GPUs whose "
                     "iteration takes {} ms intact\n",
                     frontend ? "frontend's " : "", d["tier"].get<std::string>(),
                     thousands(d["switches"].get<int64_t>()), duration(d["step_time_minutes"].get<double>() / 60),
                     thousands(job["gpus"].get<int64_t>()), fixed(job["iteration_ms"].get<double>(), 2));
  if (frontend) {
    const bool sync = job["checkpoint_mode"] == "sync";
    out << fmt::format(
        "  the job trains on the back end; a step costs it through the frontend: an iteration's data read in {} ms "
        "intact, a checkpoint written in {} ({})\n",
        fixed(job["data_read_ms"].get<double>(), 2),
        checkpoint_minutes_text(job["checkpoint_write_minutes"].get<double>()),
        !sync ? "asynchronous: behind training, a step costs nothing through it"
        : job["checkpoint_interval_minutes"].is_null()
            ? "nothing interrupts the job, so it takes none"
            : fmt::format("synchronous, every {} min: the job waits for each",
                          fixed(job["checkpoint_interval_minutes"].get<double>(), 1)));
  }
  out << "\n";
  std::vector<std::string> head = {"plan", "steps", "window", "worst step", "mean step"};
  if (frontend) head.push_back("slowest checkpoint write");
  for (const char* h : {"steps that stop the job", "extra training time"}) head.push_back(h);
  Table t(head);
  for (const auto& p : d["plans"]) {
    std::vector<std::string> row = {plan_name(p), thousands(p["steps"].get<int64_t>()),
                                    duration(p["window_hours"].get<double>()), slowdown_text(p["worst_slowdown"]),
                                    slowdown_text(p["mean_slowdown"])};
    if (frontend)
      row.push_back(p["stopping_steps"] == p["steps"]
                        ? "-"
                        : checkpoint_minutes_text(p["worst_checkpoint_write_minutes"].get<double>()));
    row.push_back(thousands(p["stopping_steps"].get<int64_t>()));
    row.push_back(duration(p["extra_hours"].get<double>()));
    t.add(row);
  }
  t.write(out, "  ");
  const auto& b = d["best"];
  out << fmt::format("\n  recommended: {}, {} steps over {}, costing the job {} ({})\n", plan_name(b),
                     thousands(b["steps"].get<int64_t>()), duration(b["window_hours"].get<double>()),
                     duration(b["extra_hours"].get<double>()),
                     b["stopping_steps"] == b["steps"] ? "every step stops it"
                     : b["worst_slowdown"].is_null()
                         ? fmt::format("{} of its steps stop it", thousands(b["stopping_steps"].get<int64_t>()))
                     : frontend ? "slowest checkpoint write " +
                                      checkpoint_minutes_text(b["worst_checkpoint_write_minutes"].get<double>())
                                : "worst step " + slowdown_text(b["worst_slowdown"]));
  // What a stopping step costs, when any plan has one (a plan costing 12 h in an 8 h window read as a bug when the
  // recommended plan had none): the checkpoint and restart are assumptions.
  if (std::any_of(d["plans"].begin(), d["plans"].end(),
                  [](const nlohmann::json& p) { return p["stopping_steps"].get<int64_t>() > 0; }) &&
      d.contains("stopping_step_minutes"))
    out << fmt::format("  (a step that stops the job costs it {}: the step, a checkpoint before it and a restart after "
                       "it, reliability.checkpoint_cost and reliability.restart_cost{})\n",
                       duration(d["stopping_step_minutes"].get<double>() / 60),
                       std::all_of(d["plans"].begin(), d["plans"].end(),
                                   [](const nlohmann::json& p) { return p["stopping_steps"] == p["steps"]; })
                           ? "; every step of every plan here stops it"
                           : "");
  if (d.contains("least_extra")) {
    const auto& l = d["least_extra"];
    if (l["batch"] != b["batch"] || l["grouping"] != b["grouping"])
      out << fmt::format("  {} costs the job least ({}), but keeps the tier in maintenance for {}; within {} "
                         "of the least, the shortest window is recommended (maintenance.negligible)\n",
                         plan_name(l), duration(l["extra_hours"].get<double>()),
                         duration(l["window_hours"].get<double>()),
                         duration(d["negligible_minutes"].get<double>() / 60));
  }
  // Why a step stops the job, once: the engine's words for the first such step simulated.
  for (const auto& p : d["plans"]) {
    const auto& list = p["step_list"];
    const auto st =
        std::find_if(list.begin(), list.end(), [](const nlohmann::json& x) { return x.contains("failure"); });
    if (st == list.end()) continue;
    if (frontend)
      out << "  a step stops the job when it leaves servers without a path to the storage (a leaf is the only switch "
             "of its servers' frontend NICs; a pod's spines all out cut the pod off); the first: "
          << (*st)["failure"].get<std::string>() << "\n";
    else
      out << "  a step stops the job when it leaves GPUs without a path (the job must checkpoint and restart around "
             "it, or leave those servers); the first: "
          << (*st)["failure"].get<std::string>() << "\n";
    break;
  }
  const int64_t per_plan = d["steps_simulated_per_plan"].get<int64_t>();
  bool estimated = false;
  for (const auto& p : d["plans"]) estimated = estimated || p["simulated_steps"] != p["steps"];
  if (per_plan > 0 && estimated)
    out << fmt::format("  up to {} of each plan simulated, evenly spaced; the others take the plan's mean "
                       "(--runs 0 simulates every step; {} iterations simulated)\n",
                       per_plan == 1 ? "1 step" : thousands(per_plan) + " steps",
                       thousands(d["iterations_simulated"].get<int64_t>()));
  if (!d["batches_left_out"].empty()) {
    std::string sizes;
    for (const auto& x : d["batches_left_out"]) sizes += (sizes.empty() ? "" : ", ") + thousands(x.get<int64_t>());
    out << fmt::format("  batches left out: {} (a step must leave some of the {} switches in service)\n", sizes,
                       thousands(d["switches"].get<int64_t>()));
  }
  for (const auto& p : d["plans"]) {
    if (p["batch"] != b["batch"] || p["grouping"] != b["grouping"]) continue;
    out << "\n  its steps:\n";
    std::vector<std::string> sh = {"step", "switches drained", "slowdown"};
    if (frontend) sh.insert(sh.end(), {"data read", "checkpoint write"});
    sh.insert(sh.end(), {"cost", ""});
    Table s(sh);
    size_t i = 0;
    for (const auto& st : p["step_list"]) {
      if (++i > kStepsShown) break;
      const auto& sw = st["switches"];
      const std::string names = sw.size() == 1 ? sw[0].get<std::string>()
                                               : fmt::format("{} and {} more", sw[0].get<std::string>(),
                                                             thousands(static_cast<int64_t>(sw.size() - 1)));
      std::vector<std::string> row = {thousands(static_cast<int64_t>(i)), names, slowdown_text(st["slowdown"])};
      if (frontend) {
        row.push_back(st.contains("data_read_ms") ? fixed(st["data_read_ms"].get<double>(), 2) + " ms" : "-");
        row.push_back(st.contains("checkpoint_write_minutes")
                          ? checkpoint_minutes_text(st["checkpoint_write_minutes"].get<double>())
                          : "-");
      }
      row.push_back(duration(st.value("extra_hours", 0.0)));
      row.push_back(st["simulated"].get<bool>() ? "simulated" : "estimated");
      s.add(row);
    }
    s.write(out, "    ");
    if (p["step_list"].size() > kStepsShown)
      out << fmt::format("    ... and {} more (--format json lists every step)\n",
                         thousands(static_cast<int64_t>(p["step_list"].size() - kStepsShown)));
    else if (std::any_of(p["step_list"].begin(), p["step_list"].end(),
                         [](const nlohmann::json& st) { return st["switches"].size() > 1; }))
      out << "    (--format json lists each step's switches)\n";
  }
}

}  // namespace podnet::report
