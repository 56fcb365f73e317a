#include "topology/cost.hpp"

#include <cmath>
#include <fmt/format.h>
#include <map>
#include <tuple>

#include "core/error.hpp"

namespace podnet::topology {

double CostModel::unit(double price, Bandwidth speed) const {
  if (speed_exponent == 1) return price * speed.bps / reference_speed.bps;
  return price * std::pow(speed.bps / reference_speed.bps, speed_exponent);
}

std::vector<ParamSpec> cost_params() {
  return {
      {"switch_port", ParamType::Real, "550",
       "USD per switch port at reference_speed (a switch costs radix x this, scaled to switch.port_speed)", 0, 1e9},
      {"nic", ParamType::Real, "1500", "USD per back-end NIC at reference_speed (scaled to server.nic_speed)", 0, 1e9},
      {"dac", ParamType::Real, "100", "USD per copper (DAC) cable at reference_speed", 0, 1e9},
      {"aoc", ParamType::Real, "600", "USD per active optical cable (AOC) at reference_speed, optics included", 0, 1e9},
      {"transceiver_sr", ParamType::Real, "500",
       "USD per multimode short-reach transceiver (up to sr_max_length) at reference_speed", 0, 1e9},
      {"transceiver_dr", ParamType::Real, "700",
       "USD per single-mode DR transceiver (up to dr_max_length) at reference_speed", 0, 1e9},
      {"transceiver_fr", ParamType::Real, "1000", "USD per single-mode FR transceiver (beyond dr_max_length)", 0, 1e9},
      {"fibre_per_m", ParamType::Real, "2", "USD per metre of fibre for a link with pluggable transceivers", 0, 1e6},
      {"aoc_max_length", ParamType::Length, "0m",
       "optical links up to this length are AOCs instead of two transceivers and fibre (0m: no AOC)"},
      {"sr_max_length", ParamType::Length, "100m", "longest link a multimode SR transceiver reaches"},
      {"dr_max_length", ParamType::Length, "500m", "longest link a single-mode DR transceiver reaches"},
      {"reference_speed", ParamType::Bandwidth, "400Gbps", "the speed the prices above are quoted at"},
      {"speed_exponent", ParamType::Real, "1",
       "a part at speed s costs price x (s / reference_speed)^speed_exponent (1: cost per Gbps constant)", 0, 4},
      {"energy_price", ParamType::Real, "0.08", "USD per kWh of electricity", 0, 100},
      {"pue", ParamType::Real, "1.3", "power usage effectiveness: facility power / IT power", 1, 5},
  };
}

CostModel cost_from(const Params& p) {
  CostModel m;
  m.switch_port_usd = p.get_real("switch_port");
  m.nic_usd = p.get_real("nic");
  m.dac_usd = p.get_real("dac");
  m.aoc_usd = p.get_real("aoc");
  m.sr_usd = p.get_real("transceiver_sr");
  m.dr_usd = p.get_real("transceiver_dr");
  m.fr_usd = p.get_real("transceiver_fr");
  m.fibre_usd_per_m = p.get_real("fibre_per_m");
  m.aoc_max_m = p.get_real("aoc_max_length");
  m.sr_max_m = p.get_real("sr_max_length");
  m.dr_max_m = p.get_real("dr_max_length");
  m.reference_speed = p.get_bandwidth("reference_speed");
  m.speed_exponent = p.get_real("speed_exponent");
  m.energy_usd_per_kwh = p.get_real("energy_price");
  m.pue = p.get_real("pue");
  if (m.sr_max_m > m.dr_max_m)
    throw ParamError("cost.sr_max_length",
                     fmt::format("cost.sr_max_length = {} is longer than cost.dr_max_length = {}: expected the "
                                 "multimode reach at most the single-mode DR reach",
                                 format_length(m.sr_max_m), format_length(m.dr_max_m)));
  return m;
}

Cost compute_cost(const Topology& t, const Hardware& hw, const Bom& bom, const CostModel& m) {
  Cost c;
  // Items keyed by (group order, part order, speed) so the list is in a fixed order.
  std::map<std::tuple<int, int, double>, CostItem> items;
  const auto add = [&](int group_order, const std::string& group, int part_order, const char* part, Bandwidth speed,
                       double unit, int64_t count) {
    CostItem& it = items[{group_order, part_order, speed.gbps()}];
    it.group = group;
    it.part = part;
    it.speed_gbps = speed.gbps();
    it.unit_usd = unit;
    it.count += count;
  };
  const int ntiers = static_cast<int>(t.tier_names.size());
  for (const auto& n : t.nodes)
    if (n.kind == NodeKind::Switch)
      add(n.tier, t.tier_names[n.tier], 0, "switch", hw.port_speed, hw.radix * m.unit(m.switch_port_usd, hw.port_speed),
          1);
  if (!t.nics.empty())
    add(ntiers, "server", 0, "nic", hw.nic_speed, m.unit(m.nic_usd, hw.nic_speed), static_cast<int64_t>(t.nics.size()));
  std::map<std::pair<int, double>, double> fibre_m;  // (class, speed) -> metres
  for (const auto& l : t.links) {
    if (l.media == Media::NvLink || l.media == Media::Pcie) continue;
    const int g = ntiers + 1 + l.cls;
    const std::string& cls = t.link_classes[l.cls];
    const double len = l.length_m;
    if (l.media == Media::Copper) {
      add(g, cls, 1, "dac", l.capacity, m.unit(m.dac_usd, l.capacity), 1);
    } else if (len <= m.aoc_max_m) {
      add(g, cls, 2, "aoc", l.capacity, m.unit(m.aoc_usd, l.capacity), 1);
    } else {
      if (len <= m.sr_max_m) add(g, cls, 3, "transceiver_sr", l.capacity, m.unit(m.sr_usd, l.capacity), 2);
      else if (len <= m.dr_max_m) add(g, cls, 4, "transceiver_dr", l.capacity, m.unit(m.dr_usd, l.capacity), 2);
      else add(g, cls, 5, "transceiver_fr", l.capacity, m.unit(m.fr_usd, l.capacity), 2);
      fibre_m[{g, l.capacity.gbps()}] += len;
    }
  }
  for (const auto& [key, metres] : fibre_m) {
    CostItem& it = items[{key.first, 6, key.second}];
    it.group = t.link_classes[key.first - ntiers - 1];
    it.part = "fibre_m";
    it.speed_gbps = key.second;
    it.unit_usd = m.fibre_usd_per_m;
    it.count = static_cast<int64_t>(std::llround(metres));
  }
  std::vector<std::pair<std::string, double>> by_group;
  for (auto& [key, it] : items) {
    it.total_usd = static_cast<double>(it.count) * it.unit_usd;
    if (it.part == "switch") c.switches_usd += it.total_usd;
    else if (it.part == "nic") c.nics_usd += it.total_usd;
    else if (it.part == "dac" || it.part == "aoc") c.cables_usd += it.total_usd;
    else if (it.part == "fibre_m") c.fibre_usd += it.total_usd;
    else c.transceivers_usd += it.total_usd;
    if (by_group.empty() || by_group.back().first != it.group) by_group.emplace_back(it.group, 0.0);
    by_group.back().second += it.total_usd;
    c.items.push_back(it);
  }
  c.by_group = std::move(by_group);
  c.capex_usd = c.switches_usd + c.nics_usd + c.cables_usd + c.transceivers_usd + c.fibre_usd;
  const double kw = bom.power_total_w / 1e3 * m.pue;
  c.energy_kwh_per_year = kw * kHoursPerYear;
  c.energy_usd_per_year = c.energy_kwh_per_year * m.energy_usd_per_kwh;
  c.network_energy_usd_per_year =
      (bom.power_switches_w + bom.power_optics_w) / 1e3 * m.pue * kHoursPerYear * m.energy_usd_per_kwh;
  return c;
}

}  // namespace podnet::topology
