// Drifted PFC/ECN thresholds found from port telemetry: a switch whose ECN
// marking band or PFC XOFF threshold is not the fabric's configuration (a
// config push that missed one switch, a default left after an upgrade).
// Such a switch raises no alarm; it marks or pauses at another queue depth
// than its peers, which shifts congestion onto or away from it.
//
// Input per directed link (telemetry/recorder.hpp, PortCounters): ECN marks
// of its egress port and the time its data queue spent at each depth
// (engine/depth_histogram.hpp buckets); the configured marking band
// (Kmin, Kmax, Pmax) of that port; the peak shared-buffer bytes the switch
// held for its ingress (a port entering a switch; SONiC's priority-group
// shared watermark) and the configured XOFF limit alpha x F of that switch
// (F = buffer - headroom - reserves, engine/packet/switch_buffer.hpp).
//
// ECN. Under the configured band a packet leaving with q bytes queued is
// marked with p(q) = 0 (q <= Kmin), Pmax (q - Kmin) / (Kmax - Kmin)
// (Kmin < q <= Kmax), 1 (q > Kmax) (engine/packet/port.hpp). A busy port
// dequeues back to back, so while its queue holds depth q for time tau it
// sends about tau C / (8 w) packets (C its rate, w a full data packet on the
// wire): the expected marks are
//   E = sum over depth buckets b of tau_b C / (8 w) p(q_b),
// bracketed by E_lo (q_b the bucket's floor) and E_hi (the next bucket's
// floor; buckets are 1/8 octave wide). The port's marks M are Poisson-like
// around E; a port is out of band when
//   M > 2 E_hi + 3 sqrt(E_hi) + min_marks      (marks earlier: Kmin lowered), or
//   E_lo >= min_marks and M < (E_lo - 3 sqrt(E_lo)) / 2   (marks later: raised).
// The factor 2 absorbs what the estimate leaves out (packets shorter than w,
// control frames between them). A port paused by PFC for more than 1 % of
// the observed time is left out (its queue sits without dequeuing, which
// the estimate would count as packets sent). A port with no queue tells
// nothing: a drifted switch is seen only where queues build.
// PFC. Under the configured dynamic threshold T = alpha (F - S) <= alpha F
// (S the shared bytes in use), an ingress's shared bytes never exceed T:
// bytes beyond it go to headroom and trigger XOFF. A shared watermark above
// alpha F + one packet is impossible under the configuration: the switch
// pauses later (at a greater depth) than configured. With n ingresses
// congested together each settles at alpha' F / (1 + n alpha'), which passes
// alpha F only for n < 1/alpha - 1/alpha': a raised alpha is seen while few
// ingresses congest at once (alpha 1/8 -> 1/2: up to 5). A threshold lowered
// below the configuration is not detected this way (a low watermark is also
// what a lightly loaded ingress shows).
// A switch is reported when at least one of its ports is out of band, with
// every such port, the observed and the expected figure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace podnet::diagnose {

struct PortThresholds {
  // egress (the link leaves a switch): ECN
  uint64_t ecn_marks = 0;
  std::vector<double> queue_hist_s;  // seconds at each depth bucket (depth_histogram.hpp)
  double bps = 0;                    // the port's rate
  int64_t kmin = 0, kmax = 0;        // configured band (bytes); kmax <= 0: no ECN configured
  double pmax = 0;
  double paused_s = 0;  // time the port was paused (PFC)
  // ingress (the link enters a switch): PFC
  int64_t pg_shared_max = 0;  // peak shared-buffer bytes held for this ingress
  int64_t xoff_limit = 0;     // configured alpha x F of the switch entered; 0: no PFC
};

struct DriftOptions {
  double min_marks = 10;
  double max_paused_share = 0.01;  // ECN test only on ports paused less than this share of the observed time
};

struct DriftedPort {
  int32_t link = 0;                                       // routing::DirLink
  std::string what;                                       // "ecn_early" | "ecn_late" | "xoff_high"
  double observed = 0, expected_lo = 0, expected_hi = 0;  // marks; or the watermark and the limit (bytes)
};

struct ThresholdDrift {
  topology::NodeId node = topology::kNone;  // the switch
  std::vector<DriftedPort> ports;
};

// `wire_bytes`: a full data packet on the wire (MTU + headers); `observed_s`: the runs' total length.
std::vector<ThresholdDrift> find_threshold_drifts(const topology::Topology& t, const std::vector<PortThresholds>& ports,
                                                  int64_t wire_bytes, double observed_s, const DriftOptions& o = {});

// The expected ECN marks of one port under its configured band (above): {E_lo, E_hi}.
std::pair<double, double> expected_marks(const PortThresholds& p, int64_t wire_bytes);

}  // namespace podnet::diagnose
