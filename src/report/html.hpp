// The HTML reporter: one self-contained page (every asset inlined, readable
// offline, attachable to a design review) drawing a result document with
// the dashboard's own code (web/podnet.js) and Apache ECharts. The page
// embeds the very JSON document `--format json` writes, so the charts and
// tables show the same numbers; `podnet serve` draws the same payloads.
//
// The payload is {"kind": "design" | "bench" | "train" | "reliability" |
// "diagnose", "document": <the --format json document>, for design and
// diagnose "drawing": fabric_drawing(...), for diagnose "suspects":
// suspects_on_drawing(...), for reliability "goodput_curve"}.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>

#include "study/diagnose.hpp"
#include "topology/topology.hpp"

namespace podnet::report {

// The fabric aggregated for drawing by tier: one node per (tier, pod, group,
// rail) of switches and per (pod, group) of servers (GPUs, NICs, NVSwitches
// inside), coarsened to (tier, pod) and then (tier) until at most
// `max_nodes` remain, so a 131,072-GPU fabric draws as a few hundred marks,
// not 500,000. Links inside one aggregate are dropped; links between two
// aggregates add up into one edge {links, gbps (capacity per direction)}.
// {"level_names": [...], "granularity": "...", "nodes": [{id, name, level, count,
//  gpus, x, y}], "edges": [{source, target, links, gbps}]}, x/y laid out by
// level (servers at the bottom) in a 1000-wide box.
nlohmann::json fabric_drawing(const topology::Topology& t, size_t max_nodes = 200);

// `podnet diagnose` suspects (loss, then latency) placed on fabric_drawing(t,
// max_nodes): [{component, kind, finding: "loss" | "latency", value (loss
// probability, or added RTT in us), hidden_fault (when the faults are known),
// marks: [aggregate ids], edge: [a, b] or null}]. A switch marks its
// aggregate; a link between two aggregates is their edge (and marks both
// ends); a link inside one aggregate (a NIC's own link) marks that aggregate.
nlohmann::json suspects_on_drawing(const topology::Topology& t, const study::DiagnoseResult& r, size_t max_nodes = 200);

// Goodput against checkpoint interval for a `podnet reliability` document
// (reliability::goodput, Daly 2006: goodput = τ / (M e^(R/M) (e^((τ+δ)/M) − 1))
// with its mtbi_hours M and checkpoint section's δ and R): 49 intervals
// geometric from τ*/8 to 8τ* around the advised interval τ* (interval_minutes),
// {"points": [[minutes, goodput], ...], "optimum": [τ* minutes, goodput]};
// empty points when the job is never interrupted (mtbi_hours null).
nlohmann::json goodput_curve(const nlohmann::json& reliability_doc);

// The page for `payload` (see above) titled `title`. Error (not InputError)
// naming scripts/setup.sh when the chart library was not built in.
std::string html_page(const nlohmann::json& payload, const std::string& title);
void write_html(const nlohmann::json& payload, const std::string& title, std::ostream& out);

// `json` made safe inside a <script> element ("</" becomes "<\/", a JSON escape).
std::string script_safe_json(const nlohmann::json& j);

}  // namespace podnet::report
