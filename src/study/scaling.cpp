#include "study/scaling.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

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
  // The NIC's port on the network (its link to a switch), not its PCIe link to the GPU: a cap equal to the
  // NIC's speed is the fabric as built. A multi-plane NIC's cap is shared by its planes' ports.
  const Bandwidth cap(bytes_per_second * 8.0 / std::max(1, topo.nic_planes));
  using topology::NodeKind;
  for (auto& l : t.links) {
    const NodeKind a = t.nodes[static_cast<size_t>(l.a)].kind, b = t.nodes[static_cast<size_t>(l.b)].kind;
    const bool nic_port = (a == NodeKind::Nic && b == NodeKind::Switch) ||
                          (a == NodeKind::Switch && b == NodeKind::Nic);
    if (nic_port && l.capacity.bps > cap.bps) l.capacity = cap;
  }
  return t;
}

namespace {

// The fastest link of the first NIC whose media `pick` takes; 0 without NICs or such a link.
template <class Pick>
Bandwidth first_nic_link(const topology::Topology& topo, Pick pick) {
  Bandwidth fastest;
  if (topo.nics.empty()) return fastest;
  for (const topology::Link& l : topo.links)
    if ((l.a == topo.nics.front() || l.b == topo.nics.front()) && pick(l.media))
      fastest = std::max(fastest, l.capacity);
  return fastest;
}

}  // namespace

Bandwidth nic_speed(const topology::Topology& topo) {
  return first_nic_link(topo,
                        [](topology::Media m) { return m != topology::Media::Pcie && m != topology::Media::NvLink; }) *
         std::max(1, topo.nic_planes);
}

Bandwidth nic_pcie_speed(const topology::Topology& topo) {
  return first_nic_link(topo, [](topology::Media m) { return m == topology::Media::Pcie; });
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
    if (d < 1) throw InputError(fmt::format("--sweep-dp {}: expected a DP of 1 or more", d));
    if (base.tp * base.cp * base.pp * d > total)
      throw InputError(fmt::format("--sweep-dp {}: tp x cp x pp x dp = {} GPUs, but the fabric has {}; expected dp at "
                                   "most {}",
                                   d, thousands(base.tp * base.cp * base.pp * d), thousands(total),
                                   thousands(total / (base.tp * base.cp * base.pp))));
    if (d % base.ep != 0)
      throw InputError(fmt::format("--sweep-dp {}: expected a multiple of ep {} (experts split over DP)", d, base.ep));
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
      p.memory_bytes = workload::peak_memory(j).total();
      p.fits = p.memory_bytes <= static_cast<double>(j.gpu.hbm_bytes);
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
