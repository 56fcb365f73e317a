// PacketSim: the packet-level network model behind the `packet` engine.
//
// Every directed link d (routing/route.hpp) is an egress port at its source
// node; a packet moves port to port in store-and-forward. Times are integer
// picoseconds; events are processed in (time, sequence) order (the same
// total order as core/event_queue.hpp, kept by a time wheel: event_wheel.hpp),
// dispatched by a switch over event kinds. A packet is 20 bytes of plain
// data: on a wire it rides inside its arrival event, in a queue it sits by
// value in the port's ring buffer, so nothing is allocated per packet once
// the rings and the wheel have grown. Per hop an idle port costs one event
// (the arrival); a busy one also a wake-up when it frees. Everything random
// (ECN marking) draws from one seeded stream (partitioned: one per port), so a
// run is a pure function of its inputs.
//
// The engine is built of components, each owning its state and stating its
// model in its header; the simulation core (packet_sim.cpp) owns the event
// loop and moves packets between them (they never call each other back):
//   port.hpp           §1 links and ports: serialization, the three classes
//                      and their scheduler, ECN marking (§4), PFC state, telemetry
//   switch_buffer.hpp  §2 shared buffer, dynamic threshold, lossless headroom,
//                      PFC decisions; InfiniBand credits
//   nic.hpp            §5 QPs: pacing, go-back-N, ACK/NACK, reorder buffer
//   cc/                §6 congestion control behind one interface and a
//                      registry (cc/congestion_control.hpp): DCQCN
//                      (cc/dcqcn.hpp), line rate with credits or PFC
//                      (cc/line_rate.hpp)
//   lane.hpp           a thread's event queue, counters and clock
//   partition.hpp      the partitioned engine (PacketOptions::partitioned):
//                      the fabric cut into units run on several threads in
//                      windows, keyed event order, the same results on every
//                      thread count
//
// 1. Links and ports (port.hpp). A packet of w wire bytes leaves port d in
//   8 w / C_d and arrives after the link's latency (plus the switch latency
//   when it enters a switch). Control packets (ACK, NACK, CNP) are
//   max(84, header + 4) bytes. Each port has three FIFO classes: control
//   (strict priority), the lossless data class and a lossy one; transit data
//   and the node's own QPs share a port round-robin.
//
// 2. Switch buffer (switch_buffer.hpp; HPCC's switch MMU): B bytes shared,
//   per-ingress reserve and headroom, dynamic threshold T = free >> 3, XOFF
//   and XON decisions, lossy drops past the threshold.
//
// 3. PFC. A PAUSE frame about ingress i leaves on the reverse direction
//   after the frame being sent there (if any), takes ser(84 B) + L to arrive,
//   then the upstream port stops starting data frames of the class (the one
//   on the wire completes). Pause time = 65535 quanta x 512 bit / C (0.335 ms
//   at 100G); while congested the switch refreshes the PAUSE every half pause
//   time; XON (zero quanta) resumes at once. Counters per port: PAUSE frames
//   sent (by the receiving end of d, about d) and received (by d's egress),
//   time paused. A PFC storm (NetworkOptions::faults.pause_storms, failures.hpp):
//   the NIC at the receiving end of d sends a PAUSE about d every half pause
//   time over [start, end), each one timed as a switch's, then an XON; no
//   deadlock is declared before the last storm ends.
//   Telemetry beyond these (PortStats): packets and bytes received at the far
//   end, CNPs sent, retransmissions (at the source NIC's port), out-of-order
//   arrivals (at the destination's last link), drops by buffer admission
//   (`drops`) and by failed links (`lost`), and the time spent at each queue
//   depth (depth_histogram.hpp).
//
// 4. ECN (port.hpp): marking at dequeue on a switch's egress queue with the
//   RED band of the congestion control in force (cc::Traits).
//   Trimming (cc::Traits::trim, Ultra Ethernet): a lossy data packet the
//   buffer would drop is cut to a control-sized header (max(84, header + 4)
//   bytes) and queued in the control class of the same egress port; it
//   follows the data path to the receiver, which NACKs its PSN (nic.hpp).
//   Counted per port (PortStats::trims) and in total (SimStats::trims).
//
// 5. RoCEv2 NIC (nic.hpp): QPs of ceil(S / MTU) packets (a sliced QP,
//   StreamSpec::slices: every slice its own whole packets, sent only once
//   released; the last packet released asks for an ACK), paced at the rate
//   their congestion control sets, go-back-N with NACKs and an RTO, ACKs
//   every `ack_every` packets or `ack_delay`, a reorder buffer for
//   per-packet routing. RTO (default) = 1 ms + 2 x the largest switch's
//   buffer drain time B / (mean port rate), so queueing never triggers it;
//   on a torus, whose chips queue without bound (section 9), the RDMA
//   transport's ACK timeout under NCCL's default NCCL_IB_TIMEOUT = 20,
//   4.096 us x 2^20 = 4.295 s.
//
// 6. Congestion control (cc/): the algorithm named by PacketOptions::cc,
//   called by the NIC at congestion events (CNP, ACK feedback, its timer,
//   bytes sent) through one interface; the ports read its marking band.
//
// 7. Routing. A QP's path is routing::Router::route(src, dst, entropy = QP)
//   with the configured policy (ECMP hashes the RoCEv2 5-tuple; valiant,
//   ugal, dimension_order as the Router defines them). `adaptive` and
//   `spray` are per packet: the QP's ECMP path fixes the endpoints; at every
//   network node a data packet takes one of the equal-cost next hops toward
//   the destination's switch (next_hops.hpp): adaptive the one with the
//   fewest data bytes queued (plus the rest of the frame being sent; ties
//   round-robin), spray round-robin: every switch keeps a counter per
//   destination (a 65,536-entry table indexed by a hash of (switch,
//   destination switch); colliding pairs share a counter), so the packets
//   toward each destination split evenly over each equal-cost set. `reps`
//   is per packet too, chosen by the sender: every data packet carries an
//   entropy value (reps.hpp) and a switch takes the next hop that value
//   hashes to with its own seed, so one value names one path.
//   Control packets return along the reversed ECMP path. The source's own
//   first hop is the QP's (on a fat-tree the NIC has one uplink; on a torus,
//   where the source chip has several equal-cost first hops, per-packet
//   choices start at the next chip). A multi-plane NIC (topology/planes.hpp)
//   under a per-packet policy has one schedule for its ports into every
//   plane: a QP is paced at their sum, and each packet leaves on whichever
//   port is free when it is due (the next one in port order when several
//   are), then follows the policy toward the destination NIC's switch in
//   that plane. So one QP spreads over every plane and a dead port simply
//   sends nothing. Under routing `mrc` the packet's entropy value names its
//   plane (mrc_paths.hpp): it waits at that port if another is the free one.
//   A control packet answering a data packet leaves on the plane the data
//   came in on and goes back toward the source NIC's switch in that plane.
//   Under per-flow policies a QP stays on its ECMP plane.
//
// 8. In-server links. The links before the first network (Copper/Optical)
//   link of a route (GPU -> PCIe -> NIC, PXN's NVLink hop) are a fixed delay
//   (their latency) before the QP may send: the NIC reads GPU memory as it
//   sends, so they are assumed not to be the bottleneck; the links after the
//   last network link add their latency and one packet's serialization to
//   the completion. Routes without a network link (NVLink inside a domain,
//   GPUs sharing a NIC over PCIe) are simulated packet by packet like the
//   network, with non-switch nodes forwarding without a buffer limit, and
//   without congestion control: the fabric's algorithm (network.cc) runs on
//   the NICs' RDMA QPs, not on NVLink or PCIe copies, so such a QP sends at
//   its first link's rate with no window, credit or rate reaction.
//
// 9. Deadlock. A single lossless class can deadlock when buffer
//   dependencies form a cycle (PFC on rings of switches). If no data packet
//   moves for max(10 ms, 4 RTO) while ports are paused and streams wait, the
//   run stops with an Error naming the situation instead of spinning.
//   Torus chips (GPUs that route) forward with an unlimited buffer and send
//   no PAUSE/credits (real chip-to-chip fabrics break the wraparound cycles
//   with virtual channels, which this model does not have); ECN marking
//   applies at them as at switches.
//
// 10. Failures (failures.hpp, FailureOptions: the events, repair delays and
//   job-failure rules of the flow engine; packet_backend.cpp schedules them).
//   Degrade: both directions serialize at the new rate from then on (a frame
//   being sent finishes at the old one); the payload capacity reported and
//   used for utilization follows. ECN thresholds, PFC headroom and pause
//   time keep their nominal-rate values.
//   Down: both directions die at once. The packets queued at the two ports
//   are lost (their buffer is released, IB credits return), and so are the
//   frame being sent and the packets on the wire: every arrival until
//   max(now, end of that frame) + latency is discarded. The ports send
//   nothing more; a packet sent to them (data or control) is lost. Lost
//   packets are counted per port (PortStats::lost) and in total
//   (SimStats::lost, lost_ctrl) and recovered by the senders' go-back-N
//   (NACK on a lossy class, else the RTO): nothing refills them. Until a
//   direction is repaired, per-packet policies still choose it (adaptive
//   sees an idle port), so its share of the packets is lost.
//   Repair, per direction after local_repair or convergence (failures.hpp):
//   the Router and the next-hop tables forget that direction,
//   and every unfinished QP using a repaired direction is re-routed with its
//   entropy; its state (PSNs, rate, reorder buffer) carries over. A QP uses
//   a direction if its data path crosses it (the flow engine's rule); with
//   per-packet policies, whose data follows the tables, either direction of
//   a link on its path (the path carries its control packets back).
//   Packets sent before a re-route keep the path they left on (a QP keeps
//   its previous path: a packet follows the one whose link at its position
//   it arrived on); a packet of an older path is lost. A packet that the
//   live tables can no longer bring to its target uses the whole graph (it
//   is already on its way, e.g. over a drained link).
//   Up: the ports send again at once at the nominal rate; the link rejoins
//   routing after local_repair (QPs are not moved back).
//   Drain: routing forgets the links and the QPs move at once; the links
//   still forward what was queued at or on its way to them, so nothing is
//   lost, and nothing new is routed over them.
//   Once a link has died and the job's last transfer has finished, the run
//   stops there (only retransmissions and ACKs are left). Cost: a sender
//   whose path is dead keeps sending into it (go-back-N at every RTO) until
//   the repair, so a convergence of seconds is simulated packet by packet.
//
// 11. Silent faults and probes (NetworkOptions::faults.silent_faults, failures.hpp;
//   used by diagnose/packet_probe.hpp). A packet arriving over directed
//   link d, or entering a switch x, while a silent fault on d or x is active
//   is lost with the fault's probability (one draw per fault from the
//   stream "packet.faults" of the routing seed; a flap loses every packet
//   while down), before the node sees it: no buffer, no counter of the
//   device (PortStats::silent is the ground truth). A latency fault on d or
//   on the switch d enters delays the arrival by its latency, from when the
//   packet is sent. Probes: a probe path is a forward and a return list of
//   directed links between two NICs (routing::Router::route_endpoints with
//   the probe's UDP source port). send_probe() puts one probe packet of the
//   path's wire size in the control class of its first link (strict
//   priority, never paused or dropped by a buffer: probes do not disturb
//   the data and see only the frames being sent ahead of them); each hop
//   forwards it like a control packet; the far NIC answers at once with a
//   reply of the same size on the return links; the reply's arrival gives
//   the round-trip time. A probe lost on the way (a silent fault, a dead
//   link) has no reply: its RTT stays -1. Probes are never retransmitted.
//
// 12. Drifted thresholds (NetworkOptions::faults.threshold_drifts, failures.hpp):
//   every egress port of a drifted switch marks ECN with the drift's band
//   (Kmin, Kmax in bytes, not scaled with the port rate; Pmax) where given,
//   and the switch's buffer uses alpha = 2^-dt_shift in its dynamic
//   threshold (§2) where given; the rest of the fabric keeps the
//   configuration. Telemetry for finding them (diagnose/threshold_drift.hpp):
//   PortStats::pg_shared_max, the peak shared-buffer bytes held for an
//   ingress (SONiC's priority-group shared watermark), and the configured
//   band and XOFF limit (configured_ecn, configured_xoff_limit).
//
// Limitations: one data priority in use per run; no cut-through; PFC only
// at switches (not NICs, NVSwitches or torus chips; a NIC sends PAUSE only in
// a PFC storm); no virtual channels;
// control packets are lost only to failed links (never to buffers); a QP's
// control packets return along its path reversed.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "core/event_queue.hpp"
#include "core/rng.hpp"
#include "core/units.hpp"
#include "engine/options.hpp"
#include "engine/packet/next_hops.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/packet_view.hpp"
#include "engine/plan_compiler.hpp"
#include "routing/router.hpp"
#include "topology/topology.hpp"

namespace podnet::engine::packet {

namespace cc {
class CongestionControl;
}
struct Partition;

struct StreamSpec {
  int32_t src = 0;  // GPU ranks
  int32_t dst = 0;
  Bytes bytes = 0;
  uint64_t entropy = 0;  // QP index: the UDP source port (ECMP)
  Time start;            // when its transfer starts
  // Latency the stream pays in total (its transfer's latency_steps x hop
  // latency, as plan_compiler.hpp). The part the packets do not experience
  // physically (propagation, switch latency) is waited before sending.
  Time latency;
  uint64_t tag = 0;
  // Slice pipeline (packet_backend.hpp). slices > 0: the bytes are that many
  // messages (slices) of equal size (the first bytes % slices one byte
  // longer; at most one a byte), each its own packets (the last one of a
  // slice short), and the sender may send only the first `send_slices` of
  // them (-1: all) until release_slices() raises it.
  int64_t slices = 0;
  int64_t send_slices = -1;
  // > 0: the QP sends at most this many payload bits per second (plan::Transfer::max_rate_bps, its share):
  // a packet of w payload bytes is followed by a gap of at least 8 w / max_rate, whatever its congestion
  // control allows.
  double max_rate_bps = 0;
};

struct SimStats {
  uint64_t events = 0;
  uint64_t data_sent = 0;       // data packets put on the wire by senders (incl. retransmissions)
  uint64_t data_delivered = 0;  // unique data packets delivered in order
  uint64_t retransmits = 0;
  uint64_t drops = 0;
  uint64_t trims = 0;           // data packets cut to their header by a full queue (cc::Traits::trim)
  uint64_t trims_received = 0;  // trimmed headers that reached their receiver
  uint64_t trim_nacks = 0;      // NACKs for trimmed packets that reached their sender
  uint64_t pulls = 0;           // receiver credit grants that reached their sender (cc/rccc.hpp)
  uint64_t link_retries = 0;    // packets a faulty link lost and resent (PacketOptions::link_retry)
  uint64_t lost = 0;            // data packets lost to failed links (§10)
  uint64_t lost_ctrl = 0;       // control packets lost to failed links
  uint64_t silent = 0;          // packets (any type) lost to silent faults (§11)
  uint64_t probes_sent = 0, probe_replies = 0;
  uint64_t rerouted = 0;  // QP re-routes (§10)
  uint64_t ecn_marks = 0;
  uint64_t cnps = 0;
  uint64_t acks = 0;
  uint64_t nacks = 0;
  uint64_t timeouts = 0;
  uint64_t pause_frames = 0;
  uint32_t max_reorder_packets = 0;  // largest reorder buffer (packets held beyond a hole)
  Time max_reorder_delay;
  double mean_reorder_delay_ps = 0;
  uint64_t reorder_events = 0;  // holes that were filled with packets held behind them
  uint64_t peak_packets = 0;    // peak packets queued in ports at one time (those on wires ride in events;
                                // partitioned: the sum of every unit's own peak)
  // Partitioned engine (partition.hpp): events a callback scheduled before the window the threads had run,
  // moved to its end, and the time they were moved by.
  uint64_t clamped = 0;
  Time clamped_time;
  int32_t units = 0;     // partitioned: the units the fabric was cut into (0: sequential)
  Time lookahead;        // and the smallest latency of a cut link (the windows' length)
  uint64_t windows = 0;  // and the windows run
};

struct SimEvent {
  uint64_t tag = 0;
  Time at;
  bool timer = false;     // an add_timer() firing (else a stream completion or progress)
  bool progress = false;  // a watch() of `stream` reached (the stream is not complete)
  int32_t stream = -1;
};

class PacketSim final : public PacketView {
 public:
  PacketSim(const topology::Topology& topo, const NetworkOptions& net, const PacketOptions& opt);
  ~PacketSim() override;
  PacketSim(const PacketSim&) = delete;
  PacketSim& operator=(const PacketSim&) = delete;

  // The route a stream between two ranks takes (the QP's path; the base ECMP
  // path for per-packet policies) and its one-step latency (PlanCompiler's).
  void route(int32_t src, int32_t dst, uint64_t entropy, std::vector<routing::PathPart>& out);
  // The same route, looked up without adding load (a load-tracking router
  // such as UGAL books a stream's route until it is done).
  void peek_route(int32_t src, int32_t dst, uint64_t entropy, std::vector<routing::PathPart>& out);
  Time hop_latency(const std::vector<routing::PathPart>& route) const;
  // The part of it a packet takes physically on the route: every link's
  // latency and every switch's (no stack latency, no serialization).
  Time physical_latency(const std::vector<routing::PathPart>& route) const;
  // The in-server links before the first network link (GPU -> NIC): a
  // stream waits their latency once, when it starts, not per slice (0
  // without a network link).
  Time prefix_latency(const std::vector<routing::PathPart>& route) const;
  // A directed link's rate, bits per second.
  int64_t link_bps(routing::DirLink link) const;

  // Adds a stream (one QP) on `route` (from route()); returns its index.
  int32_t add_stream(const StreamSpec& s, const std::vector<routing::PathPart>& route);
  // A callback at time `at` (compute delays of the plan).
  void add_timer(Time at, uint64_t tag);
  // Slice pipeline of a sliced stream (StreamSpec::slices, packet_backend.hpp).
  // Raises what stream s may send to its first `slices` slices (never
  // lowered). Slices of s delivered in order so far (int64 max once
  // complete, whatever it was cut into). A
  // progress event (SimEvent::progress) once its first `slices` slices are
  // delivered in order, after the in-server links as a completion; one
  // watch at a time per stream, none fires at completion. The packet that
  // ends the sender's limit asks for an ACK (as the last packet of an RDMA
  // write does).
  void release_slices(int32_t s, int64_t slices);
  int64_t delivered_slices(int32_t s) const;
  void watch_slices(int32_t s, int64_t slices);

  // ---- probes (§11). A probe path between two NICs: the forward and return
  // directed links, each probe `wire_bytes` on the wire; returns its index.
  int32_t add_probe_path(const std::vector<routing::DirLink>& fwd, const std::vector<routing::DirLink>& back,
                         int32_t wire_bytes);
  // Sends one probe on path i now (call from a timer's callback); returns its id (an index into probes()).
  uint32_t send_probe(int32_t path);
  const std::vector<ProbeRecord>& probes() const;

  // Runs until no event is left, calling `on_event` for every stream
  // completion and timer, in time order; it may add streams and timers.
  void run(const std::function<void(const SimEvent&)>& on_event);
  // Runs the events at or before `limit`, then sets now() = limit (failure
  // actions happen between calls); run() finishes the run.
  void run_until(Time limit, const std::function<void(const SimEvent&)>& on_event);
  // No further event is processed (the job is over or has failed); run()
  // only closes the telemetry.
  void stop();

  // ---- failures (§10): both directions of link l, from now on.
  // New serialization rate (and payload capacity).
  void set_link_rate(topology::LinkId l, Bandwidth rate);
  // Dead: the packets queued at its two ports and those on its wires are
  // lost, the ports send nothing and packets sent to them are lost. Alive
  // again: the ports resume.
  void set_link_dead(topology::LinkId l, bool dead);
  // Routing (the Router and the per-packet next hops) forgets / relearns one
  // direction of a link.
  void set_route_dir_up(routing::DirLink d, bool up);
  // Re-routes every unfinished QP that uses one of `dirs` (§10) on the
  // routing now in force, with its entropy; returns how many. Throws Error
  // (from the Router) when one has no path left.
  int64_t reroute(const std::vector<routing::DirLink>& dirs);
  // Whether stream s still has bytes to deliver, and its route now.
  bool stream_open(int32_t s) const;
  void stream_route(int32_t s, std::vector<routing::DirLink>& out) const;

  Time now() const override;
  const SimStats& stats() const;
  const std::vector<PortStats>& port_stats() const override;
  const std::vector<StreamRecord>& streams() const override;
  const std::vector<QueueSample>& samples() const override;
  const std::vector<StreamSample>& stream_samples() const override;
  // Payload bytes per directed link, including the in-server links modelled as delays.
  std::vector<double> link_payload_bytes() const;
  // Payload capacity in force (a Degrade changes it).
  double payload_capacity_bps(routing::DirLink d) const;
  Time rto() const;
  // The configured ECN band of port d (before any drift, §12) and the
  // configured XOFF limit of switch n (switch_buffer.hpp: xoff_limit; 0
  // without PFC); a full data packet's wire bytes.
  EcnBand configured_ecn(routing::DirLink d) const override;
  Bytes configured_xoff_limit(topology::NodeId switch_node) const override;
  int32_t data_wire_bytes() const override;
  int64_t port_bps(routing::DirLink d) const override;  // the rate port d serializes at
  // Buffer and lossless headroom the model gives a switch node / an ingress link.
  Bytes buffer_of(topology::NodeId switch_node) const;
  Bytes headroom_of(routing::DirLink ingress) const;
  // The congestion-control algorithm of the run (cc/congestion_control.hpp).
  const cc::CongestionControl& congestion_control() const;
  bool marks_ecn() const override;
  // Streams not yet delivered (0 after run() unless something is stuck).
  int64_t open_streams() const;
  // A partitioned run's units and what each ran (partition.hpp); null for the sequential engine.
  const Partition* partition() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> m_;
};

}  // namespace podnet::engine::packet
