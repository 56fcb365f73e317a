#include "report/html.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <ostream>
#include <set>
#include <tuple>

#include "core/error.hpp"
#include "reliability/checkpoint.hpp"
#include "report/web_assets.hpp"
#include "routing/route.hpp"

namespace podnet::report {

namespace {

// Level of a node in the drawing: 0 = servers (GPU, NIC, NVSwitch), then the switch tier.
int level_of(const topology::Node& n) { return n.kind == topology::NodeKind::Switch ? std::max<int>(n.tier, 1) : 0; }

using Key = std::tuple<int, int32_t, int32_t, int32_t, int32_t>;  // level, zone, pod, group, rail

// A 4-tier Clos's super-spines carry a zone and no pod: one mark per zone where marks are per pod (the
// nodes below them are told apart by their pods).
Key key_of(const topology::Node& n, int granularity) {
  const int level = level_of(n);
  const int32_t zone = granularity <= 2 && n.pod == topology::kNone ? n.zone : topology::kNone;
  const int32_t pod = granularity <= 2 ? n.pod : topology::kNone;
  const int32_t group = granularity <= 1 ? n.group : topology::kNone;
  const int32_t rail = (granularity == 0 && level > 0) ? n.rail : topology::kNone;
  return {level, zone, pod, group, rail};
}

std::string asset_text(const char* name) {
  const WebAsset* a = find_web_asset(name);
  if (!a) throw Error(std::string("HTML report: ") + kDashboardMissing);
  return std::string(a->data);
}

}  // namespace

namespace {

// Which aggregate each node falls in, at the finest granularity that keeps at most max_nodes aggregates.
struct Aggregation {
  int granularity = 0;
  std::map<Key, int> id;      // aggregate key -> id, in key order (level, zone, pod, group, rail)
  std::vector<int> node_agg;  // [node] -> aggregate id
};

Aggregation aggregate(const topology::Topology& t, size_t max_nodes) {
  Aggregation a;
  int& g = a.granularity;
  for (; g < 3; ++g) {
    std::set<Key> keys;
    for (const auto& n : t.nodes) keys.insert(key_of(n, g));
    if (keys.size() <= max_nodes) break;
  }
  // Aggregates in key order (level, zone, pod, group, rail): deterministic ids.
  for (const auto& n : t.nodes) a.id.emplace(key_of(n, g), 0);
  int next = 0;
  for (auto& [k, v] : a.id) v = next++;
  a.node_agg.resize(t.nodes.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) a.node_agg[i] = a.id.at(key_of(t.nodes[i], g));
  return a;
}

}  // namespace

nlohmann::json fabric_drawing(const topology::Topology& t, size_t max_nodes) {
  static const char* const kGranularity[] = {"tier, pod, group and rail", "tier, pod and group", "tier and pod",
                                             "tier"};
  const Aggregation agg = aggregate(t, max_nodes);
  const int g = agg.granularity;
  const std::map<Key, int>& id = agg.id;
  const std::vector<int>& node_agg = agg.node_agg;
  std::vector<int64_t> count(id.size(), 0), gpus(id.size(), 0);
  std::vector<std::set<int32_t>> servers(id.size());
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const auto& n = t.nodes[i];
    const int a = node_agg[i];
    if (n.kind == topology::NodeKind::Switch) ++count[static_cast<size_t>(a)];
    if (n.kind == topology::NodeKind::Gpu) {
      ++gpus[static_cast<size_t>(a)];
      servers[static_cast<size_t>(a)].insert(n.server);
    }
  }
  std::map<std::pair<int, int>, std::pair<int64_t, double>> edges;
  for (const auto& l : t.links) {
    int a = node_agg[static_cast<size_t>(l.a)], b = node_agg[static_cast<size_t>(l.b)];
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    auto& e = edges[{a, b}];
    ++e.first;
    e.second += l.capacity.gbps();
  }
  int max_level = 0;
  for (const auto& [k, v] : id) max_level = std::max(max_level, std::get<0>(k));
  std::vector<int> per_level(static_cast<size_t>(max_level) + 1, 0), index_in_level(id.size(), 0);
  for (const auto& [k, v] : id)
    index_in_level[static_cast<size_t>(v)] = per_level[static_cast<size_t>(std::get<0>(k))]++;

  nlohmann::json level_names = nlohmann::json::array({"servers"});
  for (int l = 1; l <= max_level; ++l)
    level_names.push_back(static_cast<size_t>(l) < t.tier_names.size() && !t.tier_names[static_cast<size_t>(l)].empty()
                              ? t.tier_names[static_cast<size_t>(l)]
                              : "tier " + std::to_string(l));
  nlohmann::json nodes = nlohmann::json::array();
  for (const auto& [k, v] : id) {
    const auto [level, zone, pod, group, rail] = k;
    const size_t i = static_cast<size_t>(v);
    std::string name = level_names[static_cast<size_t>(level)].get<std::string>();
    if (zone != topology::kNone) name += " zone " + std::to_string(zone);
    if (pod != topology::kNone) name += " pod " + std::to_string(pod);
    if (group != topology::kNone) name += " group " + std::to_string(group);
    if (rail != topology::kNone) name += " rail " + std::to_string(rail);
    const int64_t n = level == 0 ? static_cast<int64_t>(servers[i].size()) : count[i];
    const double x = 1000.0 * (index_in_level[i] + 0.5) / per_level[static_cast<size_t>(level)];
    nodes.push_back({{"id", v},
                     {"name", name},
                     {"level", level},
                     {"count", n},
                     {"gpus", gpus[i]},
                     {"x", std::round(x * 10) / 10},
                     {"y", 200 * (max_level - level)}});
  }
  nlohmann::json out_edges = nlohmann::json::array();
  for (const auto& [ab, e] : edges)
    out_edges.push_back({{"source", ab.first},
                         {"target", ab.second},
                         {"links", e.first},
                         {"gbps", std::round(e.second * 1000) / 1000}});
  return {{"granularity", kGranularity[g]}, {"level_names", level_names}, {"nodes", nodes}, {"edges", out_edges}};
}

nlohmann::json suspects_on_drawing(const topology::Topology& t, const study::DiagnoseResult& r, size_t max_nodes) {
  const Aggregation agg = aggregate(t, max_nodes);
  const int32_t dirs = routing::dir_link_count(t);
  nlohmann::json out = nlohmann::json::array();
  auto place = [&](const std::string& name, const std::string& kind, int32_t component, bool hidden,
                   const char* finding, double value) {
    nlohmann::json row = {{"component", name}, {"kind", kind}, {"finding", finding}, {"value", value}};
    if (r.score || r.delay_score) row["hidden_fault"] = hidden;
    if (component < dirs) {
      const auto& l = t.links[static_cast<size_t>(routing::link_of(component))];
      int a = agg.node_agg[static_cast<size_t>(l.a)], b = agg.node_agg[static_cast<size_t>(l.b)];
      if (a > b) std::swap(a, b);
      // A link inside one mark (e.g. a NIC's link inside its servers' mark) marks that mark; else the edge.
      row["marks"] = a == b ? nlohmann::json::array({a}) : nlohmann::json::array({a, b});
      row["edge"] = a == b ? nlohmann::json(nullptr) : nlohmann::json::array({a, b});
    } else {
      row["marks"] = nlohmann::json::array({agg.node_agg[static_cast<size_t>(component - dirs)]});
      row["edge"] = nullptr;
    }
    out.push_back(row);
  };
  for (const auto& x : r.suspects) place(x.name, x.kind, x.s.component, x.hidden, "loss", x.s.loss);
  for (const auto& x : r.delay_suspects)
    place(x.name, x.kind, x.s.component, x.hidden, "latency", x.s.rtt_added_s * 1e6);
  return out;
}

nlohmann::json goodput_curve(const nlohmann::json& doc) {
  nlohmann::json points = nlohmann::json::array();
  const auto& ck = doc.at("checkpoint");
  if (doc.at("mtbi_hours").is_null() || !ck.at("interval_minutes").is_number()) {
    return {{"points", points}, {"optimum", nullptr}};
  }
  const double m = doc["mtbi_hours"].get<double>();
  const double delta = ck.at("checkpoint_cost_minutes").get<double>() / 60;
  const double restart = ck.at("restart_cost_minutes").get<double>() / 60;
  const double best = ck["interval_minutes"].get<double>();
  for (int i = -24; i <= 24; ++i) {
    const double minutes = best * std::pow(2.0, i / 8.0);  // 2^(±24/8) = 8
    points.push_back({minutes, reliability::goodput(minutes / 60, delta, restart, m)});
  }
  return {{"points", points}, {"optimum", {best, reliability::goodput(best / 60, delta, restart, m)}}};
}

std::string script_safe_json(const nlohmann::json& j) {
  const std::string s = j.dump();
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else {
      out += s[i];
    }
  }
  return out;
}

std::string html_page(const nlohmann::json& payload, const std::string& title) {
  std::string esc;
  for (char c : title) {
    if (c == '<') esc += "&lt;";
    else if (c == '>') esc += "&gt;";
    else if (c == '&') esc += "&amp;";
    else esc += c;
  }
  std::string page;
  page +=
      "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" + esc + "</title>\n<style>\n";
  page += asset_text("podnet.css");
  page += "</style>\n</head>\n<body>\n<header><h1>" + esc + "</h1></header>\n<main id=\"report\"></main>\n<script>\n";
  page += asset_text("vendor/echarts.min.js");
  page += "\n</script>\n<script>\n";
  page += asset_text("podnet.js");
  page += "\n</script>\n<script type=\"application/json\" id=\"podnet-data\">" + script_safe_json(payload) +
          "</script>\n<script>podnet.renderReport(document.getElementById('report'), "
          "JSON.parse(document.getElementById('podnet-data').textContent));</script>\n</body>\n</html>\n";
  return page;
}

void write_html(const nlohmann::json& payload, const std::string& title, std::ostream& out) {
  out << html_page(payload, title);
}

}  // namespace podnet::report
