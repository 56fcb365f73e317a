#include "engine/packet/slice_pipeline.hpp"

#include <algorithm>
#include <map>

#include "core/error.hpp"

namespace podnet::engine::packet {

void SlicePipeline::hops_of(const plan::Transfer& t, std::vector<std::pair<int32_t, int32_t>>& out) {
  out.clear();
  if (t.kind == plan::TransferKind::P2p) {
    if (t.ranks.size() != 2) throw Error("internal: a P2p transfer needs two ranks");
    out.emplace_back(t.ranks[0], t.ranks[1]);
  } else if (t.kind == plan::TransferKind::Ring) {
    const size_t r = t.ranks.size();
    const size_t h = t.open ? (r > 0 ? r - 1 : 0) : (r > 1 ? r : 0);
    for (size_t k = 0; k < h; ++k) out.emplace_back(t.ranks[k], t.ranks[(k + 1) % r]);
  } else if (t.kind == plan::TransferKind::Coupled) {
    out = t.edges;
  }
}

std::vector<std::pair<int32_t, int32_t>> SlicePipeline::hops_of(const plan::Transfer& t) {
  std::vector<std::pair<int32_t, int32_t>> hops;
  hops_of(t, hops);
  return hops;
}

std::vector<std::vector<int32_t>> SlicePipeline::upstream_of(const plan::Transfer& t) {
  const auto hops = hops_of(t);
  const auto n = static_cast<int32_t>(hops.size());
  std::vector<std::vector<int32_t>> up(static_cast<size_t>(n));
  if (t.kind == plan::TransferKind::Ring) {
    for (int32_t k = 0; k < n; ++k) {
      if (k > 0) up[k].push_back(k - 1);
      else if (!t.open && n > 1) up[k].push_back(n - 1);
    }
    return up;
  }
  std::map<int32_t, std::vector<int32_t>> into;  // destination rank -> edges ending there (ascending)
  for (int32_t e = 0; e < n; ++e) into[hops[e].second].push_back(e);
  for (int32_t e = 0; e < n; ++e) {
    const auto it = into.find(hops[e].first);
    if (it == into.end()) continue;
    // x -> a with x != b; the reverse edge b -> a only when listed before a -> b (a tree all-reduce
    // lists its reduce edges first: the root's broadcast waits for its children, a reduce edge does
    // not wait for the broadcast coming back).
    for (int32_t g : it->second)
      if (hops[g].first != hops[e].second || g < e) up[e].push_back(g);
  }
  return up;
}

int64_t SlicePipeline::chain_hops(const plan::Transfer& t) { return static_cast<int64_t>(chain_length(t, {}) + 0.5); }

double SlicePipeline::chain_length(const plan::Transfer& t, const std::vector<double>& weight) {
  const plan::Pipeline& p = t.pipeline;
  if (p.slices <= 0) return 0;
  const auto w = [&](int32_t h) { return weight.empty() ? 1.0 : weight[static_cast<size_t>(h)]; };
  if (p.period > 0) {
    const auto steps = static_cast<double>((std::min(p.period, p.slices) - 1) / std::max(1, p.lag) + 1);
    if (weight.empty()) return steps;
    double sum = 0;
    for (double x : weight) sum += x;
    return steps * sum / static_cast<double>(weight.size());
  }
  const auto up = upstream_of(t);
  const auto n = static_cast<int32_t>(up.size());
  // Longest path ending at each hop (its own weight included); a hop met again while on the path (a
  // cycle) is not followed.
  std::vector<double> len(static_cast<size_t>(n), 0);
  std::vector<uint8_t> state(static_cast<size_t>(n), 0);  // 0 new, 1 on the path, 2 done
  double best = 0;
  std::vector<std::pair<int32_t, size_t>> stack;  // (hop, next upstream to visit)
  for (int32_t root = 0; root < n; ++root) {
    if (state[static_cast<size_t>(root)] != 0) continue;
    stack.assign(1, {root, 0});
    state[static_cast<size_t>(root)] = 1;
    while (!stack.empty()) {
      const int32_t h = stack.back().first;
      const auto& ups = up[static_cast<size_t>(h)];
      if (stack.back().second < ups.size()) {
        const int32_t g = ups[stack.back().second++];
        if (state[static_cast<size_t>(g)] == 0) {
          state[static_cast<size_t>(g)] = 1;
          stack.emplace_back(g, 0);
        }
        continue;
      }
      double before = 0;
      for (int32_t g : ups)
        if (state[static_cast<size_t>(g)] == 2) before = std::max(before, len[static_cast<size_t>(g)]);
      len[static_cast<size_t>(h)] = before + w(h);
      state[static_cast<size_t>(h)] = 2;
      best = std::max(best, len[static_cast<size_t>(h)]);
      stack.pop_back();
    }
  }
  return best;
}

SlicePipeline::SlicePipeline(const plan::Pipeline& p, std::vector<std::vector<int32_t>> upstream)
    : u_(p.slices),
      period_(p.period),
      window_(p.window),
      lag_(p.lag),
      up_(std::move(upstream)),
      down_(up_.size()),
      r_(up_.size(), 0),
      c_(up_.size(), 0),
      d_(up_.size(), 0),
      queued_(up_.size(), 0) {
  if (u_ < 1 || window_ <= lag_ || lag_ < 0 || period_ < 0 || (period_ > 0 && lag_ > period_) ||
      (period_ == 0 && lag_ > 0))
    throw Error("packet engine: internal: a bad slice pipeline");
  for (size_t f = 0; f < up_.size(); ++f)
    for (int32_t g : up_[f]) down_[static_cast<size_t>(g)].push_back(static_cast<int32_t>(f));
}

void SlicePipeline::start(std::vector<int32_t>& raised) {
  for (int32_t h = 0; h < static_cast<int32_t>(r_.size()); ++h) try_release(h, raised);
  drain(raised);
}

void SlicePipeline::deliver(int32_t h, int64_t slices, std::vector<int32_t>& raised) {
  const auto i = static_cast<size_t>(h);
  if (slices <= d_[i]) return;
  d_[i] = std::min(slices, u_);
  if (!queued_[i]) {
    queued_[i] = 1;
    work_.push_back(h);
  }
  for (int32_t f : down_[i]) try_release(f, raised);
  drain(raised);
}

void SlicePipeline::try_release(int32_t h, std::vector<int32_t>& raised) {
  const auto i = static_cast<size_t>(h);
  const int64_t before = r_[i];
  bool forwarded = false;
  while (r_[i] < u_) {
    const int64_t u = r_[i];
    if (u >= c_[i] + window_) break;  // no free slot at the receiver
    const bool fwd = forwards(u) && !up_[i].empty();
    if (fwd) {
      bool ready = true;
      for (int32_t g : up_[i])
        if (d_[static_cast<size_t>(g)] <= u - lag_) ready = false;
      if (!ready) break;
      forwarded = true;
    }
    ++r_[i];
  }
  if (r_[i] == before) return;
  raised.push_back(h);
  if (!forwarded) return;
  for (int32_t g : up_[i]) {  // their receiver (h's source) consumed what h forwarded
    const auto j = static_cast<size_t>(g);
    if (!queued_[j]) {
      queued_[j] = 1;
      work_.push_back(g);
    }
  }
}

void SlicePipeline::drain(std::vector<int32_t>& raised) {
  while (!work_.empty()) {
    const int32_t g = work_.front();
    work_.pop_front();
    const auto j = static_cast<size_t>(g);
    queued_[j] = 0;
    const int64_t before = c_[j];
    while (c_[j] < d_[j]) {
      const int64_t u = c_[j];
      const int64_t v = u + lag_;  // the slice of a downstream hop that forwards u
      if (!down_[j].empty() && v < u_ && forwards(v)) {
        bool all = true;
        for (int32_t f : down_[j])
          if (r_[static_cast<size_t>(f)] <= v) all = false;
        if (!all) break;
      }
      ++c_[j];
    }
    if (c_[j] != before) try_release(g, raised);
  }
}

}  // namespace podnet::engine::packet
