#include "report/sweep_report.hpp"

#include <algorithm>
#include <cctype>
#include <climits>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <optional>
#include <ostream>
#include <set>

#include "core/error.hpp"
#include "report/diff.hpp"
#include "report/report.hpp"
#include "report/studies.hpp"
#include "workload/inference.hpp"

namespace podnet::report {

namespace {

bool is_prose(const std::string& key) {
  return key == "run" || key == "schema_version" || key == "definitions" || key == "notes" || key == "units" ||
         key == "bisection_method" || key == "model" || key == "optimizer" || key == "residual" ||
         key == "bus_factor_formula" || key == "limits_reason" || key == "efficiency_source" ||
         key == "attention_source" || key == "max_gpus_reason";
}

study::Value value_of(const nlohmann::json& v) {
  if (v.is_number_integer()) return static_cast<int64_t>(v.get<int64_t>());
  if (v.is_number_unsigned()) return static_cast<int64_t>(v.get<uint64_t>());
  if (v.is_number_float()) return v.get<double>();
  if (v.is_boolean()) return static_cast<int64_t>(v.get<bool>() ? 1 : 0);
  if (v.is_string()) return v.get<std::string>();
  return std::monostate{};
}

void flatten(const nlohmann::json& o, const std::string& prefix, std::vector<study::Field>& out) {
  for (auto it = o.begin(); it != o.end(); ++it) {
    if (is_prose(it.key())) continue;
    // train's `network` block restates the scenario (NIC speed, transport) for the report's header: an input,
    // which diff lists among the inputs, not a result.
    if (prefix.empty() && it.key() == "network" && it->is_object()) continue;
    // Which chunk train's per-chunk timings describe (its stage, index and layers) names them; their times are
    // the results (diff listed "timings, first chunk with layers, chunk 1" as a figure).
    if (prefix.rfind("timings.", 0) == 0 && (it.key() == "chunk" || it.key() == "stage" || it.key() == "layers"))
      continue;
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten(*it, name, out);
    else if (!it->is_array()) out.push_back({name, value_of(*it)});
  }
}

// Whether `word` stands in `text` as a word of its own ("days" in "days to train", not "h" in "throughput").
bool has_word(const std::string& text, const std::string& word) {
  const auto is_letter = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if ((at == 0 || !is_letter(text[at - 1])) && (end == text.size() || !is_letter(text[end]))) return true;
  }
  return false;
}

std::string lower(std::string x) {
  for (char& ch : x) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return x;
}

std::string text_of(const study::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) return fmt::format("{}", std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return "";
}

// Which of the table's columns are yes/no results of its study (stored as 1 or 0).
std::vector<char> yes_no_columns(const study::ResultTable& t) {
  std::vector<char> out(t.columns.size(), 0);
  if (const StudyDef* st = find_study(t.study))
    for (size_t i = 0; i < t.columns.size(); ++i)
      if (const ResultField* f = find_field(*st, t.columns[i])) out[i] = f->yes_no ? 1 : 0;
  return out;
}

// Cell `i` of a row as a yes/no result, when its column is one (`yes_no`, yes_no_columns) and it holds 1 or 0.
std::optional<bool> flag_of(const std::vector<char>& yes_no, size_t i, const study::Value& v) {
  if (!yes_no[i] || !std::holds_alternative<int64_t>(v)) return std::nullopt;
  return std::get<int64_t>(v) != 0;
}

}  // namespace

nlohmann::json json_of(const study::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v);
  if (std::holds_alternative<double>(v)) return std::get<double>(v);
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return nullptr;
}

std::vector<study::Field> sweep_fields(const nlohmann::json& doc) {
  std::vector<study::Field> out;
  flatten(doc, "", out);
  if (doc.contains("rows") && doc.contains("bench")) {
    for (const auto& r : doc["rows"]) {
      const std::string at = fmt::format("@{:016d}", r["bytes"].get<int64_t>());
      for (const char* k : {"time_us", "algbw_gbyte_per_s", "busbw_gbyte_per_s", "algorithm", "protocol"})
        if (r.contains(k)) out.push_back({std::string(k) + at, value_of(r[k])});
      // Flow completion times (flow and packet engines): their distribution, per size.
      if (r.contains("fct") && r["fct"].is_object())
        for (const char* k : {"min_us", "p50_us", "p99_us", "max_us", "mean_us"})
          if (r["fct"].contains(k)) out.push_back({std::string("fct.") + k + at, value_of(r["fct"][k])});
    }
  }
  return out;
}

std::vector<std::string> default_columns(const study::ResultTable& t) {
  std::vector<std::string> cols = {"id"};
  cols.insert(cols.end(), t.axes.begin(), t.axes.end());
  const auto has = [&](const std::string& c) {
    return std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end();
  };
  const StudyDef* st = find_study(t.study);
  // The GPU count beside the axes: an axis that changes it changes the job, not only itself.
  if (st && !st->gpus_field.empty() && has(st->gpus_field) &&
      std::find(cols.begin(), cols.end(), st->gpus_field) == cols.end())
    cols.push_back(st->gpus_field);
  // The job's layout where it changes between points (a TP axis over a recipe drops the recipe's PP and CP, and
  // podnet's defaults take their place): shown, so that a change is not put down to the axis alone.
  for (const char* k : {"parallelism.tp", "parallelism.cp", "parallelism.pp", "parallelism.dp"}) {
    const auto c = std::find(t.columns.begin(), t.columns.end(), k);
    const std::string axis = std::string("workload.") + (k + std::string("parallelism.").size());
    if (c == t.columns.end() || std::find(cols.begin(), cols.end(), k) != cols.end() ||
        std::find(t.axes.begin(), t.axes.end(), axis) != t.axes.end())
      continue;
    const size_t at = static_cast<size_t>(c - t.columns.begin());
    std::set<std::string> values;
    for (const auto& r : t.rows)
      if (at < r.size() && !std::holds_alternative<std::monostate>(r[at])) values.insert(text_of(r[at]));
    if (values.size() > 1) cols.push_back(k);
  }
  cols.push_back("status");
  std::vector<std::string> headline;
  if (st)
    for (const auto& f : st->fields) {
      if (!f.headline) continue;
      if (f.key.back() != '@') {
        headline.push_back(f.key);
        continue;
      }
      std::string last;  // a per-size field: at the largest size
      for (const auto& c : t.columns)
        if (c.rfind(f.key, 0) == 0) last = c;
      if (!last.empty()) headline.push_back(last);
    }
  headline.emplace_back("wall_seconds");  // read only with --timing
  for (const auto& h : headline)
    if (has(h) && std::find(cols.begin(), cols.end(), h) == cols.end()) cols.push_back(h);
  return cols;
}

std::string gpu_count_warning(const study::ResultTable& t) {
  const StudyDef* st = find_study(t.study);
  if (!st || st->gpus_field.empty()) return {};
  const auto col = [&](const std::string& c) {
    return static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), c) - t.columns.begin());
  };
  const size_t g = col(st->gpus_field), status = col("status");
  if (g >= t.columns.size()) return {};
  std::vector<const std::vector<study::Value>*> ok;
  int64_t lo = INT64_MAX, hi = INT64_MIN;
  for (const auto& r : t.rows) {
    if (status >= r.size() || text_of(r[status]) != "ok" || !std::holds_alternative<int64_t>(r[g])) continue;
    ok.push_back(&r);
    lo = std::min(lo, std::get<int64_t>(r[g]));
    hi = std::max(hi, std::get<int64_t>(r[g]));
  }
  if (ok.empty() || lo == hi) return {};
  // An axis changes it when two points that differ in that axis alone run on different GPU counts.
  std::vector<std::string> changing;
  for (size_t a = 0; a < t.axes.size(); ++a) {
    const size_t ca = col(t.axes[a]);
    bool changes = false;
    for (size_t i = 0; i < ok.size() && !changes; ++i)
      for (size_t j = i + 1; j < ok.size() && !changes; ++j) {
        const auto &x = *ok[i], &y = *ok[j];
        if (x[ca] == y[ca] || x[g] == y[g]) continue;
        bool others_equal = true;
        for (size_t b = 0; b < t.axes.size() && others_equal; ++b)
          if (b != a) others_equal = x[col(t.axes[b])] == y[col(t.axes[b])];
        changes = others_equal;
      }
    if (changes) changing.push_back(t.axes[a]);
  }
  const std::string axes = fmt::format("{}", fmt::join(changing, ", "));
  // Every axis that changes it is a count of copies (replicas, data-parallel groups, the fabric's or the job's
  // GPUs): sizing is the sweep's point, so a note, not a warning. A parallel degree (tp, pp) stays a warning:
  // such a sweep usually compares layouts of one size.
  static const std::set<std::string> kSizes = {"topology.gpus",
                                               "topology.k",
                                               "workload.dp",
                                               "inference.replicas",
                                               "inference.prefill_replicas",
                                               "inference.decode_replicas",
                                               "reliability.job_gpus"};
  const ResultField* gf = find_field(*st, st->gpus_field);
  const std::string column = gf && !gf->label.empty() ? fmt::format("column \"{}\", {}", gf->label, st->gpus_field)
                                                      : fmt::format("column {}", st->gpus_field);
  // A fabric swept by its size whose job leaves GPUs idle at some points (the batch bounds DP): those points, as
  // the axis labels them, with the GPUs the job ran on.
  std::string idle;
  if (const size_t fabric = col("topology.gpus"); fabric < t.columns.size() && st->gpus_field != "bom.gpus") {
    std::vector<std::string> at;
    std::set<std::pair<int64_t, int64_t>> seen;  // (built, used): points that differ in other axes say it once
    for (const auto* r : ok) {
      const std::string v = text_of((*r)[fabric]);
      if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos) continue;
      const int64_t built = std::stoll(v), used = std::get<int64_t>((*r)[g]);
      if (used < built && seen.insert({built, used}).second)
        at.push_back(at.empty()
                         ? fmt::format("at topology.gpus {} the job ran on {} GPUs", thousands(built), thousands(used))
                         : fmt::format("at {} on {}", thousands(built), thousands(used)));
    }
    if (!at.empty())
      idle = fmt::format("; {}{}, the others idle (podnet train at that size says why)",
                         fmt::join(at.begin(), at.begin() + std::min<size_t>(at.size(), 3), ", "),
                         at.size() > 3 ? fmt::format(" and {} more points", at.size() - 3) : "");
  }
  if (!changing.empty() &&
      std::all_of(changing.begin(), changing.end(), [](const std::string& a) { return kSizes.count(a) > 0; }))
    return fmt::format("note: {} set{} the {} GPU count ({} to {} GPUs; {}){}", axes, changing.size() == 1 ? "s" : "",
                       st->gpus_field == "bom.gpus" ? "fabric's" : "job's",  // a design has no job
                       thousands(lo), thousands(hi), column, idle);
  return fmt::format("warning: the points run on different GPU counts ({} to {}, {}){}: their results "
                     "compare jobs of different sizes, not the axis alone",
                     thousands(lo), thousands(hi), column,
                     changing.empty() ? "" : "; " + axes + " change" + (changing.size() == 1 ? "s" : "") + " it");
}

int64_t failed_points(const study::ResultTable& t) {
  const auto status = static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), "status") - t.columns.begin());
  return std::count_if(t.rows.begin(), t.rows.end(),
                       [&](const auto& r) { return status < r.size() && text_of(r[status]) != "ok"; });
}

std::vector<std::string> check_sweep_columns(const StudyDef& study, const std::vector<std::string>& axes,
                                             const std::vector<std::string>& columns) {
  // A header as the table shows it, reduced to its label: "time @ 1,024 B (us)" and "network capex (USD)" read
  // "time" and "network capex".
  const auto label_part = [&](const std::string& name) {
    std::string x = lower(name);
    if (const auto at = x.find(" @ "); at != std::string::npos) x.resize(at);
    if (x.size() > 2 && x.back() == ')')
      if (const auto open = x.rfind(" ("); open != std::string::npos) x.resize(open);
    return x;
  };
  const auto key_shaped = [](const std::string& name) {
    return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
      return std::islower(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) ||
             ch == '.' || ch == '_' || ch == '@';
    });
  };
  std::vector<std::string> undeclared;
  for (const auto& c : columns) {
    if (c == "id" || c == "status" || c == "error" || c == "wall_seconds" || c == "wall_seconds (s)") continue;
    if (std::find(axes.begin(), axes.end(), c) != axes.end()) continue;
    if (find_field(study, c) != nullptr) continue;
    const std::string asked = label_part(c);
    if (std::any_of(study.fields.begin(), study.fields.end(),
                    [&](const ResultField& f) { return !f.label.empty() && lower(f.label) == asked; }))
      continue;
    if (key_shaped(c)) {
      undeclared.push_back(c);
      continue;
    }
    // Results whose key or label holds the name, or else a word of it ("network" of "network capital").
    std::vector<std::string> words;
    for (size_t at = 0; at < asked.size();) {
      const size_t end = std::min(asked.find_first_of(" ()_.,", at), asked.size());
      if (end - at >= 4) words.push_back(asked.substr(at, end - at));
      at = end + 1;
    }
    std::vector<std::string> near;
    for (const auto& f : study.fields)
      if (lower(f.key).find(asked) != std::string::npos || lower(f.label).find(asked) != std::string::npos)
        near.push_back(fmt::format("{} ('{}')", f.key.back() == '@' ? f.key + "BYTES" : f.key, f.label));
    for (size_t i = 0; near.empty() && i < words.size(); ++i)
      for (const auto& f : study.fields)
        if (lower(f.key).find(words[i]) != std::string::npos || lower(f.label).find(words[i]) != std::string::npos)
          near.push_back(fmt::format("{} ('{}')", f.key.back() == '@' ? f.key + "BYTES" : f.key, f.label));
    throw InputError(fmt::format(
        "--columns: no column '{}' in a {} sweep: not an axis, id, status, error or wall_seconds, nor a result "
        "the {} study declares by key or label{}; checked before any point runs (`podnet list results` lists "
        "each study's)",
        c, study.name, study.name,
        near.empty() ? "" : fmt::format("; results that hold the name: {}", fmt::join(near, ", "))));
  }
  return undeclared;
}

std::string columns_missing_from_point(const std::vector<std::string>& undeclared,
                                       const std::vector<study::Field>& fields) {
  std::vector<std::string> missing, near;
  for (const auto& c : undeclared) {
    if (std::any_of(fields.begin(), fields.end(), [&](const study::Field& f) { return f.name == c; })) continue;
    missing.push_back("'" + c + "'");
    for (const auto& f : fields)
      if (f.name.find(c) != std::string::npos && near.size() < 8) near.push_back(f.name);
  }
  if (missing.empty()) return "";
  const char* it = missing.size() == 1 ? "it" : "them";
  return fmt::format("warning: --columns: {} not in the first point's results; unless a later point has {}, the "
                     "table at the end has the default columns, then the error{} (the results are stored either way)",
                     fmt::join(missing, ", "), it,
                     near.empty() ? "" : fmt::format("; results that hold the name: {}", fmt::join(near, ", ")));
}

void write_sweep_results_table(const study::ResultTable& t, const std::vector<std::string>& columns,
                               std::ostream& out) {
  const StudyDef* st = find_study(t.study);
  // A column's header: a result the study declares by its label (as `podnet train` and the page show it); axes
  // and other columns by their key, as --vary and --columns take them.
  // A result the study does not declare (--columns bom.switches.leaf) is labelled from its key, as diff labels it.
  std::map<std::string, ResultField> inferred;
  const auto field_of = [&](const std::string& c) -> const ResultField* {
    if (const ResultField* f = st ? find_field(*st, c) : nullptr) return f;
    static const std::set<std::string> kFixed = {"id", "status", "error", "wall_seconds"};
    if (kFixed.count(c) || std::find(t.axes.begin(), t.axes.end(), c) != t.axes.end() ||
        c.find('@') != std::string::npos)
      return nullptr;
    return &inferred.try_emplace(c, inferred_field(c)).first->second;
  };
  const auto header_of = [&](const std::string& c) {
    const ResultField* f = field_of(c);
    std::string h = f && !f->label.empty() ? f->label : c;
    const auto at = c.find('@');
    if (at != std::string::npos)  // "bus bandwidth @ 16 MiB", as diff names the size (16,777,216 B wrapped)
      h = (f && !f->label.empty() ? f->label : c.substr(0, at)) + " @ " +
          size_text(static_cast<Bytes>(std::stoll(c.substr(at + 1))));
    // The unit in the header, the numbers alone in their cells (right-aligned); "%" stays in the cells.
    if (c == "wall_seconds") h += " (s)";
    else if (f && !f->unit.empty() && f->unit != "%" && !has_word(h, f->unit)) h += " (" + f->unit + ")";
    return h;
  };
  // A cell's field: the declared one, or the inferred one where its suffix gives decimals (a fraction in %, money);
  // an inferred count keeps the plain number's thousands.
  const auto cell_field = [&](const std::string& c) -> const ResultField* {
    const ResultField* f = field_of(c);
    return f && inferred.count(c) && f->decimals < 0 ? nullptr : f;
  };
  // The failed points, and the first one's error (a failed point has no results).
  const auto col = [&](const char* name) {
    return static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), name) - t.columns.begin());
  };
  const size_t status = col("status"), error = col("error");
  const int64_t failed = failed_points(t);
  std::string first_error;
  for (const auto& r : t.rows)
    if (status < r.size() && text_of(r[status]) != "ok") {
      if (error < r.size()) first_error = text_of(r[error]);
      break;
    }
  // Columns by key, or by the header the table shows ("network capex (USD)", its label alone, any case).
  std::vector<std::string> cols = columns.empty() ? default_columns(t) : columns;
  // The point's id and the axes lead every table: a column alone does not say which point a row is.
  if (!columns.empty()) {
    std::vector<std::string> lead = {"id"};
    lead.insert(lead.end(), t.axes.begin(), t.axes.end());
    for (auto l = lead.rbegin(); l != lead.rend(); ++l)
      if (std::find(cols.begin(), cols.end(), *l) == cols.end()) cols.insert(cols.begin(), *l);
  }
  std::vector<size_t> idx;
  for (auto& c : cols) {
    auto it = std::find(t.columns.begin(), t.columns.end(), c);
    const std::string asked = lower(c);
    if (it == t.columns.end() && st != nullptr)
      it = std::find_if(t.columns.begin(), t.columns.end(), [&](const std::string& k) {
        const ResultField* f = find_field(*st, k);
        return lower(header_of(k)) == asked || (f && !f->label.empty() && lower(f->label) == asked);
      });
    if (it == t.columns.end()) {
      // Why the points failed is what the user needs first; then the columns whose key or header hold the
      // name, or else all of them.
      const std::string why = failed == 0 ? ""
                                          : fmt::format(" ({} of {} points failed, so they have no results; the "
                                                        "first: {})",
                                                        failed, t.rows.size(), first_error);
      std::vector<std::string> near, all;
      for (const auto& k : t.columns) {
        const std::string h = header_of(k);
        const std::string shown = h == k ? k : fmt::format("{} ('{}')", k, h);
        all.push_back(shown);
        if (lower(k).find(asked) != std::string::npos || lower(h).find(asked) != std::string::npos)
          near.push_back(shown);
      }
      if (!near.empty())
        throw InputError(fmt::format("--columns: no column '{}' in these results{}; columns that hold the name: "
                                     "{} (give a key or the header the table shows)",
                                     c, why, fmt::join(near, ", ")));
      // All of them would be a line of thousands of characters: the first few, and where the rest are listed.
      constexpr size_t kShown = 12;
      const std::string more =
          all.size() > kShown
              ? fmt::format(", ... {} more (`podnet sweep --results FILE --format csv | head -1` gives them all; "
                            "`podnet list results` labels each study's)",
                            all.size() - kShown)
              : "";
      all.resize(std::min(all.size(), kShown));
      throw InputError(fmt::format("--columns: no column '{}' in these results{}; they have: {}{}", c, why,
                                   fmt::join(all, ", "), more));
    }
    c = *it;
    idx.push_back(static_cast<size_t>(it - t.columns.begin()));
  }
  out << fmt::format("podnet sweep: {} study, {} stored, {} with an error\n\n", t.study,
                     plural(static_cast<int64_t>(t.rows.size()), "point", "points"), failed);
  std::vector<std::string> header;
  for (const auto& c : cols) header.push_back(header_of(c));
  std::vector<bool> is_axis(cols.size());
  for (size_t i = 0; i < cols.size(); ++i)
    is_axis[i] = cols[i] == "id" || std::find(t.axes.begin(), t.axes.end(), cols[i]) != t.axes.end();
  Table table(header);
  for (const auto& r : t.rows) {
    std::vector<std::string> row;
    for (size_t k = 0; k < idx.size(); ++k) {
      const auto& v = r[idx[k]];
      // Axis values as the sweep gave them; results as their study declares them (unit, decimals).
      // An axis's whole numbers with thousands separators, as every other count in the table (not the point ids).
      if (is_axis[k] && cols[k] != "id" && std::holds_alternative<int64_t>(v))
        row.push_back(thousands(std::get<int64_t>(v)));
      else if (is_axis[k] || std::holds_alternative<std::string>(v)) row.push_back(text_of(v));
      else if (std::holds_alternative<std::monostate>(v)) row.push_back("-");
      else if (cols[k] == "wall_seconds" && std::holds_alternative<double>(v))
        row.push_back(fixed(std::get<double>(v), 2));
      else row.push_back(format_field(cell_field(cols[k]), json_of(v), false));
    }
    table.add(row);
  }
  table.write(out, "  ");
  {
    // Each error once, with the points that met it ("points 3, 4 and 7: ..."): eight points out of memory printed
    // eight five-line messages that differed only in their point.
    const size_t err = static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), "error") - t.columns.begin());
    std::vector<std::pair<std::string, std::vector<std::string>>> errors;
    for (const auto& r : t.rows) {
      if (err >= r.size() || !std::holds_alternative<std::string>(r[err])) continue;
      const std::string& e = std::get<std::string>(r[err]);
      auto at = std::find_if(errors.begin(), errors.end(), [&](const auto& x) { return x.first == e; });
      if (at == errors.end()) at = errors.insert(errors.end(), {e, {}});
      at->second.push_back(text_of(r[0]));
    }
    for (const auto& [e, points] : errors) {
      std::vector<std::string> head(points.begin(), points.end() - 1);
      out << fmt::format("  {}: {}\n",
                         points.size() == 1 ? "point " + points.front()
                                            : fmt::format("points {} and {}", fmt::join(head, ", "), points.back()),
                         e);
    }
  }
  const std::string warning = gpu_count_warning(t);
  if (!warning.empty()) out << "\n  " << warning << "\n";
  // An oversubscription built otherwise than asked (whole ports): the axis shows what was asked.
  for (size_t c = 0; c < t.columns.size(); ++c) {
    const std::string prefix = "oversubscription_asked.";
    if (t.columns[c].rfind(prefix, 0) != 0) continue;
    const std::string tier = t.columns[c].substr(prefix.size());
    const auto built = std::find(t.columns.begin(), t.columns.end(), "oversubscription." + tier);
    std::vector<std::string> points;
    for (const auto& r : t.rows) {
      if (!std::holds_alternative<std::string>(r[c]) || built == t.columns.end()) continue;
      const std::string asked = std::get<std::string>(r[c]);  // "asked 2:1: leaf: 85 down / 43 up ports ..."
      const auto& b = r[static_cast<size_t>(built - t.columns.begin())];
      if (!std::holds_alternative<double>(b)) continue;
      points.push_back(fmt::format("point {} built {} ({})", text_of(r[0]), ratio_text(std::get<double>(b)),
                                   asked.substr(0, asked.find(": "))));
    }
    if (!points.empty())
      out << fmt::format("\n  note: whole ports round the oversubscription at the {}: {}\n", tier,
                         fmt::join(points, "; "));
  }
  // Serving points whose latencies are not a steady state's: overloaded (the queue grows with the run), or a burst
  // the batches absorb. Their status is ok (the run did what was asked); the figures need the warning the
  // inference command prints beside them.
  {
    const size_t over = col("stream.overloaded"), steady = col("stream.steady");
    const auto yes = [](const study::Value& v) {
      if (std::holds_alternative<int64_t>(v)) return std::get<int64_t>(v) != 0;
      if (std::holds_alternative<double>(v)) return std::get<double>(v) != 0;
      return std::holds_alternative<std::string>(v) && std::get<std::string>(v) == "true";
    };
    std::vector<std::string> overloaded, burst;
    for (const auto& r : t.rows) {
      if (status < r.size() && text_of(r[status]) != "ok") continue;
      if (over < r.size() && yes(r[over])) overloaded.push_back(text_of(r[0]));
      else if (steady < r.size() && !std::holds_alternative<std::monostate>(r[steady]) && !yes(r[steady]))
        burst.push_back(text_of(r[0]));
    }
    if (!overloaded.empty())
      out << fmt::format("\n  note: overloaded ({} {}): requests arrive faster than the replicas serve them, so the "
                         "queue and the latencies grow with the run's length (inference.requests); a lower rate or "
                         "more replicas serve them\n",
                         overloaded.size() == 1 ? "point" : "points", fmt::join(overloaded, ", "));
    if (!burst.empty())
      out << fmt::format("\n  note: a burst, not a steady state ({} {}): the requests arrive over fewer than {} median "
                         "end-to-end latencies; more requests (inference.requests) give steady figures\n",
                         burst.size() == 1 ? "point" : "points", fmt::join(burst, ", "), workload::kSteadyLatencies);
  }
  // Capex that only a full pod would use (a design's part-filled pods): the per-GPU figures carry it.
  const auto spare = std::find(t.columns.begin(), t.columns.end(), "cost.spare_usd");
  if (spare != t.columns.end()) {
    std::vector<std::string> points;
    for (const auto& r : t.rows) {
      const nlohmann::json v = json_of(r[static_cast<size_t>(spare - t.columns.begin())]);
      if (v.is_number() && v.get<double>() > 0)
        points.push_back(fmt::format("{} (${})", text_of(r[0]), thousands(std::llround(v.get<double>()))));
    }
    if (!points.empty())
      out << fmt::format(
          "\n  note: point{} {} {} capex for part-filled pods (switches and uplinks only full pods use; "
          "column \"of which spare in part-filled pods\"), so {} capex per GPU is above a design that fills its pods\n",
          points.size() == 1 ? "" : "s", fmt::join(points, ", "), points.size() == 1 ? "carries" : "carry",
          points.size() == 1 ? "its" : "their");
  }
}

void write_sweep_results_csv(const study::ResultTable& t, std::ostream& out) {
  // Columns in a spreadsheet's order: id, the axes, status and error as stored, then the study's headline
  // figures and its other declared fields in the order its table shows them, then the rest by name.
  std::vector<size_t> order;
  std::vector<char> taken(t.columns.size(), 0);
  const auto take = [&](const std::string& name) {
    for (size_t i = 0; i < t.columns.size(); ++i)
      if (!taken[i] && t.columns[i] == name) {
        taken[i] = 1;
        order.push_back(i);
      }
  };
  for (const char* c : {"id"}) take(c);
  for (const auto& a : t.axes) take(a);
  for (const char* c : {"status", "error"}) take(c);
  if (const StudyDef* st = find_study(t.study)) {
    for (const auto& f : st->fields)
      if (f.headline) take(f.key);
    for (const auto& f : st->fields) take(f.key);
  }
  for (size_t i = 0; i < t.columns.size(); ++i)
    if (!taken[i]) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k) out << (k ? "," : "") << csv_cell(t.columns[order[k]]);
  out << "\n";
  // A yes/no result reads true or false, as spreadsheets and pandas take it (the store keeps 1 or 0).
  const std::vector<char> yes_no = yes_no_columns(t);
  for (const auto& r : t.rows) {
    for (size_t k = 0; k < order.size(); ++k) {
      const std::optional<bool> flag = flag_of(yes_no, order[k], r[order[k]]);
      out << (k ? "," : "") << csv_cell(flag ? (*flag ? "true" : "false") : text_of(r[order[k]]));
    }
    out << "\n";
  }
}

void write_sweep_results_json(const study::ResultTable& t, std::ostream& out) {
  nlohmann::json pts = nlohmann::json::array();
  const std::vector<char> yes_no = yes_no_columns(t);  // booleans, as the study's schema says
  for (const auto& r : t.rows) {
    nlohmann::json p = nlohmann::json::object();
    for (size_t i = 0; i < r.size(); ++i) {
      const std::optional<bool> flag = flag_of(yes_no, i, r[i]);
      p[t.columns[i]] = flag ? nlohmann::json(*flag) : json_of(r[i]);
    }
    pts.push_back(p);
  }
  write_json({{"study", t.study}, {"axes", t.axes}, {"points", pts}}, out);
}

}  // namespace podnet::report
