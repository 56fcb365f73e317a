#include "cluster/jobs.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "engine/registry.hpp"
#include "routing/route.hpp"

namespace podnet::cluster {

const std::vector<SchedulerInfo>& schedulers() {
  static const std::vector<SchedulerInfo> k = {
      {"first-fit", "each job on the first free GPUs in the fabric's numbering (ignores the fabric)",
       Scheduler::FirstFit},
      {"topology-aware",
       "each job in as few aggregation groups as possible: the best-fitting group, else the emptiest groups",
       Scheduler::TopologyAware},
      {"random", "each job on servers with free GPUs in a seeded random order", Scheduler::Random},
  };
  return k;
}

const char* scheduler_name(Scheduler s) {
  for (const auto& x : schedulers())
    if (x.policy == s) return x.name;
  return "?";
}

Scheduler parse_scheduler(std::string_view name) {
  std::string names;
  for (const auto& x : schedulers()) {
    if (name == x.name) return x.policy;
    names += (names.empty() ? "" : ", ") + std::string(x.name);
  }
  throw InputError(fmt::format("unknown scheduler policy '{}'; expected one of: {}", name, names));
}

std::vector<ParamSpec> scheduler_params() {
  std::vector<std::string> names;
  for (const auto& x : schedulers()) names.push_back(x.name);
  return {{"policy", ParamType::String, "first-fit",
           "how the cluster scheduler places the `jobs:` on the fabric's GPUs (a job's `placement:` overrides it)",
           -1e300, 1e300, names}};
}

namespace {

const topology::Node& gpu_node(const topology::Topology& topo, int32_t g) {
  return topo.nodes[static_cast<size_t>(topo.gpus[static_cast<size_t>(g)])];
}

std::pair<int32_t, int32_t> group_of(const topology::Topology& topo, int32_t g) {
  const auto& nd = gpu_node(topo, g);
  return {nd.pod, nd.group};
}

}  // namespace

std::vector<int32_t> gpus_in_fabric_order(const topology::Topology& topo) {
  std::vector<int32_t> all(topo.gpus.size());
  std::iota(all.begin(), all.end(), 0);
  auto key = [&](int32_t g) {
    const auto& nd = gpu_node(topo, g);
    return std::make_tuple(nd.pod, nd.group, nd.server, nd.local, g);
  };
  std::sort(all.begin(), all.end(), [&](int32_t a, int32_t b) { return key(a) < key(b); });
  return all;
}

std::vector<std::vector<int32_t>> schedule(const topology::Topology& topo, const std::vector<int64_t>& sizes,
                                           const std::vector<Scheduler>& policies,
                                           const std::vector<std::string>& names, uint64_t seed) {
  const auto n = static_cast<int32_t>(topo.gpus.size());
  const std::vector<int32_t> order = gpus_in_fabric_order(topo);
  std::vector<int32_t> position(static_cast<size_t>(n));
  for (int32_t k = 0; k < n; ++k) position[static_cast<size_t>(order[static_cast<size_t>(k)])] = k;
  std::vector<uint8_t> taken(static_cast<size_t>(n), 0);
  int64_t free_count = n;
  std::vector<std::vector<int32_t>> out;
  for (size_t j = 0; j < sizes.size(); ++j) {
    const int64_t need = sizes[j];
    if (need < 1 || need > free_count)
      throw InputError(fmt::format("jobs[{}] ({}): needs {} GPUs, but {} of the fabric's {} are free after the jobs "
                                   "before it; expected at most {}",
                                   j, names[j], need, free_count, n, free_count));
    std::vector<int32_t> got;
    got.reserve(static_cast<size_t>(need));
    switch (policies[j]) {
      case Scheduler::FirstFit:
        for (int32_t g = 0; g < n && static_cast<int64_t>(got.size()) < need; ++g)
          if (!taken[static_cast<size_t>(g)]) got.push_back(g);
        break;
      case Scheduler::TopologyAware: {
        // Free GPUs per aggregation group, groups in fabric order.
        std::vector<std::vector<int32_t>> groups;
        std::pair<int32_t, int32_t> last{-2, -2};
        for (int32_t g : order) {
          const auto key = group_of(topo, g);
          if (groups.empty() || key != last) groups.emplace_back();
          last = key;
          if (!taken[static_cast<size_t>(g)]) groups.back().push_back(g);
        }
        // The group with the fewest free GPUs that still holds `count` (ties: the lowest), skipping `skip`.
        auto best_fit = [&](int64_t count, const std::vector<uint8_t>& skip) {
          int64_t best = -1;
          for (size_t k = 0; k < groups.size(); ++k) {
            if (skip[k] || static_cast<int64_t>(groups[k].size()) < count) continue;
            if (best < 0 || groups[k].size() < groups[static_cast<size_t>(best)].size()) best = static_cast<int64_t>(k);
          }
          return best;
        };
        std::vector<uint8_t> chosen(groups.size(), 0);
        const int64_t one = best_fit(need, chosen);
        if (one >= 0) {
          got.assign(groups[static_cast<size_t>(one)].begin(), groups[static_cast<size_t>(one)].begin() + need);
          break;
        }
        std::vector<size_t> by_free(groups.size());
        std::iota(by_free.begin(), by_free.end(), size_t{0});
        std::stable_sort(by_free.begin(), by_free.end(),
                         [&](size_t a, size_t b) { return groups[a].size() > groups[b].size(); });
        int64_t whole = 0;
        size_t k = 0;
        for (; k < by_free.size(); ++k) {
          const auto size = static_cast<int64_t>(groups[by_free[k]].size());
          if (whole + size >= need) break;
          whole += size;
          chosen[by_free[k]] = 1;
        }
        for (size_t g = 0; g < groups.size(); ++g)
          if (chosen[g]) got.insert(got.end(), groups[g].begin(), groups[g].end());
        const int64_t rest = need - whole;
        const int64_t last_group = best_fit(rest, chosen);  // exists: by_free[k] holds rest
        got.insert(got.end(), groups[static_cast<size_t>(last_group)].begin(),
                   groups[static_cast<size_t>(last_group)].begin() + rest);
        break;
      }
      case Scheduler::Random: {
        std::map<int32_t, std::vector<int32_t>> by_server;  // server -> free GPUs in local order
        for (int32_t g = 0; g < n; ++g)
          if (!taken[static_cast<size_t>(g)]) by_server[gpu_node(topo, g).server].push_back(g);
        std::vector<int32_t> servers;
        for (const auto& [s, gs] : by_server) servers.push_back(s);
        Rng rng = Rng(seed).stream(fmt::format("scheduler/{}", j));
        for (size_t i = servers.size(); i > 1; --i) std::swap(servers[i - 1], servers[rng.below(i)]);
        for (int32_t s : servers)
          for (int32_t g : by_server[s])
            if (static_cast<int64_t>(got.size()) < need) got.push_back(g);
        break;
      }
    }
    for (int32_t g : got) taken[static_cast<size_t>(g)] = 1;
    free_count -= need;
    std::sort(got.begin(), got.end(), [&](int32_t a, int32_t b) {
      return position[static_cast<size_t>(a)] < position[static_cast<size_t>(b)];
    });
    out.push_back(std::move(got));
  }
  return out;
}

Fragmentation fragmentation(const topology::Topology& topo, const std::vector<std::vector<int32_t>>& allocations) {
  Fragmentation f;
  std::map<std::pair<int32_t, int32_t>, std::pair<int64_t, int64_t>> groups;  // (pod, group) -> (GPUs, taken)
  for (int32_t g = 0; g < static_cast<int32_t>(topo.gpus.size()); ++g) ++groups[group_of(topo, g)].first;
  for (const auto& a : allocations) {
    std::set<std::pair<int32_t, int32_t>> spanned;
    for (int32_t g : a) {
      spanned.insert(group_of(topo, g));
      ++groups[group_of(topo, g)].second;
    }
    f.groups_spanned.push_back(static_cast<int32_t>(spanned.size()));
  }
  f.groups = static_cast<int32_t>(groups.size());
  for (const auto& [key, c] : groups) {
    const int64_t free = c.first - c.second;
    f.free_gpus += free;
    if (c.second == 0) {
      ++f.groups_empty;
    } else if (free == 0) {
      ++f.groups_full;
    } else {
      ++f.groups_partial;
      f.stranded_gpus += free;
    }
  }
  return f;
}

plan::TransferPlan merge_plans(const std::vector<JobPlan>& jobs, std::vector<int32_t>& owner) {
  plan::TransferPlan out;
  out.op = "jobs";
  out.algorithm = "merged";
  owner.clear();
  for (size_t j = 0; j < jobs.size(); ++j) {
    const JobPlan& jp = jobs[j];
    int32_t gate = -1;
    if (jp.start.ps > 0) {
      plan::Transfer t;
      t.kind = plan::TransferKind::Compute;
      t.ranks = jp.gpus;
      std::sort(t.ranks.begin(), t.ranks.end());
      t.duration = jp.start;
      t.latency_steps = 0;
      t.label = "start/" + jp.name;
      gate = out.add(std::move(t));
      owner.push_back(static_cast<int32_t>(j));
    }
    const auto base = static_cast<int32_t>(out.transfers.size());
    for (const plan::Transfer& src : jp.plan.transfers) {
      plan::Transfer t = src;
      for (int32_t& d : t.deps) d += base;
      if (t.deps.empty() && gate >= 0) t.deps.push_back(gate);
      out.add(std::move(t));
      owner.push_back(static_cast<int32_t>(j));
    }
  }
  return out;
}

void check_jobs_engine(std::string_view engine) {
  if (!engine::engine_info(engine).traits.contention)
    throw InputError(fmt::format(
        "jobs: the {} engine cannot run several jobs on one fabric: it times every operation on an idle network, "
        "with no contention between operations, so jobs could never slow each other; expected network.engine {} "
        "(the last on small fabrics)",
        engine, engine::engine_names_with(&engine::EngineTraits::contention)));
}

JobsRun run_jobs(const std::vector<JobPlan>& jobs, const topology::Topology& topo, std::string_view engine,
                 const engine::NetworkOptions& options, const std::function<void(const std::string&)>& phase) {
  check_jobs_engine(engine);
  JobsRun out;
  out.engine = std::string(engine);
  const size_t n = jobs.size();
  std::vector<int32_t> owner;
  const plan::TransferPlan merged = merge_plans(jobs, owner);
  const auto dirs = static_cast<size_t>(routing::dir_link_count(topo));
  std::vector<double> bytes(dirs * n, 0.0);  // [dir link][job]
  engine::NetworkOptions together = options;
  together.observers.on_route = [&](int32_t transfer, const std::vector<routing::PathPart>& parts, double b) {
    const auto j = static_cast<size_t>(owner[static_cast<size_t>(transfer)]);
    for (const auto& p : parts) bytes[static_cast<size_t>(p.link) * n + j] += b * p.fraction;
  };
  if (phase) phase(fmt::format("the {} jobs together (run 1 of {})", n, n + 1));
  const engine::RunReport run = engine::make_backend(engine, topo, together)->run(merged);
  if (run.job_failed) throw Error("jobs: the together run stopped: " + run.failure);
  out.makespan = run.makespan;
  out.flows = run.flows;
  out.jobs.resize(n);
  for (size_t k = 0; k < merged.transfers.size(); ++k) {
    JobOutcome& o = out.jobs[static_cast<size_t>(owner[k])];
    o.finish = std::max(o.finish, run.transfers[k].finish);
  }
  engine::NetworkOptions alone = options;
  alone.observers.on_route = nullptr;
  for (size_t j = 0; j < n; ++j) {
    JobOutcome& o = out.jobs[j];
    o.together = o.finish - jobs[j].start;
    if (phase) phase(fmt::format("job {} alone (run {} of {})", jobs[j].name, j + 2, n + 1));
    const engine::RunReport a = engine::make_backend(engine, topo, alone)->run(jobs[j].plan);
    if (a.job_failed) throw Error(fmt::format("jobs: {} alone stopped: {}", jobs[j].name, a.failure));
    o.alone = a.makespan;
    o.ratio = o.alone.ps > 0 ? o.together.seconds() / o.alone.seconds() : 1.0;
  }
  for (size_t d = 0; d < dirs; ++d) {
    const double* b = &bytes[d * n];
    size_t users = 0;
    for (size_t j = 0; j < n; ++j) users += b[j] > 0;
    if (users == 0) continue;
    ++out.links_used;
    for (size_t j = 0; j < n; ++j) {
      if (b[j] <= 0) continue;
      out.jobs[j].network_bytes += b[j];
      ++out.jobs[j].links;
      if (users > 1) {
        out.jobs[j].shared_bytes += b[j];
        ++out.jobs[j].shared_links;
      }
    }
    if (users > 1) out.shared.push_back({static_cast<int32_t>(d), std::vector<double>(b, b + n)});
  }
  std::stable_sort(out.shared.begin(), out.shared.end(),
                   [](const SharedLink& a, const SharedLink& b) { return a.total() > b.total(); });
  return out;
}

}  // namespace podnet::cluster
