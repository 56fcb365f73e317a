// RCCC: Ultra Ethernet's receiver-credit congestion control (Ultra
// Ethernet Specification 1.0, June 2025: RCCC), with the constants and the
// pacing of the UEC reference simulator (htsim, uet-htsim @40ccb05:
// htsim/sim/uec.cpp, UecSrc::computePullTarget, UecSink::pull,
// UecPullPacer). Its target is last-hop incast: the receiver, which sees
// every sender, hands out its own line rate.
//
// Model (the mechanism is the NIC's, nic.hpp; this class only turns it on):
//   credit    the sender may put a data packet on the wire only while its
//             credit is above 0; the packet spends its wire bytes (the
//             credit may go below 0 by one packet).
//   speculate a QP starts with C = 1.5 x its path's BDP of credit (BDP =
//             its unloaded round trip x its line rate), before the
//             receiver has heard of it. The first pull ends speculation:
//             credit left over is dropped (C <- min(C, 0)).
//   request   every data packet (and its trimmed header) carries a pull
//             target, the cumulative credit the sender wants, in 256-byte
//             quanta: P + ceil((min(U + X, C) - c) / 256), where P is the
//             credit granted so far, U the wire bytes not yet sent, X those
//             waiting to be resent (trimmed), c its credit now; at least one
//             packet while speculating with data left. With a window
//             (nscc_rccc) U + X is also capped at the window + one packet.
//   pacer     each receiving NIC has one pacer. A QP whose target is above
//             what it was granted is active: the pacer serves the active
//             QPs round robin, 4 full packets (16 KiB of credit) each, never
//             past the target, and waits the time its line takes to carry
//             what it granted, at 0.99 of its rate (4 quanta's time when it
//             granted nothing). A QP whose target is met becomes idle; with
//             no active QP the pacer gives idle QPs speculative credit,
//             4 packets at a time, up to C beyond their target.
//   pull      a control packet (control class, the reverse path) with the
//             cumulative grant; the sender adds what is new, up to C in
//             all.
// Trimming and selective resends as for NSCC (nscc.hpp): a full queue cuts a
// packet to its header, the receiver NACKs it, the resend needs credit too.
// No ECN: htsim marks no last-hop queue under receiver credits, and nothing
// else reads marks here.
// Not modelled: the request divided among a sender NIC's queued sources
// (htsim divides it by the QPs waiting at the NIC; one sender per NIC in the
// validation traffic), htsim's slow-pull bookkeeping when an idle QP
// becomes active again (here it simply moves to the active list), the PCIe
// and oversubscription pull-rate modifiers, NSCC's skipping of window cuts
// on last-hop NACKs under nscc_rccc. A pull target is stamped per PSN
// (2,048 PSNs per QP), so a packet resent before its first copy arrived
// carries the newer target.
#pragma once

#include "engine/packet/cc/congestion_control.hpp"

namespace podnet::engine::packet::cc {

struct RcccParams {
  double pull_rate = 0.99;  // the pacer's share of the receiving line (htsim: pull_rate_modifier)
  int32_t pull_mtus = 4;    // full packets of credit per pull (htsim: UecSink::_mtus_per_pull)
  double credit_bdp = 1.5;  // speculative credit and the credit cap, in BDPs (htsim: initRccc)
};

// Receiver credits alone (htsim's -receiver_cc_only): no sender reaction beyond the credit.
class Rccc final : public CongestionControl {
 public:
  explicit Rccc(const RcccParams& p) : CongestionControl(traits_for(p)) {}
  static Traits traits_for(const RcccParams& p) {
    Traits t;
    t.trim = true;
    t.receiver_credits = true;
    t.pull_rate = p.pull_rate;
    t.pull_mtus = p.pull_mtus;
    t.credit_bdp = p.credit_bdp;
    return t;
  }
};

}  // namespace podnet::engine::packet::cc
