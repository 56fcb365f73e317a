// Options of the packet-level engine: congestion-control presets, switch
// buffer, PFC, transport timers. The model they parameterise is stated in
// packet_sim.hpp and the component headers it names.
//
// Congestion control (`cc`): the name of an algorithm in the registry of
// cc/congestion_control.hpp (dcqcn_paper, dcqcn_nic, infiniband, none;
// each model and its figures are stated in its header under cc/).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/units.hpp"

namespace podnet::topology {
struct Topology;
}

namespace podnet::engine::packet {

struct CcPreset {
  const char* name;
  const char* description;
  // The switches' ECN marking band this algorithm asks for (cc::Traits): kmin and kmax at a port of
  // ecn_ref_bps (0: the same at every port), pmax. ecn false: the algorithm reads no marks.
  bool ecn = false;
  int64_t kmin = 0, kmax = 0;
  double pmax = 0;
  double ecn_ref_bps = 0;
  // > 0: the band follows the fabric: kmin and kmax are these fractions of one round trip at ecn_ref_bps
  // (the fabric's largest unloaded NIC-to-NIC round trip); kmin and kmax above are then 0.
  double kmin_rtt = 0, kmax_rtt = 0;
  bool credits = false;  // lossless links by credits (InfiniBand's)
  bool cnp = false;      // the receiving NIC answers marks with CNPs (RoCE's DCQCN)
  bool trim = false;     // switches trim what they would drop; the NIC resends selectively (cc::Traits::trim)
  bool acks = false;     // it acts on what ACKs carry: marks, round trips or telemetry (none under unreliable delivery)
};
// The registered algorithms (cc::registry()), for `podnet list` and the scenario schema.
const std::vector<CcPreset>& cc_presets();

// How a QP delivers its packets (Ultra Ethernet's delivery modes; network.delivery):
// - Ordered (UET's ROD, RoCE's RC): the receiver takes packets in order only; one beyond a hole is
//   discarded and NACKed once, and the sender goes back to the hole (go-back-N). A sender that picks each
//   packet's entropy value (routing reps, mrc) keeps one value per QP: one path, as UET's ROD asks.
// - Unordered (UET's RUD): a reorder buffer; every packet is acknowledged with how many are held beyond
//   the first hole, and a NACK (a trim, or a hole `reorder_nack_packets` deep) resends that packet alone.
// - Unreliable (UET's UUD): no ACK, NACK, retransmission or timeout; the sender sends at its congestion
//   control's rate with no window, and a lost (or trimmed) packet is gone. A stream ends when each of its
//   packets has arrived or been lost; StreamRecord::lost counts the lost ones.
// - Auto: unordered under a congestion control that trims (cc::Traits::trim), else ordered, with a
//   reorder buffer under per-packet routing (the NIC reorders before it checks the order).
enum class Delivery : uint8_t { Auto, Ordered, Unordered, Unreliable };
// `name`: auto, ordered, unordered or unreliable (InputError naming network.delivery otherwise).
Delivery delivery_from(std::string_view name);
// What a run's QPs do, in words, for its reports ("reliable, ordered (go-back-N)", ...); `cc` a registered name,
// `per_packet`: the routing sends a QP's packets on several paths (auto then keeps a reorder buffer).
std::string delivery_name(std::string_view cc, Delivery d, bool per_packet);

struct PacketOptions {
  std::string cc = "dcqcn_nic";  // see cc_presets()
  Delivery delivery = Delivery::Auto;
  // Lossless data class with PFC (true), or a lossy class that drops when its
  // dynamic threshold is exceeded (false). Ignored for cc = infiniband (credits).
  bool pfc = true;
  // Credit-based flow control on every link, whatever the congestion control (Ultra Ethernet's CBFC;
  // InfiniBand's link credits, which cc = infiniband always has): a port sends a data packet only while it
  // holds credit for the next switch's buffer (switch_buffer.hpp), so the data class is lossless without
  // PAUSE frames and never drops; PFC is off.
  bool link_credits = false;
  // Link-level retry (Ultra Ethernet's LLR): a packet a link loses to a silent fault of that link (a drop
  // or a corruption with a probability; packet_sim.hpp §11) is resent by the link's sender, in order, and
  // never reaches the transport as a loss. The receiver discards it and every packet after it until the
  // resend arrives, one link round trip and one packet later (shift = 2 x latency + serialization); those
  // packets arrive `shift` late, and the sender's port sends nothing new meanwhile. A switch's own faults,
  // a flap while down and a dead link are still losses.
  bool link_retry = false;
  // Shared buffer of every switch: buffer_bytes if > 0, else
  // sum over its egress ports of (port rate x buffer_time) (40 us = 500 KB per
  // 100G port, the Tomahawk-class ratio of 16 MB for 32 x 100G).
  Bytes buffer_bytes = 0;
  Time buffer_time = Time(40'000'000);
  int32_t dt_shift = 3;               // dynamic threshold alpha = 2^-dt_shift of the free buffer (1/8, HPCC MMU)
  Bytes reserve_bytes = 4096;         // per ingress queue (lossless), as HPCC's MMU
  Bytes resume_offset = 3072;         // XON when shared use + offset <= threshold (HPCC: 3 KB)
  int32_t ack_every = 8;              // the receiver ACKs every n-th in-order packet (and the last)
  Time ack_delay = Time(10'000'000);  // ... and, while data arrives, at least every 10 us
  Time rto;                           // go-back-N retransmission timeout; 0 = auto (packet_sim.hpp)
  int32_t reorder_nack_packets = 64;  // per-packet routing: NACK a hole once this many packets lie beyond it (0: never)
  Time util_window = Time(20'000'000);  // window of the peak-utilization measurement (20 us)
  Time sample_interval;                 // > 0: sample queue depth of `sample_ports` every interval
  std::vector<int32_t> sample_ports;    // directed links to sample
  bool sample_all_ports = false;  // sample every directed link, each only while its queue is (or was last) non-empty
  bool sample_streams = false;    // also sample every stream's delivered bytes and DCQCN rate
  int32_t window_packets = 0;     // > 0: at most this many unacknowledged packets per QP
  // The partitioned engine (partition.hpp): the fabric cut into units run in windows on `threads` threads
  // (1..64), the same results for every count. Off: the sequential engine.
  bool partitioned = false;
  int32_t threads = 1;
  // The ECN marking band of every switch port, for an algorithm that reads marks (CcPreset::ecn); each
  // < 0: the algorithm's own (scaled with the port's rate when it says so). Given, the same at every port.
  Bytes ecn_kmin = -1, ecn_kmax = -1;
  double ecn_pmax = -1;
};

// How many units the partitioned engine cuts `topo` into (partition.hpp; 1: it does not split).
int32_t partition_unit_count(const topology::Topology& topo);

// The registered algorithm `cc` (InputError listing the names otherwise).
const CcPreset& cc_preset(std::string_view cc);

// A run's flow control in words, for its reports: "link credits" (link_credits, or a congestion control
// that holds credits itself: cc::Traits::credits), "PFC", or "none (lossy)". `cc`: a registered name.
std::string flow_control_name(std::string_view cc, bool pfc, bool link_credits);

}  // namespace podnet::engine::packet
