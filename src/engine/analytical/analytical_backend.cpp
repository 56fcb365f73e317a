#include "engine/analytical/analytical_backend.hpp"

#include <algorithm>
#include <cmath>

#include "engine/plan_compiler.hpp"
#include "engine/report_util.hpp"
#include "routing/router.hpp"

namespace podnet::engine::analytical {

AnalyticalBackend::AnalyticalBackend(const topology::Topology& topo, NetworkOptions options)
    : topo_(topo), options_(std::move(options)) {}

RunReport AnalyticalBackend::run(const plan::TransferPlan& plan) {
  routing::Router router(topo_, options_.routing);
  PlanCompiler compiler(topo_, router, options_.transport);
  RunReport report;
  report.engine = name();
  const size_t n = plan.transfers.size();
  report.transfers.assign(n, {});
  std::vector<double> link_bytes(routing::dir_link_count(topo_), 0.0);
  std::vector<CompiledFlow> flows;
  // Transfers are appended in an order where deps come first? Not guaranteed: process in topological order.
  const std::vector<int32_t> order = topological_order(plan);
  for (int32_t i : order) {
    const plan::Transfer& t = plan.transfers[i];
    Time start;
    for (int32_t d : t.deps) start = std::max(start, report.transfers[d].finish);
    flows.clear();
    compiler.compile(plan, i, flows);
    Time finish = start;
    for (const auto& f : flows) {
      double rate = std::numeric_limits<double>::infinity();
      for (const auto& p : f.parts) {
        rate = std::min(rate, compiler.payload_capacity_bps(p.link) / p.fraction);
        link_bytes[p.link] += p.fraction * static_cast<double>(f.bytes);
      }
      Time tx = std::isinf(rate) || f.bytes == 0 ? Time() : Time::from_seconds(8.0 * static_cast<double>(f.bytes) / rate);
      finish = std::max(finish, start + f.latency + tx);
      router.release(f.parts, f.route_weight);
      ++report.flows;
    }
    report.transfers[i] = {start, finish};
    report.makespan = std::max(report.makespan, finish);
  }
  report.hottest = hottest_links(link_bytes, nullptr, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  return report;
}

}  // namespace podnet::engine::analytical
