// PipelineTracker: the packet engine's side of NCCL's slice pipelines
// (plan::Pipeline; the rules are slice_pipeline.hpp's). One SlicePipeline
// per running pipelined transfer; its streams are hop h, QP q at
// h * qps + q, each cut into the pipeline's slices (a QP carries its share
// of every slice). A stream may send the slices its hop has released; a
// hop has delivered the fewest slices any of its QPs has.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "engine/packet/packet_sim.hpp"
#include "engine/packet/slice_pipeline.hpp"

namespace podnet::engine::packet {

class PipelineTracker {
 public:
  explicit PipelineTracker(PacketSim& sim) : sim_(sim) {}
  // Opens the pipeline of transfer t, whose streams will be `hops` x `qps`;
  // returns its index. Its streams start with the limits released().
  int32_t open(const plan::Transfer& t, int32_t hops, int32_t qps);
  int64_t slices(int32_t pipe) const { return pipes_[static_cast<size_t>(pipe)].pipe->slices(); }
  int64_t released(int32_t pipe, int32_t hop) const { return pipes_[static_cast<size_t>(pipe)].pipe->released(hop); }
  // Stream `id` is the pipeline's stream `local` (hop * qps + q).
  void attach(int32_t pipe, int32_t id, int32_t local);
  // Watches the first slice of every stream of the pipeline (after its streams are added).
  void watch(int32_t pipe);
  // Stream s delivered more (progress or completion); no-op for a stream without a pipeline.
  void refresh(int32_t s);

 private:
  struct Run {
    std::unique_ptr<SlicePipeline> pipe;
    int32_t qps = 1;
    std::vector<int32_t> streams;
    std::vector<int64_t> got;  // slices delivered, per stream
  };
  void raise_limits(Run& r);

  PacketSim& sim_;
  std::deque<Run> pipes_;                                 // stable references
  std::vector<std::pair<int32_t, int32_t>> stream_pipe_;  // by stream: (pipe, local index), pipe -1: none
  std::vector<int32_t> raised_;
};

}  // namespace podnet::engine::packet
