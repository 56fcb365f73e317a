#include "study/optimize.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>

#include <yaml-cpp/yaml.h>
#include "core/error.hpp"
#include "core/params.hpp"
#include "scenario/scenario.hpp"
#include "topology/builders.hpp"

namespace podnet::study {

std::vector<size_t> pareto_front(const std::vector<std::vector<double>>& rows, const std::vector<bool>& maximize,
                                 std::vector<int64_t>* dominated_by) {
  const size_t n = rows.size();
  // better(a, b, j): a's value is strictly better than b's in objective j.
  const auto no_worse = [&](const std::vector<double>& a, const std::vector<double>& b) {
    for (size_t j = 0; j < maximize.size(); ++j)
      if (maximize[j] ? a[j] < b[j] : a[j] > b[j]) return false;
    return true;
  };
  const auto equal = [&](const std::vector<double>& a, const std::vector<double>& b) {
    for (size_t j = 0; j < maximize.size(); ++j)
      if (a[j] != b[j]) return false;
    return true;
  };
  std::vector<size_t> front;
  if (dominated_by) dominated_by->assign(n, -1);
  for (size_t i = 0; i < n; ++i) {
    int64_t by = -1;
    for (size_t k = 0; k < n && by < 0; ++k) {
      if (k == i || !no_worse(rows[k], rows[i])) continue;
      // k is no worse everywhere: it dominates i unless equal, and an equal row takes i's place when earlier.
      if (!equal(rows[k], rows[i]) || k < i) by = static_cast<int64_t>(k);
    }
    if (by < 0) front.push_back(i);
    if (dominated_by) (*dominated_by)[i] = by;
  }
  return front;
}

std::vector<Axis> optimize_axes(const OptimizeSpace& s) {
  if (s.gpus <= 0) throw InputError("--gpus: expected a GPU count above 0");
  Axis topo{"topology", {}, ""};
  // The axes below are a Clos's: a family qualifies by its keys (tiers, oversubscription per tier), not its name.
  const auto has_key = [](const topology::BuilderInfo* b, const char* key) {
    if (!b) return false;
    for (const auto& spec : b->params())
      if (spec.name == key) return true;
    return false;
  };
  std::string clos_families;
  for (const auto& b : topology::builders())
    if (has_key(&b, "tiers") && has_key(&b, "oversubscription") && has_key(&b, "spine_oversubscription"))
      clos_families += (clos_families.empty() ? "" : " and ") + std::string(b.name);
  for (const auto& family : s.families) {
    const topology::BuilderInfo* b = topology::find_builder(family);
    if (!b) {  // a misspelt family (fat-tree for fat_tree): the names, and the closest
      std::vector<std::string> all;
      for (const auto& f : topology::builders()) all.emplace_back(f.name);
      const std::string near = scenario::closest(family, all);
      throw InputError(fmt::format("--families {}: no such family{}; expected one of the Clos families {} (all: {})",
                                   family, near.empty() ? "" : fmt::format(" (did you mean {}?)", near), clos_families,
                                   fmt::join(all, ", ")));
    }
    if (!has_key(b, "tiers") || !has_key(b, "oversubscription") || !has_key(b, "spine_oversubscription"))
      throw InputError(fmt::format("--families {}: optimize searches the Clos families {} (tiers "
                                   "and oversubscription are their keys); for {} use podnet sweep over its own keys",
                                   family, clos_families, family));
  }
  // Each option's values against the family's own key, so an error names the option that holds it (--tiers 5),
  // not every option the topology axis is built from.
  for (const auto& family : s.families) {
    const topology::BuilderInfo* b = topology::find_builder(family);
    const auto check = [&](const char* key, const char* option, const std::string& text) {
      for (const auto& spec : b->params()) {
        if (spec.name != key) continue;
        std::string canonical, expected;
        if (!parse_param(spec, text, canonical, expected))
          throw InputError(
              fmt::format("{} {}: not valid for {}'s topology.{}: expected {}", option, text, family, key, expected));
      }
    };
    for (int t : s.tiers) check("tiers", "--tiers", std::to_string(t));
    for (const auto& o : s.oversubscription) check("oversubscription", "--oversubscription", o);
    for (const auto& o : s.spine_oversubscription) check("spine_oversubscription", "--spine-oversubscription", o);
  }
  for (const auto& family : s.families) {
    // A family that can attach NICs rail by rail searches its rail-optimized form (rail_clos always is).
    const std::string extra = has_key(topology::find_builder(family), "rail_optimized") ? ", rail_optimized: true" : "";
    for (int tiers : s.tiers)
      for (const auto& o1 : s.oversubscription) {
        if (tiers == 2) {
          topo.values.push_back(
              fmt::format("{{family: {}, gpus: {}, tiers: 2, oversubscription: \"{}\"{}}}", family, s.gpus, o1, extra));
          continue;
        }
        for (const auto& o2 : s.spine_oversubscription)
          topo.values.push_back(
              fmt::format("{{family: {}, gpus: {}, tiers: {}, oversubscription: \"{}\", spine_oversubscription: "
                          "\"{}\"{}}}",
                          family, s.gpus, tiers, o1, o2, extra));
      }
  }
  // origin: the options errors about an axis's values name (Axis::label), not --set.
  topo.origin = "--families, --tiers, --oversubscription, --spine-oversubscription";
  std::vector<Axis> axes;
  axes.push_back(std::move(topo));
  Axis radix{"switch.radix", {}, "", "--radix"};
  for (int r : s.radix) radix.values.push_back(std::to_string(r));
  axes.push_back(std::move(radix));
  axes.push_back({"server.nic_speed", s.speeds, "speed", "--speeds"});
  axes.push_back({"switch.port_speed", s.speeds, "speed", "--speeds"});
  Axis nics{"server.nics", {}, "", "--nics"};
  for (int n : s.nics) nics.values.push_back(std::to_string(n));
  axes.push_back(std::move(nics));
  axes.push_back({"cost.aoc_max_length", s.aoc, "", "--aoc"});
  for (const auto& a : axes)
    if (a.values.empty()) throw InputError(fmt::format("optimize: the search space has no value for {}", a.key));
  return axes;
}

namespace {

// The workload of a resolved scenario of `scenario_gpus` GPUs made to fill `gpus` (see optimize_base).
void fill_gpus(YAML::Node root, int64_t scenario_gpus, int64_t gpus, const std::string& model) {
  YAML::Node w = root["workload"];
  if (!w || !w.IsMap()) return;
  if (!model.empty()) w["model"] = model;
  const auto get = [&](const char* key, int64_t fallback) { return w[key] ? w[key].as<int64_t>() : fallback; };
  const int64_t tp = get("tp", 1), pp = get("pp", 1), cp = get("cp", 1);
  if (gpus % (tp * pp * cp) != 0)
    throw InputError(fmt::format("--gpus {}: not a multiple of workload tp x pp x cp = {} x {} x {} = {}; set "
                                 "workload.tp, pp or cp (--set) so that it is",
                                 gpus, tp, pp, cp, tp * pp * cp));
  // dp auto fills the scenario's own fabric: that is the dp its global batch was written for.
  const int64_t new_dp = gpus / (tp * pp * cp), batch = get("global_batch", 1), mb = get("microbatch", 1);
  const int64_t own_dp = scenario_gpus / (tp * pp * cp);
  // Another model (--workload): the scenario's batch was written for its own model, so its batch per replica
  // means nothing for this one; the global batch stays as resolved (the new model's), as `podnet train` at
  // --gpus keeps it.
  const int64_t dp = !model.empty() ? new_dp : w["dp"] ? w["dp"].as<int64_t>() : own_dp > 0 ? own_dp : new_dp;
  if (new_dp != dp && batch % dp != 0)
    throw InputError(fmt::format("--gpus {}: workload.global_batch {} is not a multiple of dp {}{}, so it cannot "
                                 "scale with dp; set workload.global_batch or workload.dp (--set)",
                                 gpus, batch, dp, w["dp"] ? "" : " (dp auto on the scenario's own fabric)"));
  const int64_t new_batch = new_dp == dp ? batch : batch / dp * new_dp;
  if (new_batch % (new_dp * mb) != 0)
    throw InputError(fmt::format("--gpus {}: workload.global_batch {} is not a multiple of dp x microbatch = {} x {}; "
                                 "set workload.global_batch or workload.microbatch (--set)",
                                 gpus, new_batch, new_dp, mb));
  if (new_batch != batch) w["global_batch"] = new_batch;
  w["dp"] = new_dp;
}

int64_t scenario_gpus(const YAML::Node& root) {
  const YAML::Node g = root["topology"]["gpus"];
  int64_t v = 0;
  return g && g.IsScalar() && parse_int(g.Scalar(), v) ? v : 0;
}

}  // namespace

std::string optimize_base(const std::string& resolved_yaml, int64_t gpus, const std::string& model) {
  YAML::Node root = YAML::Load(resolved_yaml);
  const int64_t own = scenario_gpus(root);
  YAML::Node topo(YAML::NodeType::Map);
  topo["family"] = root["topology"]["family"].Scalar();
  topo["gpus"] = gpus;
  root["topology"] = topo;
  root.remove("failures");
  root.remove("faults");
  fill_gpus(root, own, gpus, model);
  YAML::Emitter e;
  e << root;
  return std::string("# podnet optimize: the base scenario every design point starts from\n") + e.c_str() + "\n";
}

std::string optimize_reference(const std::string& resolved_yaml, const std::string& base_yaml) {
  YAML::Node root = YAML::Load(resolved_yaml);
  root.remove("failures");
  root.remove("faults");
  const YAML::Node base = YAML::Load(base_yaml);
  if (base["workload"]) root["workload"] = YAML::Clone(base["workload"]);
  if (base["cost"]) root["cost"] = YAML::Clone(base["cost"]);
  YAML::Emitter e;
  e << root;
  return std::string("# podnet optimize: the reference, its job made as the design points' job, priced as they "
                     "are (their cost: section)\n") +
         e.c_str() + "\n";
}

std::vector<std::vector<std::string>> cost_axis_overrides(const std::vector<Axis>& axes) {
  std::vector<std::vector<std::string>> out = {{}};
  for (const auto& a : axes) {
    if (a.key.rfind("cost.", 0) != 0) continue;
    std::vector<std::vector<std::string>> next;
    for (const auto& prefix : out)
      for (const auto& v : a.values) {
        next.push_back(prefix);
        next.back().push_back(a.key + "=" + v);
      }
    out = std::move(next);
  }
  return out;
}

namespace {

// Column `name` of a result row as a number (NaN when absent or not a number).
double number(const ResultTable& t, const std::vector<Value>& row, const std::string& name) {
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c] != name) continue;
    if (const auto* i = std::get_if<int64_t>(&row[c])) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&row[c])) return *d;
    return std::nan("");
  }
  return std::nan("");
}

std::string text(const ResultTable& t, const std::vector<Value>& row, const std::string& name) {
  for (size_t c = 0; c < t.columns.size(); ++c) {
    if (t.columns[c] != name) continue;
    if (const auto* s = std::get_if<std::string>(&row[c])) return *s;
    if (const auto* i = std::get_if<int64_t>(&row[c])) return std::to_string(*i);
    if (const auto* d = std::get_if<double>(&row[c])) return fmt::format("{}", *d);
  }
  return {};
}

}  // namespace

std::string point_label(const std::vector<Axis>& axes, const std::vector<std::string>& values) {
  std::string out;
  for (size_t a = 0; a < axes.size() && a < values.size(); ++a) {
    const std::string& key = axes[a].key;
    std::string part;
    if (key == "topology") {
      const YAML::Node t = YAML::Load(values[a]);
      part = t["family"] ? t["family"].Scalar() : "?";
      if (t["tiers"]) part += " " + t["tiers"].Scalar() + " tiers";
      if (t["oversubscription"]) part += " " + t["oversubscription"].Scalar();
      if (t["spine_oversubscription"]) part += "/" + t["spine_oversubscription"].Scalar();
    } else if (key == "switch.port_speed" && a > 0 && axes[a - 1].key == "server.nic_speed" &&
               values[a] == values[a - 1]) {
      continue;  // zipped with the NIC speed: said once
    } else if (key == "switch.radix") {
      part = "radix " + values[a];
    } else if (key == "server.nics") {
      part = values[a] + " NICs";
    } else if (key == "cost.aoc_max_length") {
      // No active optical cables at all reads as such ("AOC to 0m" did not).
      part = std::strtod(values[a].c_str(), nullptr) == 0 ? "no AOC" : "AOC to " + values[a];
    } else {
      part = values[a];
    }
    out += (out.empty() ? "" : ", ") + part;
  }
  return out;
}

std::vector<std::string> point_overrides(const OptimizeResult& r, const OptimizePoint& p) {
  std::vector<std::string> out;
  for (size_t a = 0; a < r.axes.size(); ++a) out.push_back(r.axes[a].key + "=" + p.values[a]);
  return out;
}

OptimizeResult optimize(const OptimizeRequest& req, const Evaluate& evaluate_design, const Evaluate& evaluate_train,
                        const SweepProgress& progress) {
  if (req.stage != "all" && req.stage != "design" && req.stage != "train")
    throw InputError(fmt::format("--stage {}: expected all, design or train", req.stage));
  if (req.stage == "all" && mpi_ranks() > 1)
    throw InputError(
        "optimize under mpirun runs one sweep per MPI job: run it with --stage design, then again with --stage train "
        "(then without mpirun to print the front)");
  if (req.objective != kTimeColumn && req.objective != kDaysColumn && req.objective != kDaysWithFailuresColumn)
    throw InputError(fmt::format("optimize: objective {}: expected {}, {} or {}", req.objective, kTimeColumn,
                                 kDaysColumn, kDaysWithFailuresColumn));
  OptimizeResult out;
  out.axes = req.axes;
  out.objective = req.objective;
  SweepSpec design;
  design.study = "design";
  design.scenario = req.base;
  design.axes = req.axes;
  design.refusal_hint =
      "the working directory was made by another optimize run: another scenario, --gpus, --workload, --set or "
      "search space; use another --dir, or remove this one to start again";
  if (req.stage != "train") {
    out.design_stats = run_sweep(design, req.design_db, evaluate_design, req.jobs, progress);
    if (!out.design_stats.reporter) return out;
  }
  const ResultTable dt = read_results(req.design_db);
  const std::vector<SweepPoint> grid = cartesian(req.axes);
  out.points = static_cast<int64_t>(grid.size());
  if (static_cast<int64_t>(dt.rows.size()) != out.points)
    throw InputError(fmt::format("{} holds {} of the {} design points: run the design stage first (--stage design)",
                                 req.design_db, dt.rows.size(), out.points));

  // Stage 2: prune on design metrics.
  std::vector<OptimizePoint> feasible;
  std::vector<std::vector<double>> metrics;
  // Each reason once (the first 5), with its first point's design and how many points it rules out. The
  // design stage sets a point's values as --set does, so its error names "--set KEY": here the key is the
  // sweep's, not an option the user gave.
  std::map<std::string, std::pair<size_t, int64_t>> reasons;  // error -> (its example, points)
  for (size_t i = 0; i < dt.rows.size(); ++i) {
    const auto& row = dt.rows[i];
    if (text(dt, row, "status") != "ok") {
      ++out.infeasible;
      std::string e = text(dt, row, "error");
      if (e.rfind("--set ", 0) == 0) e = e.substr(6);
      if (auto it = reasons.find(e); it != reasons.end()) {
        ++it->second.second;
      } else if (reasons.size() < 5) {
        reasons[e] = {out.infeasible_examples.size(), 1};
        out.infeasible_examples.push_back(
            fmt::format("#{} ({}): {}", grid[i].id, point_label(req.axes, grid[i].values), e));
      }
      continue;
    }
    OptimizePoint p;
    p.id = grid[i].id;
    p.values = grid[i].values;
    p.label = point_label(req.axes, p.values);
    p.capex_usd = number(dt, row, kCapexColumn);
    p.power_kw = number(dt, row, kPowerColumn);
    p.bisection_gbps = number(dt, row, kBisectionColumn);
    p.injection_gbps = number(dt, row, kInjectionColumn);
    p.diameter = number(dt, row, kDiameterColumn);
    p.nics_per_server = number(dt, row, kNicsColumn);
    for (double v : {p.capex_usd, p.power_kw, p.bisection_gbps, p.injection_gbps, p.diameter, p.nics_per_server})
      if (std::isnan(v))
        throw Error(fmt::format("optimize: design point #{} lacks one of {}, {}, {}, {}, {}, {}", p.id, kCapexColumn,
                                kPowerColumn, kBisectionColumn, kInjectionColumn, kDiameterColumn, kNicsColumn));
    metrics.push_back({p.capex_usd, p.power_kw, p.bisection_gbps, p.injection_gbps, p.diameter});
    feasible.push_back(std::move(p));
  }
  for (const auto& [e, at] : reasons)
    if (at.second > 1) out.infeasible_examples[at.first] += fmt::format(" ({} points)", at.second);
  // Designs prune each other only at the same NICs: the same count a server and the same injection bandwidth a
  // GPU (so the same NIC speed). NCCL's algorithms follow the NICs (at 800 Gb/s its tuner takes PAT for the
  // default job's data-parallel reduce-scatters, where 400 Gb/s takes the ring: 2.8-5.4 % slower iterations,
  // docs/commands/optimize.md), which no design metric shows.
  std::map<std::pair<double, double>, std::vector<size_t>> by_nics;
  for (size_t k = 0; k < feasible.size(); ++k)
    by_nics[{feasible[k].nics_per_server, feasible[k].injection_gbps}].push_back(k);
  std::vector<size_t> keep;
  for (const auto& [nics, members] : by_nics) {
    std::vector<std::vector<double>> m;
    for (size_t k : members) m.push_back(metrics[k]);
    for (size_t i : pareto_front(m, {false, false, true, true, false})) keep.push_back(members[i]);
  }
  std::sort(keep.begin(), keep.end());
  for (size_t k : keep) out.candidates.push_back(feasible[k]);
  if (out.candidates.empty()) {
    std::string why;
    for (const auto& e : out.infeasible_examples) why += "\n  " + e;
    throw InputError(fmt::format("optimize: none of the {} designs of the search space is feasible; for example:{}",
                                 out.points, why));
  }

  const bool timed = req.stage != "design";
  if (timed) {
    // Stage 3: the train sweep over the candidates, one zipped dimension.
    SweepSpec train;
    train.study = "train";
    train.scenario = req.base;
    train.refusal_hint = design.refusal_hint;
    for (size_t a = 0; a < req.axes.size(); ++a) {
      Axis ax{req.axes[a].key, {}, "candidate"};
      for (const auto& c : out.candidates) ax.values.push_back(c.values[a]);
      train.axes.push_back(std::move(ax));
    }
    out.train_stats = run_sweep(train, req.train_db, evaluate_train, req.jobs, progress);
    if (!out.train_stats.reporter) return out;
    const ResultTable tt = read_results(req.train_db);
    for (size_t i = 0; i < tt.rows.size() && i < out.candidates.size(); ++i) {
      auto& c = out.candidates[i];
      if (text(tt, tt.rows[i], "status") != "ok") {
        c.train_error = text(tt, tt.rows[i], "error");
        continue;
      }
      c.iteration_ms = number(tt, tt.rows[i], kTimeColumn);
      c.days = number(tt, tt.rows[i], kDaysColumn);
      c.objective = number(tt, tt.rows[i], req.objective);
      if (std::isnan(c.objective)) {
        c.train_error = fmt::format("the train study gave no {}", req.objective);
        continue;
      }
      c.timed = true;
    }
  }
  // Stage 4: the front on (capex, power, iteration time) among the timed candidates (or capex and power).
  std::vector<size_t> idx;
  std::vector<std::vector<double>> objs;
  for (size_t i = 0; i < out.candidates.size(); ++i) {
    const auto& c = out.candidates[i];
    if (timed && !c.timed) continue;
    idx.push_back(i);
    objs.push_back(timed ? std::vector<double>{c.capex_usd, c.power_kw, c.objective}
                         : std::vector<double>{c.capex_usd, c.power_kw});
  }
  std::vector<int64_t> fby;
  const std::vector<size_t> front =
      pareto_front(objs, std::vector<bool>(objs.empty() ? 0 : objs[0].size(), false), &fby);
  for (size_t k = 0; k < idx.size(); ++k)
    if (fby[k] >= 0) out.candidates[idx[k]].dominated_by = out.candidates[idx[static_cast<size_t>(fby[k])]].id;
  for (size_t f : front) out.front.push_back(idx[f]);
  return out;
}

void compare_reference(const OptimizeResult& r, OptimizeReference& ref) {
  const bool timed = ref.timed && !r.front.empty() && r.candidates[r.front.front()].timed;
  const auto objectives = [&](double capex, double power, double ms) {
    return timed ? std::vector<double>{capex, power, ms} : std::vector<double>{capex, power};
  };
  // The reference priced as point c is: the pricing whose overrides are c's values of the cost: axes.
  const auto pricing_of = [&](const OptimizePoint& c) -> const OptimizeReference::Pricing* {
    std::vector<std::string> sets;
    for (size_t a = 0; a < r.axes.size(); ++a)
      if (r.axes[a].key.rfind("cost.", 0) == 0) sets.push_back(r.axes[a].key + "=" + c.values[a]);
    for (const auto& p : ref.pricings)
      if (p.sets == sets) return &p;
    return nullptr;
  };
  const auto want_for = [&](const OptimizePoint& c) {
    const OptimizeReference::Pricing* p = pricing_of(c);
    return objectives(p ? p->capex_usd : ref.capex_usd, p ? p->power_kw : ref.power_kw, ref.objective);
  };
  if (!ref.pricings.empty()) {
    ref.capex_usd = ref.pricings.front().capex_usd;
    ref.power_kw = ref.pricings.front().power_kw;
    ref.priced_as = fmt::format("{}", fmt::join(ref.pricings.front().sets, ", "));
  }
  ref.match = -1;
  for (size_t f : r.front) {
    const auto& c = r.candidates[f];
    const std::vector<double> have = objectives(c.capex_usd, c.power_kw, c.objective);
    const std::vector<double> want = want_for(c);
    bool ok = true;
    for (size_t j = 0; j < want.size(); ++j) ok = ok && have[j] <= want[j];
    if (!ok) continue;
    if (ref.match < 0 || c.capex_usd < r.candidates[static_cast<size_t>(ref.match)].capex_usd)
      ref.match = static_cast<int64_t>(f);
  }
  if (ref.match >= 0) {
    const auto& c = r.candidates[static_cast<size_t>(ref.match)];
    if (const OptimizeReference::Pricing* p = pricing_of(c)) {
      ref.capex_usd = p->capex_usd;
      ref.power_kw = p->power_kw;
      ref.priced_as = fmt::format("{}", fmt::join(p->sets, ", "));
    }
  }
  const std::vector<double> want = objectives(ref.capex_usd, ref.power_kw, ref.objective);
  if (ref.match < 0) {
    // Candidates the train study could not time are not on the front: the verdict holds for the timed ones only.
    int64_t untimed = 0;
    for (const auto& c : r.candidates) untimed += timed && !c.timed ? 1 : 0;
    const auto kept = static_cast<int64_t>(r.candidates.size());
    ref.verdict =
        untimed == 0
            ? fmt::format("{} is not dominated by any point of the front: no design in the space is as cheap, "
                          "as cool{} at once",
                          ref.name, timed ? " and as fast" : "")
            : fmt::format("{} is not dominated by any point of the front, but {} of the {} candidates could not be "
                          "timed (above) and are not on it: the verdict holds for the timed designs only",
                          ref.name, untimed, kept);
    return;
  }
  const auto& c = r.candidates[static_cast<size_t>(ref.match)];
  // 1234567.8 with 1 decimal -> "1,234,567.8"
  const auto grouped = [](double v, int decimals) {
    std::string s = fmt::format("{:.{}f}", v, decimals);
    const size_t dot = s.find('.');
    for (int64_t i = static_cast<int64_t>(dot == std::string::npos ? s.size() : dot) - 3; i > (s[0] == '-' ? 1 : 0);
         i -= 3)
      s.insert(static_cast<size_t>(i), ",");
    return s;
  };
  const auto delta = [&](const char* what, double have, double want, const char* unit, int decimals) {
    // Money as every table prints it ($1,234); other figures with their unit after.
    const bool usd = std::string(unit) == "USD";
    const auto value = [&](double v) {
      return usd ? "$" + grouped(v, decimals) : fmt::format("{} {}", grouped(v, decimals), unit);
    };
    if (have == want) return fmt::format("{} equal ({})", what, value(have));
    return fmt::format("{} {} vs {} ({:+.1f}%)", what, value(have),
                       usd ? "$" + grouped(want, decimals) : grouped(want, decimals), (have / want - 1) * 100);
  };
  std::string why =
      delta("capex", c.capex_usd, ref.capex_usd, "USD", 0) + "; " + delta("power", c.power_kw, ref.power_kw, "kW", 1);
  if (timed && r.objective == kTimeColumn) why += "; " + delta("iteration", c.objective, ref.objective, "ms", 1);
  else if (timed)
    why += "; " + delta(r.objective == kDaysColumn ? "days to train" : "days to train with random failures",
                        c.objective, ref.objective, "days", 2);
  const std::vector<double> have = objectives(c.capex_usd, c.power_kw, c.objective);
  ref.equal = have == want;
  if (!ref.priced_as.empty()) why += fmt::format(" ({} priced as #{}: {})", ref.name, c.id, ref.priced_as);
  ref.verdict = ref.equal ? fmt::format("the front contains a design equal to {} in every objective (#{}): {}",
                                        ref.name, c.id, why)
                          : fmt::format("#{} on the front dominates {}: {}", c.id, ref.name, why);
}

}  // namespace podnet::study
