#include "engine/flow/flow_backend.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/flow/flow_sim.hpp"
#include "engine/plan_compiler.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::flow {

FlowBackend::FlowBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

RunReport FlowBackend::run(const TransferPlan& plan) {
  routing::Router router(topo_, options_.routing);
  PlanCompiler compiler(topo_, router, options_.transport);
  const bool keep_routes = options_.routing.policy == "adaptive" || options_.routing.policy == "ugal";

  FlowSim sim;
  const int32_t dir_links = routing::dir_link_count(topo_);
  for (int32_t d = 0; d < dir_links; ++d) sim.add_link(Bandwidth(compiler.payload_capacity_bps(d)));

  const auto n = static_cast<int32_t>(plan.transfers.size());
  RunReport report;
  report.engine = name();
  report.transfers.assign(n, {});
  std::vector<int32_t> unmet(n, 0), flows_left(n, 0);
  std::vector<std::vector<int32_t>> dependents(n);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : plan.transfers[i].deps) {
      if (d < 0 || d >= n) throw Error("internal: transfer dependency out of range");
      dependents[d].push_back(i);
      ++unmet[i];
    }
  }
  (void)topological_order(plan);  // rejects cycles up front

  struct Record {
    int32_t transfer;
    double route_weight;
    std::vector<routing::PathPart> parts;  // kept only for adaptive release
  };
  std::vector<Record> records;
  std::vector<CompiledFlow> compiled;
  std::vector<Resource> resources;

  auto launch = [&](int32_t i, Time at) {
    report.transfers[i].start = at;
    compiled.clear();
    compiler.compile(plan, i, compiled);
    flows_left[i] = static_cast<int32_t>(compiled.size());
    for (auto& f : compiled) {
      resources.clear();
      for (const auto& p : f.parts) resources.push_back({static_cast<LinkId>(p.link), p.fraction});
      FlowSpec spec;
      spec.bytes = f.bytes;
      spec.start = at;
      spec.latency = f.latency;
      spec.resources = resources;
      spec.tag = records.size();
      records.push_back({i, f.route_weight, keep_routes ? std::move(f.parts) : std::vector<routing::PathPart>{}});
      sim.add_flow(spec);
      ++report.flows;
    }
  };

  for (int32_t i = 0; i < n; ++i)
    if (unmet[i] == 0) launch(i, Time());

  sim.run_until_idle([&](const Completion& c) {
    Record& r = records[c.tag];
    if (keep_routes) {
      router.release(r.parts, r.route_weight);
      r.parts = {};
    }
    const int32_t i = r.transfer;
    if (--flows_left[i] > 0) return;
    report.transfers[i].finish = c.finish;
    report.makespan = std::max(report.makespan, c.finish);
    for (int32_t j : dependents[i])
      if (--unmet[j] == 0) launch(j, c.finish);
  });
  if (sim.stalled_flows() > 0)
    throw Error(fmt::format("{} flow(s) stalled with zero bandwidth (a failed link on their path)",
                            sim.stalled_flows()));

  std::vector<double> bytes(dir_links), peak(dir_links);
  for (int32_t d = 0; d < dir_links; ++d) {
    const LinkStats s = sim.link_stats(static_cast<LinkId>(d));
    bytes[d] = s.bytes;
    peak[d] = s.peak_utilization;
  }
  report.hottest = hottest_links(bytes, &peak, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  report.solves = sim.stats().solves;
  return report;
}

}  // namespace podnet::engine::flow
