// The flow engine behind NetworkBackend: compiles each transfer into flows
// (plan_compiler.hpp), runs them on FlowSim (weighted max-min sharing,
// re-solved at every arrival and departure) and starts a transfer the moment
// its last dependency completes. Adaptive routing sees the flows in flight:
// a flow's load is released from the router when it completes.
#pragma once

#include <vector>

#include "engine/backend.hpp"
#include "engine/options.hpp"
#include "engine/plan_compiler.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/route.hpp"

namespace podnet::engine::flow {

// Series links. Every route of this backend runs GPU to GPU, so a node that is not a GPU and has exactly
// two links, to two different nodes (a NIC between its GPU and its leaf), is entered through one and left
// through the other: the direction into it over one link and the direction out of it over the other carry
// the same flows with the same coefficients, and the one of less capacity binds whenever either does. The
// max-min solution is the same without the other's constraint, so the backend leaves it out of the solver
// (one of a NIC's two links in each direction: a GPU-to-GPU route across a spine keeps 4 of its 6 links in
// the solver, one inside a leaf 2 of 4) and reports for it what its representative carried, at its own
// capacity. Not while failures may change one link of a pair alone, nor while every link's load steps are
// recorded (`observe`: telemetry reads each link's own record). It rests on the router's routes being simple
// paths between two GPUs (routing/router.hpp, route()), which FlowBackend.EveryRouteCrossesASeriesLinkWith-
// ItsRepresentative checks for every family and policy; a route that began or ended at a switch or a NIC
// would break it. RunReport::solver_terms counts the terms given to the solver; a stuck-flow report names
// only those links.
//
// For each directed link, the representative of its class (itself when alone): the member of least
// capacity_bps, the lowest index among equals; chains of such nodes join one class.
std::vector<routing::DirLink> series_representatives(const topology::Topology& topo,
                                                     const std::vector<double>& capacity_bps);

// Links that carry the same flows: the series argument, plan-wide. When routes stay fixed for the whole run
// (no load-aware routing, no failures), every transfer of the plan is compiled once before the run and each
// directed link gets a fingerprint of the terms it will carry: two sums, over the flows that will cross it,
// of independent 64-bit mixes of (transfer, flow index, coefficient). Links whose fingerprints agree carry
// the same flows with the same coefficients at every instant, so their constraints differ only in capacity,
// the least binds whenever any does, and the max-min solution is the same with only it in the solver; the
// others carry what it carries (reported at their own capacity, as series links, which are such links too).
// Two links are merged only when both 64-bit sums agree: a false match among the links of a 10-million-link
// fabric has a probability near 2^-80. It pays on collective steps compiled as one coupled flow, which every
// rank's NIC carries alike (a 1,024-rank PAT step's 5,170 links fall to about 1,080 at 131,072 GPUs; switch
// links stay apart, ECMP putting a different number of hops on each). FlowBackend uses it when the plan has a
// ring or coupled transfer; a plan of P2p transfers keeps the series links alone (compiling it twice cost more).
// For each directed link, the representative of its class: the member of least capacity_bps, the lowest index
// among equals; a link no flow crosses is its own.
std::vector<routing::DirLink> same_flow_representatives(const plan::TransferPlan& plan, PlanCompiler& compiler,
                                                        const std::vector<double>& capacity_bps);

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
