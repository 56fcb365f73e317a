#include "report/diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <map>
#include <ostream>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/units.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"
#include "report/sweep_report.hpp"
#include "report/train_report.hpp"

namespace podnet::report {

namespace {

// The parallelism keys a training document resolves (its "parallelism" block), in the order the diff names them,
// with their names there.
constexpr std::pair<const char*, const char*> kLayoutKeys[] = {{"tp", "TP"},    {"cp", "CP"},
                                                               {"pp", "PP"},    {"dp", "DP"},
                                                               {"ep", "EP"},    {"interleave", "interleave"},
                                                               {"zero", "ZeRO"}};
const char* layout_name(const std::string& key) {
  for (const auto& [k, name] : kLayoutKeys)
    if (key == k) return name;
  return nullptr;
}

bool number(const nlohmann::json& v) { return v.is_number(); }

// A flattened field's value as its document holds it: a yes/no stays true or false (the sweep database stores
// it as 1 or 0, and a diff of 0 to 1 read "+1").
nlohmann::json as_in(const nlohmann::json& doc, const std::string& name, nlohmann::json flat) {
  const nlohmann::json* at = &doc;
  for (size_t start = 0;;) {
    const size_t dot = name.find('.', start);
    if (!at->is_object()) return flat;
    const auto it = at->find(name.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (it == at->end()) return flat;  // a key with a dot of its own: left as flattened
    at = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  return at->is_boolean() ? *at : flat;
}

// A value as the study declares its field (report/studies.hpp), else grouped by thousands.
// (decimals < 0: a field inferred without a unit, shown as undeclared numbers are.)
std::string text(const nlohmann::json& v, const ResultField* f = nullptr) {
  if (f && f->unit == ":1" && v.is_number()) return ratio_text(v.get<double>());  // 2.125:1, as design prints it
  return format_field(f && f->decimals < 0 ? nullptr : f, v);
}

// A change; of a field in % it is in percentage points (52.8 % to 53.0 % is +0.2 points, B / A 1.0046).
// A change too small for the field's decimals gets up to 3 more, so that it does not read "-0.0 days".
std::string signed_text(double d, const ResultField* f = nullptr) {
  ResultField finer;
  if (f && f->decimals >= 0 && d != 0) {
    finer = *f;
    while (finer.decimals < f->decimals + 3 &&
           std::fabs(d) * finer.scale < 0.5 * std::pow(10.0, -static_cast<double>(finer.decimals)))
      ++finer.decimals;
    f = &finer;
    // Still nothing to show at 3 more decimals (1.07 and 1.07 requests/s read "-0.00000"): no visible change.
    if (std::fabs(d) * f->scale < 0.5 * std::pow(10.0, -static_cast<double>(f->decimals))) return "~0";
  }
  if (f && f->unit == "%") return (d < 0 ? "-" : "+") + fixed_or_exp(std::fabs(d) * f->scale, f->decimals) + " points";
  // A ratio's change is a number (1:1 to 2:1 is +1), not a ratio.
  if (f && f->unit == ":1") return (d < 0 ? "-" : "+") + format_number(std::fabs(d), kRatioDecimals);
  const std::string t = format_field(f && f->decimals < 0 ? nullptr : f, std::fabs(d));
  return (d < 0 ? "-" : "+") + t;
}

// B - A as the table shows A and B: the difference of the rounded values (3.72 and 3.86 days show as 3.7 and 3.9,
// and their change as +0.2, not +0.1), unless they round alike, when signed_text shows the change itself with
// the decimals it needs.
double shown_delta(const nlohmann::json& c, const ResultField* f) {
  const double d = c["delta"].get<double>();
  if (!f || !c["a"].is_number() || !c["b"].is_number()) return d;
  const bool ratio = f->unit == ":1";  // shown at ratio_text's decimals, whatever the field declares
  if (f->decimals < 0 && !ratio) return d;
  const int decimals = ratio ? kRatioDecimals : f->decimals;
  const auto shown = [&](const nlohmann::json& v) {
    return round_to(v.get<double>() * f->scale, decimals);  // as fixed() rounds what it prints
  };
  const double rounded = (shown(c["b"]) - shown(c["a"])) / f->scale;
  return rounded != 0 ? rounded : d;
}

// A field the study does not declare, labelled and united from its key as the declared ones are: the path's
// sections as words ("cost.capex_by_tier_usd.leaf-spine" -> "capex by tier, leaf-spine" in USD), a fraction
// in %, so that no row of the table is a raw JSON key.
ResultField inferred(const std::string& key) {
  ResultField f;
  f.key = key;
  f.decimals = -1;
  static const std::pair<const char*, const char*> kDropped[] = {
      {"bom.", ""},   {"cost.", ""},         {"placement.", ""},
      {"bench.", ""}, {"by_component.", ""}, {"monte_carlo.", "Monte Carlo "}};
  if (key.rfind("oversubscription.", 0) == 0) f.unit = ":1";  // a ratio, as design prints it
  std::string path = key, prefix;
  for (bool again = true; again;) {
    again = false;
    for (const auto& [head, said] : kDropped)
      if (path.rfind(head, 0) == 0 && path.size() > std::string(head).size()) {
        path = path.substr(std::string(head).size());
        prefix += said;
        again = true;
      }
  }
  struct Suffix {
    const char* end;
    const char* unit;
    double scale;
    int decimals;
  };
  static const Suffix kSuffixes[] = {{"_usd_per_year", "USD/year", 1, 0},
                                     {"_usd", "USD", 1, 0},
                                     {"_kw", "kW", 1, 1},
                                     {"_mwh_per_year", "MWh/year", 1, 1},
                                     {"_fraction", "%", 100, 1},
                                     {"_ms", "ms", 1, 2},
                                     {"_seconds", "s", 1, 4},
                                     {"_hours", "h", 1, 2},
                                     {"_minutes", "min", 1, 1},
                                     {"_gbps", "Gbps", 1, 0},
                                     {"_bytes", "bytes", 1, 0},
                                     {"_days", "days", 1, 1}};
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    for (const Suffix& s : kSuffixes) {
      const std::string end = s.end;
      if (part.size() > end.size() && part.compare(part.size() - end.size(), end.size(), end) == 0) {
        part.erase(part.size() - end.size());
        f.unit = s.unit;
        f.scale = s.scale;
        f.decimals = s.decimals;
        break;
      }
    }
    // A component class keyed "KIND:TIER" (reliability's by_component): "KIND (TIER)", as its table prints it.
    if (const auto colon = part.find(':'); colon != std::string::npos && colon + 1 < part.size())
      part = part.substr(0, colon) + " (" + part.substr(colon + 1) + ")";
    // Checkpoint advice at Young's first-order interval (reliability's goodput_young).
    if (part == "goodput_young") part = "goodput at Young's interval";
    if (part == "goodput" || part == "goodput at Young's interval" || part == "efficiency" ||
        part == "share") {  // fractions by name
      f.unit = "%";
      f.scale = 100;
      f.decimals = 1;
    }
    if (part == "cc") part = "congestion control";
    // A map keyed by a tier or a link class keeps its key as design prints it ("spine-super_spine", "super_spine").
    const bool named = !parts.empty() && (parts.back() == "capex by tier" || parts.back() == "switches" ||
                                          parts.back() == "links" || parts.back() == "optics");
    if (!named) std::replace(part.begin(), part.end(), '_', ' ');
    // Parallelism and collective abbreviations as the reports write them ("backward tp" read as a word).
    if (!named) {
      std::string words;
      std::istringstream in(part);
      for (std::string w; in >> w;) {
        static const std::set<std::string> kUpper = {"tp",   "pp",  "dp",   "ep",  "cp",  "mfu", "hfu", "gpu",
                                                     "gpus", "nic", "nics", "pfc", "ecn", "bgp", "asn"};
        if (kUpper.count(w)) {
          std::transform(w.begin(), w.end(), w.begin(), [](unsigned char c) { return std::toupper(c); });
          if (w.size() > 3 && w.back() == 'S') w.back() = 's';  // GPUs, NICs
        }
        words += (words.empty() ? "" : " ") + w;
      }
      if (!words.empty()) part = words;
    }
    parts.push_back(part);
  }
  std::string label = prefix;
  for (size_t i = 0; i < parts.size(); ++i) label += (i ? ", " : "") + parts[i];
  // The servers' capex group is their NICs (servers and GPUs are not priced), as design names it.
  if (key == "cost.capex_by_tier_usd.server") label += " NICs";
  f.label = label;
  return f;
}

const ResultField* declared(const std::string& study, const std::string& field) {
  const StudyDef* st = find_study(study);
  return st ? find_field(*st, field) : nullptr;
}

// The declared field, else one inferred from its key (kept for the table's life in `store`).
const ResultField* labelled(const std::string& study, const std::string& field,
                            std::map<std::string, ResultField>& store) {
  // One per size of a bench ("busbw_gbyte_per_s@0000000004194304"): the field's label at its size (4 MiB).
  if (const auto at = field.find('@'); at != std::string::npos && at + 1 < field.size()) {
    if (auto it = store.find(field); it != store.end()) return &it->second;
    const ResultField* d = declared(study, field);
    ResultField f = d && !d->label.empty() ? *d : inferred(field.substr(0, at));
    f.key = field;
    f.label += " at " + size_text(static_cast<Bytes>(std::stoll(field.substr(at + 1))));
    return &store.emplace(field, f).first->second;
  }
  if (const ResultField* f = declared(study, field); f && !f->label.empty()) return f;
  return &store.emplace(field, inferred(field)).first->second;
}

// A field one side alone has, as the "only in" tables list it: not an empty text, nor a design's asked
// oversubscription, which a note of its own says.
bool listed_only(const std::string& key, const nlohmann::json& value) {
  return !(value.is_string() && value.get<std::string>().empty()) && key.rfind("oversubscription_asked.", 0) != 0;
}

size_t only_listed(const nlohmann::json& study, const char* side) {
  const std::string key = std::string("only_") + side + "_values";
  size_t n = 0;
  if (study.contains(key))
    for (auto f = study[key].begin(); f != study[key].end(); ++f) n += listed_only(f.key(), f.value()) ? 1 : 0;
  return n;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_resolved(const std::string& yaml) {
  std::vector<std::pair<std::string, std::string>> out;
  std::istringstream in(yaml);
  std::string section, line, key;
  for (std::string l; std::getline(in, l);) {
    if (l.empty() || l[0] == '#') continue;
    // A key left to its default prints as a comment, "  # pods_per_zone: auto (what it is)": its value is the word
    // after the colon.
    if (l.rfind("  # ", 0) == 0 && !section.empty()) {
      const auto colon = l.find(':', 4);
      if (colon != std::string::npos && l.find(' ', 4) > colon) {
        std::string v = l.substr(colon + 1);
        v.erase(0, v.find_first_not_of(' '));
        v = v.substr(0, v.find(' '));
        key = section + "." + l.substr(4, colon - 4);
        out.push_back({key, v});
      }
      continue;
    }
    const size_t indent = l.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    const auto colon = l.find(':', indent);
    if (indent == 0) {
      if (colon == std::string::npos) continue;
      const std::string k = l.substr(0, colon);
      std::string v = colon + 1 < l.size() ? l.substr(colon + 1) : "";
      if (!v.empty() && v[0] == ' ') v.erase(0, 1);
      section = k;
      key.clear();
      if (!v.empty()) out.push_back({k, v});
      continue;
    }
    if (indent == 2 && colon != std::string::npos && l[2] != '-') {
      key = section + "." + l.substr(2, colon - 2);
      std::string v = colon + 1 < l.size() ? l.substr(colon + 1) : "";
      if (!v.empty() && v[0] == ' ') v.erase(0, 1);
      out.push_back({key, v});
      continue;
    }
    // Deeper lines (list entries, nested maps) belong to the last key or the section.
    const std::string owner = key.empty() ? section : key;
    if (!out.empty() && out.back().first == owner) {
      out.back().second += (out.back().second.empty() ? "" : " ") + l.substr(indent);
    } else {
      out.push_back({owner, l.substr(indent)});
    }
  }
  return out;
}

DiffSide document_side(const std::string& label, const nlohmann::json& doc) {
  if (!doc.is_object() || !doc.contains("run") || !doc["run"].is_object() || !doc["run"].contains("command") ||
      !doc["run"]["command"].is_string())
    throw InputError(
        fmt::format("{}: not a podnet result document (no run.command; write one with --format json)", label));
  DiffSide s;
  s.label = label;
  s.documents.push_back({doc["run"]["command"].get<std::string>(), doc});
  const nlohmann::json& run = doc["run"];
  if (run.contains("scenario") && run["scenario"].is_string()) s.run_inputs["scenario"] = run["scenario"];
  // The scenario file each was run from (two edited copies of one built-in share its name): its contents are not in
  // the document, but a different file is an input that differs.
  if (run.contains("source") && run["source"].is_string()) s.run_inputs["scenario file"] = run["source"];
  if (run.contains("seed") && run["seed"].is_number_integer())
    s.run_inputs["seed"] = std::to_string(run["seed"].get<int64_t>());
  if (run.contains("overrides") && run["overrides"].is_array())
    for (const auto& o : run["overrides"]) {
      if (!o.is_string()) continue;
      const std::string text = o.get<std::string>();
      if (const size_t eq = text.find('='); eq != std::string::npos && eq > 0)
        s.run_inputs[text.substr(0, eq)] = text.substr(eq + 1);
    }
  // The options the run was given beyond its overrides (run.options: {"--max": "4MiB", "--allow-oom": true}).
  if (run.contains("options") && run["options"].is_object())
    for (const auto& [option, value] : run["options"].items()) {
      std::string text;
      if (value.is_string()) text = value.get<std::string>();
      else if (value.is_array())
        for (const auto& v : value)
          text += (text.empty() ? "" : " ") + (v.is_string() ? v.get<std::string>() : v.dump());
      else text = value.dump();
      s.run_inputs[option] = text;
    }
  return s;
}

nlohmann::json diff_document(const DiffSide& a, const DiffSide& b) {
  nlohmann::json doc;
  doc["schema_version"] = kSchemaVersion;
  doc["a"] = a.label;
  doc["b"] = b.label;
  nlohmann::json inputs = nlohmann::json::array();
  if (!a.resolved_yaml.empty() && !b.resolved_yaml.empty()) {
    std::map<std::string, std::string> ma, mb;
    // The scenarios' names and descriptions are prose about them, not inputs.
    for (const auto& [k, v] : flatten_resolved(a.resolved_yaml))
      if (k != "name" && k != "description") ma[k] = v;
    for (const auto& [k, v] : flatten_resolved(b.resolved_yaml))
      if (k != "name" && k != "description") mb[k] = v;
    std::map<std::string, int> keys;
    for (const auto& [k, v] : ma) keys[k] = 0;
    for (const auto& [k, v] : mb) keys[k] = 0;
    for (const auto& [k, unused] : keys) {
      const auto ia = ma.find(k), ib = mb.find(k);
      const nlohmann::json va = ia == ma.end() ? nlohmann::json(nullptr) : nlohmann::json(ia->second);
      const nlohmann::json vb = ib == mb.end() ? nlohmann::json(nullptr) : nlohmann::json(ib->second);
      if (va == vb) continue;
      nlohmann::json row = {{"key", k}, {"a", va}, {"b", vb}};
      // A value a preset set on either side (the GPU's NVLink, a deployment preset's keys): say which.
      for (const DiffSide* side : {&a, &b})
        if (auto it = side->set_by_preset.find(k); it != side->set_by_preset.end()) row["set_by"] = it->second;
      inputs.push_back(row);
    }
    // A switch of another port speed at the same radix is another chip (128 x 400G is 51.2 Tb/s, half the 128 x
    // 800G box): its price and power follow. Said when the two sides' switches differ in what they carry.
    const auto capacity = [](const std::map<std::string, std::string>& m, std::string& said) {
      const auto radix = m.find("switch.radix"), speed = m.find("switch.port_speed");
      Bandwidth port;
      std::string expected;
      if (radix == m.end() || speed == m.end() || !parse_bandwidth(speed->second, port, expected)) return -1.0;
      const double bps = std::atof(radix->second.c_str()) * port.bps;
      said = fmt::format("{} x {} ({} Tbps)", radix->second, speed->second, format_number(bps / 1e12));
      return bps;
    };
    std::string sa, sb;
    const double ca = capacity(ma, sa), cb = capacity(mb, sb);
    if (ca > 0 && cb > 0 && std::fabs(ca - cb) > 1e-9 * std::max(ca, cb))
      doc["switch_capacity"] = {{"a", sa}, {"b", sb}};
  }
  // Two result documents: what their run blocks record (the scenario, the seed, the --set overrides). A key one
  // side does not override is "(scenario's)": its value is the scenario's own, which the document does not hold.
  if (a.resolved_yaml.empty() && b.resolved_yaml.empty() && !a.run_inputs.empty() && !b.run_inputs.empty()) {
    std::map<std::string, int> keys;
    for (const DiffSide* side : {&a, &b})
      for (const auto& [k, v] : side->run_inputs) keys[k] = 0;
    for (const auto& [k, unused] : keys) {
      const auto ia = a.run_inputs.find(k), ib = b.run_inputs.find(k);
      // An option (run.options: "--max") left out took the command's default.
      const char* absent = k.rfind("--", 0) == 0 ? "(default)" : "(scenario's)";
      const std::string va = ia == a.run_inputs.end() ? absent : ia->second;
      const std::string vb = ib == b.run_inputs.end() ? absent : ib->second;
      if (va != vb) inputs.push_back({{"key", k}, {"a", va}, {"b", vb}, {"from", "run"}});
    }
  }
  doc["inputs"] = inputs;
  nlohmann::json studies = nlohmann::json::object();
  // What a fabric costs per unit of training throughput needs both studies: design's capex, train's tokens/s
  // (taken from the fields the loop below flattens).
  double capex[2] = {-1, -1}, tokens[2] = {-1, -1}, fabric_gpus[2] = {-1, -1}, job_gpus[2] = {-1, -1};
  for (const auto& [study, da] : a.documents) {
    const auto it = std::find_if(b.documents.begin(), b.documents.end(),
                                 [&, name = study](const auto& p) { return p.first == name; });
    if (it == b.documents.end()) continue;
    std::map<std::string, nlohmann::json> fa, fb;
    for (const auto& f : sweep_fields(da)) fa[f.name] = as_in(da, f.name, json_of(f.value));
    for (const auto& f : sweep_fields(it->second)) fb[f.name] = as_in(it->second, f.name, json_of(f.value));
    const auto both = [&](const char* field, double* out) {
      if (!fa.count(field) || !fb.count(field) || !number(fa[field]) || !number(fb[field])) return;
      out[0] = fa[field].get<double>();
      out[1] = fb[field].get<double>();
    };
    if (study == "design") both("cost.capex_usd", capex);
    if (study == "design") both("bom.gpus", fabric_gpus);
    if (study == "train") both("tokens_per_second", tokens);
    if (study == "train") both("parallelism.gpus", job_gpus);
    nlohmann::json changed = nlohmann::json::array(), only_a = nlohmann::json::array(),
                   only_b = nlohmann::json::array(), only_a_values = nlohmann::json::object(),
                   only_b_values = nlohmann::json::object();
    int64_t same = 0;
    std::map<std::string, ResultField> labels;  // each changed figure's label, as the console table names it
    for (const auto& [name, va] : fa) {
      const auto jb = fb.find(name);
      if (jb == fb.end()) {
        only_a.push_back(name);
        only_a_values[name] = va;
        continue;
      }
      const nlohmann::json& vb = jb->second;
      if (number(va) && number(vb)) {
        const double x = va.get<double>(), y = vb.get<double>();
        if (std::fabs(y - x) <= 1e-9 * std::max(std::fabs(x), std::fabs(y))) {
          ++same;
          continue;
        }
        const ResultField* f = labelled(study, name, labels);
        nlohmann::json c = {{"field", name},
                            {"label", f->label},
                            {"a", va},
                            {"b", vb},
                            {"delta", round_to(y - x, 6)},
                            {"ratio", x != 0 ? nlohmann::json(round_to(y / x, 6)) : nlohmann::json(nullptr)}};
        // B - A as the table prints it: the difference of the values as shown (the dashboard's compare page shows
        // this one, so that its last digit is the CLI's).
        c["delta_shown"] = round_to(shown_delta(c, f), 9);
        changed.push_back(std::move(c));
      } else if (va != vb) {
        changed.push_back({{"field", name}, {"label", labelled(study, name, labels)->label}, {"a", va}, {"b", vb}});
      } else {
        ++same;
      }
    }
    for (const auto& [name, vb] : fb)
      if (!fa.count(name)) {
        only_b.push_back(name);
        only_b_values[name] = vb;
      }
    studies[study] = {{"changed", changed},
                      {"same", same},
                      {"only_a", only_a},
                      {"only_b", only_b},
                      {"only_a_values", only_a_values},
                      {"only_b_values", only_b_values}};
    // The GPU count each side ran on: results of different sizes compare different jobs.
    if (const StudyDef* st = find_study(study)) {
      const int64_t ga = gpus_of(*st, da), gb = gpus_of(*st, it->second);
      if (ga >= 0 && gb >= 0) studies[study]["gpus"] = {{"a", ga}, {"b", gb}};
    }
    // The engine each side ran on (a scenario's own, when --engine is not given).
    if (da.contains("engine") && it->second.contains("engine") && da["engine"].is_string() &&
        it->second["engine"].is_string())
      studies[study]["engine"] = {{"a", da["engine"]}, {"b", it->second["engine"]}};
    // The job's layout as each side resolved it: a recipe or an automatic DP changes keys no input names.
    if (study == "train" && da.contains("parallelism") && it->second.contains("parallelism")) {
      nlohmann::json layout = nlohmann::json::array();
      const auto& pa = da["parallelism"];
      const auto& pb = it->second["parallelism"];
      for (const auto& [k, name] : kLayoutKeys)
        if (pa.contains(k) && pb.contains(k) && pa[k] != pb[k])
          layout.push_back({{"key", k}, {"a", pa[k]}, {"b", pb[k]}});
      if (!layout.empty()) studies[study]["layout"] = layout;
    }
    if (study == "train" && fa.count("iteration_time_ms") && fb.count("iteration_time_ms") &&
        number(fa["iteration_time_ms"]) && number(fb["iteration_time_ms"])) {
      // The breakdown adds up to the iteration time on each side, so its changes add up to the iteration's.
      nlohmann::json parts = nlohmann::json::object();
      for (const char* p : kTrainingParts) {
        const std::string k = std::string("breakdown_ms.") + p;
        if (fa.count(k) && fb.count(k) && number(fa[k]) && number(fb[k]))
          parts[p] = round_to(fb[k].get<double>() - fa[k].get<double>(), 6);
      }
      // With failures (train's `failures` block) a side's iteration is the one they slowed; the breakdown is the
      // iteration without them, so what they add is a part of its own ("failures") and the parts still add up.
      const auto with_failures = [](const std::map<std::string, nlohmann::json>& f) {
        const double base = f.at("iteration_time_ms").get<double>();
        const auto it = f.find("failures.iteration_ms");
        return std::pair{base, it != f.end() && number(it->second) ? it->second.get<double>() : base};
      };
      const auto [base_a, iter_a] = with_failures(fa);
      const auto [base_b, iter_b] = with_failures(fb);
      const double failures = (iter_b - base_b) - (iter_a - base_a);
      if (std::fabs(failures) > 1e-9) parts["failures"] = round_to(failures, 6);
      doc["attribution"]["train"] = {{"iteration_time_ms_delta", round_to(iter_b - iter_a, 6)},
                                     {"iteration_time_ms_a", round_to(iter_a, 6)},
                                     {"iteration_time_ms_b", round_to(iter_b, 6)},
                                     {"by_breakdown_ms", parts}};
      // NCCL's tuner prices each algorithm on an idle fabric, so a faster NIC can switch the data-parallel
      // collectives to another algorithm whose traffic crosses more of the fabric (ring to PAT at 800G): the
      // reader must know the sides ran different collectives, and how to hold one choice on both.
      const auto choices = [](const nlohmann::json& d) {
        std::set<std::string> s;
        if (d.contains("plan") && d["plan"].contains("dp_choices"))
          for (const auto& c : d["plan"]["dp_choices"])
            s.insert(fmt::format("{} {}/{} {}", c["op"].get<std::string>(), c["algorithm"].get<std::string>(),
                                 c["protocol"].get<std::string>(), c["channels"].get<int32_t>()));
        return s;
      };
      const auto algorithms = [](const nlohmann::json& d) {
        std::set<std::string> s;
        if (d.contains("plan") && d["plan"].contains("dp_choices"))
          for (const auto& c : d["plan"]["dp_choices"]) s.insert(c["algorithm"].get<std::string>());
        return s;
      };
      if (choices(da) != choices(it->second)) {
        const std::set<std::string> aa = algorithms(da), ab = algorithms(it->second);
        // The algorithms one side ran and the other did not, to exclude on both; never ring, which every
        // collective can run and some need (a TP all-gather inside one server: excluding it left that
        // side nothing to run).
        const auto only_in = [](const std::set<std::string>& x, const std::set<std::string>& y) {
          std::vector<std::string> v;
          for (const auto& a : x)
            if (!y.count(a) && a != "ring") v.push_back(a);
          return v;
        };
        std::vector<std::string> only = only_in(ab, aa);
        if (only.empty()) only = only_in(aa, ab);
        nlohmann::json dc = {{"a", dp_choices_text(da)}, {"b", dp_choices_text(it->second)}};
        if (!only.empty()) dc["hold"] = fmt::format("collective.algorithms=^{}", fmt::join(only, ","));
        doc["attribution"]["train"]["dp_collectives"] = dc;
      }
    }
  }
  if (capex[0] > 0 && capex[1] > 0 && tokens[0] > 0 && tokens[1] > 0) {
    const double x = capex[0] / tokens[0], y = capex[1] / tokens[1];
    doc["derived"]["network_capex_usd_per_token_per_second"] = {{"a", round_to(x, 6)},
                                                                {"b", round_to(y, 6)},
                                                                {"ratio", round_to(y / x, 6)}};
    // A job on part of the fabric is charged the whole fabric's network: the reader must know.
    if (fabric_gpus[0] > 0 && job_gpus[0] > 0)
      doc["derived"]["network_capex_usd_per_token_per_second"]["gpus"] = {
          {"a", {{"job", job_gpus[0]}, {"fabric", fabric_gpus[0]}}},
          {"b", {{"job", job_gpus[1]}, {"fabric", fabric_gpus[1]}}}};
  }
  doc["studies"] = studies;
  return doc;
}

ResultField inferred_field(const std::string& key) { return inferred(key); }

void write_diff_table(const nlohmann::json& doc, std::ostream& out, size_t limit) {
  out << fmt::format("podnet diff: A = {}, B = {}\n", doc["a"].get<std::string>(), doc["b"].get<std::string>());
  const auto& inputs = doc["inputs"];
  if (!inputs.empty()) {
    const bool from_run = inputs[0].contains("from");
    out << fmt::format("\n  inputs that differ ({}){}:\n", inputs.size(),
                       from_run ? ", as the documents' run blocks record them (scenario, seed, --set, options)" : "");
    Table t({"key", "A", "B"});
    // A whole number as given (--set topology.gpus=131072) grouped by thousands, as the results below are.
    const auto input = [](const nlohmann::json& v) {
      if (v.is_string()) {
        const std::string& s = v.get_ref<const std::string&>();
        if (!s.empty() && s.size() <= 18 &&
            std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
          return thousands(std::stoll(s));
      }
      return text(v);
    };
    for (const auto& i : inputs)
      t.add({i["key"].get<std::string>() +
                 (i.contains("set_by") ? " (from " + i["set_by"].get<std::string>() + ")" : std::string()),
             input(i["a"]), input(i["b"])});
    t.write(out, "    ");
    if (doc.contains("switch_capacity"))
      out << fmt::format("    note: the switch is another chip: A {}, B {}; its price and power follow it\n",
                         doc["switch_capacity"]["a"].get<std::string>(),
                         doc["switch_capacity"]["b"].get<std::string>());
  }
  for (auto it = doc["studies"].begin(); it != doc["studies"].end(); ++it) {
    const auto& s = it.value();
    std::vector<nlohmann::json> changed(s["changed"].begin(), s["changed"].end());
    // Largest relative changes first; text changes after numbers.
    auto rel = [](const nlohmann::json& c) {
      if (!c.contains("ratio") || c["ratio"].is_null()) return c.contains("delta") ? 1e300 : -1.0;
      return std::fabs(std::log(std::max(c["ratio"].get<double>(), 1e-300)));
    };
    // A figure per size (bench's "time @ 8 MiB") stays with its others, in size order, where its largest change
    // puts it: sorted by ratio alone, the sizes interleaved (64 MiB, 16 MiB, 32 MiB, 8 MiB).
    const auto group_of = [](const nlohmann::json& c) {
      const std::string k = c["field"].get<std::string>();
      return k.substr(0, k.find('@'));
    };
    const auto size_of = [](const nlohmann::json& c) {
      const std::string k = c["field"].get<std::string>();
      const size_t at = k.find('@');
      return at == std::string::npos ? 0.0 : std::strtod(k.c_str() + at + 1, nullptr);
    };
    std::map<std::string, double> group_rel;
    for (const auto& c : changed) {
      const auto [g, fresh] = group_rel.try_emplace(group_of(c), rel(c));
      if (!fresh) g->second = std::max(g->second, rel(c));
    }
    std::stable_sort(changed.begin(), changed.end(), [&](const auto& x, const auto& y) {
      const std::string gx = group_of(x), gy = group_of(y);
      if (gx == gy) return size_of(x) < size_of(y);
      const double rx = group_rel[gx], ry = group_rel[gy];
      return rx != ry ? rx > ry : gx < gy;
    });
    // Counted as the "only in" tables below list them (a design's asked oversubscription is a note of its own).
    const size_t only_a = only_listed(s, "a"), only_b = only_listed(s, "b");
    out << fmt::format("\n  {}: {} changed, {} the same{}\n", it.key(),
                       plural(static_cast<int64_t>(changed.size()), "figure", "figures"), s["same"].get<int64_t>(),
                       only_a == 0 && only_b == 0 ? "" : fmt::format(", {} only in A, {} only in B", only_a, only_b));
    // "analytical engine", or each side's when they differ; `on` for a line of its own.
    std::string engine, on;
    if (s.contains("engine")) {
      const std::string ea = s["engine"]["a"].get<std::string>(), eb = s["engine"]["b"].get<std::string>();
      engine = ea == eb ? ea + " engine" : fmt::format("A on the {} engine, B on the {}", ea, eb);
      on = ea == eb ? "on the " + engine : engine;
    }
    if (s.contains("gpus")) {
      const int64_t ga = s["gpus"]["a"].get<int64_t>(), gb = s["gpus"]["b"].get<int64_t>();
      if (ga == gb) {
        out << fmt::format("    on {} GPUs{}\n", thousands(ga), engine.empty() ? "" : ", " + engine);
      } else {
        if (!on.empty()) out << fmt::format("    {}\n", on);
        out << fmt::format("    warning: A runs on {} GPUs, B on {}: the results compare jobs of different sizes, "
                           "not only the inputs that differ\n",
                           thousands(ga), thousands(gb));
      }
    } else if (!on.empty()) {
      out << fmt::format("    {}\n", on);
    }
    if (it.key() == "train") {  // jobs that differ: the figures compare them as well as the fabrics
      std::vector<std::string> keys;
      // The layout as resolved (TP 4 -> 8), which a recipe or an automatic DP changes without an input saying so;
      // then the workload inputs that differ.
      if (s.contains("layout"))
        for (const auto& l : s["layout"])
          keys.push_back(
              fmt::format("{} {} -> {}", layout_name(l["key"].get<std::string>()), text(l["a"]), text(l["b"])));
      for (const auto& i : inputs) {
        const std::string k = i["key"].get<std::string>();
        const std::string short_key = k.rfind("workload.", 0) == 0 ? k.substr(9) : "";
        if (!short_key.empty() && !(s.contains("layout") && layout_name(short_key))) keys.push_back(k);
      }
      if (!keys.empty())
        out << fmt::format("    note: the two jobs differ ({}{}): these figures compare the jobs as well as the "
                           "fabrics (--set the same workload keys on both sides to compare fabrics alone)\n",
                           fmt::join(keys.begin(), keys.begin() + std::min<size_t>(keys.size(), 6), ", "),
                           keys.size() > 6 ? fmt::format(", {} more", keys.size() - 6) : "");
    }
    if (it.key() == "train" && doc.contains("attribution") && doc["attribution"].contains("train")) {
      const auto& at = doc["attribution"]["train"];
      const ResultField* ms = declared("train", "iteration_time_ms");
      // table: the attribution of the documents the table compares, whose parts read as the table's rows do (the
      // difference of the rounded values: -384.08 ms there, not the exact -384.07).
      const auto change = [&](const nlohmann::json& a, bool table) {
        std::string parts;
        for (auto p = a["by_breakdown_ms"].begin(); p != a["by_breakdown_ms"].end(); ++p) {
          if (!(std::fabs(p.value().get<double>()) > 1e-9)) continue;
          double part = p.value().get<double>();
          if (table)
            for (const auto& c : changed)
              if (c["field"] == "breakdown_ms." + p.key() && c.contains("delta")) part = shown_delta(c, ms);
          parts += fmt::format("{}{} {}", parts.empty() ? "" : ", ", breakdown_label(p.key()), signed_text(part, ms));
        }
        // The total as the table shows it: the difference of the two rounded times (5,998.26 to 6,020.03 ms is
        // +21.77 ms, though the exact change, which the parts add up to, is 21.765).
        double total = a["iteration_time_ms_delta"].get<double>();
        if (a.contains("iteration_time_ms_a") && a.contains("iteration_time_ms_b"))
          total = shown_delta({{"a", a["iteration_time_ms_a"]}, {"b", a["iteration_time_ms_b"]}, {"delta", total}}, ms);
        return fmt::format("iteration time {}{}", signed_text(total, ms), parts.empty() ? "" : ": " + parts);
      };
      const nlohmann::json* dc = at.contains("dp_collectives") ? &at["dp_collectives"] : nullptr;
      if (dc && dc->contains("held")) {
        // Two headlines: the fabric's change under one choice of DP collectives, then the tuner's own choices
        // (which the table below compares).
        out << fmt::format("    with the same DP algorithm on both sides (--set '{}'):\n      {}\n",
                           (*dc)["hold"].get<std::string>(), change((*dc)["held"], false));
        out << fmt::format("    with NCCL's tuner's choice on each side (the table below):\n      {}\n      A: {}\n"
                           "      B: {}\n",
                           change(at, true), (*dc)["a"].get<std::string>(), (*dc)["b"].get<std::string>());
        out << "    note: the tuner prices each algorithm on an idle fabric, so the faster side's choice can lose "
               "under\n      the job's own traffic.\n";
      } else {
        out << fmt::format("    {}\n", change(at, true));
        if (dc) {
          out << fmt::format("    note: NCCL's tuner chose other DP collectives on each side; it prices them on an "
                             "idle fabric.\n      A: {}\n      B: {}\n",
                             (*dc)["a"].get<std::string>(), (*dc)["b"].get<std::string>());
          if (dc->contains("hold_failed"))
            out << fmt::format("      One choice on both sides (--set '{}') could not run: {}\n",
                               (*dc)["hold"].get<std::string>(), (*dc)["hold_failed"].get<std::string>());
          else if (dc->contains("hold"))
            out << fmt::format("      To compare the fabrics under one choice: --set '{}'\n",
                               (*dc)["hold"].get<std::string>());
        }
      }
    }
    if (changed.empty()) continue;
    // The study's headline figures (the fields it declares with a label: network capex per GPU, iteration
    // time) are always shown; the other rows fill up to `limit`, largest relative change first.
    const auto headline = [&](const nlohmann::json& c) {
      const ResultField* f = declared(it.key(), c["field"].get<std::string>());
      return f && !f->label.empty();
    };
    size_t headlines = 0;
    for (const auto& c : changed) headlines += headline(c);
    Table t({"figure", "A", "B", "B - A", "B / A"});
    std::map<std::string, ResultField> inferred_fields;
    size_t shown = 0, others = 0;
    for (const auto& c : changed) {
      if (limit && !headline(c)) {
        if (headlines + others >= limit) continue;
        ++others;
      }
      ++shown;
      // A field the study declares by its label (as every other table and the page show it); others by a label
      // made from the key.
      const ResultField* f = labelled(it.key(), c["field"].get<std::string>(), inferred_fields);
      t.add({f->label, text(c["a"], f), text(c["b"], f), c.contains("delta") ? signed_text(shown_delta(c, f), f) : "",
             c.contains("ratio") && !c["ratio"].is_null() ? fixed(c["ratio"].get<double>(), 3) + "x" : ""});
    }
    t.write(out, "    ");
    if (shown < changed.size())
      out << fmt::format("    ... {} more (--all, or --format json)\n", changed.size() - shown);
  }
  // An oversubscription the ports could not give as asked (design rounds it to whole ports): say so per side.
  if (doc["studies"].contains("design"))
    for (const char* side : {"a", "b"}) {
      const auto& s = doc["studies"]["design"];
      const std::string key = std::string("only_") + side + "_values";
      if (!s.contains(key)) continue;
      for (auto f = s[key].begin(); f != s[key].end(); ++f)
        if (f.key().rfind("oversubscription_asked.", 0) == 0 && f.value().is_string()) {
          // "asked 2:1: leaf: 42 down / 22 up ports" -> the ratio asked, and the ports that give the one built
          const std::string tier = f.key().substr(std::string("oversubscription_asked.").size());
          std::string v = f.value().get<std::string>(), asked = v, ports;
          if (v.rfind("asked ", 0) == 0) v = v.substr(6);
          if (const auto c = v.find(": "); c != std::string::npos) {
            asked = v.substr(0, c);
            ports = v.substr(c + 2);
            if (ports.rfind(tier + ": ", 0) == 0) ports = ports.substr(tier.size() + 2);
          }
          out << fmt::format("\n  design: {} asked {} at the {}; its ports give the ratio shown ({}); design "
                             "rounds an oversubscription to whole ports\n",
                             side[0] == 'a' ? "A" : "B", asked, tier, ports);
        }
    }
  if (doc.contains("derived") && doc["derived"].contains("network_capex_usd_per_token_per_second")) {
    const auto& c = doc["derived"]["network_capex_usd_per_token_per_second"];
    out << fmt::format("\n  network capex per token/s of training: A ${}, B ${} (B / A {})\n",
                       fixed(c["a"].get<double>(), 2), fixed(c["b"].get<double>(), 2),
                       fixed(c["ratio"].get<double>(), 3) + "x");
    if (c.contains("gpus")) {
      const bool same = c["gpus"]["a"] == c["gpus"]["b"];  // then said once for both
      for (const char* side : same ? std::vector<const char*>{"a"} : std::vector<const char*>{"a", "b"}) {
        const auto& g = c["gpus"][side];
        if (g["job"].get<double>() < g["fabric"].get<double>())
          out << fmt::format("    ({} job uses {} of its fabric's {} GPUs: the whole network is charged to it; "
                             "to compare like for like, set topology.gpus to the job's, or workload.dp=auto with a "
                             "workload.global_batch that fills the fabric (`podnet train` says how large))\n",
                             same             ? "each side's"
                             : side[0] == 'a' ? "A's"
                                              : "B's",
                             thousands(g["job"].get<int64_t>()), thousands(g["fabric"].get<int64_t>()));
      }
    }
  }
  // Fields one side has and the other not (a tier only one design builds): their values.
  for (auto it = doc["studies"].begin(); it != doc["studies"].end(); ++it)
    for (const char* side : {"a", "b"}) {
      const auto& s = it.value();
      const std::string key = std::string("only_") + side + "_values";
      if (!s.contains(key) || s[key].empty()) continue;
      // One row a figure: labels hold commas and values thousands separators, so a list on one line is unreadable.
      Table t({"figure", side[0] == 'a' ? "A" : "B"});
      size_t n = 0, empty = 0;
      std::map<std::string, ResultField> inferred_fields;
      for (auto f = s[key].begin(); f != s[key].end(); ++f) {
        if (!listed_only(f.key(), f.value())) {
          ++empty;
          continue;
        }
        if (limit && n == limit) break;
        ++n;
        const ResultField* d = labelled(it.key(), f.key(), inferred_fields);
        t.add({d->label, text(f.value(), d)});
      }
      if (n == 0) continue;
      out << fmt::format("\n  {}: only in {} ({}):\n", it.key(), side[0] == 'a' ? "A" : "B", n);
      t.write(out, "    ");
      if (n + empty < s[key].size()) out << fmt::format("    ... {} more\n", s[key].size() - n - empty);
    }
}

}  // namespace podnet::report
