// The plain data the packet engine's components share: a packet (20 bytes,
// carried by value), its encoding in an event, a FIFO ring of packets, the
// event kinds and traffic classes. No behaviour beyond storage lives here.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/packet/event_wheel.hpp"

namespace podnet::engine::packet {

constexpr uint32_t kNil = 0xFFFFFFFFu;
constexpr int64_t kPsPerS = 1'000'000'000'000;

enum EventKind : uint32_t {
  kArrive,
  kKick,
  kPause,
  kPauseRefresh,
  kCredit,
  kQpStart,
  kRto,
  kCcTimer,
  kDone,
  kTimer,
  kSample,
  kProgress,  // a watched byte of a stream delivered (packet_sim.hpp: watch)
  kStorm,
  kPullPace  // a receiving NIC's credit pacer may grant again (cc/rccc.hpp)
};
enum Cls : uint8_t { kCtrl = 0, kLossless = 1, kLossy = 2 };
// kProbe / kProbeReply: an RDMA-ping probe and its answer (packet_sim.hpp §11;
// qp = the probe path, psn = the probe's id). kTrim: a data packet a full
// switch queue cut to its header (cc::Traits::trim); it follows the data path
// in the control class. kTrimNack: the receiver's answer to it, asking for
// that PSN again (psn = the trimmed PSN). kPull: a receiver's credit grant
// (cc/rccc.hpp; psn = the cumulative grant in 256-byte quanta), on the reverse path. kLossNack: under
// routing mrc with trimming, a hole the receiver counts lost (nic.hpp).
// (Ordered so that the data path and the probes are each one comparison: type <= kTrim, type >= kProbe.)
enum PktType : uint8_t {
  kData = 0,
  kTrim = 1,
  kAck = 2,
  kNack = 3,
  kCnp = 4,
  kTrimNack = 5,
  kPull = 6,
  kLossNack = 7,  // routing mrc: the receiver reports one lost PSN (psn), R packets having arrived beyond it
  kProbe = 8,
  kProbeReply = 9
};
// A data packet's ecn bit asking the receiver for an ACK at once: a window-based sender sets it on the
// packet that fills its window, so a window smaller than the ACK cadence (ack_every) never waits for
// the timeout (nic.hpp).
constexpr uint8_t kAckRequest = 2;
// A trimmed header's ecn bit: it was cut at the port into its receiver's NIC (cc::Traits::receiver_credits).
constexpr uint8_t kTrimmedLastHop = 1;
// An ACK or NACK's echoed marks under receiver credits: the count in the low 7 bits, this bit = the NACKed
// packet was trimmed at the last hop.
constexpr uint8_t kEchoLastHop = 0x80;
// Whether a packet follows its QP's data path (else the path reversed).
inline bool on_data_path(uint8_t type) { return type <= kTrim; }

// A packet: 24 bytes. On a wire it travels inside its arrival event
// (encode/decode below); in a queue it is stored by value in the port's ring.
struct Packet {
  uint32_t qp = 0;
  uint32_t psn = 0;      // data: sequence number; ACK/NACK: the receiver's next expected PSN
  int32_t in_port = -1;  // the directed link it arrived on / is crossing (-1: made here)
  uint16_t wire = 0;     // bytes on Copper/Optical links
  uint16_t raw = 0;      // bytes on NVLink/PCIe (payload for data); ACK/NACK under trimming: packets the receiver holds
                         // beyond its hole
  uint8_t type = 0;
  uint8_t cls = 0;
  uint8_t ecn =
      0;  // data: bit 0 the CE mark, bit 1 kAckRequest; ACK/NACK: marked packets echoed (cc::Traits::ack_echo)
  uint8_t hop = 0;  // links crossed so far
  // Data: the entropy value its sender chose (routing policy reps; switches hash it); ACK/NACK: the
  // entropy of the data packet it answers (echoed).
  uint16_t ev = 0;
};
static_assert(sizeof(Packet) == 24, "a packet must fit an event's payload");

// Arrival event payload: a = qp:psn, b = in_port:wire:raw, tag = type:cls:ecn:hop, kind = kArrive | ev << 8
// (the event loop dispatches on the kind's low byte).
inline uint64_t enc_a(const Packet& k) { return (static_cast<uint64_t>(k.qp) << 32) | k.psn; }
inline uint64_t enc_b(const Packet& k) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(k.in_port)) << 32) | (static_cast<uint64_t>(k.wire) << 16) |
         k.raw;
}
inline uint32_t enc_tag(const Packet& k) {
  return static_cast<uint32_t>(k.type) | (static_cast<uint32_t>(k.cls) << 8) | (static_cast<uint32_t>(k.ecn) << 16) |
         (static_cast<uint32_t>(k.hop) << 24);
}
inline uint32_t enc_kind(const Packet& k) { return kArrive | (static_cast<uint32_t>(k.ev) << 8); }
// An arrival's kind bit: link-level retry already moved it (packet_sim.cpp; bits 24..31 carry nothing else).
constexpr uint32_t kReplayed = 1u << 31;
inline uint32_t kind_of(const Event& e) { return e.kind & 0xFF; }
inline Packet decode(const Event& e) {
  Packet k;
  k.ev = static_cast<uint16_t>(e.kind >> 8);
  k.qp = static_cast<uint32_t>(e.a >> 32);
  k.psn = static_cast<uint32_t>(e.a);
  k.in_port = static_cast<int32_t>(static_cast<uint32_t>(e.b >> 32));
  k.wire = static_cast<uint16_t>(e.b >> 16);
  k.raw = static_cast<uint16_t>(e.b);
  k.type = static_cast<uint8_t>(e.tag);
  k.cls = static_cast<uint8_t>(e.tag >> 8);
  k.ecn = static_cast<uint8_t>(e.tag >> 16);
  k.hop = static_cast<uint8_t>(e.tag >> 24);
  return k;
}

// A FIFO of packets stored by value (power-of-two ring; grows, never shrinks).
struct Ring {
  std::vector<Packet> buf;
  uint32_t head = 0, count = 0;
  int64_t bytes = 0;
  bool empty() const { return count == 0; }
  const Packet& front() const { return buf[head]; }
  void push(const Packet& k) {
    if (count == buf.size()) grow();
    buf[(head + count) & (buf.size() - 1)] = k;
    ++count;
    bytes += k.wire;
  }
  Packet pop() {
    const Packet k = buf[head];
    head = (head + 1) & static_cast<uint32_t>(buf.size() - 1);
    --count;
    bytes -= k.wire;
    return k;
  }
  void grow() {
    std::vector<Packet> nb(buf.empty() ? 8 : 2 * buf.size());
    for (uint32_t i = 0; i < count; ++i) nb[i] = buf[(head + i) & (buf.size() - 1)];
    buf.swap(nb);
    head = 0;
  }
};

// Serialization time of `bytes` at `bps`, rounded to 1 ps.
inline int64_t ser_ps(int64_t bytes, int64_t bps) { return (bytes * 8 * kPsPerS + bps / 2) / bps; }

}  // namespace podnet::engine::packet
