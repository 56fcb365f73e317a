// The flow engine behind NetworkBackend: compiles each transfer into flows
// (plan_compiler.hpp), runs them on FlowSim (weighted max-min sharing,
// re-solved at every arrival and departure) and starts a transfer the moment
// its last dependency completes. Adaptive routing sees the flows in flight:
// a flow's load is released from the router when it completes.
#pragma once

#include "engine/backend.hpp"
#include "engine/options.hpp"

namespace podnet::engine::flow {

class FlowBackend final : public NetworkBackend {
 public:
  FlowBackend(const topology::Topology& topo, NetworkOptions options);
  const char* name() const override { return "flow"; }
  RunReport run(const plan::TransferPlan& plan) override;

 private:
  const topology::Topology& topo_;
  NetworkOptions options_;
};

}  // namespace podnet::engine::flow
