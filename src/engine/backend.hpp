// NetworkBackend: the one interface every engine fidelity implements.
//
// An engine takes a TransferPlan (a DAG of transfers between GPU ranks) and
// predicts when each transfer starts and finishes on a Topology, routed by a
// routing::Router. Engines are registered by name (`analytical`, `flow`,
// `packet`; registry.hpp) so every scenario runs at every fidelity. Which
// transfers are ready when is plan_runner.hpp's, the same for every engine.
//
// Shared model of one transfer (plan_compiler.hpp):
// - Its bytes cross the directed links of its route(s); a P2p transfer with q
//   QPs is q flows of bytes/q on (possibly) different ECMP paths; a Ring or
//   Coupled transfer is one coupled variable whose rate is the per-hop rate
//   and which loads every link of every hop (a link used by two hops carries
//   twice the rate), so all hops move at the pace of the slowest.
// - Payload capacity per link class (link_classes.hpp): raw x the class's
//   efficiency, x MTU / (MTU + per-packet header bytes) (transport preset)
//   on Ethernet/InfiniBand links; NVLink, PCIe and chip-to-chip (ICI) links
//   carry no transport header.
// - Latency α of one step: every link's latency + its class's added latency
//   + the switch latency of every switch entered + the transport's endpoint
//   stack latency when the hop crosses a NIC (never on a chip-to-chip torus
//   hop). A P2p transfer pays latency_steps x its path's α; a
//   Ring/Coupled transfer latency_steps x the mean α of its hops (a chunk
//   crosses every hop in turn). Latency is paid before the bytes move
//   ("latency then bandwidth").
#pragma once

#include <string>
#include <vector>

#include "core/units.hpp"
#include "engine/failures.hpp"
#include "engine/link_step.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

struct TransferTiming {
  Time start;  // when its dependencies were met
  Time finish;
};

struct LinkReport {
  routing::DirLink link = 0;
  double bytes = 0;             // bytes carried (payload)
  double mean_utilization = 0;  // payload rate / payload capacity, averaged over the run
  double peak_utilization = 0;
};

// The load on one link class (Topology::link_classes: "nvlink", "nic-leaf",
// "leaf-spine", ...) over a run: the mean and the highest of its directed
// links' mean utilizations (bytes x 8 / (capacity x makespan)), idle links
// included; and the mean over the links that carried bytes (a collective on
// 128 of 16,384 NICs loads those 128 to 99 % and the class to 0.8 %).
struct ClassLoad {
  std::string link_class;
  int64_t links = 0;  // directed links of the class with a capacity
  double bytes = 0;
  double mean_utilization = 0;
  double max_utilization = 0;
  int64_t used_links = 0;            // of `links`, those that carried bytes
  double used_mean_utilization = 0;  // the mean over those (0 when none)
};

struct RunReport {
  std::string engine;
  Time makespan;  // when the last transfer finished
  std::vector<TransferTiming> transfers;
  std::vector<LinkReport> hottest;      // by mean utilization, then bytes
  std::vector<ClassLoad> by_class;      // per link class present, in class order
  uint64_t flows = 0;                   // flows (or coupled variables) simulated
  uint64_t solves = 0;                  // max-min re-solves (flow engine)
  uint64_t flows_resolved = 0;          // sum over re-solves of the flows re-solved or placed (flow engine)
  uint64_t solver_terms = 0;            // flow-link terms given to the solver (flow engine; flow_backend.hpp)
  std::vector<FailureRecord> failures;  // injected events, as applied
  bool job_failed = false;              // the job stopped (see FailureOptions)
  Time failed_at;
  std::string failure;           // why
  int32_t failed_transfer = -1;  // the plan's transfer `failure` names (its label), or -1
};

class PacketView;  // packet_view.hpp

// What a run measured beyond its RunReport, handed to NetworkOptions::observers.observe
// at the end of every run (telemetry/ reads it): the packet engine's
// records through PacketView (ports, QPs, samples), or the flow engine's
// link-load steps.
struct RunObservation {
  const char* engine = "";
  const RunReport* report = nullptr;
  const PacketView* packet = nullptr;
  const std::vector<LinkLoadStep>* link_steps = nullptr;
  const std::vector<double>* link_capacity_bps = nullptr;  // payload capacity per directed link (flow engine)
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  virtual const char* name() const = 0;
  // Runs the plan from time 0 on an idle network.
  virtual RunReport run(const plan::TransferPlan& plan) = 0;
};

// "su001-leaf-r3:Ethernet1/65 -> pod00-spine-r3-02:Ethernet1/5"
std::string dir_link_name(const topology::Topology& topo, routing::DirLink d);

}  // namespace podnet::engine
