#include "study/reliability.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/rng.hpp"
#include "study/frontend_io.hpp"
#include "workload/job.hpp"

namespace podnet::study {

namespace {

bool given(const scenario::Scenario& sc, const std::string& key) {
  return sc.lines.count(key) || sc.from_set.count(key) || sc.from_fragment.count(key);
}

}  // namespace

std::optional<reliability::CheckpointIo> apply_storage(const scenario::Setup& s, int64_t gpus, reliability::Config& rc,
                                                       const WriteBehindTraining* behind) {
  const bool simulated = s.frontend.has_storage();
  if (s.storage.async && !s.storage.present() && !simulated)
    throw InputError(s.scenario.where("storage.checkpoint_mode") +
                     ": async writes the checkpoint behind training, which needs a storage network to time the write; "
                     "expected storage.frontend_nics, or frontend.nics with frontend.storage_nodes");
  if (!s.storage.present() && !simulated) return std::nullopt;
  const workload::Job job = s.job(false);
  const int64_t servers = checkpoint_writers(s.fabric, gpus);
  const double bytes = job.model.params() * kCheckpointBytesPerParam;
  reliability::CheckpointIo io;
  if (simulated) {
    const topology::FrontendFabric fe = s.scenario.build_storage_network(s.fabric);
    if (servers > fe.servers)
      throw InputError(fmt::format(
          "{}: the storage nodes take the back end's last {} server slots, but the job's {} GPUs need {} of the "
          "{} servers before them; expected fewer storage nodes, a smaller job or a larger back end",
          s.scenario.where("frontend.storage_nodes"), thousands(fe.config.storage_nodes), thousands(gpus),
          thousands(servers), thousands(fe.servers)));
    const FrontendIo sim = simulate_checkpoint(fe, bytes, static_cast<int32_t>(servers), s.engine, s.network);
    io.bytes = bytes;
    io.overhead_s = s.storage.checkpoint_overhead_s;
    io.write_s = io.overhead_s + sim.write.seconds;
    io.read_s = io.overhead_s + sim.read.seconds;
    io.write_bound = sim.write.bound;
    io.read_bound = sim.read.bound;
    io.write_Bps = sim.write.gbyte_per_s * 1e9;
    io.read_Bps = sim.read.gbyte_per_s * 1e9;
    io.simulated_by = sim.engine;
    io.routing = s.network.routing.policy;
    io.network = fe.converged ? "backend" : "frontend";
    io.flows = sim.flows;
    io.frontend_Bps = static_cast<double>(servers) * fe.config.nics * fe.config.nic_speed.bytes_per_second();
    const double storage_nics = fe.storage_ports() * fe.config.nic_speed.bytes_per_second();
    auto media = [&](double per_node) {
      return per_node > 0 ? std::min(storage_nics, per_node * fe.config.storage_nodes) : storage_nics;
    };
    io.storage_write_Bps = media(fe.config.storage_write_Bps);
    io.storage_read_Bps = media(fe.config.storage_read_Bps);
  } else {
    io = reliability::checkpoint_io(bytes, servers, s.storage);
  }
  if (s.storage.async) {
    // The job stops to copy its shards to host memory; the write runs behind training (storage.hpp).
    io.async = true;
    io.snapshot_s = bytes / static_cast<double>(std::max<int64_t>(1, gpus)) / s.storage.snapshot_Bps;
    if (behind != nullptr) {  // the write shares links with training (storage.hpp)
      io.behind_training = true;
      io.write_behind_s = behind->write_s;
      io.training_slowdown = behind->slowdown;
      io.training_lost_s = behind->outlasts && behind->slowdown > 0
                               ? behind->write_s * (1 - 1 / behind->slowdown)
                               : std::max(0.0, behind->iteration_s - behind->iteration_alone_s);
    }
    if (!given(s.scenario, "reliability.checkpoint_cost"))
      rc.checkpoint_cost_hours = (io.snapshot_s + io.training_lost_s) / 3600;
    const double write_s = io.behind_training ? io.overhead_s + io.write_behind_s : io.write_s;
    if (!given(s.scenario, "reliability.restart_cost"))
      rc.restart_cost_hours = (s.storage.restart_overhead_s + io.read_s + write_s) / 3600;
    rc.min_interval_hours = write_s / 3600;
    return io;
  }
  if (!given(s.scenario, "reliability.checkpoint_cost")) rc.checkpoint_cost_hours = io.write_s / 3600;
  if (!given(s.scenario, "reliability.restart_cost"))
    rc.restart_cost_hours = (s.storage.restart_overhead_s + io.read_s) / 3600;
  return io;
}

ReliabilityResult reliability(const scenario::Setup& s) {
  ReliabilityResult r;
  r.config = s.reliability;
  // Every GPU (job_gpus 0) is every GPU a job may use: not the storage nodes' slots (frontend.converged).
  if (r.config.job_gpus == 0 && s.training_gpus() < static_cast<int64_t>(s.fabric.gpus.size()))
    r.config.job_gpus = s.training_gpus();
  try {
    r.inventory = reliability::count_inventory(s.fabric, r.config.job_gpus);
  } catch (const ParamError& e) {
    throw InputError(fmt::format("{}: {}", s.scenario.where(e.key()), e.what()));
  }
  r.checkpoint_io = apply_storage(s, r.config.job_gpus > 0 ? r.config.job_gpus : s.training_gpus(), r.config);
  r.risk = reliability::assess(r.inventory, r.config);
  r.advice = reliability::advise(r.risk, r.config);
  const Rng rng(s.scenario.seed);
  r.interruptions = reliability::simulate_interruptions(r.risk.classes, r.config.duration_hours, r.config.trials,
                                                        rng.stream("reliability.interruptions"));
  r.training = reliability::simulate_training(r.config.training_hours, r.advice.interval_hours,
                                              r.config.checkpoint_cost_hours, r.config.restart_cost_hours,
                                              r.risk.mtbi_hours, r.config.trials, rng.stream("reliability.training"));
  // What train would say of the job: these figures do not need it to fit, but the user should know it cannot run.
  try {
    (void)s.job(true);
  } catch (const InputError& e) {
    r.job_refused = e.what();
  }
  return r;
}

TrainingReliability training_reliability(const scenario::Setup& s, const std::vector<int32_t>& gpus, double days,
                                         const WriteBehindTraining* behind) {
  reliability::Config rc = s.reliability;
  rc.training_hours = days * 24.0;
  const auto io = apply_storage(s, static_cast<int64_t>(gpus.size()), rc, behind);
  const reliability::Risk risk = reliability::assess(reliability::count_inventory_of(s.fabric, gpus), rc);
  const reliability::CheckpointAdvice adv = reliability::advise(risk, rc);
  return {risk.mtbi_hours,
          adv.interval_hours,
          rc.checkpoint_cost_hours,
          rc.restart_cost_hours,
          adv.goodput,
          adv.days_to_train,
          io};
}

}  // namespace podnet::study
