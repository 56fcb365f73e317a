#include "engine/analytical/analytical_backend.hpp"

#include <algorithm>
#include <cmath>

#include "engine/plan_compiler.hpp"
#include "engine/plan_runner.hpp"
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
  PlanRunner runner(plan, report);
  std::vector<double> link_bytes(routing::dir_link_count(topo_), 0.0);
  std::vector<CompiledFlow> flows;
  // No transfer shares the network with another, so each is timed alone the
  // moment it is launched; the runner launches them in dependency order (a
  // FIFO of ready transfers) and gives each its start time.
  std::vector<int32_t> ready;
  ready.reserve(plan.transfers.size());
  const auto launch = [&](int32_t i, Time) { ready.push_back(i); };
  runner.start(launch);
  for (size_t next = 0; next < ready.size(); ++next) {
    const int32_t i = ready[next];
    const Time start = report.transfers[i].start;
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
    runner.complete(i, finish, launch);
  }
  report.hottest = hottest_links(link_bytes, nullptr, report.makespan, options_.hottest_links,
                                 [&](routing::DirLink d) { return compiler.payload_capacity_bps(d); });
  return report;
}

}  // namespace podnet::engine::analytical
