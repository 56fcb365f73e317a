// NetworkBackend: the one interface every engine fidelity implements.
//
// An engine takes a TransferPlan (a DAG of transfers between GPU ranks) and
// predicts when each transfer starts and finishes on a Topology, routed by a
// routing::Router. Engines are registered by name (`analytical`, `flow`,
// `packet`) so every scenario runs at every fidelity.
//
// Shared model of one transfer (plan_compiler.hpp):
// - Its bytes cross the directed links of its route(s); a P2p transfer with q
//   QPs is q flows of bytes/q on (possibly) different ECMP paths; a Ring or
//   Coupled transfer is one coupled variable whose rate is the per-hop rate
//   and which loads every link of every hop (a link used by two hops carries
//   twice the rate), so all hops move at the pace of the slowest.
// - Wire overhead: network links (copper/optical) carry payload at
//   capacity x MTU / (MTU + per-packet header bytes) (transport preset);
//   NVLink and PCIe carry payload at full capacity.
// - Latency α of one step: propagation of every link + the switch latency of
//   every switch entered + the transport's endpoint stack latency when the
//   hop crosses a NIC. A P2p transfer pays latency_steps x its path's α; a
//   Ring/Coupled transfer latency_steps x the mean α of its hops (a chunk
//   crosses every hop in turn). Latency is paid before the bytes move
//   ("latency then bandwidth").
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/params.hpp"
#include "core/units.hpp"
#include "plan/transfer_plan.hpp"
#include "routing/policies.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

// Endpoint transport: per-packet header overhead and stack latency.
struct Transport {
  std::string name = "rocev2";
  Time stack_latency;      // one-way endpoint (NIC + software) latency per message step
  int32_t mtu = 4096;      // payload bytes per packet
  int32_t header_bytes = 82;  // per-packet bytes on the wire beyond payload
  double efficiency() const { return static_cast<double>(mtu) / (mtu + header_bytes); }
};

struct TransportPreset {
  const char* name;
  const char* description;
  Time stack_latency;
  int32_t mtu;
  int32_t header_bytes;
};
const std::vector<TransportPreset>& transport_presets();
// Throws InputError listing the presets for an unknown name.
Transport transport_preset(std::string_view name);

// Failures injected into a run (flow and packet engines; the scenario's `failures:`).
//
// Model. A link going down loses its capacity at once in both directions:
// flows crossing it stall (rate 0). Each direction is then repaired by
// rerouting, after a delay that depends on who can repair it:
// - a direction the switch it leaves can repair alone - an uplink (any other
//   uplink of a Clos switch reaches every destination) or a link with a live
//   parallel twin to the same neighbour - is dropped from that switch's ECMP /
//   adaptive-routing group: `local_repair` (milliseconds: DLB / fast reroute);
// - any other direction (a downlink without a twin, a link of a NIC) needs
//   the routing protocol to converge upstream: `convergence` (seconds).
// A flow stalls until the first repair of a dead direction it crosses.
// At the repair time the router forgets that direction (routing state is
// per direction: until convergence, upstream switches still send into a dead
// downlink) and every flow still crossing it is re-routed with its remaining bytes (no second latency). A
// flow that has no path any more (a NIC's only link) stops the job when the
// collective times out, and so does a stall longer than `collective_timeout` (NCCL/IB give up after their
// retry budget): the run ends there, reported as a job failure. A link coming
// up regains its capacity at once and rejoins routing after `local_repair`.
// Degrade changes a link's capacity; a switch going down is all its links
// going down. Drain is a planned removal (maintenance, hitless upgrade):
// routing moves every flow off the links first, so nothing stalls, and the
// links carry nothing until they come back up. A GPU slow-down multiplies the duration of the compute its rank
// starts from then on (a straggler). Stop is a failure no network repair
// can absorb - a GPU, its server or its software (reliability's `Compute`
// role): the job stops at once, reported as a job failure. Events after the
// last transfer finished are not applied (the job is over).
enum class FailureAction : uint8_t { Down, Up, Degrade, Slow, Drain, Stop };

struct FailureEvent {
  Time at;
  FailureAction action = FailureAction::Down;
  std::vector<topology::LinkId> links;  // Down/Up/Degrade
  Bandwidth rate;                       // Degrade: new capacity per direction
  int32_t gpu = -1;                     // Slow/Stop: the GPU rank (Stop: -1 for a whole server's)
  double factor = 1.0;                  // Slow: compute duration multiplier
  std::string what;                     // for reports: "link X", "switch Y", "gpu 17"
};

struct FailureOptions {
  std::vector<FailureEvent> events;     // sorted by time
  Time local_repair = Time(1000000000);        // 1 ms
  Time convergence = Time(2000000000000);      // 2 s
  Time collective_timeout = Time(30000000000000);  // 30 s (IB retry budget, NCCL_IB_TIMEOUT 20 x NCCL_IB_RETRY_CNT 7)
};

struct NetworkOptions {
  routing::RouteOptions routing;
  Transport transport = transport_preset("rocev2");
  int32_t hottest_links = 8;  // how many links the report lists
  Time flow_quantum;          // flow engine: completions rounded up to a multiple (0 = exact; flow_sim.hpp)
  // Packet engine (packet/packet_options.hpp): congestion control preset
  // ("auto": infiniband with the infiniband transport, else dcqcn_nic), PFC,
  // shared switch buffer in bytes (0 = 40 us at each port's rate).
  std::string cc = "auto";
  bool pfc = true;
  Bytes switch_buffer = 0;
  // Called by the flow and packet engines every `progress_every` finished
  // transfers (a count, so runs stay deterministic) with (finished, total,
  // simulated time); the caller decides what to print and when.
  std::function<void(int64_t, int64_t, Time)> progress;
  int64_t progress_every = 1024;
  FailureOptions failures;
};

struct FailureRecord {
  Time at;
  std::string what;
  int64_t flows_rerouted = 0;
  Time repaired;  // last repair time (0 if none was needed)
};

struct TransferTiming {
  Time start;   // when its dependencies were met
  Time finish;
};

struct LinkReport {
  routing::DirLink link = 0;
  double bytes = 0;             // bytes carried (payload)
  double mean_utilization = 0;  // payload rate / payload capacity, averaged over the run
  double peak_utilization = 0;
};

struct RunReport {
  std::string engine;
  Time makespan;                        // when the last transfer finished
  std::vector<TransferTiming> transfers;
  std::vector<LinkReport> hottest;      // by mean utilization, then bytes
  uint64_t flows = 0;                   // flows (or coupled variables) simulated
  uint64_t solves = 0;                  // max-min re-solves (flow engine)
  std::vector<FailureRecord> failures;  // injected events, as applied
  bool job_failed = false;              // the job stopped (see FailureOptions)
  Time failed_at;
  std::string failure;                  // why
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  virtual const char* name() const = 0;
  // Runs the plan from time 0 on an idle network.
  virtual RunReport run(const plan::TransferPlan& plan) = 0;
};

struct EngineInfo {
  const char* name;
  const char* description;
};
const std::vector<EngineInfo>& engines();
// Throws InputError for an unknown engine (listing them) and Error for a
// routing policy that does not apply to the topology.
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo,
                                             const NetworkOptions& options);
// With default options (ECMP, rocev2, no failures).
std::unique_ptr<NetworkBackend> make_backend(std::string_view engine, const topology::Topology& topo);

// "su001-leaf-r3:Ethernet1/65 -> pod00-spine-r3-02:Ethernet1/5"
std::string dir_link_name(const topology::Topology& topo, routing::DirLink d);

}  // namespace podnet::engine

namespace podnet::engine {

// Scenario section `network:` (engine, routing policy, transport and overrides).
std::vector<ParamSpec> network_params();
// Options from a validated `network:` section; the routing hash seed is the scenario seed.
NetworkOptions network_options_from(const Params& p, uint64_t seed);

}  // namespace podnet::engine
