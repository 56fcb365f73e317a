// Small helpers the algorithms share (internal to the collective layer).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "plan/transfer_plan.hpp"

namespace podnet::collective::detail {

// ceil(s * num / den) without overflow (s, num >= 0, den > 0).
inline Bytes scale_up(Bytes s, int64_t num, int64_t den) {
  const __int128 p = static_cast<__int128>(s) * num;
  return static_cast<Bytes>((p + den - 1) / den);
}

// S split over `parts`: floor(S/parts) each, the remainder one byte each on
// the first parts. Parts that would get 0 bytes are dropped (S < parts).
inline std::vector<Bytes> split(Bytes s, int32_t parts) {
  std::vector<Bytes> out;
  for (int32_t i = 0; i < parts; ++i) {
    const Bytes b = s / parts + (i < s % parts ? 1 : 0);
    if (b > 0) out.push_back(b);
  }
  return out;
}

inline plan::Transfer ring(std::vector<int32_t> ranks, Bytes bytes, int32_t latency_steps, const Options& o,
                           int32_t channel, std::string label, bool open = false) {
  plan::Transfer t;
  t.kind = plan::TransferKind::Ring;
  t.ranks = std::move(ranks);
  t.bytes = bytes;
  t.latency_steps = latency_steps;
  t.qps = o.qps;
  t.channel = channel;
  t.open = open;
  t.label = std::move(label);
  return t;
}

inline plan::Transfer p2p(int32_t src, int32_t dst, Bytes bytes, const Options& o, int32_t channel, std::string label) {
  plan::Transfer t;
  t.kind = plan::TransferKind::P2p;
  t.ranks = {src, dst};
  t.bytes = bytes;
  t.latency_steps = 1;
  t.qps = o.qps;
  t.channel = channel;
  t.label = std::move(label);
  return t;
}

// Short op code for labels: ar, ag, rs, a2a, bc, rd, sr.
const char* op_code(Op op);

}  // namespace podnet::collective::detail
