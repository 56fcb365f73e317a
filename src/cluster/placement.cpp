#include "cluster/placement.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/format.h>
#include <map>
#include <numeric>
#include <set>

#include "collective/ring_order.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace podnet::cluster {

const std::vector<PolicyInfo>& policies() {
  static const std::vector<PolicyInfo> k = {
      {"topology_aware",
       "TP inside a server; each stage's DP groups packed into as few aggregation groups as "
       "possible (best fit), consecutive stages in one pod",
       Policy::TopologyAware},
      {"packed", "rank r on GPU r (the fabric's own numbering)", Policy::Packed},
      {"random", "whole servers in a seeded random order, ranks packed into them", Policy::Random},
  };
  return k;
}

const char* policy_name(Policy p) {
  for (const auto& x : policies())
    if (x.policy == p) return x.name;
  return "?";
}

Policy parse_policy(std::string_view name) {
  std::string names;
  for (const auto& x : policies()) {
    if (name == x.name) return x.policy;
    names += (names.empty() ? "" : ", ") + std::string(x.name);
  }
  throw InputError(fmt::format("unknown placement policy '{}'; expected one of: {}", name, names));
}

std::vector<ParamSpec> placement_params() {
  std::vector<std::string> names;
  for (const auto& x : policies()) names.push_back(x.name);
  return {
      {"policy", ParamType::String, "topology_aware", "how the job's ranks map to fabric GPUs", -1e300, 1e300, names}};
}

namespace {

struct GroupSlots {
  int32_t pod = topology::kNone;
  int32_t group = topology::kNone;
  std::vector<int32_t> gpus;  // by (server, local)
  size_t next = 0;
  size_t free() const { return gpus.size() - next; }
};

std::vector<int32_t> topology_aware(const workload::Job& job, const topology::Topology& topo) {
  const auto n = static_cast<size_t>(job.gpus());
  // GPUs by (pod, group, server, local), split by aggregation group.
  std::vector<int32_t> all(topo.gpus.size());
  std::iota(all.begin(), all.end(), 0);
  auto key = [&](int32_t g) {
    const auto& nd = topo.nodes[static_cast<size_t>(topo.gpus[static_cast<size_t>(g)])];
    return std::make_tuple(nd.pod, nd.group, nd.server, nd.local, g);
  };
  std::sort(all.begin(), all.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  std::vector<GroupSlots> groups;
  for (int32_t g : all) {
    const auto& nd = topo.nodes[static_cast<size_t>(topo.gpus[static_cast<size_t>(g)])];
    if (groups.empty() || groups.back().pod != nd.pod || groups.back().group != nd.group)
      groups.push_back({nd.pod, nd.group, {}, 0});
    groups.back().gpus.push_back(g);
  }
  size_t group_cap = 0;
  for (const auto& g : groups) group_cap = std::max(group_cap, g.gpus.size());

  // The rank sequence and block size: DP-heavy -> Megatron order, blocks of one stage (t d ranks);
  // PP-heavy -> (tp, pp, dp) order, blocks of one pipeline (t p ranks). An MoE job's EP groups are runs of
  // consecutive DP ranks, which only Megatron's order keeps on one server: their all-to-all bytes count with DP's
  // (a Mixtral job at batch 8,192 had its EP groups spread over 8 servers each, 1.23x the packed iteration).
  const workload::Volumes v = workload::volumes(job);
  const bool dp_heavy = v.dp_bytes_per_gpu + v.ep_bytes_per_gpu >= v.pp_bytes_per_gpu;
  std::vector<int64_t> seq;
  seq.reserve(n);
  size_t block = 0;
  if (job.pipeline_inner) {  // the job's own order keeps each pipeline contiguous: blocks of one pipeline
    for (int64_t r = 0; r < job.gpus(); ++r) seq.push_back(r);
    block = static_cast<size_t>(job.tp * job.cp * job.pp);
  } else if (dp_heavy) {
    for (int64_t r = 0; r < job.gpus(); ++r) seq.push_back(r);
    block = static_cast<size_t>(job.tp * job.replicas());
  } else {
    for (int64_t d = 0; d < job.replicas(); ++d)
      for (int64_t p = 0; p < job.pp; ++p)
        for (int64_t t = 0; t < job.tp; ++t) seq.push_back(job.rank(t, d, p));
    block = static_cast<size_t>(job.tp * job.pp);
  }

  std::vector<int32_t> out(n, -1);
  size_t pos = 0;
  int32_t cur_pod = groups.empty() ? topology::kNone : groups.front().pod;
  auto take = [&](GroupSlots& g, size_t count) {
    for (size_t k = 0; k < count; ++k) out[static_cast<size_t>(seq[pos++])] = g.gpus[g.next++];
    cur_pod = g.pod;
  };
  while (pos < n) {
    size_t need = std::min(block, n - pos);
    if (need <= group_cap) {
      // Best fit: the group with the fewest free GPUs that still holds the block; ties to the current pod.
      GroupSlots* best = nullptr;
      for (auto& g : groups) {
        if (g.free() < need) continue;
        if (!best || g.free() < best->free() || (g.free() == best->free() && g.pod == cur_pod && best->pod != cur_pod))
          best = &g;
      }
      if (best) {
        take(*best, need);
        continue;
      }
    } else {
      // Whole free groups, the current pod first.
      std::vector<GroupSlots*> order;
      for (auto& g : groups)
        if (g.pod == cur_pod) order.push_back(&g);
      for (auto& g : groups)
        if (g.pod != cur_pod) order.push_back(&g);
      for (GroupSlots* g : order) {
        if (need < g->gpus.size() || g->next != 0) continue;
        const size_t c = g->gpus.size();
        take(*g, c);
        need -= c;
      }
      if (need == 0) continue;
      GroupSlots* best = nullptr;  // the rest: best fit
      for (auto& g : groups)
        if (g.free() >= need && (!best || g.free() < best->free())) best = &g;
      if (best) {
        take(*best, need);
        continue;
      }
    }
    // Nothing fits whole: fill the groups with the most free GPUs first.
    std::vector<GroupSlots*> order;
    for (auto& g : groups)
      if (g.free() > 0) order.push_back(&g);
    std::stable_sort(order.begin(), order.end(), [](GroupSlots* a, GroupSlots* b) { return a->free() > b->free(); });
    for (GroupSlots* g : order) {
      if (need == 0) break;
      const size_t c = std::min(need, g->free());
      take(*g, c);
      need -= c;
    }
  }
  return out;
}

}  // namespace

std::vector<int32_t> place(const workload::Job& job, const topology::Topology& topo, Policy policy, uint64_t seed) {
  const int64_t n = job.gpus();
  const auto total = static_cast<int64_t>(topo.gpus.size());
  if (n > total)
    throw InputError(fmt::format("the job needs {} GPUs (tp x cp x pp x dp), the fabric has {}", n, total));
  switch (policy) {
    case Policy::Packed: {
      std::vector<int32_t> out(static_cast<size_t>(n));
      std::iota(out.begin(), out.end(), 0);
      return out;
    }
    case Policy::Random: {
      std::map<int32_t, std::vector<std::pair<int32_t, int32_t>>> by_server;  // server -> (local, gpu)
      for (int32_t g = 0; g < static_cast<int32_t>(total); ++g) {
        const auto& nd = topo.nodes[static_cast<size_t>(topo.gpus[static_cast<size_t>(g)])];
        by_server[nd.server].emplace_back(nd.local, g);
      }
      std::vector<std::vector<std::pair<int32_t, int32_t>>> servers;
      for (auto& [s, v] : by_server) {
        std::sort(v.begin(), v.end());
        servers.push_back(std::move(v));
      }
      Rng rng = Rng(seed).stream("placement");
      for (size_t i = servers.size(); i > 1; --i) std::swap(servers[i - 1], servers[rng.below(i)]);
      std::vector<int32_t> out;
      out.reserve(static_cast<size_t>(n));
      for (const auto& s : servers)
        for (const auto& [local, g] : s)
          if (static_cast<int64_t>(out.size()) < n) out.push_back(g);
      return out;
    }
    case Policy::TopologyAware:
    default: return topology_aware(job, topo);
  }
}

workload::PlacementSummary summarize(const workload::Job& job, const std::vector<int32_t>& gpu_of_rank,
                                     const topology::Topology& topo, const collective::Options& options,
                                     const std::string& policy) {
  workload::PlacementSummary s;
  s.present = true;
  s.torus_cubes = !topo.torus_dims.empty();
  s.policy = policy;
  s.same_as_packed = policy != policy_name(Policy::Packed);
  for (size_t r = 0; r < gpu_of_rank.size() && s.same_as_packed; ++r)
    s.same_as_packed = gpu_of_rank[r] == static_cast<int32_t>(r);
  auto node = [&](int32_t g) -> const topology::Node& {
    return topo.nodes[static_cast<size_t>(topo.gpus[static_cast<size_t>(g)])];
  };
  std::map<int32_t, int32_t> per_group;
  std::set<int32_t> pods;
  for (int32_t g : gpu_of_rank) {
    ++per_group[node(g).group];
    pods.insert(node(g).pod);
  }
  s.gpus_per_group.assign(per_group.begin(), per_group.end());
  s.pods = static_cast<int32_t>(pods.size());
  s.zones = topo.zones > 0;
  auto crossing = [&](int32_t a, int32_t b, double bytes, double& all, double& cross_group, double& cross_pod) {
    all += bytes;
    const auto &na = node(a), &nb = node(b);
    if (na.group != nb.group) cross_group += bytes;
    if (na.pod != nb.pod) cross_pod += bytes;
    if (na.zone != nb.zone) s.cross_zone_bytes += bytes;
  };
  auto gpus = [&](const std::vector<int64_t>& ranks) {
    collective::Group g;
    for (int64_t r : ranks) g.push_back(gpu_of_rank[static_cast<size_t>(r)]);
    return g;
  };
  // DP: every ring hop carries (n-1)/n x the bytes a parameter moves (gradients reduced, parameters gathered by
  // ZeRO stage: workload::dp_wire_bytes_per_param, as workload::volumes counts them).
  const double per_param = workload::dp_wire_bytes_per_param(job);
  auto ring_bytes = [&](const collective::Group& g, double params) {
    if (g.size() < 2 || params <= 0) return;
    const double n = static_cast<double>(g.size());
    const double hop = (n - 1) / n * params * per_param;
    const collective::Group ring = collective::ring_order(g, options.order, 0, topo);
    for (size_t k = 0; k < ring.size(); ++k)
      crossing(ring[k], ring[(k + 1) % ring.size()], hop, s.dp_bytes, s.dp_cross_group_bytes, s.dp_cross_pod_bytes);
  };
  for (int64_t i = 0; i < job.pp; ++i) {
    const workload::StageParams sp = workload::stage_params(job, i);
    for (int64_t j = 0; j < job.tp; ++j) {
      ring_bytes(gpus(workload::dp_group(job, j, i)), sp.dense);
      if (job.model.moe())
        for (int64_t e = 0; e < job.ep; ++e) ring_bytes(gpus(workload::edp_group(job, j, e, i)), sp.expert);
    }
  }
  // PP: per virtual-stage boundary, per replica and TP rank, 2 directions x m microbatches of b s h e / t.
  if (job.pp > 1) {
    const double bsh =
        static_cast<double>(job.microbatch * (job.model.seq / job.cp) * job.model.hidden * job.bytes_per_param);
    const double per_edge =
        2.0 * static_cast<double>(job.microbatches()) * std::ceil(bsh / static_cast<double>(job.tp));
    for (int64_t vs = 0; vs + 1 < job.pp * job.interleave; ++vs) {
      const int64_t a = vs % job.pp, b = (vs + 1) % job.pp;
      for (int64_t r = 0; r < job.replicas(); ++r)
        for (int64_t j = 0; j < job.tp; ++j)
          crossing(gpu_of_rank[static_cast<size_t>(job.rank(j, r, a))],
                   gpu_of_rank[static_cast<size_t>(job.rank(j, r, b))], per_edge, s.pp_bytes, s.pp_cross_group_bytes,
                   s.pp_cross_pod_bytes);
    }
  }
  // EP: every pair of an EP group exchanges an equal share of each GPU's all-to-all bytes; the servers a group
  // spans (one: its all-to-alls stay on NVLink).
  if (job.model.moe() && job.ep > 1) {
    const double pair = workload::volumes(job).ep_bytes_per_gpu / static_cast<double>(job.ep - 1);
    for (int64_t i = 0; i < job.pp; ++i)
      for (int64_t j = 0; j < job.tp; ++j)
        for (int64_t k = 0; k < job.dp / job.ep; ++k) {
          const collective::Group g = gpus(workload::ep_group(job, j, k, i));
          std::set<int32_t> servers;
          for (int32_t a : g) {
            servers.insert(node(a).server);
            for (int32_t b : g)
              if (a != b) {
                s.ep_bytes += pair;
                if (node(a).group != node(b).group) s.ep_cross_group_bytes += pair;
              }
          }
          s.ep_servers = std::max(s.ep_servers, static_cast<int32_t>(servers.size()));
        }
  }
  return s;
}

}  // namespace podnet::cluster
