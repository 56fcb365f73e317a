#include "plan/transfer_plan.hpp"

#include "core/error.hpp"

namespace podnet::plan {

std::vector<int32_t> topological_order(const TransferPlan& plan) {
  const auto n = static_cast<int32_t>(plan.transfers.size());
  std::vector<int32_t> indeg(n, 0), order;
  std::vector<std::vector<int32_t>> out(n);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t d : plan.transfers[i].deps) {
      if (d < 0 || d >= n) throw Error("internal: transfer dependency out of range");
      out[d].push_back(i);
      ++indeg[i];
    }
  }
  order.reserve(n);
  for (int32_t i = 0; i < n; ++i)
    if (indeg[i] == 0) order.push_back(i);
  for (size_t k = 0; k < order.size(); ++k)
    for (int32_t j : out[order[k]])
      if (--indeg[j] == 0) order.push_back(j);
  if (static_cast<int32_t>(order.size()) != n) throw Error("internal: transfer plan has a dependency cycle");
  return order;
}

std::map<int32_t, Bytes> bytes_sent_by_rank(const TransferPlan& plan) {
  std::map<int32_t, Bytes> out;
  for (const auto& t : plan.transfers) {
    switch (t.kind) {
      case TransferKind::P2p: out[t.ranks[0]] += t.bytes; break;
      case TransferKind::Ring: {
        if (t.ranks.size() < 2) break;
        const size_t senders = t.open ? t.ranks.size() - 1 : t.ranks.size();
        for (size_t i = 0; i < senders; ++i) out[t.ranks[i]] += t.bytes;
        break;
      }
      case TransferKind::Coupled:
        for (const auto& e : t.edges) out[e.first] += t.bytes;
        break;
      case TransferKind::Compute: break;  // no bytes on the wire
    }
  }
  return out;
}

void check_pipelines(const TransferPlan& plan) {
  for (size_t i = 0; i < plan.transfers.size(); ++i) {
    const Transfer& t = plan.transfers[i];
    const Pipeline& p = t.pipeline;
    if (t.lanes != 1) {
      const char* bad = nullptr;
      if (t.kind != TransferKind::Coupled) bad = "only a Coupled transfer has lanes";
      else if (t.lanes < 1 || t.edges.size() % static_cast<size_t>(t.lanes) != 0) bad = "edges not in equal lanes";
      else if (p.slices != 0) bad = "a transfer of several lanes is not pipelined";
      if (bad) throw Error("internal: transfer " + std::to_string(i) + " (" + t.label + "): " + bad);
    }
    if (p.slices == 0) continue;
    const char* why = nullptr;
    if (p.slices < 0) why = "slices < 0";
    else if (t.kind != TransferKind::Ring && t.kind != TransferKind::Coupled)
      why = "only a Ring or Coupled transfer is pipelined";
    else if (p.window < 1) why = "window < 1";
    else if (p.lag < 0 || p.period < 0) why = "lag or period < 0";
    else if (p.period > 0 && p.lag > p.period) why = "lag > period";
    else if (p.period == 0 && p.lag > 0) why = "lag > 0 needs a period";
    else if (p.window <= p.lag) why = "window <= lag (a closed ring would wait for itself)";
    if (why) throw Error("internal: transfer " + std::to_string(i) + " (" + t.label + "): bad pipeline: " + why);
  }
}

}  // namespace podnet::plan
