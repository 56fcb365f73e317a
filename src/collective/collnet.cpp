#include "collective/collnet.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

constexpr int32_t kMaxGpusPerServer = 8;  // NCCL_MAX_DIRECT_ARITY + 1 (device.h)

// The NVSwitch a GPU hangs off (kNone if none).
topology::NodeId nvswitch_of(const topology::Topology& topo, topology::NodeId gpu) {
  for (auto [l, end] = topo.incident(gpu); l != end; ++l)
    if (topo.links[*l].media == topology::Media::NvLink &&
        topo.nodes[topo.other_end(*l, gpu)].kind == topology::NodeKind::NvSwitch)
      return topo.other_end(*l, gpu);
  return topology::kNone;
}

const std::string& gpu_name(const topology::Topology& topo, int32_t rank) { return topo.nodes[topo.gpus[rank]].name; }

// The group by server in topology-aware order, checked for what CollNet needs.
std::vector<Group> servers_of(const char* name, const Group& group, const topology::Topology& topo, bool nvswitch) {
  if (!topo.sharp)
    throw InputError(fmt::format("{} reduces in the switches, but this fabric's switches do not: set "
                                 "switch.in_network_reduction: sharp (InfiniBand switches with SHARP, "
                                 "network.transport: infiniband)",
                                 name));
  std::vector<Group> servers = group_by_server(group, RingOrder::TopologyAware, topo);
  if (servers.size() < 2)
    throw InputError(fmt::format("{} spans servers: the group is on one server (use ring, tree or nvls)", name));
  const size_t ppn = servers[0].size();
  for (const auto& sv : servers) {
    if (sv.size() != ppn)
      throw InputError(fmt::format("{} needs the same number of GPUs on every server: {} on {}, {} on {}", name, ppn,
                                   gpu_name(topo, servers[0][0]), sv.size(), gpu_name(topo, sv[0])));
    if (static_cast<int32_t>(sv.size()) > kMaxGpusPerServer)
      throw InputError(fmt::format("{} runs with at most {} GPUs per server (NCCL_MAX_DIRECT_ARITY + 1): {} on {}",
                                   name, kMaxGpusPerServer, sv.size(), gpu_name(topo, sv[0])));
    if (!nvswitch) continue;
    const topology::NodeId sw = nvswitch_of(topo, topo.gpus[sv[0]]);
    for (int32_t r : sv) {
      if (nvswitch_of(topo, topo.gpus[r]) == topology::kNone)
        throw InputError(
            fmt::format("{} needs GPUs on an NVSwitch: {} has none (use collnet_chain)", name, gpu_name(topo, r)));
      if (nvswitch_of(topo, topo.gpus[r]) != sw)
        throw InputError(fmt::format("{}: {} and {} are on one server but different NVSwitches", name,
                                     gpu_name(topo, sv[0]), gpu_name(topo, r)));
    }
  }
  return servers;
}

// A server's GPUs (sorted by rank) on distinct NICs: the first GPU of each NIC, in GPU order.
Group nic_heads(const Group& server, const topology::Topology& topo) {
  Group heads;
  std::vector<topology::NodeId> seen;
  for (int32_t r : server) {
    const topology::NodeId nic = static_cast<size_t>(r) < topo.gpu_nic.size() ? topo.gpu_nic[r] : topology::kNone;
    if (std::find(seen.begin(), seen.end(), nic) != seen.end()) continue;
    seen.push_back(nic);
    heads.push_back(r);
  }
  return heads;
}

// The closed ring over the servers' heads `head_of[v]`, appended to t.edges (none for one server).
void add_head_ring(plan::Transfer& t, const Group& head_of) {
  const size_t n = head_of.size();
  if (n < 2) return;
  for (size_t v = 0; v < n; ++v) t.edges.emplace_back(head_of[v], head_of[(v + 1) % n]);
}

// The SHARP pass of one head position k: one coupled transfer per part (a channel of that head) around the
// ring of the servers' k-th heads `head_of`, channels k x per_head + c.
void add_sharp_parts(plan::TransferPlan& plan, const Group& head_of, const std::vector<Bytes>& parts, size_t k,
                     int32_t per_head, const Options& o, const std::string& label) {
  for (int32_t c = 0; c < static_cast<int32_t>(parts.size()); ++c) {
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = head_of;
    std::sort(t.ranks.begin(), t.ranks.end());
    add_head_ring(t, head_of);
    t.bytes = parts[c];
    t.latency_steps = 1;
    t.qps = o.qps;
    t.channel = static_cast<int32_t>(k) * per_head + c;
    t.label = label;
    plan.add(std::move(t));
  }
}

// NCCL's collnet-direct efficiency as a fraction (nccl/tuner.hpp section 5): 0.85 = 17/20 on Hopper and later.
std::pair<int64_t, int64_t> direct_efficiency(Arch arch) {
  return arch >= Arch::Hopper ? std::pair<int64_t, int64_t>{17, 20} : std::pair<int64_t, int64_t>{1, 1};
}

// collnet_direct all-gather / reduce-scatter (collnet.hpp): every GPU is its rail's head.
plan::TransferPlan build_direct_gather(Op op, const std::vector<Group>& servers, Bytes bytes, const Options& o,
                                       const topology::Topology& topo) {
  plan::TransferPlan plan;
  const bool gather = op == Op::AllGather;
  const int32_t nodes = static_cast<int32_t>(servers.size());
  const size_t ppn = servers[0].size();
  for (const Group& sv : servers) {
    const size_t nics = nic_heads(sv, topo).size();
    if (nics < ppn)
      throw InputError(fmt::format("collnet_direct {} needs one NIC per GPU (NCCL: all-gather and reduce-scatter "
                                   "over CollNet require 1:1 GPU:NIC): {} has {} GPUs in the group on {} NICs "
                                   "(use ring, or collnet_direct for an all-reduce)",
                                   op_name(op), gpu_name(topo, sv[0]), ppn, nics));
  }
  const std::string code = detail::op_code(op);
  const Bytes block = detail::split(bytes, nodes * static_cast<int32_t>(ppn))[0];  // ceil S/n, one rank's block
  // Inside every server: each head sends its rail (every server's block of that rail, nodes x block) to the
  // other GPUs (all-gather), or receives their contributions to it (reduce-scatter); one coupled rate.
  if (ppn > 1)
    for (const Group& sv : servers) {
      plan::Transfer t;
      t.kind = plan::TransferKind::Coupled;
      t.ranks = sv;
      std::sort(t.ranks.begin(), t.ranks.end());
      for (int32_t head : sv)
        for (int32_t g : sv)
          if (g != head) t.edges.emplace_back(gather ? head : g, gather ? g : head);
      t.bytes = nodes * block;
      t.latency_steps = 1;
      t.qps = o.qps;
      t.label = code + "/collnet_direct/intra";
      plan.add(std::move(t));
    }
  // Through the switches: per rail k and channel of its head, a ring of the servers' k-th GPUs carrying the
  // blocks of the other servers (what head k receives in an all-gather, sends in a reduce-scatter).
  const int32_t per_head = std::max(1, o.channels / static_cast<int32_t>(ppn));
  const auto parts = detail::split((nodes - 1) * block, per_head);
  for (size_t k = 0; k < ppn; ++k) {
    Group head_of(nodes);
    for (int32_t v = 0; v < nodes; ++v) head_of[v] = servers[v][k];
    add_sharp_parts(plan, head_of, parts, k, per_head, o, fmt::format("{}/collnet_direct/sharp/head{}", code, k));
  }
  return plan;
}

plan::TransferPlan build_direct(Op op, const Group& group, Bytes bytes, const Options& o,
                                const topology::Topology& topo) {
  plan::TransferPlan plan;
  if (group.size() <= 1) return plan;
  const std::vector<Group> servers = servers_of("collnet_direct", group, topo, true);
  if (bytes == 0) return plan;
  if (op == Op::AllGather || op == Op::ReduceScatter) return build_direct_gather(op, servers, bytes, o, topo);
  const int32_t nodes = static_cast<int32_t>(servers.size());
  const SearchGraph graph = collnet_graph(comm_shape(group, topo, o.arch));
  std::vector<Group> heads(nodes);
  for (int32_t v = 0; v < nodes; ++v) {
    heads[v] = nic_heads(servers[v], topo);
    heads[v].resize(std::min(heads[v].size(), static_cast<size_t>(std::max(1, graph.channels))));
  }
  size_t h = heads[0].size();
  for (const auto& hv : heads) h = std::min(h, hv.size());
  const auto shards = detail::split(bytes, static_cast<int32_t>(h));
  const Bytes shard = shards[0];  // the largest (ceil S/h)
  // Inside every server: scatter to the heads and broadcast back, one coupled rate.
  const auto [eff_num, eff_den] = direct_efficiency(o.arch);
  for (int32_t v = 0; v < nodes; ++v) {
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = servers[v];
    std::sort(t.ranks.begin(), t.ranks.end());
    for (size_t k = 0; k < h; ++k)
      for (int32_t g : servers[v])
        if (g != heads[v][k]) t.edges.emplace_back(g, heads[v][k]);
    for (size_t k = 0; k < h; ++k)
      for (int32_t g : servers[v])
        if (g != heads[v][k]) t.edges.emplace_back(heads[v][k], g);
    if (t.edges.empty()) continue;  // one GPU per server: the head is the server
    t.bytes = detail::scale_up(shard, eff_den, eff_num);
    t.latency_steps = 2;
    t.qps = o.qps;
    t.label = "ar/collnet_direct/intra";
    plan.add(std::move(t));
  }
  // Through the switches: per head position and channel of that head, the SHARP pass of its part of the shard.
  const int32_t per_head = std::max(1, o.channels / static_cast<int32_t>(h));
  for (size_t k = 0; k < shards.size(); ++k) {
    Group head_of(nodes);
    for (int32_t v = 0; v < nodes; ++v) head_of[v] = heads[v][k];
    const auto parts = detail::split(shards[k], per_head);
    add_sharp_parts(plan, head_of, parts, k, per_head, o, fmt::format("ar/collnet_direct/sharp/head{}", k));
  }
  return plan;
}

plan::TransferPlan build_chain(Op op, const Group& group, Bytes bytes, const Options& o,
                               const topology::Topology& topo) {
  plan::TransferPlan plan;
  if (group.size() <= 1) return plan;
  const std::vector<Group> servers = servers_of("collnet_chain", group, topo, false);
  if (bytes == 0 || op != Op::AllReduce) return plan;
  const int32_t nodes = static_cast<int32_t>(servers.size());
  const size_t ppn = servers[0].size();
  std::vector<Group> nic_gpus(nodes);
  for (int32_t v = 0; v < nodes; ++v) nic_gpus[v] = nic_heads(servers[v], topo);
  const auto shares = detail::split(bytes, o.channels);
  for (int32_t c = 0; c < static_cast<int32_t>(shares.size()); ++c) {
    // Each server's chain for this channel: the GPUs after the head (cyclically in rank order), then the head.
    std::vector<Group> chain(nodes);
    Group head_of(nodes);
    for (int32_t v = 0; v < nodes; ++v) {
      const Group& sv = servers[v];
      head_of[v] = nic_gpus[v][static_cast<size_t>(c) % nic_gpus[v].size()];
      const size_t at = static_cast<size_t>(std::find(sv.begin(), sv.end(), head_of[v]) - sv.begin());
      for (size_t i = 1; i <= ppn; ++i) chain[v].push_back(sv[(at + i) % ppn]);
    }
    plan::Transfer t;
    t.kind = plan::TransferKind::Coupled;
    t.ranks = group;
    std::sort(t.ranks.begin(), t.ranks.end());
    for (int32_t v = 0; v < nodes; ++v)  // up the chain: reduce toward the head
      for (size_t i = 0; i + 1 < ppn; ++i) t.edges.emplace_back(chain[v][i], chain[v][i + 1]);
    add_head_ring(t, head_of);           // the heads through the switches
    for (int32_t v = 0; v < nodes; ++v)  // down the chain: the result from the head
      for (size_t i = ppn - 1; i > 0; --i) t.edges.emplace_back(chain[v][i], chain[v][i - 1]);
    t.bytes = shares[c];
    t.latency_steps = 2 * static_cast<int32_t>(ppn - 1) + 1;
    t.qps = o.qps;
    t.channel = c;
    t.label = "ar/collnet_chain";
    plan.add(std::move(t));
  }
  return plan;
}

}  // namespace

AlgorithmInfo collnet_direct_algorithm() {
  return {
      "collnet_direct",
      "CollNet direct (SHARP switches, NVSwitch servers): GPUs scatter to one head per NIC over NVLink, each head's "
      "shard is reduced in the switches (each NIC sends it up once and receives the sum once), heads send the "
      "result back to every GPU; all-gather / reduce-scatter (one NIC per GPU): the switches gather or reduce each "
      "rail across servers, NVLink spreads or collects it inside",
      {Op::AllReduce, Op::AllGather, Op::ReduceScatter},
      build_direct};
}

AlgorithmInfo collnet_chain_algorithm() {
  return {"collnet_chain",
          "CollNet chain (SHARP switches): per channel the server's GPUs reduce along a chain to the GPU of the "
          "channel's NIC, the switches reduce across servers, the result flows back down the chain",
          {Op::AllReduce},
          build_chain};
}

}  // namespace podnet::collective
