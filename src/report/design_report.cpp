#include "report/design_report.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <ostream>

namespace podnet::report {

namespace {

// A port's speed as the trade names it: 400G, 800G, 1.6T.
std::string port_label(double gbps) {
  if (gbps < 1) return format_number(gbps * 1000, 1) + "M";  // 800M, not "1G"
  if (gbps < 1000) return format_number(gbps, 1) + "G";      // 400G, 2.5G
  return fmt::format("{}T", format_number(gbps / 1000));
}

// A part as people name it, with its group and speed ("nic-leaf: SR transceiver 400G"); the JSON keeps the
// cost: section's key in "part". Fibre is counted in metres.
std::string part_label(const std::string& group, const std::string& part, double speed_gbps) {
  static const std::map<std::string, std::string> kParts = {{"switch", "switch"},
                                                            {"nic", "NIC"},
                                                            {"dac", "copper cable (DAC)"},
                                                            {"aoc", "active optical cable (AOC)"},
                                                            {"transceiver_sr", "SR transceiver"},
                                                            {"transceiver_dr", "DR transceiver"},
                                                            {"transceiver_fr", "FR transceiver"},
                                                            {"fibre_m", "fibre"}};
  const auto named = kParts.find(part);
  return fmt::format("{}: {} {}", group, named == kParts.end() ? part : named->second, port_label(speed_gbps));
}

nlohmann::json cost_json(const topology::Cost& c, const topology::CostModel& m, int64_t gpus) {
  nlohmann::json by_tier = nlohmann::json::object();
  for (const auto& [g, usd] : c.by_group) by_tier[g] = round_to(usd, 2);
  nlohmann::json items = nlohmann::json::array();
  for (const auto& it : c.items)
    items.push_back({{"group", it.group},
                     {"part", it.part},
                     {"label", part_label(it.group, it.part, round_to(it.speed_gbps, 3))},
                     {"count", it.count},
                     {"speed_gbps", round_to(it.speed_gbps, 3)},
                     // to the micro-dollar: count x unit adds up to the total in a spreadsheet (a speed-scaled
                     // price is no whole number of cents)
                     {"unit_usd", round_to(it.unit_usd, 6)},
                     {"total_usd", round_to(it.total_usd, 2)}});
  return {
      {"capex_usd", round_to(c.capex_usd, 2)},
      {"capex_per_gpu_usd", round_to(gpus > 0 ? c.capex_usd / static_cast<double>(gpus) : 0.0, 2)},
      {"capex",
       {{"switches_usd", round_to(c.switches_usd, 2)},
        {"nics_usd", round_to(c.nics_usd, 2)},
        {"cables_usd", round_to(c.cables_usd, 2)},
        {"transceivers_usd", round_to(c.transceivers_usd, 2)},
        {"fibre_usd", round_to(c.fibre_usd, 2)}}},
      {"capex_by_tier_usd", by_tier},
      {"energy_mwh_per_year", round_to(c.energy_kwh_per_year / 1e3, 3)},
      {"energy_usd_per_year", round_to(c.energy_usd_per_year, 2)},
      {"network_energy_usd_per_year", round_to(c.network_energy_usd_per_year, 2)},
      {"energy_price_usd_per_kwh", m.energy_usd_per_kwh},
      {"pue", m.pue},
      {"items", items},
  };
}

std::string usd(double v) { return "$" + thousands(static_cast<int64_t>(std::llround(v))); }
// A unit price: whole dollars when it is one, else with its cents ($757.86), so count x unit reads as the total.
std::string unit_usd_text(double v) {
  if (std::fabs(v - std::round(v)) < 0.005) return usd(v);
  return "$" + fixed(v, 2);
}

}  // namespace

void add_design(nlohmann::json& doc, const topology::Topology& t, const topology::Bom& b, const topology::Cost& cost,
                const topology::CostModel& model) {
  nlohmann::json tiers = nlohmann::json::array();
  for (size_t i = 1; i < t.tier_names.size(); ++i) tiers.push_back(t.tier_names[i]);
  doc["topology"] = {{"family", t.family},
                     {"tiers", tiers},
                     {"servers", t.servers},
                     {"gpus_per_server", t.gpus_per_server},
                     {"nics_per_server", t.nics_per_server},
                     {"groups", t.groups},
                     {"pods", t.pods},
                     {"rails", t.rails},
                     {"rail_optimized", t.rail_optimized}};
  nlohmann::json switches = {{"total", b.switches_total}};
  for (const auto& [tier, n] : b.switches) switches[tier] = n;
  nlohmann::json links = {{"total", b.links_total}};
  for (const auto& [cls, n] : b.links) links[cls] = n;
  nlohmann::json internal = nlohmann::json::object();
  for (const auto& [cls, n] : b.internal_links) internal[cls] = n;
  doc["bom"] = {
      {"gpus", b.gpus},
      {"servers", b.servers},
      {"nics", b.nics},
      {"nvlink_domains", b.nvlink_domains},
      {"switches", switches},
      {"links", links},
      {"internal_links", internal},
      {"cables",
       {{"copper", b.cables_copper}, {"optical", b.cables_optical}, {"total", b.cables_copper + b.cables_optical}}},
      {"transceivers", b.transceivers},
      {"power_kw", round_to(b.power_total_w / 1e3, 3)},
      {"power",
       {{"servers_kw", round_to(b.power_servers_w / 1e3, 3)},
        {"switches_kw", round_to(b.power_switches_w / 1e3, 3)},
        {"optics_kw", round_to(b.power_optics_w / 1e3, 3)}}},
      {"racks",
       {{"total", b.racks},
        {"server", b.server_racks},
        {"network", b.network_racks},
        {"servers_per_rack", b.servers_per_rack}}},
  };
  doc["cost"] = cost_json(cost, model, b.gpus);
  // A part-filled pod's (zone's) layer built whole: the share of its switches and uplinks the missing groups
  // (pods) would use, at the bill's prices (a switch of its tier; the mean capex of a link of its class).
  if (!t.facts.spare.empty()) {
    nlohmann::json spare = nlohmann::json::array();
    for (const auto& s : t.facts.spare) {
      double switch_usd = 0, class_usd = 0;
      for (const auto& it : cost.items) {
        if (it.group == s.tier && it.part == "switch") switch_usd = it.unit_usd;
        if (it.group == s.uplink_class) class_usd += it.total_usd;
      }
      int64_t class_links = 0;
      for (const auto& [cls, n] : b.links)
        if (cls == s.uplink_class) class_links = n;
      const double link_usd = class_links > 0 ? class_usd / static_cast<double>(class_links) : 0.0;
      const double usd =
          (1 - s.in_use) * (static_cast<double>(s.switches) * switch_usd + static_cast<double>(s.uplinks) * link_usd);
      spare.push_back({{"layer", s.what},
                       {"in_use", round_to(s.in_use, 4)},
                       {"present", s.share},
                       {"switches", s.switches},
                       {"uplinks", s.uplinks},
                       {"spare_usd", round_to(usd, 2)}});
    }
    doc["cost"]["part_filled"] = spare;
    double spare_usd = 0;
    for (const auto& s : spare) spare_usd += s["spare_usd"].get<double>();
    doc["cost"]["spare_usd"] = round_to(spare_usd, 2);
  }
  if (t.zones > 0) doc["topology"]["zones"] = t.zones;
  doc["limits"] = {{"max_gpus", t.facts.max_gpus}, {"max_gpus_reason", t.facts.max_gpus_reason}};
  double injection_bps = 0;  // NIC ports: the bandwidth each GPU can put on the fabric, per direction
  double pcie_bps = 0;       // the GPUs' PCIe links to their NICs, per direction
  for (const auto& l : t.links) {
    const bool gpu = t.nodes[l.a].kind == topology::NodeKind::Gpu || t.nodes[l.b].kind == topology::NodeKind::Gpu;
    if (l.media == topology::Media::Pcie) {
      if (gpu) pcie_bps += l.capacity.bps;
    } else if (t.nodes[l.a].kind == topology::NodeKind::Nic || t.nodes[l.b].kind == topology::NodeKind::Nic) {
      injection_bps += l.capacity.bps;
    }
  }
  doc["injection_bandwidth_per_gpu_gbps"] =
      round_to(b.gpus > 0 ? injection_bps / 1e9 / static_cast<double>(b.gpus) : 0, 3);
  doc["bisection_bandwidth_gbps"] = round_to(t.facts.bisection_bps / 1e9, 3);
  // The whole fabric's oversubscription: half the NICs' bandwidth over the bisection. Part-filled leaves or pods
  // make it differ from the tiers' port ratios (3:1 leaves built 2.67:1 at 4,096 GPUs of leafspine-8k).
  if (t.facts.bisection_bps > 0 && injection_bps > 0)
    doc["bisection_oversubscription"] = round_to(injection_bps / 2 / t.facts.bisection_bps, 4);
  doc["bisection_method"] = t.facts.bisection_method;
  doc["diameter_hops"] = t.facts.diameter_hops;
  nlohmann::json over = nlohmann::json::object();
  for (const auto& [tier, r] : t.facts.oversubscription) over[tier] = round_to(r, 4);
  doc["oversubscription"] = over;
  doc["notes"] = t.facts.notes;
  // NICs faster than the GPUs' PCIe links: the injection bandwidth above is the NICs', not what a GPU can send.
  if (b.gpus > 0 && pcie_bps > 0 && injection_bps > pcie_bps * 1.0001)
    doc["notes"].push_back(fmt::format(
        "each GPU reaches its NICs over PCIe at {} Gbps, less than their {} Gbps: a GPU sends at most at the PCIe "
        "rate, so the injection and bisection bandwidth here are the NICs', not what the GPUs can use (set "
        "server.pcie_bandwidth to your servers'; PCIe Gen6 x16: 128GB/s)",
        thousands(std::llround(pcie_bps / 1e9 / static_cast<double>(b.gpus))),
        thousands(std::llround(injection_bps / 1e9 / static_cast<double>(b.gpus)))));
  // The cost model's longest optic is FR (2 km, cost.hpp): a longer cable is priced as one, which it cannot be.
  int64_t beyond_fr = 0;
  double longest = 0;
  for (const auto& l : t.links)
    if (l.media == topology::Media::Optical && l.length_m > 2000.0f) {
      ++beyond_fr;
      longest = std::max(longest, static_cast<double>(l.length_m));
    }
  if (beyond_fr > 0)
    doc["notes"].push_back(fmt::format("{} optical cables are longer than the 2 km an FR transceiver reaches (up to "
                                       "{}); they are priced as FR, but need LR (10 km) or coherent optics, at prices "
                                       "podnet does not model",
                                       thousands(beyond_fr), format_number(longest / 1000, 3) + " km"));
}

void add_frontend(nlohmann::json& doc, const topology::FrontendFabric& f, const topology::CostModel& model) {
  const topology::Topology& t = f.topology;
  const topology::Bom b = topology::compute_bom(t, f.hardware);
  const topology::Cost cost = topology::compute_cost(t, f.hardware, b, model);
  const topology::FrontendConfig& c = f.config;
  nlohmann::json tiers = nlohmann::json::array();
  for (size_t i = 1; i < t.tier_names.size(); ++i) tiers.push_back(t.tier_names[i]);
  nlohmann::json switches = {{"total", b.switches_total}};
  for (const auto& [tier, n] : b.switches) switches[tier] = n;
  nlohmann::json links = {{"total", b.links_total}};
  for (const auto& [cls, n] : b.links) links[cls] = n;
  nlohmann::json over = nlohmann::json::object();
  for (const auto& [tier, r] : t.facts.oversubscription) over[tier] = round_to(r, 4);
  const double nic_gbps = c.nic_speed.gbps();
  nlohmann::json fe = {
      {"tiers", tiers},
      {"servers", f.servers},
      {"nics_per_server", c.nics},
      {"nic_speed_gbps", round_to(nic_gbps, 3)},
      {"storage_nodes", c.storage_nodes},
      {"nics_per_storage_node", c.storage_nodes > 0 ? c.storage_nics : 0},
      {"ports", f.ports()},
      {"servers_bandwidth_gbps", round_to(f.server_ports() * nic_gbps, 3)},
      {"storage_nics_bandwidth_gbps", round_to(f.storage_ports() * nic_gbps, 3)},
      {"switches", switches},
      {"links", links},
      {"cables",
       {{"copper", b.cables_copper}, {"optical", b.cables_optical}, {"total", b.cables_copper + b.cables_optical}}},
      {"transceivers", b.transceivers},
      {"power_kw", round_to(b.power_total_w / 1e3, 3)},
      {"power",
       {{"switches_kw", round_to(b.power_switches_w / 1e3, 3)}, {"optics_kw", round_to(b.power_optics_w / 1e3, 3)}}},
      {"cost", cost_json(cost, model, 0)},
      {"oversubscription", over},
      {"bisection_bandwidth_gbps", round_to(t.facts.bisection_bps / 1e9, 3)},
      {"diameter_hops", t.facts.diameter_hops},
      {"notes", t.facts.notes},
  };
  fe["cost"].erase("capex_per_gpu_usd");
  fe["homing"] = c.dual_homed ? "dual" : "single";
  // The leaves' ratio asked, beside the one built when whole ports made another (2:1 on radix-64 leaves is
  // 42 down / 22 up ports: 1.9091:1): the builder's note on the leaf's ports.
  if (!t.facts.oversubscription.empty()) {
    const auto& [tier, got] = t.facts.oversubscription.front();
    if (std::abs(got - c.oversubscription) > 1e-9 * got) {
      std::string why = "asked " + format_number(c.oversubscription) + ":1";
      for (const auto& n : t.facts.notes)
        if (n.rfind(tier + ": ", 0) == 0) why += ": " + n.substr(0, n.find(';'));
      fe["oversubscription_asked"] = {{tier, why}};
    }
  }
  fe["single_homed_servers"] = f.single_homed_servers;
  fe["single_homed_storage_nodes"] = f.single_homed_storage_nodes;
  if (c.storage_write_Bps > 0) fe["storage_write_gbyte_per_s_per_node"] = round_to(c.storage_write_Bps / 1e9, 3);
  if (c.storage_read_Bps > 0) fe["storage_read_gbyte_per_s_per_node"] = round_to(c.storage_read_Bps / 1e9, 3);
  doc["frontend"] = fe;
  doc["capex_with_frontend_usd"] = round_to(doc["cost"]["capex_usd"].get<double>() + cost.capex_usd, 2);
}

namespace {

// The tenants (tenants:): their servers, GPUs and what isolates them.
// "none", or "2 (with beta)": the leaves a tenant shares with other tenants.
std::string shared_leaves_text(const nlohmann::json& x) {
  const int64_t n = x.value("shared_leaves", int64_t{0});
  if (n == 0) return "none";
  std::string with;
  for (const auto& y : x["shares_leaves_with"]) with += (with.empty() ? "" : ", ") + y.get<std::string>();
  return fmt::format("{} (with {})", thousands(n), with);
}

void write_tenants_table(const nlohmann::json& d, std::ostream& out) {
  out << "\n  tenants (tenants: section; VRFs over EVPN-VXLAN in --config-plan)\n\n";
  Table t({"tenant", "servers", "GPUs", "VRF", "VNI", "route target", "leaves shared"});
  std::string rounded;
  bool any_shared = false;
  for (const auto& x : d["tenants"]) {
    const int64_t first = x["first_server"].get<int64_t>(), n = x["servers"].get<int64_t>();
    const int64_t gpus = x["gpus"].get<int64_t>(), asked = x["asked_gpus"].get<int64_t>();
    t.add({x["name"].get<std::string>(),
           n == 1 ? thousands(first) : fmt::format("{}-{}", thousands(first), thousands(first + n - 1)),
           thousands(gpus), x["vrf"].get<std::string>(), std::to_string(x["vni"].get<int64_t>()),
           x["route_target"].get<std::string>(), shared_leaves_text(x)});
    any_shared = any_shared || x.value("shared_leaves", int64_t{0}) > 0;
    if (asked != gpus)
      rounded += fmt::format("{}{}: {} GPUs asked", rounded.empty() ? "" : "; ", x["name"].get<std::string>(),
                             thousands(asked));
  }
  t.write(out, "  ");
  if (!rounded.empty()) out << "  tenants take whole servers, rounded up (" << rounded << ")\n";
  if (any_shared)
    out << "  a leaf shared by two tenants carries both on its uplinks: VRFs separate their routes, not their "
           "bandwidth\n  (podnet train with a job per tenant, jobs:, measures what it costs them)\n";
}

void write_frontend_table(const nlohmann::json& d, std::ostream& out) {
  const auto& fe = d["frontend"];
  std::string tiers;
  for (const auto& x : fe["tiers"]) tiers += (tiers.empty() ? "" : " / ") + x.get<std::string>();
  out << fmt::format("\n  frontend and storage network (frontend: section; {} switch tier{}: {})\n\n",
                     fe["tiers"].size(), fe["tiers"].size() == 1 ? "" : "s", tiers);
  const std::string speed = port_label(fe["nic_speed_gbps"].get<double>());
  Table t({"frontend", "value"});
  t.add({"server NICs",
         fmt::format("{} servers x {} x {}", thousands(fe["servers"]), fe["nics_per_server"].get<int>(), speed)});
  if (fe["storage_nodes"].get<int64_t>() > 0)
    t.add({"storage nodes", fmt::format("{} x {} NICs x {}", thousands(fe["storage_nodes"]),
                                        fe["nics_per_storage_node"].get<int>(), speed)});
  else if (d.contains("storage_on_back_end")) t.add({"storage nodes", "on the back end (frontend.converged)"});
  else t.add({"storage nodes", "none (frontend.storage_nodes)"});
  if (fe.contains("homing")) {
    // A device's NICs on different leaves (dual), or on one (single: a leaf's loss cuts it off).
    const int64_t nics = fe["nics_per_server"].get<int64_t>();
    const int64_t single = fe["single_homed_servers"].get<int64_t>();
    const int64_t single_storage = fe["single_homed_storage_nodes"].get<int64_t>();
    std::string h = nics < 2 ? "single: one NIC a server"
                    : fe["homing"] == "dual"
                        ? fmt::format("dual: each server's {} NICs on {} leaves", nics, nics)
                        : fmt::format("single: each server's {} NICs on one leaf (frontend.homing)", nics);
    if (fe["homing"] == "dual" && single > 0)
      h += fmt::format("; {} servers single-homed (past the last whole block of leaves)", thousands(single));
    if (fe["homing"] == "dual" && single_storage > 0)
      h += fmt::format("; {} storage nodes single-homed", thousands(single_storage));
    t.add({"homing", h});
  }
  if (fe.contains("storage_write_gbyte_per_s_per_node"))
    t.add({"storage write per node", fixed(fe["storage_write_gbyte_per_s_per_node"].get<double>(), 1) + " GB/s"});
  if (fe.contains("storage_read_gbyte_per_s_per_node"))
    t.add({"storage read per node", fixed(fe["storage_read_gbyte_per_s_per_node"].get<double>(), 1) + " GB/s"});
  for (const auto& x : fe["tiers"])
    t.add({"switches: " + x.get<std::string>(), thousands(fe["switches"][x.get<std::string>()])});
  t.add({"switches: total", thousands(fe["switches"]["total"])});
  for (auto it = fe["links"].begin(); it != fe["links"].end(); ++it)
    if (it.key() != "total") t.add({"links: " + it.key(), thousands(it.value())});
  t.add({"cables: copper / optical",
         fmt::format("{} / {}", thousands(fe["cables"]["copper"]), thousands(fe["cables"]["optical"]))});
  t.add({"optical transceivers", thousands(fe["transceivers"])});
  t.add({"power: switches / optics (kW)", fmt::format("{} / {}", fixed(fe["power"]["switches_kw"].get<double>(), 1),
                                                      fixed(fe["power"]["optics_kw"].get<double>(), 1))});
  if (fe.contains("network_racks")) {
    t.add({"racks: frontend switches", thousands(fe["network_racks"])});
    t.add({"racks: back end + frontend", thousands(d["racks_with_frontend"])});
  }
  for (auto it = fe["oversubscription"].begin(); it != fe["oversubscription"].end(); ++it) {
    const std::string v = ratio_text(it.value().get<double>());
    std::string why;
    if (fe.contains("oversubscription_asked") && fe["oversubscription_asked"].contains(it.key()))
      why = " (" + fe["oversubscription_asked"][it.key()].get<std::string>() + ")";
    t.add({"oversubscription at " + it.key(), v + why});
  }
  t.add({"bisection bandwidth (Gbps, per direction)",
         thousands(std::llround(fe["bisection_bandwidth_gbps"].get<double>()))});
  const auto& cost = fe["cost"];
  t.add({"capex: switches", usd(cost["capex"]["switches_usd"].get<double>())});
  t.add({"capex: NICs (servers' and storage nodes')", usd(cost["capex"]["nics_usd"].get<double>())});
  t.add({"capex: cables, optics and fibre",
         usd(cost["capex"]["cables_usd"].get<double>() + cost["capex"]["transceivers_usd"].get<double>() +
             cost["capex"]["fibre_usd"].get<double>())});
  t.add({"capex: frontend total", usd(cost["capex_usd"].get<double>())});
  t.add({"capex: back end + frontend", usd(d["capex_with_frontend_usd"].get<double>())});
  t.add({"energy per year (frontend switches and optics)", usd(cost["energy_usd_per_year"].get<double>())});
  t.write(out, "  ");
  out << "\n";
  for (const auto& n : fe["notes"]) out << "  note: frontend " << n.get<std::string>() << "\n";
}

}  // namespace

void write_design_table(const nlohmann::json& d, std::ostream& out) {
  const auto& run = d["run"];
  const auto& topo = d["topology"];
  const auto& bom = d["bom"];
  std::string tiers;
  for (const auto& x : topo["tiers"]) tiers += (tiers.empty() ? "" : " / ") + x.get<std::string>();
  const std::string shape = topo["tiers"].empty() ? std::string("no switches")
                                                  : fmt::format("{} switch tier{}: {}", topo["tiers"].size(),
                                                                topo["tiers"].size() == 1 ? "" : "s", tiers);
  out << fmt::format("podnet design: {} ({}{}, {})\n\n", run["scenario"].get<std::string>(),
                     topo["family"].get<std::string>(), topo.value("rail_optimized", false) ? ", rail-optimized" : "",
                     shape);
  Table t({"bill of materials", "count"});
  t.add({"GPUs", thousands(bom["gpus"])});
  t.add({"servers", thousands(bom["servers"])});
  if (bom.contains("storage_nodes")) t.add({"storage nodes (in server slots)", thousands(bom["storage_nodes"])});
  // A switchless torus has neither: its chips link to their neighbours (a row of zeros read as missing parts).
  if (bom["nics"].get<int64_t>() > 0 || bom["switches"].value("total", int64_t{0}) > 0) {
    t.add({"NICs", thousands(bom["nics"])});
    t.add({"NVLink domains", thousands(bom["nvlink_domains"])});
  }
  for (const auto& x : topo["tiers"])
    t.add({"switches: " + x.get<std::string>(), thousands(bom["switches"][x.get<std::string>()])});
  t.add({"switches: total", thousands(bom["switches"]["total"])});
  for (auto it = bom["links"].begin(); it != bom["links"].end(); ++it)
    if (it.key() != "total") t.add({"links: " + it.key(), thousands(it.value())});
  t.add({"links: total", thousands(bom["links"]["total"])});
  t.add({"cables: copper", thousands(bom["cables"]["copper"])});
  t.add({"cables: optical", thousands(bom["cables"]["optical"])});
  t.add({"optical transceivers", thousands(bom["transceivers"])});
  t.add({"IT power, servers included (kW)", fixed(bom["power_kw"].get<double>(), 1)});
  t.add({"  servers / switches / optics (kW)",
         fmt::format("{} / {} / {}", fixed(bom["power"]["servers_kw"].get<double>(), 1),
                     fixed(bom["power"]["switches_kw"].get<double>(), 1),
                     fixed(bom["power"]["optics_kw"].get<double>(), 1))});
  t.add(
      {"racks (server + network)", fmt::format("{} ({} + {})", thousands(bom["racks"]["total"]),
                                               thousands(bom["racks"]["server"]), thousands(bom["racks"]["network"]))});
  t.write(out, "  ");
  out << "\n";
  const auto& cost = d["cost"];
  Table c({"cost (USD; prices: docs/reference/cost.md, cost: section)", "count", "unit", "total"});
  for (const auto& it : cost["items"]) {
    const std::string part = it["part"].get<std::string>();
    c.add({it.contains("label") ? it["label"].get<std::string>()
                                : part_label(it["group"].get<std::string>(), part, it["speed_gbps"].get<double>()),
           thousands(it["count"]) + (part == "fibre_m" ? " m" : ""),
           unit_usd_text(it["unit_usd"].get<double>()) + (part == "fibre_m" ? "/m" : ""),
           usd(it["total_usd"].get<double>())});
  }
  // Capex by tier and link class in the bill's order (switch tiers bottom up, NICs, link classes as built),
  // not the JSON's alphabetical one (a 4-tier design's core came first).
  std::vector<std::string> groups;
  for (const auto& it : cost["items"]) {
    const std::string g = it["group"].get<std::string>();
    if (std::find(groups.begin(), groups.end(), g) == groups.end()) groups.push_back(g);
  }
  for (auto it = cost["capex_by_tier_usd"].begin(); it != cost["capex_by_tier_usd"].end(); ++it)
    if (std::find(groups.begin(), groups.end(), it.key()) == groups.end()) groups.push_back(it.key());
  for (const auto& g : groups)
    if (cost["capex_by_tier_usd"].contains(g))
      // The servers' group is their NICs: servers and GPUs are not priced.
      c.add({"capex: " + (g == "server" ? std::string("server NICs") : g), "", "",
             usd(cost["capex_by_tier_usd"][g].get<double>())});
  c.add({"network capex", "", "", usd(cost["capex_usd"].get<double>())});  // as diff, sweep and optimize say
  if (cost.contains("part_filled"))  // a part-filled pod's (zone's) layer built whole: the share only a full one uses
    for (const auto& s : cost["part_filled"])
      c.add({fmt::format("  of which spare in {} ({})", s["layer"].get<std::string>(), s["present"].get<std::string>()),
             "", "", usd(s["spare_usd"].get<double>())});
  c.add({"network capex per GPU", "", "", usd(cost["capex_per_gpu_usd"].get<double>())});
  c.add({fmt::format("energy per year (whole cluster, PUE {})", fixed(cost["pue"].get<double>(), 2)),
         fixed(cost["energy_mwh_per_year"].get<double>(), 0) + " MWh",
         fmt::format("${}/kWh", fixed(cost["energy_price_usd_per_kwh"].get<double>(), 3)),
         usd(cost["energy_usd_per_year"].get<double>())});
  // How the energy is counted: facility power (IT power x PUE) around the clock, 365.25 days a year.
  c.add({"  from facility power (IT x PUE) x 8,766 h",
         fixed(d["bom"]["power_kw"].get<double>() * cost["pue"].get<double>(), 1) + " kW", "", ""});
  c.add({"  of which network (switches, optics)", "", "", usd(cost["network_energy_usd_per_year"].get<double>())});
  c.write(out, "  ");
  out << "\n";
  Table f({"fabric", "value"});
  f.add({"bisection bandwidth (Gbps, per direction)", fixed(d["bisection_bandwidth_gbps"].get<double>(), 0)});
  const bool switchless = d["bom"]["switches"].value("total", int64_t{0}) == 0;  // a torus: GPUs route
  f.add({switchless ? "diameter (chip-to-chip hops)" : "diameter (links between switches)",
         std::to_string(d["diameter_hops"].get<int>())});
  // The ratio built (85/40 is 2.125, not 2.13: report.hpp, ratio_text), and beside it what was asked
  // when the whole ports made another one (it was said only in the notes).
  for (auto it = d["oversubscription"].begin(); it != d["oversubscription"].end(); ++it) {
    const std::string v = ratio_text(it.value().get<double>());
    std::string why;
    if (d.contains("oversubscription_asked") && d["oversubscription_asked"].contains(it.key()))
      why = " (" + d["oversubscription_asked"][it.key()].get<std::string>() + ")";
    f.add({"oversubscription at " + it.key(), v + why});
  }
  if (d.contains("bisection_oversubscription"))
    f.add({"oversubscription, whole fabric", ratio_text(d["bisection_oversubscription"].get<double>())});
  const int64_t reach = d["limits"]["max_gpus"].get<int64_t>();
  f.add({switchless ? "largest GPU count (the torus as built)" : "largest GPU count this design reaches",
         thousands(reach)});
  if (reach > topology::kMaxGpus) f.add({"largest GPU count podnet builds", thousands(topology::kMaxGpus)});
  f.write(out, "  ");
  out << "\n  limit: " << d["limits"]["max_gpus_reason"].get<std::string>() << "\n";
  for (const auto& n : d["notes"]) out << "  note: " << n.get<std::string>() << "\n";
  if (d.contains("storage_on_back_end")) {
    const auto& s = d["storage_on_back_end"];
    out << fmt::format(
        "  note: storage on the back end (frontend.converged): server slots {} on hold {} storage nodes of "
        "{} NICs ({} Gbps in all); their GPUs and server power are out of the bill, their own price "
        "and power are not counted\n",
        thousands(s["first_slot"]), thousands(s["storage_nodes"]), thousands(s["nics_per_storage_node"]),
        thousands(std::llround(s["storage_nics_bandwidth_gbps"].get<double>())));
  }
  if (d.contains("frontend")) write_frontend_table(d, out);
  if (d.contains("tenants")) write_tenants_table(d, out);
}

}  // namespace podnet::report
