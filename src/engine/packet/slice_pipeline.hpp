// SlicePipeline: the bookkeeping of NCCL's slice pipeline on one Ring or
// Coupled transfer (plan::Pipeline in plan/transfer_plan.hpp states the
// rules). It knows hops and slice counts only; the packet backend turns its
// release counts into the senders' byte limits and feeds back deliveries.
//
// State per hop h: d_h slices delivered in order, c_h consumed by the
// receiver, r_h released to the sender. With U slices, window W, lag k and
// period P (forwards(u) = P == 0 || u mod P >= k):
//   release slice u = r_h when u < c_h + W and, if forwards(u) and h has
//     upstream hops, every upstream g has d_g > u - k;
//   consume slice u = c_h when d_h > u and every hop f forwarding it has
//     r_f > u + k (f forwards h's slices when h is upstream of f; slice
//     u + k of f forwards u when u + k < U and forwards(u + k)); a slice
//     nothing forwards is consumed on delivery.
// Everything is counters (no per-slice state): O(hops + edges) memory
// whatever U. Updates run to a fixed point with a FIFO worklist in hop
// order, so the result does not depend on anything but the calls.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "plan/transfer_plan.hpp"

namespace podnet::engine::packet {

class SlicePipeline {
 public:
  // The hops of a transfer as (src, dst) pairs, in the order engines
  // create them (P2p: ranks[0] -> ranks[1]; Ring: ranks[k] -> ranks[k+1],
  // closing hop last unless open; Coupled: edges; Compute: none), written
  // into `out` (cleared first) or returned. Throws Error for a P2p without
  // two ranks.
  static void hops_of(const plan::Transfer& t, std::vector<std::pair<int32_t, int32_t>>& out);
  static std::vector<std::pair<int32_t, int32_t>> hops_of(const plan::Transfer& t);
  // The upstream hops of every hop (plan::Pipeline's rule).
  static std::vector<std::vector<int32_t>> upstream_of(const plan::Transfer& t);
  // Hops in the longest chain of forwards of t's pipeline: a slice that
  // waits for one delivered on the hop before, which waited for one before
  // it... With period P > 0 and lag k: (min(P, U) - 1) / k + 1 (a ring
  // all-reduce: its 2(n-1) steps); with P = 0 the longest path of upstream
  // hops (a chain's length, a tree's depth up and down). 0 without one.
  static int64_t chain_hops(const plan::Transfer& t);
  // The same chain with a weight per hop (`weight`, one per hop in hops_of
  // order; empty: 1 each): with P > 0 the steps x the mean weight (a ring's
  // chain runs through every hop in turn), with P = 0 the heaviest path.
  static double chain_length(const plan::Transfer& t, const std::vector<double>& weight);

  SlicePipeline(const plan::Pipeline& p, std::vector<std::vector<int32_t>> upstream);
  // Releases what may go at once; appends every hop whose release count grew.
  void start(std::vector<int32_t>& raised);
  // Hop h has delivered its first `slices` slices (never fewer than before).
  void deliver(int32_t h, int64_t slices, std::vector<int32_t>& raised);

  int64_t slices() const { return u_; }
  int64_t released(int32_t h) const { return r_[static_cast<size_t>(h)]; }
  int64_t consumed(int32_t h) const { return c_[static_cast<size_t>(h)]; }
  int64_t delivered(int32_t h) const { return d_[static_cast<size_t>(h)]; }

 private:
  bool forwards(int64_t u) const { return period_ == 0 || u % period_ >= lag_; }
  void try_release(int32_t h, std::vector<int32_t>& raised);
  void drain(std::vector<int32_t>& raised);
  int64_t u_ = 0, period_ = 0;
  int32_t window_ = 1, lag_ = 0;
  std::vector<std::vector<int32_t>> up_, down_;
  std::vector<int64_t> r_, c_, d_;
  std::vector<uint8_t> queued_;
  std::deque<int32_t> work_;  // hops whose consumption may advance
};

}  // namespace podnet::engine::packet
