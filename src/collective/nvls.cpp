#include "collective/nvls.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <map>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "collective/tree.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

// The NVSwitch a GPU hangs off (kNone if none).
topology::NodeId nvswitch_of(const topology::Topology& topo, topology::NodeId gpu) {
  for (auto [l, end] = topo.incident(gpu); l != end; ++l)
    if (topo.links[*l].media == topology::Media::NvLink &&
        topo.nodes[topo.other_end(*l, gpu)].kind == topology::NodeKind::NvSwitch)
      return topo.other_end(*l, gpu);
  return topology::kNone;
}

// NVLS efficiency as a fraction: 0.85 (Hopper) = 17/20; 0.74 (Blackwell) = 37/50.
std::pair<int64_t, int64_t> nvls_efficiency(Arch arch) {
  return arch == Arch::Blackwell ? std::pair<int64_t, int64_t>{37, 50} : std::pair<int64_t, int64_t>{17, 20};
}

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  const topology::NodeId sw = nvswitch_of(topo, topo.gpus[group[0]]);
  for (int32_t r : group) {
    const auto& g = topo.nodes[topo.gpus[r]];
    const topology::NodeId mine = nvswitch_of(topo, topo.gpus[r]);
    if (mine == topology::kNone) throw InputError(fmt::format("nvls needs GPUs on an NVSwitch: {} has none", g.name));
    if (mine != sw)
      throw InputError(fmt::format("nvls over one NVSwitch domain only (multi-node NVLS needs CollNet): {} and {} are "
                                   "on different NVSwitches",
                                   topo.nodes[topo.gpus[group[0]]].name, g.name));
  }
  if (n <= 1 || bytes == 0 || op != Op::AllReduce) return plan;
  const auto shares = detail::split(bytes, o.channels);
  const auto [eff_num, eff_den] = nvls_efficiency(o.arch);
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    const Group order = ring_order(group, o.order, c, topo);
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = group;
    std::sort(t.ranks.begin(), t.ranks.end());
    for (int64_t i = 0; i < n; ++i) t.edges.emplace_back(order[i], order[(i + 1) % n]);
    t.bytes = detail::scale_up(shares[c], (n + 1) * eff_den, n * eff_num);
    t.latency_steps = 2;
    t.qps = o.qps;
    t.channel = c;
    t.label = "ar/nvls";
    plan.add(std::move(t));
  }
  return plan;
}

plan::TransferPlan build_tree(Op op, const Group& group, Bytes bytes, const Options& o,
                              const topology::Topology& topo) {
  plan::TransferPlan plan;
  if (group.size() <= 1) return plan;
  // Servers in the order of their lowest rank, each with its GPUs sorted.
  std::map<int32_t, Group> by_server;
  for (int32_t r : group) {
    const auto& g = topo.nodes[topo.gpus[r]];
    if (nvswitch_of(topo, topo.gpus[r]) == topology::kNone)
      throw InputError(fmt::format("nvls_tree needs GPUs on an NVSwitch: {} has none", g.name));
    by_server[g.server != topology::kNone ? g.server : -1 - r].push_back(r);
  }
  std::vector<Group> servers;
  for (auto& [id, gpus] : by_server) {
    std::sort(gpus.begin(), gpus.end());
    servers.push_back(gpus);
  }
  std::sort(servers.begin(), servers.end(), [](const Group& a, const Group& b) { return a[0] < b[0]; });
  const int32_t nodes = static_cast<int32_t>(servers.size());
  const size_t ppn = servers[0].size();
  if (nodes < 2) throw InputError("nvls_tree spans servers: the group is on one server (use nvls)");
  for (const auto& sv : servers) {
    if (sv.size() != ppn)
      throw InputError(fmt::format("nvls_tree needs the same number of GPUs on every server: {} on {}, {} on {}", ppn,
                                   topo.nodes[topo.gpus[servers[0][0]]].name, sv.size(),
                                   topo.nodes[topo.gpus[sv[0]]].name));
    const topology::NodeId sw = nvswitch_of(topo, topo.gpus[sv[0]]);
    for (int32_t r : sv)
      if (nvswitch_of(topo, topo.gpus[r]) != sw)
        throw InputError(fmt::format("nvls_tree: {} and {} are on one server but different NVSwitches",
                                     topo.nodes[topo.gpus[sv[0]]].name, topo.nodes[topo.gpus[r]].name));
  }
  if (bytes == 0 || op != Op::AllReduce) return plan;
  const SearchGraph graph = nvls_graph(comm_shape(group, topo, o.arch));
  if (graph.channels < 2)
    throw InputError(
        fmt::format("nvls_tree needs at least 2 NVLS heads per server (GPUs with a NIC); found {}", graph.channels));
  const int32_t heads = graph.channels;
  // Heads of each server: its first GPUs on distinct NICs, `heads` of them (GPU order when NICs repeat).
  std::vector<Group> head_of(nodes);
  for (int32_t v = 0; v < nodes; ++v) {
    std::vector<topology::NodeId> seen;
    for (int32_t r : servers[v]) {
      const topology::NodeId nic = static_cast<size_t>(r) < topo.gpu_nic.size() ? topo.gpu_nic[r] : topology::kNone;
      if (static_cast<int32_t>(head_of[v].size()) < heads && std::find(seen.begin(), seen.end(), nic) == seen.end()) {
        head_of[v].push_back(r);
        seen.push_back(nic);
      }
    }
    for (int32_t r : servers[v])
      if (static_cast<int32_t>(head_of[v].size()) < heads &&
          std::find(head_of[v].begin(), head_of[v].end(), r) == head_of[v].end())
        head_of[v].push_back(r);
  }
  const auto [eff_num, eff_den] = nvls_efficiency(o.arch);
  // Inside every server: the NVLS reduce-scatter and all-gather, S (h+1)/h per direction of a head's link.
  for (int32_t v = 0; v < nodes; ++v) {
    const Group& sv = servers[v];
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = sv;
    for (size_t i = 0; i < ppn; ++i) t.edges.emplace_back(sv[i], sv[(i + 1) % ppn]);
    t.bytes = detail::scale_up(bytes, (heads + 1) * eff_den, static_cast<int64_t>(heads) * eff_num);
    t.latency_steps = 2;
    t.qps = o.qps;
    t.label = "ar/nvls_tree/intra";
    plan.add(std::move(t));
  }
  // Across servers: per head, per channel of that head, NCCL's two trees over the servers.
  const auto trees = dtree_parents(nodes);
  const int32_t steps = 2 * std::max(tree_depth(trees[0]), tree_depth(trees[1]));
  const int32_t per_head = std::max(1, o.channels / heads);
  const auto shards = detail::split(bytes, heads);
  for (int32_t k = 0; k < static_cast<int32_t>(shards.size()); ++k) {
    const auto parts = detail::split(shards[k], per_head);
    for (int32_t c = 0; c < static_cast<int32_t>(parts.size()); ++c) {
      const auto halves = detail::split(parts[c], 2);
      for (size_t tr = 0; tr < halves.size(); ++tr) {
        plan::Transfer t;
        t.kind = plan::TransferKind::Coupled;
        for (int32_t v = 0; v < nodes; ++v) t.ranks.push_back(head_of[v][k]);
        std::sort(t.ranks.begin(), t.ranks.end());
        for (int32_t v = 0; v < nodes; ++v)
          if (trees[tr][v] >= 0) t.edges.emplace_back(head_of[v][k], head_of[trees[tr][v]][k]);  // up: reduce
        for (int32_t v = 0; v < nodes; ++v)
          if (trees[tr][v] >= 0) t.edges.emplace_back(head_of[trees[tr][v]][k], head_of[v][k]);  // down: broadcast
        t.bytes = halves[tr];
        t.latency_steps = steps;
        t.qps = o.qps;
        t.channel = k * per_head + c;
        t.label = fmt::format("ar/nvls_tree{}/head{}", tr, k);
        plan.add(std::move(t));
      }
    }
  }
  return plan;
}

constexpr int64_t kNvlsChunk = 128 * 1024;  // NCCL_NVLS_CHUNKSIZE default (nvls.cc)
constexpr int32_t kNvlsStages = 3;          // scatter, reduce, gather warp groups (all_reduce.h)
// Fitted on NVIDIA's DGX H100 all_reduce_perf table (nvls.hpp, docs/contributing/validation/nccl-model.md).
constexpr double kNvlsStageCostUs = 2.5;
constexpr double kNvlsLaunchUs = 13.0;

}  // namespace

int32_t nvls_channels(Arch arch) { return arch == Arch::Blackwell ? 24 : 16; }

NvlsPipeline nvls_pipeline(const CommShape& s, Bytes bytes) {
  NvlsPipeline p;
  if (bytes <= 0 || s.nodes != 1 || !enabled_by_default(Op::AllReduce, Algo::Nvls, Proto::Simple, s)) return p;
  const ModelEntry m = model_entry(Op::AllReduce, Algo::Nvls, Proto::Simple, s);
  const SearchGraph g = nvls_graph(s);
  if (m.bw_gbs <= 0 || g.channels < 2) return p;
  p.channels = nvls_channels(s.arch);
  p.heads = g.channels;
  // enqueue.cc: the chunk shrinks while the buffer is small against the concurrent chunks.
  const int64_t ops = static_cast<int64_t>(p.channels) * p.heads;
  int64_t c = kNvlsChunk;
  if (bytes < 64 * ops * c && c > 65536) c = 65536;
  if (bytes < 8 * ops * c && c > 32768) c = 32768;
  if (bytes < 2 * ops * c && c > 16384) c = 16384;
  p.chunk = c;
  p.loop = ops * c;
  p.loops = (bytes + p.loop - 1) / p.loop;
  // One stage moves one loop's share of the buffer at NCCL's NVLS rate (GB/s = 1e3 B/us).
  p.fill_us = (kNvlsStages - 1) * static_cast<double>(std::min(bytes, p.loop)) / (m.bw_gbs * 1e3);
  p.stage_cost_us = static_cast<double>(p.loops + kNvlsStages - 1) * kNvlsStageCostUs;
  p.launch_us = kNvlsLaunchUs;
  return p;
}

AlgorithmInfo nvls_tree_algorithm() {
  return {"nvls_tree",
          "NVLS tree (several NVSwitch servers): NVLS reduce-scatter in each server, NCCL's double binary tree "
          "across servers between the heads of each shard (one per NIC), NVLS all-gather back",
          {Op::AllReduce},
          build_tree,
          true};
}

AlgorithmInfo nvls_algorithm() {
  return {"nvls",
          "NVLink SHARP (one NVSwitch server): the switch reduces and multicasts, each GPU link carries (n+1)/n*S "
          "per direction at NCCL's NVLS efficiency (0.85 Hopper)",
          {Op::AllReduce},
          build,
          true};
}

}  // namespace podnet::collective
