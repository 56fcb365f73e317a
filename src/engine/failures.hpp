// The failures injected into a run (the scenario's `failures:`), their
// model, and the record of each as the engine applied it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

// A PFC storm (the scenario's `faults:` kind pfc_storm; packet engine
// only, packet_sim.hpp §3): the receiving end of directed link `port` - a NIC
// stuck in a PAUSE loop, as when its receive pipeline hangs - sends a PAUSE
// frame about that link every half pause time from `start` until `end`, then
// an XON. The port's data class is held throughout; what backs up behind it
// pauses the switches upstream in turn (the paused tree).
struct PauseStorm {
  int32_t port = -1;  // routing::DirLink, the direction entering the storming NIC
  Time start, end;
  std::string what;  // as written, for messages
};

// A silent fault (the scenario's `faults:` kinds drop, corrupt, degrade and
// flap; packet engine only, packet_sim.hpp §11): from `start`, every packet
// crossing one of the directed links `dirs`, or entering switch `node`, is
// lost with `probability` (a drop, or a corruption the receiver's CRC
// check discards), arrives `latency` later (a gray link or switch), or,
// when `period` > 0, is lost while the fault is down: over [start + k
// period, start + k period + down). Nothing counts these losses but the
// engine's own ground truth (PortStats::silent): the devices report nothing.
struct SilentFault {
  std::vector<int32_t> dirs;                // routing::DirLink
  topology::NodeId node = topology::kNone;  // a switch
  double probability = 0;
  Time latency;
  Time start;
  Time period, down;
  std::string what;  // as written, for messages
};

// A switch whose ECN marking band or PFC XOFF threshold is not the fabric's
// configuration (the scenario's `faults:` kind drifted_thresholds; packet
// engine only, packet_sim.hpp §12): every egress port of `node` marks with
// the band (kmin, kmax, pmax) where given, and its buffer's dynamic
// threshold is alpha = 2^-dt_shift where given (-1: as configured).
struct ThresholdDrift {
  topology::NodeId node = topology::kNone;
  int64_t kmin = -1, kmax = -1;  // bytes
  double pmax = -1;
  int32_t dt_shift = -1;
  std::string what;  // as written, for messages
};

// Failures injected into a run (flow and packet engines).
//
// Model. A link going down loses its capacity at once in both directions:
// flows crossing it stall (rate 0). Each direction is then repaired by
// rerouting, after a delay that depends on who can repair it:
// - a direction the switch it leaves can repair alone - an uplink (any other
//   uplink of a Clos switch reaches every destination) or a link with a live
//   parallel twin to the same neighbour - is dropped from that switch's ECMP /
//   adaptive-routing group: `local_repair` (milliseconds: DLB / fast reroute);
//   A multi-plane NIC's link into a plane, leaving the NIC, is repaired so
//   too: the NIC's other planes reach every destination;
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

// A compute of duration d on GPUs whose slowest factor is `factor`, rounded to the picosecond: what every engine
// that takes slow GPUs runs it for.
inline Time slowed_duration(Time d, double factor) {
  return factor == 1.0 ? d : Time(static_cast<int64_t>(static_cast<double>(d.ps) * factor + 0.5));
}

struct FailureEvent {
  Time at;
  FailureAction action = FailureAction::Down;
  std::vector<topology::LinkId> links;  // Down/Up/Degrade
  Bandwidth rate;                       // Degrade: new capacity per direction
  int32_t gpu = -1;                     // Slow/Stop: the GPU rank (Stop: -1 for a whole server's)
  double factor = 1.0;                  // Slow: compute duration multiplier
  std::string what;                     // for reports: "link X", "switch Y", "gpu 17"
  // Events drawn together by one scenario entry (a share of a tier: "20 of 1,024 leaf-spine links") carry its
  // label, so that a report can weigh them as one failure; empty for an event of its own.
  std::string group;
};

struct FailureOptions {
  std::vector<FailureEvent> events;                // sorted by time
  Time local_repair = Time(1000000000);            // 1 ms
  Time convergence = Time(2000000000000);          // 2 s
  Time collective_timeout = Time(30000000000000);  // 30 s (IB retry budget, NCCL_IB_TIMEOUT 20 x NCCL_IB_RETRY_CNT 7)
};

struct FailureRecord {
  Time at;
  std::string what;
  int64_t flows_rerouted = 0;
  Time repaired;  // last repair time (0 if none was needed)
};

}  // namespace podnet::engine
