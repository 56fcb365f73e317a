#include "engine/packet/pipeline_tracker.hpp"

#include <algorithm>

namespace podnet::engine::packet {

int32_t PipelineTracker::open(const plan::Transfer& t, int32_t hops, int32_t qps) {
  const auto index = static_cast<int32_t>(pipes_.size());
  Run& r = pipes_.emplace_back();
  r.pipe = std::make_unique<SlicePipeline>(t.pipeline, SlicePipeline::upstream_of(t));
  r.qps = qps;
  r.got.assign(static_cast<size_t>(hops) * static_cast<size_t>(qps), 0);
  r.pipe->start(raised_);
  raised_.clear();  // the streams start with these limits
  return index;
}

void PipelineTracker::attach(int32_t pipe, int32_t id, int32_t local) {
  if (stream_pipe_.size() <= static_cast<size_t>(id)) stream_pipe_.resize(static_cast<size_t>(id) + 1, {-1, 0});
  stream_pipe_[static_cast<size_t>(id)] = {pipe, local};
  pipes_[static_cast<size_t>(pipe)].streams.push_back(id);
}

void PipelineTracker::watch(int32_t pipe) {
  const std::vector<int32_t>& streams = pipes_[static_cast<size_t>(pipe)].streams;  // refresh adds none
  for (size_t k = 0; k < streams.size(); ++k) refresh(streams[k]);
}

void PipelineTracker::raise_limits(Run& r) {
  for (int32_t h : raised_)
    for (int32_t q = 0; q < r.qps; ++q)
      sim_.release_slices(r.streams[static_cast<size_t>(h * r.qps + q)], r.pipe->released(h));
  raised_.clear();
}

void PipelineTracker::refresh(int32_t s) {
  if (s < 0 || s >= static_cast<int32_t>(stream_pipe_.size()) || stream_pipe_[static_cast<size_t>(s)].first < 0) return;
  Run& r = pipes_[static_cast<size_t>(stream_pipe_[static_cast<size_t>(s)].first)];
  const int32_t local = stream_pipe_[static_cast<size_t>(s)].second;
  const int64_t u = r.pipe->slices();
  int64_t& n = r.got[static_cast<size_t>(local)];
  n = std::min(u, sim_.delivered_slices(s));
  if (n < u) sim_.watch_slices(s, n + 1);
  const int32_t h = local / r.qps;
  int64_t hop = u;
  for (int32_t q = 0; q < r.qps; ++q) hop = std::min(hop, r.got[static_cast<size_t>(h * r.qps + q)]);
  r.pipe->deliver(h, hop, raised_);
  raise_limits(r);
}

}  // namespace podnet::engine::packet
