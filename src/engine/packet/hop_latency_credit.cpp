#include "engine/packet/hop_latency_credit.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "engine/packet/slice_pipeline.hpp"

namespace podnet::engine::packet {

bool HopLatencyCredit::eligible(int32_t j) const {
  const plan::Transfer& t = plan_.transfers[static_cast<size_t>(j)];
  return t.kind != plan::TransferKind::Compute && t.latency_steps == 0;
}

bool HopLatencyCredit::is_ring(int32_t j) const {
  const plan::Transfer& t = plan_.transfers[static_cast<size_t>(j)];
  return t.pipeline.slices > 0 && t.pipeline.period > 0 && t.kind != plan::TransferKind::P2p;
}

double HopLatencyCredit::chain_of(int32_t j) {
  const plan::Transfer& t = plan_.transfers[static_cast<size_t>(j)];
  SlicePipeline::hops_of(t, hops_);
  if (hops_.empty()) return 0;
  const bool piped = t.pipeline.slices > 0 && t.kind != plan::TransferKind::P2p;
  weight_.clear();
  double prefix = 0;  // a stream pays its in-server prefix once, at its start (prefix_latency)
  try {
    for (size_t h = 0; h < hops_.size(); ++h) {
      const auto [a, b] = hops_[h];
      route_.clear();
      sim_.peek_route(a, b, static_cast<uint64_t>(t.hop_channel(h)) * 1024, route_);
      const auto p = static_cast<double>(sim_.prefix_latency(route_).ps);
      weight_.push_back(static_cast<double>(sim_.physical_latency(route_).ps) - (piped ? p : 0.0));
      prefix = std::max(prefix, p);
      for (const auto& part : route_) link_bytes_[part.link] += static_cast<double>(t.bytes) * part.fraction;
    }
  } catch (const Error&) {
    return 0;  // no route (a failure): the launch reports it
  }
  return piped ? prefix + SlicePipeline::chain_length(t, weight_) : *std::max_element(weight_.begin(), weight_.end());
}

int64_t HopLatencyCredit::shows_from(int32_t j) {
  int64_t& memo = shows_memo_[static_cast<size_t>(j)];
  if (memo >= 0) return memo;
  int64_t next = 0;
  for (int32_t k : after_[static_cast<size_t>(j)])
    if (eligible(k)) next = std::max(next, shows_from(k));
  const double c = own_chain_[static_cast<size_t>(j)];
  memo = static_cast<int64_t>((is_ring(j) ? std::max(0.0, c - busy_ps_) : c) + 0.5) + next;
  return memo;
}

int64_t HopLatencyCredit::credit(int32_t i) {
  const size_t n = plan_.transfers.size();
  if (after_.empty()) {
    after_.assign(n, {});
    for (size_t j = 0; j < n; ++j)
      for (int32_t d : plan_.transfers[j].deps) after_[static_cast<size_t>(d)].push_back(static_cast<int32_t>(j));
    shows_memo_.assign(n, -1);
    own_chain_.assign(n, 0);
    seen_.assign(n, 0);
  }
  // Every transfer after the delay once: its chain, and its bytes on the links (B).
  reached_.clear();
  link_bytes_.clear();
  const auto reach = [&](int32_t from) {
    for (int32_t k : after_[static_cast<size_t>(from)])
      if (eligible(k) && !seen_[static_cast<size_t>(k)]) seen_[static_cast<size_t>(k)] = 1, reached_.push_back(k);
  };
  reach(i);
  for (size_t q = 0; q < reached_.size(); ++q) {
    const int32_t j = reached_[q];
    own_chain_[static_cast<size_t>(j)] = chain_of(j);
    reach(j);
  }
  busy_ps_ = 0;
  for (const auto& [link, bytes] : link_bytes_)
    busy_ps_ = std::max(busy_ps_, bytes * 8e12 / static_cast<double>(sim_.link_bps(link)));
  int64_t credit = 0;
  for (int32_t k : after_[static_cast<size_t>(i)])
    if (eligible(k)) credit = std::max(credit, shows_from(k));
  return credit;
}

}  // namespace podnet::engine::packet
