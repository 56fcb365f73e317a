// DCTCP (Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010; RFC 8257)
// on an RDMA NIC: a window-based reaction point, the QP paced at line rate.
//
// Switch: step marking on the instantaneous egress queue: a data packet is
// marked when the queue it leaves behind exceeds K (Kmin = Kmax = K, Pmax = 1;
// at dequeue, as every algorithm here). K = 65 packets of 1,500 B = 97.5 KB
// at 10 Gb/s (the paper's 10 Gb/s setting; Linux Documentation/networking/
// dctcp.txt: "20 packets (30KB) at 1Gbps, and 65 packets (~100KB) at
// 10Gbps"), scaled with the port rate [assumption: the paper gives K for 1 and
// 10 Gb/s only; K grows with C x RTT, so linearly in C at a fixed RTT].
// Receiver: every ACK/NACK echoes the number of marked data packets that
// arrived since the previous one (DCTCP's ECN-Echo, counted instead of a bit
// per ACK; saturates at 255).
// Sender: a congestion window W in packets (the QP may have at most floor(W)
// unacknowledged), starting at 10 (IW10, RFC 6928) in slow start.
//   per ACK of a new packets:   W <- W + a        (slow start)
//                               W <- W + a / W    (congestion avoidance: +1 per RTT; RFC 5681)
//   per observation window (one RTT: it ends when the ACKs pass the PSN that
//   was next to send when it began, RFC 8257's DCTCP.WindowEnd; the first
//   ends at the first ACK):
//     F     = marked / acknowledged packets in the window (<= 1)
//     alpha <- (1 - g) alpha + g F                 g = 1/16 (paper §3.1)
//     if F > 0:  W <- max(2, W (1 - alpha / 2)), slow start ends
// alpha starts at 1 (RFC 8257 §3.3's conservative initial value). W is capped
// at 2^20 packets (a QP that never sees a mark).
// Not modelled: the CWR state's gradual reduction (the cut is applied at once,
// at the window's end), delayed-ACK details beyond the NIC's ACK cadence,
// timeouts' effect on W (go-back-N resends within the current window).
// Expected behaviour (paper §3.3): N long flows through one port keep its
// queue oscillating around K, with a peak of about K + N packets and an
// amplitude of about (1/2) sqrt(2 N (C x RTT + K)) packets, never empty.
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct DctcpParams {
  double ref_bps = 10e9;       // K scales with port rate / ref_bps
  Bytes k = 97'500;            // marking threshold at ref_bps
  double g = 1.0 / 16;         // alpha gain
  double alpha0 = 1.0;         // initial alpha
  double initial_window = 10;  // packets
};

class Dctcp final : public CongestionControl {
 public:
  explicit Dctcp(const DctcpParams& p);
  const DctcpParams& params() const { return p_; }

  void init(Flow& f, double line) const override;
  Reaction on_feedback(Flow& f, int64_t now, const Feedback& fb) const override;

 private:
  DctcpParams p_;
};

}  // namespace podnet::engine::packet::cc
