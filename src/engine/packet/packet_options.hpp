// Options of the packet-level engine: congestion-control presets, switch
// buffer, PFC, transport timers. The model they parameterise is stated in
// packet_sim.hpp; each preset below names the paper or repository its figures come from.
//
// Congestion-control presets (`cc`):
//   dcqcn_paper  DCQCN as in Zhu et al. (SIGCOMM 2015) and its fluid model
//                (dcqcn2.m): Kmin 5 KB, Kmax 200 KB, Pmax 1 %, g 1/256,
//                CNP interval N = 50 us, alpha interval K = 55 us, rate-decrease
//                interval 50 us, increase timer T = 55 us, byte counter
//                B = 10 MB, F = 5 fast-recovery stages, R_AI 40 Mb/s. Absolute
//                values (the paper's 40 Gb/s setting), not scaled with the link.
//                R_HAI = 10 R_AI = 400 Mb/s [assumption: the fluid model has no
//                hyper increase; the paper's text gives no figure we checked].
//                Target clamped to the current rate on every decrease (RT = RC).
//   dcqcn_nic    the HPCC repository's NIC-style ("mlx") DCQCN: alpha interval
//                1 us, rate-decrease interval 4 us, RP timer 300 us, g 1/256,
//                F = 1, no byte counter (timer stages only: stage < F fast
//                recovery, = F additive, > F hyper), R_AI = 5 Mb/s x bw/25G,
//                R_HAI = 50 Mb/s x bw/25G, Kmin/Kmax = 100/400 KB x bw/25G,
//                Pmax 0.2; minimum rate 1 Mb/s (NVIDIA rpg_min_rate); target not
//                clamped on back-to-back decreases (HPCC ClampTargetRate off).
//                CNPs at most every 4 us per QP: HPCC's model echoes ECN on every
//                ACK and lets the 4 us decrease interval pace the reaction; with
//                50 us here (the paper's N) the 1 us alpha decay leaves alpha too
//                small to drain a queue (measured: 5 MB queues at 100G).
//                [The 4 us figure is a modelling choice, not a NIC default we checked.]
//   infiniband   credit-based link-level flow control (lossless, never
//                drops, no PFC frames), no end-to-end congestion control: QPs
//                send at line rate; a port sends a data packet only while it
//                holds credits for the downstream switch's buffer.
//   none         line rate, no ECN reaction; PFC (or drops if pfc = false).
// bw is the rate of the port (ECN thresholds) or of the QP's NIC (R_AI, R_HAI).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace podnet::engine::packet {

struct DcqcnParams {
  bool enabled = false;       // false: no ECN marking, no CNPs, QPs at line rate
  double ref_bps = 0;         // > 0: Kmin, Kmax, R_AI, R_HAI scale by bw / ref_bps
  Bytes kmin = 0;             // ECN RED band on the egress queue (bytes)
  Bytes kmax = 0;
  double pmax = 0;
  double g = 1.0 / 256;       // alpha gain
  double alpha0 = 1.0;        // initial alpha
  Time cnp_interval;          // NP: at most one CNP per QP per interval
  Time alpha_interval;        // K: alpha decays by (1 - g) per interval without CNP
  Time decrease_interval;     // at most one rate decrease per interval
  Time increase_timer;        // T: rate-increase timer period
  Bytes byte_counter = 0;     // B: rate-increase byte counter (0 = none: timer stages only)
  int32_t fast_recovery = 5;  // F
  double rai_bps = 0;         // additive increase step
  double rhai_bps = 0;        // hyper increase step
  double min_rate_bps = 0;    // floor of the current rate
  bool clamp_target = true;   // RT = RC on every decrease (false: not on back-to-back decreases)
};

struct CcPreset {
  const char* name;
  const char* description;
};
const std::vector<CcPreset>& cc_presets();

struct PacketOptions {
  std::string cc = "dcqcn_nic";  // see cc_presets()
  // Lossless data class with PFC (true), or a lossy class that drops when its
  // dynamic threshold is exceeded (false). Ignored for cc = infiniband (credits).
  bool pfc = true;
  // Shared buffer of every switch: buffer_bytes if > 0, else
  // sum over its egress ports of (port rate x buffer_time) (40 us = 500 KB per
  // 100G port, the Tomahawk-class ratio of 16 MB for 32 x 100G).
  Bytes buffer_bytes = 0;
  Time buffer_time = Time(40'000'000);
  int32_t dt_shift = 3;             // dynamic threshold alpha = 2^-dt_shift of the free buffer (1/8, HPCC MMU)
  Bytes reserve_bytes = 4096;       // per ingress queue (lossless), as HPCC's MMU
  Bytes resume_offset = 3072;       // XON when shared use + offset <= threshold (HPCC: 3 KB)
  int32_t ack_every = 8;            // the receiver ACKs every n-th in-order packet (and the last)
  Time ack_delay = Time(10'000'000);  // ... and, while data arrives, at least every 10 us
  Time rto;                         // go-back-N retransmission timeout; 0 = auto (packet_sim.hpp)
  int32_t reorder_nack_packets = 64;  // per-packet routing: NACK a hole once this many packets lie beyond it
  Time util_window = Time(20'000'000);  // window of the peak-utilization measurement (20 us)
  Time sample_interval;             // > 0: sample queue depth of `sample_ports` every interval
  std::vector<int32_t> sample_ports;  // directed links to sample
  bool sample_streams = false;      // also sample every stream's delivered bytes and DCQCN rate
  int32_t window_packets = 0;       // > 0: at most this many unacknowledged packets per QP
};

// The DCQCN parameters of a preset (enabled = false for `infiniband`, `none`).
// Throws InputError listing the presets for an unknown name.
DcqcnParams dcqcn_preset(std::string_view cc);

}  // namespace podnet::engine::packet
