// The analytical engine: closed-form α-β per transfer, congestion-unaware.
//
// A flow of S payload bytes whose route loads directed link d with
// coefficient c_d takes
//     T = α + 8 S / min_d (C_d / c_d)
// where C_d is d's payload capacity (backend.hpp) and α its latency
// (latency_steps x slowest hop). A transfer finishes when its slowest flow
// does; it starts when its last dependency finishes. Transfers never slow
// each other (that is what the flow engine adds), so on a plan without
// contention the two engines agree, and where they differ the difference is
// contention. Link report: bytes per link and utilization = bytes / (C x
// makespan).
#pragma once

#include "engine/backend.hpp"
#include "engine/options.hpp"

namespace podnet::engine::analytical {

class AnalyticalBackend final : public NetworkBackend {
 public:
  AnalyticalBackend(const topology::Topology& topo, NetworkOptions options);
  const char* name() const override { return "analytical"; }
  RunReport run(const plan::TransferPlan& plan) override;

 private:
  const topology::Topology& topo_;
  NetworkOptions options_;
};

}  // namespace podnet::engine::analytical
