#include "report/optimize_report.hpp"

#include <algorithm>

#include <cmath>
#include <fmt/format.h>
#include <ostream>

#include "report/report.hpp"
#include "report/yaml_json.hpp"

namespace podnet::report {

namespace {

nlohmann::json number_or_null(bool ok, double v, int decimals) {
  return ok && std::isfinite(v) ? nlohmann::json(round_to(v, decimals)) : nlohmann::json(nullptr);
}

// A design value as a script reads it: "4" is 4, the topology's "{family: rail_clos, tiers: 2}" an object, "400Gbps"
// stays text (the --set value, with its unit). The design files and the database keep the --set text.
nlohmann::json design_value(const std::string& text) {
  try {
    return yaml_json(YAML::Load(text));
  } catch (const YAML::Exception&) {
    return text;
  }
}

nlohmann::json point_json(const study::OptimizeResult& r, const study::OptimizePoint& p) {
  nlohmann::json design = nlohmann::json::object();
  for (size_t a = 0; a < r.axes.size(); ++a) design[r.axes[a].key] = design_value(p.values[a]);
  return {{"id", p.id},
          {"label", p.label},
          {"design", design},
          {"capex_usd", round_to(p.capex_usd, 2)},
          {"power_kw", round_to(p.power_kw, 3)},
          {"bisection_bandwidth_gbps", round_to(p.bisection_gbps, 3)},
          {"injection_bandwidth_per_gpu_gbps", round_to(p.injection_gbps, 3)},
          {"nics_per_server", p.nics_per_server},
          {"diameter_hops", p.diameter},
          {"iteration_time_ms", number_or_null(p.timed, p.iteration_ms, 3)},
          {"days_to_train", number_or_null(p.timed, p.days, 3)},
          {"objective_value", number_or_null(p.timed, p.objective, 3)},
          {"train_error", p.train_error.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.train_error)},
          {"dominated_by", p.dominated_by < 0 ? nlohmann::json(nullptr) : nlohmann::json(p.dominated_by)}};
}

std::string usd(double v) { return "$" + thousands(static_cast<int64_t>(std::llround(v))); }

}  // namespace

void add_optimize(nlohmann::json& doc, int64_t gpus, const std::string& job, const study::OptimizeResult& r,
                  const std::vector<std::string>& design_files, const std::optional<study::OptimizeReference>& ref) {
  nlohmann::json space = nlohmann::json::object();
  for (const auto& a : r.axes) space[a.key] = a.values;
  int64_t timed = 0;
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : r.candidates) {
    timed += c.timed;
    candidates.push_back(point_json(r, c));
  }
  nlohmann::json front = nlohmann::json::array();
  for (size_t k = 0; k < r.front.size(); ++k) {
    nlohmann::json p = point_json(r, r.candidates[r.front[k]]);
    p["design_file"] = k < design_files.size() ? design_files[k] : "";
    front.push_back(p);
  }
  doc["gpus"] = gpus;
  doc["job"] = job;
  doc["space"] = space;
  doc["points"] = r.points;
  doc["infeasible"] = r.infeasible;
  doc["infeasible_examples"] = r.infeasible_examples;
  doc["candidates_after_design_pruning"] = static_cast<int64_t>(r.candidates.size());
  doc["candidates_timed"] = timed;
  doc["objectives"] = timed > 0 ? nlohmann::json::array({"capex_usd", "power_kw", r.objective})
                                : nlohmann::json::array({"capex_usd", "power_kw"});
  doc["candidates"] = candidates;
  doc["front"] = front;
  if (ref) {
    nlohmann::json pricings = nlohmann::json::array();
    for (const auto& p : ref->pricings)
      pricings.push_back(
          {{"overrides", p.sets}, {"capex_usd", round_to(p.capex_usd, 2)}, {"power_kw", round_to(p.power_kw, 3)}});
    doc["reference"] = {{"name", ref->name},
                        {"capex_usd", round_to(ref->capex_usd, 2)},
                        {"power_kw", round_to(ref->power_kw, 3)},
                        {"priced_as", ref->priced_as},
                        {"pricings", pricings},
                        {"iteration_time_ms", number_or_null(ref->timed, ref->iteration_ms, 3)},
                        {"days_to_train", number_or_null(ref->timed, ref->days, 3)},
                        {"objective_value", number_or_null(ref->timed, ref->objective, 3)},
                        {"front_match", ref->match < 0
                                            ? nlohmann::json(nullptr)
                                            : nlohmann::json(r.candidates[static_cast<size_t>(ref->match)].id)},
                        {"equal", ref->equal},
                        {"verdict", ref->verdict}};
  }
}

void write_optimize_table(const nlohmann::json& d, std::ostream& out) {
  out << fmt::format("podnet optimize: {} GPUs, {} design points: {} infeasible, {} kept after pruning on design "
                     "metrics, {} timed; the front has {}\n\n",
                     thousands(d["gpus"].get<int64_t>()), thousands(d["points"].get<int64_t>()),
                     thousands(d["infeasible"].get<int64_t>()),
                     thousands(d["candidates_after_design_pruning"].get<int64_t>()),
                     thousands(d["candidates_timed"].get<int64_t>()), d["front"].size());
  if (d.contains("job")) out << "  job timed at every point: " << d["job"].get<std::string>() << "\n\n";
  // The third objective's column when it is not one of the two shown anyway.
  const std::string third = d["objectives"].size() > 2 ? d["objectives"][2].get<std::string>() : "";
  const bool extra = !third.empty() && third != "iteration_time_ms" && third != "days_to_train";
  // The labels sweep, diff and the dashboard give these figures (report/studies.cpp).
  std::vector<std::string> head = {
      "front", "design", "network capex", "IT power, servers included (kW)", "iteration time (ms)", "days to train"};
  if (extra) head.push_back(third == "reliability.days_to_train_with_failures" ? "days with failures" : third);
  head.push_back("design file");
  Table t(head);
  for (const auto& p : d["front"]) {
    std::vector<std::string> row = {"#" + std::to_string(p["id"].get<int64_t>()),
                                    p["label"].get<std::string>(),
                                    usd(p["capex_usd"].get<double>()),
                                    fixed(p["power_kw"].get<double>(), 1),
                                    p["iteration_time_ms"].is_null() ? "-"
                                                                     : fixed(p["iteration_time_ms"].get<double>(), 1),
                                    p["days_to_train"].is_null() ? "-" : fixed(p["days_to_train"].get<double>(), 1)};
    if (extra) row.push_back(p["objective_value"].is_null() ? "-" : fixed(p["objective_value"].get<double>(), 1));
    row.push_back(p["design_file"].get<std::string>());
    t.add(row);
  }
  t.write(out, "  ");
  for (const auto& e : d["infeasible_examples"]) out << "  infeasible: " << e.get<std::string>() << "\n";
  // Candidates the train study could not time (e.g. the job does not fit in memory): how many, and why.
  std::vector<std::string> reasons;
  int64_t untimed = 0;
  for (const auto& c : d["candidates"]) {
    if (!c.contains("train_error") || c["train_error"].is_null()) continue;
    ++untimed;
    const std::string e = c["train_error"].get<std::string>();
    if (reasons.size() < 3 && std::find(reasons.begin(), reasons.end(), e) == reasons.end()) reasons.push_back(e);
  }
  if (untimed > 0) {
    out << fmt::format("  not timed: {} of {}; the train study said:\n", thousands(untimed),
                       plural(d["candidates_after_design_pruning"].get<int64_t>(), "candidate", "candidates"));
    for (const auto& e : reasons) out << "    " << e << "\n";
  }
  if (d.contains("reference")) {
    const auto& r = d["reference"];
    out << fmt::format("\n  reference {}: network capex {}, IT power {} kW, iteration time {} ms\n",
                       r["name"].get<std::string>(), usd(r["capex_usd"].get<double>()),
                       fixed(r["power_kw"].get<double>(), 1),
                       r["iteration_time_ms"].is_null() ? "-" : fixed(r["iteration_time_ms"].get<double>(), 1));
    // Priced with the points' cost: section, once per value of the cost: axes (the verdict uses the one of the
    // point it compares).
    if (r.contains("pricings") && r["pricings"].size() > 1) {
      std::vector<std::string> each;
      for (const auto& p : r["pricings"]) {
        std::string sets;
        for (const auto& o : p["overrides"]) sets += (sets.empty() ? "" : ", ") + o.get<std::string>();
        each.push_back(fmt::format("{} capex {}", sets, usd(p["capex_usd"].get<double>())));
      }
      out << fmt::format("  priced as the points (their cost: section), by the cost: axes' values: {}\n",
                         fmt::join(each, "; "));
    } else {
      out << "  priced as the points (their cost: section)\n";
    }
    out << "  " << r["verdict"].get<std::string>() << "\n";
  }
}

}  // namespace podnet::report
