// Telemetry: the counters and time series of the runs of one study, as an
// operator would scrape them from NICs and switches.
//
// A Recorder is handed to the engines through NetworkOptions::observers.observe
// (instrument()); at the end of every run an engine passes what it measured
// (engine/backend.hpp: RunObservation) and the Recorder folds it in:
// - packet engine, per directed link (the egress port at its source and the
//   ingress at its far end; engine/packet/packet_sim.hpp §3 and PortStats):
//   packets and bytes sent and received, data payload, drops by cause
//   (buffer admission; a failed link), ECN marks, CNPs sent, PAUSE frames
//   sent (by the far end, about this link) and received (by this port), time
//   paused, retransmissions (at the source NIC's port), out-of-order arrivals
//   (at the destination's last link), queue depth max, mean and p99;
//   per QP: flow completion time (FCT = finish - start, which includes the
//   transfer's latency), retransmissions, out-of-order arrivals, CNPs, and
//   with a sample interval its rate and delivered bytes over time; with a
//   sample interval, every port's queue depth over time.
// - flow engine, per directed link: payload utilization over time, a step
//   function (load / capacity from each change on), and bytes carried.
//
// Several runs (a bench's sizes, a training iteration's collectives) add up:
// counters and times are sums over runs, max queue is the max, p99 is the
// largest per-run p99 (a p99 over runs of different lengths would weight
// them by length; the largest says the worst run), the mean queue is the sum
// of the time integrals over the sum of the run lengths. Time series keep
// their run's index (`run`, from 0) and times from that run's start.
//
// Derived figures:
//   mean queue depth   = (integral of q dt) / T               (T: run length)
//   p99 queue depth    = depth::quantile(hist, T, 0.99)       (engine/depth_histogram.hpp)
//   paused share       = paused time / T
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "engine/backend.hpp"
#include "engine/options.hpp"
#include "topology/topology.hpp"

namespace podnet::telemetry {

struct PortCounters {
  int32_t link = 0;  // routing::DirLink
  uint64_t tx_packets = 0, rx_packets = 0, data_packets = 0;
  double tx_bytes = 0, rx_bytes = 0, payload_bytes = 0;
  uint64_t drops_buffer = 0, drops_link = 0;
  uint64_t drops_silent = 0;  // packets lost to a silent fault (a lossy link, or the switch it enters)
  uint64_t trims = 0;         // data packets cut to their header here (packet trimming)
  uint64_t ecn_marks = 0, cnp_packets = 0;
  uint64_t pause_tx = 0, pause_rx = 0;
  double paused_s = 0;
  uint64_t retransmits = 0, out_of_order = 0;
  int64_t queue_max_bytes = 0;
  double queue_byte_s = 0;  // integral of the queue over time (byte x s)
  int64_t queue_p99_bytes = 0;
  double peak_utilization = 0;
  // For threshold-drift detection (diagnose/threshold_drift.hpp): time at each queue depth (seconds per
  // depth_histogram.hpp bucket, summed over runs), the configured ECN band, the ingress's peak
  // shared-buffer bytes (SONiC's priority-group shared watermark) and the configured XOFF limit of the
  // switch it enters, the port's rate.
  std::vector<double> queue_hist_s;
  int64_t ecn_kmin = 0, ecn_kmax = 0;
  double ecn_pmax = 0;
  int64_t pg_shared_max = 0, xoff_limit = 0;
  double bps = 0;
};

// A port's drops of every cause: its full buffer, its link down, a silent fault.
inline uint64_t drops(const PortCounters& c) { return c.drops_buffer + c.drops_link + c.drops_silent; }

struct QpRecord {
  int32_t run = 0, qp = 0;
  int32_t src = 0, dst = 0;  // GPU ranks
  Bytes bytes = 0;
  double start_s = 0, first_send_s = 0, finish_s = 0;
  uint32_t retransmits = 0, out_of_order = 0, cnps = 0;
  uint32_t timeouts = 0, trims = 0;  // the sender's retransmission timeouts; its packets trimmed (NACKed)
  uint32_t lost = 0;                 // unreliable delivery: its packets lost and never resent
  Bytes lost_bytes = 0;              // ... their payload (bytes - lost_bytes arrived)
  double final_rate_bps = 0;
  double fct_s() const { return finish_s - start_s; }
};

struct QueuePoint {
  int32_t run = 0;
  double t_s = 0;
  int32_t link = 0;
  int64_t bytes = 0;
};
struct RatePoint {
  int32_t run = 0;
  double t_s = 0;
  int32_t qp = 0;
  double rate_bps = 0;
  int64_t delivered = 0;
  uint32_t window = 0;  // packets in flight a window-based congestion control allows (0: rate-based)
};
struct UtilStep {
  int32_t run = 0;
  double t_s = 0;
  int32_t link = 0;
  double utilization = 0;
};

struct Options {
  // > 0: sample every port's queue depth and every QP's rate at this
  // interval (packet engine; costs one event per interval and one row per
  // port and QP). 0: counters only.
  Time sample_interval;
};

class Recorder {
 public:
  Recorder(const topology::Topology& topo, Options options = {});

  // `base` with observe set to this recorder (and the packet engine's
  // sampling when options.sample_interval > 0). The recorder must outlive
  // every backend made from the result.
  engine::NetworkOptions instrument(engine::NetworkOptions base);
  void observe(const engine::RunObservation& o);

  const topology::Topology& topology() const { return topo_; }
  int32_t runs() const { return runs_; }
  std::string engine() const { return engine_; }
  double observed_s() const { return observed_s_; }  // sum of the run lengths
  bool packet_level() const { return packet_; }
  int32_t data_wire_bytes() const { return data_wire_; }  // a full data packet (packet engine runs)

  // Per directed link, indexed by routing::DirLink (packet engine runs).
  const std::vector<PortCounters>& ports() const { return ports_; }
  const std::vector<QpRecord>& qps() const { return qps_; }
  const std::vector<QueuePoint>& queue_series() const { return queue_; }
  const std::vector<RatePoint>& rate_series() const { return rates_; }
  const std::vector<UtilStep>& util_series() const { return util_; }
  // Flow engine: bytes carried and mean utilization per directed link (summed over runs / over the observed time).
  const std::vector<double>& link_bytes() const { return link_bytes_; }
  const std::vector<double>& link_capacity_bps() const { return link_cap_; }

  // Whether any of the counters an operator alarms on is non-zero: drops,
  // ECN marks, CNPs, PAUSE frames, retransmissions, out-of-order arrivals.
  bool any_events() const;

 private:
  void observe_packet(const engine::RunObservation& o);
  void observe_flow(const engine::RunObservation& o);

  const topology::Topology& topo_;
  Options options_;
  int32_t runs_ = 0;
  std::string engine_;
  bool packet_ = false;
  int32_t data_wire_ = 0;
  double observed_s_ = 0;
  std::vector<PortCounters> ports_;
  std::vector<QpRecord> qps_;
  std::vector<QueuePoint> queue_;
  std::vector<RatePoint> rates_;
  std::vector<UtilStep> util_;
  std::vector<double> link_bytes_, link_cap_;
};

}  // namespace podnet::telemetry
