// PacketView: what a packet-engine run shows to the layers that observe it
// (telemetry, diagnose), without the engine's internals. The packet engine
// (packet/packet_sim.hpp) implements it; RunObservation::packet points to
// it at the end of a run. Its records (ports, QPs, samples) are defined
// here; packet_sim.hpp states how they are measured (§3 ports, §12 the
// configured ECN band and XOFF limit).
//
// ProbeSession: the packet engine's probe mode (packet_sim.hpp §11) for the
// diagnose study: probe paths, timers, one probe packet at a time, and the
// probes' round-trip times. make_probe_session builds one on a fresh
// simulation of the fabric.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/units.hpp"
#include "engine/options.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::engine {

struct PortStats {
  uint64_t packets = 0;  // all packets sent
  uint64_t data_packets = 0;
  double payload_bytes = 0;   // data payload sent
  double wire_bytes = 0;      // everything on the wire
  uint64_t rx_packets = 0;    // packets that arrived at the far end of this link (not lost on the wire)
  double rx_bytes = 0;        // their bytes on the wire
  uint64_t cnp_packets = 0;   // CNPs sent on this link
  uint64_t retransmits = 0;   // data packets sent again on this link by their QP (go-back-N; source NIC port)
  uint64_t out_of_order = 0;  // data packets that arrived over this link at their destination beyond a hole
  uint64_t drops = 0;         // data packets dropped before joining this port's queue (buffer admission)
  uint64_t trims = 0;         // data packets cut to their header before joining this port's queue (trimming)
  uint64_t ecn_marks = 0;
  uint64_t pause_rx = 0;     // PAUSE (XOFF) frames received by this egress port
  uint64_t pause_tx = 0;     // PAUSE frames sent upstream about this link (by its receiving end)
  Time paused;               // time this port's data class was paused
  uint64_t lost = 0;         // packets lost to this link's failure (queued, on its wire, or sent to it while dead)
  uint64_t silent = 0;       // packets lost to a silent fault on this link or the switch it enters (§11)
  Bytes pg_shared_max = 0;   // peak lossless shared-buffer bytes held for this ingress (entering a switch; §12)
  Bytes max_queue = 0;       // peak data bytes queued
  double queue_byte_ps = 0;  // integral of data bytes queued over time
  // Peak payload rate / payload capacity over util_window; a packet's payload counts in each window in
  // proportion to its serialization time there, so a saturated port reads 1.0 (not 1.003).
  double peak_utilization = 0;
  // Time (ps) spent with the data bytes queued in each depth bucket
  // (depth_histogram.hpp; the empty queue's time is the rest of the run).
  std::vector<double> queue_hist;
};

struct StreamRecord {
  uint64_t tag = 0;
  int32_t src = 0, dst = 0;
  Bytes bytes = 0;
  Time start;       // transfer start
  Time first_send;  // first packet may leave
  Time finish;      // last byte delivered
  uint32_t packets = 0;
  uint32_t retransmits = 0;
  uint32_t timeouts = 0;
  uint32_t nacks = 0;         // NACKs the sender received
  uint32_t cnps = 0;          // CNPs the sender received
  uint32_t trims = 0;         // NACKs for trimmed packets the sender received
  uint32_t out_of_order = 0;  // data packets that reached the receiver beyond a hole
  uint32_t lost = 0;          // unreliable delivery: data packets lost (dropped, trimmed, faults), never resent
  Bytes lost_bytes = 0;       // ... and their payload
  double final_rate_bps = 0;
};

struct QueueSample {
  Time time;
  int32_t port = 0;
  Bytes bytes = 0;
};

struct StreamSample {
  Time time;
  int32_t stream = 0;
  Bytes delivered = 0;  // payload delivered in order so far
  double rate_bps = 0;  // the sender's current rate (RC)
  uint32_t window = 0;  // a window-based congestion control's window, packets in flight (0: rate-based, none)
};

// The ECN marking band a port is configured with.
struct EcnBand {
  int64_t kmin = 0, kmax = 0;
  double pmax = 0;
};

class PacketView {
 public:
  virtual ~PacketView() = default;
  virtual Time now() const = 0;
  virtual const std::vector<PortStats>& port_stats() const = 0;  // by directed link
  virtual const std::vector<StreamRecord>& streams() const = 0;  // by QP stream
  virtual const std::vector<QueueSample>& samples() const = 0;
  virtual const std::vector<StreamSample>& stream_samples() const = 0;
  // The configured ECN band of port d (before any drift) and the configured XOFF limit of a switch (0 without PFC).
  virtual EcnBand configured_ecn(routing::DirLink d) const = 0;
  virtual Bytes configured_xoff_limit(topology::NodeId switch_node) const = 0;
  virtual int32_t data_wire_bytes() const = 0;             // a full data packet's bytes on the wire
  virtual int64_t port_bps(routing::DirLink d) const = 0;  // the rate port d serializes at
  virtual bool marks_ecn() const = 0;                      // whether the run's congestion control marks ECN
};

// One probe: its path, when it was sent, and its round-trip time (-1: no reply).
struct ProbeRecord {
  int32_t path = 0;
  Time sent;
  Time rtt = Time(-1);
};

class ProbeSession {
 public:
  virtual ~ProbeSession() = default;
  // A probe path: the directed links out and back, each probe `wire_bytes` each way; returns its index.
  virtual int32_t add_path(const std::vector<routing::DirLink>& fwd, const std::vector<routing::DirLink>& back,
                           int32_t wire_bytes) = 0;
  virtual void add_timer(Time at, uint64_t tag) = 0;
  // Sends one probe on path i now (from a timer's callback).
  virtual void send_probe(int32_t path) = 0;
  // Runs until nothing is left; on_timer(tag) at every timer.
  virtual void run(const std::function<void(uint64_t tag)>& on_timer) = 0;
  virtual const std::vector<ProbeRecord>& probes() const = 0;
};

// A probe session on the packet engine with `net` (its silent faults apply to every packet).
std::unique_ptr<ProbeSession> make_probe_session(const topology::Topology& t, const NetworkOptions& net);

}  // namespace podnet::engine
