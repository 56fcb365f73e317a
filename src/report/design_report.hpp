// The `podnet design` result: bill of materials, limits, bisection and
// diameter as a JSON document, and the same as a console summary.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "report/report.hpp"
#include "topology/bom.hpp"
#include "topology/cost.hpp"
#include "topology/frontend.hpp"
#include "topology/topology.hpp"

namespace podnet::report {

// Adds "topology", "bom", "cost", "limits", "bisection_bandwidth_gbps", "diameter_hops",
// "oversubscription", "notes" to `doc`.
void add_design(nlohmann::json& doc, const topology::Topology& t, const topology::Bom& bom, const topology::Cost& cost,
                const topology::CostModel& model);
// Adds "frontend" (the frontend and storage network: its endpoints, switches, links, cables, power, cost,
// oversubscription and bisection) and "capex_with_frontend_usd" (the back end's capex plus the
// frontend's) to a design document that add_design filled.
void add_frontend(nlohmann::json& doc, const topology::FrontendFabric& f, const topology::CostModel& model);
void write_design_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
