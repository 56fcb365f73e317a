// The frontend and storage network as the checkpoint sees it (scenario section `storage:`): how long a
// checkpoint takes to write and to read back, from its size and the bandwidth between the job's servers and
// the storage nodes. Until the section gives frontend NICs, reliability keeps its constants
// (reliability.checkpoint_cost, restart_cost).
//
// Model (closed form; the frontend fabric itself is not simulated yet):
//   write time  = checkpoint_overhead + checkpoint bytes / (servers x min(frontend_nics x frontend_nic_speed x
//                                                                     efficiency, write_bandwidth_per_server))
//   read time   = checkpoint_overhead + the same with read_bandwidth_per_server
//   restart     = restart_overhead (detect, reschedule, start the processes) + read time
// Defaults: the storage share of a server is Meta's Tectonic for Llama 3 (Dubey et al. 2024, §3.3.1: 2 TB/s
// sustained, 7 TB/s peak for 16,384 H100s, 2,048 servers): 1 GB/s written, 3.4 GB/s read per server.
// checkpoint_overhead, 30 s: what ByteCheckpoint measured beside moving bytes at 8,960 GPUs (Wan et al.,
// NSDI'25: about 20 s of barriers, 8 s collecting the data loader's state; its 62 s of save planning is
// cached after the first save). restart_overhead, 5 min: the low end of the 5-20 min Meta's research clusters
// measured (Kokolis et al. 2024, arXiv 2410.21680).
// Asynchronous checkpoints (checkpoint_mode: async, as PyTorch DCP's async_save and Megatron-LM's
// --async-save do): the job stops only to copy its shards to host memory, bytes / GPUs at
// snapshot_bandwidth per GPU; the write runs behind training. So, in the reliability model:
//   checkpoint cost = the snapshot; restart = restart_overhead + read time + write time (a checkpoint counts
//   once it is on storage, so an interruption also loses the work of the write in flight, at worst);
//   the interval is at least the write time (the next snapshot waits for the last write).
// snapshot_bandwidth, 25 GB/s per GPU: half a PCIe Gen5 x16 link's ~50 GB/s, as two GPUs of an HGX H100
// board share one PCIe switch's uplink to the host (an assumption, not a measurement).
// ASSUMPTIONS: every server of the job writes its shards at once (a distributed checkpoint, as Megatron-LM and
// PyTorch DCP save); synchronous by default (the job stops while it writes); `efficiency` is the share of a
// NIC's line rate a storage protocol sustains; an asynchronous write does not slow the training it runs
// behind (it uses the frontend, training the back end; host memory bandwidth is not modelled).
// Storage on the back end (frontend.converged): the write shares links with training. `podnet train`
// measures what each costs the other (study/frontend_io.hpp: the write W behind training, training slowed
// by a factor x meanwhile) and the reliability model takes them: the write time is W (interval and restart),
// and a checkpoint costs the snapshot plus the training lost while the write runs, W (1 - 1/x) (or the one
// iteration's extra time when the write ends inside it). `podnet reliability`, which runs no iteration,
// keeps the write's time alone.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/params.hpp"

namespace podnet::reliability {

std::vector<ParamSpec> storage_params();

struct StorageConfig {
  int64_t frontend_nics = 0;        // per server; 0 = no storage network modelled
  double frontend_nic_bps = 0;      // line rate of one, bits per second
  double efficiency = 0.9;          // of the line rate
  double write_Bps_per_server = 0;  // the storage's share of one server, bytes per second
  double read_Bps_per_server = 0;
  double checkpoint_overhead_s = 0;  // a save or a load besides moving its bytes
  double restart_overhead_s = 0;     // a restart besides reading the checkpoint
  bool async = false;                // checkpoint_mode: async
  double snapshot_Bps = 25e9;        // per GPU, device to host
  bool present() const { return frontend_nics > 0; }
};

// From a validated `storage:` section; ParamError naming the key for a section that is half given.
StorageConfig storage_from(const Params& p);

struct CheckpointIo {
  double bytes = 0;
  double write_s = 0, read_s = 0;
  double frontend_Bps = 0, storage_write_Bps = 0, storage_read_Bps = 0;  // the limits, all servers, bytes/s
  double overhead_s = 0;
  std::string write_bound, read_bound;  // "the servers' frontend NICs" or "the storage"
  // Simulated on the frontend network (study/frontend_io.hpp) rather than the closed form: the engine, the
  // flows, and the rates reached (bytes / transfer time).
  bool async = false;
  double snapshot_s = 0;  // async: the job's stop to copy its shards to host memory
  std::string simulated_by;
  std::string routing;               // the routing policy of that simulation (network.routing)
  std::string network = "frontend";  // where: "frontend", or "backend" (frontend.converged)
  int64_t flows = 0;
  double write_Bps = 0, read_Bps = 0;
  // Converged and asynchronous, timed beside an iteration (write_s stays the write on an idle fabric).
  bool behind_training = false;
  double write_behind_s = 0;     // moving the write's bytes behind training (overhead_s not included)
  double training_slowdown = 1;  // an iteration's time with the write beside it / alone
  double training_lost_s = 0;    // training time a checkpoint's write costs
};

// The times of a checkpoint of `bytes` written by `servers` servers.
CheckpointIo checkpoint_io(double bytes, int64_t servers, const StorageConfig& c);

}  // namespace podnet::reliability
