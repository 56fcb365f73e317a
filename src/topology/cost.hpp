// Cost model: the capital cost of a built fabric's back-end network (switches,
// NICs, cables, transceivers, fibre) and the yearly energy cost of the whole
// cluster, counted from the Topology like the bill of materials (bom.hpp), so
// it prices what the builder actually made. Scenario section `cost:`.
//
// Equations (every price in US dollars, given at cost.reference_speed):
//   unit(p, s)  = p * (s / reference_speed)^speed_exponent        (price of a part running at speed s)
//   switches    = sum over switches of radix * unit(switch_port, switch.port_speed)
//   NICs        = sum over NICs of unit(nic, server.nic_speed)
//   a network link of length L and capacity s is, by its length:
//     L <= cabling.copper_max_length             one DAC        unit(dac, s)
//     L <= cost.aoc_max_length                   one AOC        unit(aoc, s)          (optics built in)
//     else two pluggable transceivers of the shortest class that reaches L, plus L metres of fibre:
//       L <= cost.sr_max_length (multimode SR)   2 * unit(transceiver_sr, s) + L * fibre_per_m
//       L <= cost.dr_max_length (single-mode DR) 2 * unit(transceiver_dr, s) + L * fibre_per_m
//       else (FR, up to 2 km)                    2 * unit(transceiver_fr, s) + L * fibre_per_m
//   capex       = switches + NICs + DACs + AOCs + transceivers + fibre      (servers and GPUs excluded)
//   energy/year = bom.power_total * pue * 8766 h * energy_price           (365.25 days; servers included)
//   network energy/year = (switch power + optics power) * pue * 8766 h * energy_price
//
// Default prices are published list prices or estimates (docs/reference/cost.md names
// the source of each); they move fast and differ by vendor and volume, so
// a study that depends on them should set its own quotes in `cost:`.
//   switch_port 550 USD  a 400G port: NVIDIA Quantum-2 QM9700 (64 x 400G NDR) at about 35,000 USD per switch,
//                        infra-economics.com "Infrastructure Economics" (2025) -> 35,000 / 64 = 547 (estimate)
//   nic 1,500 USD        ConnectX-7 400G: the same source's NIC line, 10 per node at about 12,000 USD (1,200
//                        per NIC), rounded up (estimate)
//   transceiver 400G     500 (SR, multimode, 100 m: 400G-SR8 on OM4), 700 (DR4, 500 m single-mode, retail
//                        listings of 400GBASE-DR4 OSFP modules at 699-799), 1,000 (FR4, 2 km): the 500-1,000 USD
//                        range infra-economics.com quotes for OSFP transceivers
//   dac 100, aoc 600     estimates: a passive DAC is a copper assembly without optics; an AOC embeds two
//                        short-reach optical engines (cheaper than two pluggable SR modules and a fibre)
//   fibre_per_m 2 USD    estimate for an MPO trunk per metre
//   energy_price 0.08    USD/kWh: US average revenue per kWh from industrial customers, 2023: 8.06 cents (EIA,
//                        Electric Power Annual 2023, eia.gov/electricity/annual)
//   pue 1.3              estimate between the Uptime Institute Global Data Center Survey 2023 average (1.58)
//                        and hyperscale fleets (Google's 2023 fleet-wide trailing average: 1.10)
//   speed_exponent 1     price proportional to speed (cost per Gb/s held constant across speeds): an estimate
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/params.hpp"
#include "topology/bom.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

struct CostModel {
  double switch_port_usd = 550;
  double nic_usd = 1500;
  double dac_usd = 100;
  double aoc_usd = 600;
  double sr_usd = 500, dr_usd = 700, fr_usd = 1000;
  double fibre_usd_per_m = 2;
  double aoc_max_m = 0;  // 0: no AOC (every optical link is pluggable transceivers and fibre)
  double sr_max_m = 100, dr_max_m = 500;
  Bandwidth reference_speed{400e9};
  double speed_exponent = 1;
  double energy_usd_per_kwh = 0.08;
  double pue = 1.3;

  // The price of a part quoted `price` at reference_speed, running at `speed`.
  double unit(double price, Bandwidth speed) const;
};

std::vector<ParamSpec> cost_params();
// ParamError naming the key for values that contradict each other (sr_max_length above dr_max_length).
CostModel cost_from(const Params& cost);

// One line of the priced bill: `count` parts of one kind in one group
// (a switch tier, a link class, or "server" for NICs) at one speed.
struct CostItem {
  std::string group;  // "leaf", "nic-leaf", "server", ...
  std::string part;   // switch | nic | dac | aoc | transceiver_sr | transceiver_dr | transceiver_fr | fibre_m
  int64_t count = 0;  // parts (fibre: metres)
  double speed_gbps = 0;
  double unit_usd = 0;
  double total_usd = 0;
};

struct Cost {
  std::vector<CostItem> items;  // switch tiers in tier order, then NICs, then link classes in build order
  double switches_usd = 0, nics_usd = 0, cables_usd = 0, transceivers_usd = 0, fibre_usd = 0;
  double capex_usd = 0;
  std::vector<std::pair<std::string, double>> by_group;  // capex per group, item order
  double energy_kwh_per_year = 0, energy_usd_per_year = 0, network_energy_usd_per_year = 0;
};

inline constexpr double kHoursPerYear = 8766;  // 365.25 days

Cost compute_cost(const Topology& t, const Hardware& hw, const Bom& bom, const CostModel& m);

}  // namespace podnet::topology
