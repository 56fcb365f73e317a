#include "report/sweep_report.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <ostream>

#include "core/error.hpp"
#include "report/report.hpp"

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
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    if (it->is_object()) flatten(*it, name, out);
    else if (!it->is_array()) out.push_back({name, value_of(*it)});
  }
}

std::string text_of(const study::Value& v) {
  if (std::holds_alternative<int64_t>(v)) return std::to_string(std::get<int64_t>(v));
  if (std::holds_alternative<double>(v)) return fmt::format("{}", std::get<double>(v));
  if (std::holds_alternative<std::string>(v)) return std::get<std::string>(v);
  return "";
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
    }
  }
  return out;
}

std::vector<std::string> default_columns(const study::ResultTable& t) {
  std::vector<std::string> cols = {"id"};
  cols.insert(cols.end(), t.axes.begin(), t.axes.end());
  cols.push_back("status");
  std::vector<std::string> headline;
  if (t.study == "train") headline = {"iteration_time_ms", "mfu", "tokens_per_second", "days_to_train"};
  else if (t.study == "reliability")
    headline = {"mtbi_hours", "checkpoint.interval_minutes", "checkpoint.goodput", "days_to_train_with_failures"};
  else if (t.study == "diagnose")
    headline = {"evaluation.precision", "evaluation.recall", "evaluation.time_to_localize_seconds.max",
                "probing.overhead_bytes_per_second_per_nic"};
  else if (t.study == "design")
    headline = {"bom.switches.total",       "bom.transceivers",         "bom.power_kw",   "cost.capex_usd",
                "cost.energy_usd_per_year", "bisection_bandwidth_gbps", "limits.max_gpus"};
  else if (t.study == "bench") {
    // time and busbw at the largest size
    std::string last;
    for (const auto& c : t.columns)
      if (c.rfind("busbw_gbyte_per_s@", 0) == 0) last = c.substr(c.find('@'));
    if (!last.empty()) headline = {"time_us" + last, "busbw_gbyte_per_s" + last};
  }
  headline.emplace_back("wall_seconds");  // read only with --timing
  for (const auto& h : headline)
    if (std::find(t.columns.begin(), t.columns.end(), h) != t.columns.end()) cols.push_back(h);
  return cols;
}

void write_sweep_results_table(const study::ResultTable& t, const std::vector<std::string>& columns,
                               std::ostream& out) {
  const std::vector<std::string> cols = columns.empty() ? default_columns(t) : columns;
  std::vector<size_t> idx;
  for (const auto& c : cols) {
    const auto it = std::find(t.columns.begin(), t.columns.end(), c);
    if (it == t.columns.end()) {
      std::string have;
      for (const auto& x : t.columns) have += (have.empty() ? "" : ", ") + x;
      throw InputError(fmt::format("--columns: no column '{}' in these results; they have: {}", c, have));
    }
    idx.push_back(static_cast<size_t>(it - t.columns.begin()));
  }
  int64_t failed = 0;
  const size_t status =
      static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), "status") - t.columns.begin());
  for (const auto& r : t.rows)
    if (status < r.size() && text_of(r[status]) != "ok") ++failed;
  out << fmt::format("podnet sweep: {} study, {} point(s) stored, {} with an error\n\n", t.study, t.rows.size(),
                     failed);
  std::vector<std::string> header;
  for (const auto& c : cols) {
    std::string h = c;
    const auto at = h.find('@');
    if (at != std::string::npos) h = h.substr(0, at) + " @ " + thousands(std::stoll(h.substr(at + 1))) + " B";
    header.push_back(h);
  }
  Table table(header);
  for (const auto& r : t.rows) {
    std::vector<std::string> row;
    for (size_t i : idx) {
      const auto& v = r[i];
      row.push_back(std::holds_alternative<double>(v)           ? format_number(std::get<double>(v), 4)
                    : std::holds_alternative<std::monostate>(v) ? "-"
                                                                : text_of(v));
    }
    table.add(row);
  }
  table.write(out, "  ");
  for (const auto& r : t.rows) {
    const size_t err = static_cast<size_t>(std::find(t.columns.begin(), t.columns.end(), "error") - t.columns.begin());
    if (err < r.size() && std::holds_alternative<std::string>(r[err]))
      out << fmt::format("  point {}: {}\n", text_of(r[0]), std::get<std::string>(r[err]));
  }
}

void write_sweep_results_csv(const study::ResultTable& t, std::ostream& out) {
  for (size_t i = 0; i < t.columns.size(); ++i) out << (i ? "," : "") << csv_cell(t.columns[i]);
  out << "\n";
  for (const auto& r : t.rows) {
    for (size_t i = 0; i < r.size(); ++i) out << (i ? "," : "") << csv_cell(text_of(r[i]));
    out << "\n";
  }
}

void write_sweep_results_json(const study::ResultTable& t, std::ostream& out) {
  nlohmann::json pts = nlohmann::json::array();
  for (const auto& r : t.rows) {
    nlohmann::json p = nlohmann::json::object();
    for (size_t i = 0; i < r.size(); ++i) p[t.columns[i]] = json_of(r[i]);
    pts.push_back(p);
  }
  write_json({{"study", t.study}, {"axes", t.axes}, {"points", pts}}, out);
}

}  // namespace podnet::report
