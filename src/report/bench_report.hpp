// The `podnet bench` result (study::bench): its JSON document, a console
// table in nccl-tests' layout, and nccl-tests' own text format.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>

#include "scenario/setup.hpp"
#include "study/bench.hpp"

namespace podnet::report {

// {"schema_version", "run", "bench": {op, algorithm, gpus, engine, routing, ...},
//  "rows": [{bytes, time_us, algbw_gbyte_per_s, busbw_gbyte_per_s, algorithm, protocol, channels, nccl_model_us,
//            and with failures baseline_time_us, slowdown, scheduled, job_failed, failures}],
//  "hottest_links" and "engine_stats" (of the largest size), "ring" (its first ring), "notes",
//  "link_class_utilization": [{link_class, links, mean_utilization: [per row], max_utilization: [per row],
//                              used_links: [per row], used_mean_utilization: [per row]}]
//  (engine::ClassLoad of every size: the load per tier of links; used = the directed links that carried bytes)}
nlohmann::json bench_document(const scenario::Setup& s, const study::BenchResult& r);
// The packet engine's counters over a recorder's runs, as bench's packet_counters holds them (drops, trimmed,
// ecn_marks, pause_frames, paused_max_us, retransmissions, timeouts, lost_packets, goodput, fairness).
nlohmann::json packet_counters_json(const telemetry::Recorder& rec);
void write_bench_table(const nlohmann::json& doc, std::ostream& out);
// nccl-tests' text layout: one rank line per GPU of the group, named by its server (nccl-tests' host).
void write_bench_nccl_tests(const nlohmann::json& doc, const scenario::Setup& s, const study::BenchResult& r,
                            std::ostream& out);

// `podnet bench --compare-cc`: one traffic under several transports (congestion controls or deployment
// presets), side by side, on the packet engine. One bench run per transport and size.
struct TransportRun {
  std::string name;                       // as the user named it: a congestion control or a network preset
  std::vector<std::string> sets;          // the scenario keys it set, "network.cc=nscc"
  std::string routing;                    // the routing policy in force
  std::string transport, cc;              // the transport preset and congestion control in force
  bool pfc = false;                       // PFC (a lossless data class) asked for
  std::string flow_control;               // engine::packet::flow_control_name: link credits, PFC or none
  std::string delivery;                   // engine::packet::delivery_name: reliable ordered, unordered, unreliable
  std::vector<study::BenchResult> sizes;  // one result of one size each, in size order
};
// Fills t's routing, transport, congestion control (the transport's default for auto) and flow control from
// the Setup it runs on.
void describe_transport(TransportRun& t, const scenario::Setup& s);
// {"schema_version", "run", "compare": {op, gpus, engine, per ("flow" or "rank"), transports: [{name, sets,
//  transport, cc, pfc, link_credits, delivery, routing}], units},
//  "rows": [{transport, bytes, time_us, fct_flows, fct_min_us, fct_p50_us, fct_p99_us, fct_max_us, fct_cdf_us,
//            fairness (Jain's index of the QPs' rates), goodput_gbit_per_s, drops, trimmed, ecn_marks,
//            pause_frames, retransmissions, timeouts, lost_packets (unreliable delivery: never resent)}]}
// goodput = the payload every QP delivered / the simulated time; the counters are of that size's run.
nlohmann::json compare_document(const scenario::Setup& first, const std::vector<TransportRun>& runs);
void write_compare_table(const nlohmann::json& doc, std::ostream& out);

}  // namespace podnet::report
