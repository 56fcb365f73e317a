#include "study/scaling.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::study {

workload::TrainResult simulate_job(const workload::Job& job, const topology::Topology& topo,
                                   engine::NetworkBackend& backend, const workload::TrainOptions& options,
                                   cluster::Policy policy, uint64_t seed, std::vector<int32_t>* gpus_out) {
  std::vector<int32_t> gpus = cluster::place(job, topo, policy, seed);
  workload::TrainResult r = workload::simulate_training(job, gpus, topo, backend, options);
  r.placement = cluster::summarize(job, gpus, topo, options.collective, cluster::policy_name(policy));
  if (gpus_out) *gpus_out = std::move(gpus);
  return r;
}

topology::Topology cap_nic_bandwidth(const topology::Topology& topo, double bytes_per_second) {
  topology::Topology t = topo;
  const Bandwidth cap(bytes_per_second * 8.0);
  for (auto& l : t.links) {
    const bool nic = t.nodes[static_cast<size_t>(l.a)].kind == topology::NodeKind::Nic ||
                     t.nodes[static_cast<size_t>(l.b)].kind == topology::NodeKind::Nic;
    if (nic && l.capacity.bps > cap.bps) l.capacity = cap;
  }
  return t;
}

std::vector<ScalingPoint> scaling_sweep(const workload::Job& base, const topology::Topology& topo,
                                        const BackendFactory& make_backend, const workload::TrainOptions& options,
                                        cluster::Policy policy, uint64_t seed, const std::vector<int64_t>& dps,
                                        const std::vector<double>& caps) {
  return scaling_sweep(base, topo, make_backend, options, policy, seed, dps, caps, ScalingHook{});
}

std::vector<ScalingPoint> scaling_sweep(const workload::Job& base, const topology::Topology& topo,
                                        const BackendFactory& make_backend, const workload::TrainOptions& options,
                                        cluster::Policy policy, uint64_t seed, const std::vector<int64_t>& dps,
                                        const std::vector<double>& caps, const ScalingHook& hook) {
  std::vector<int64_t> ds = dps;
  std::sort(ds.begin(), ds.end());
  ds.erase(std::unique(ds.begin(), ds.end()), ds.end());
  std::vector<double> cs = caps.empty() ? std::vector<double>{0.0} : caps;
  const int64_t per_replica = base.microbatches() * base.microbatch;
  const auto total = static_cast<int64_t>(topo.gpus.size());
  for (int64_t d : ds) {
    if (d < 1) throw InputError(fmt::format("sweep: dp {} must be >= 1", d));
    if (base.tp * base.pp * d > total)
      throw InputError(
          fmt::format("sweep: dp {} needs tp x pp x dp = {} GPUs, the fabric has {}", d, base.tp * base.pp * d, total));
    if (d % base.ep != 0) throw InputError(fmt::format("sweep: dp {} is not a multiple of ep {}", d, base.ep));
  }
  std::vector<ScalingPoint> out;
  const size_t points = ds.size() * cs.size();
  for (double cap : cs) {
    topology::Topology capped;
    const topology::Topology* t = &topo;
    if (cap > 0) {
      capped = cap_nic_bandwidth(topo, cap);
      t = &capped;
    }
    auto backend = make_backend(*t);
    double base_tps = 0;
    int64_t base_d = 0;
    for (int64_t d : ds) {
      workload::Job j = base;
      j.dp = d;
      j.global_batch = per_replica * d;
      if (j.bucket_params == 0) j.bucket_params = base.dp_bucket_params();  // same buckets at every d
      const std::string what =
          fmt::format("dp {}, {}", d, cap > 0 ? fmt::format("NIC cap {:g} GB/s", cap / 1e9) : "NICs as built");
      if (hook) hook(out.size(), points, what, false);
      const workload::TrainResult r = simulate_job(j, *t, *backend, options, policy, seed);
      ScalingPoint p;
      p.cap_bytes_per_second = cap;
      p.dp = d;
      p.gpus = j.gpus();
      p.global_batch = j.global_batch;
      p.iteration = r.iteration;
      p.tokens_per_second = r.tokens_per_second;
      p.mfu = r.mfu;
      p.breakdown = r.breakdown;
      if (base_d == 0) {
        base_d = d;
        base_tps = r.tokens_per_second;
      }
      p.ideal = static_cast<double>(d) / static_cast<double>(base_d);
      p.speedup = base_tps > 0 ? r.tokens_per_second / base_tps : 0.0;
      p.efficiency = p.ideal > 0 ? p.speedup / p.ideal : 0.0;
      out.push_back(p);
      if (hook) hook(out.size() - 1, points, what, true);
    }
  }
  return out;
}

}  // namespace podnet::study
