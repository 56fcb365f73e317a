// A checkpoint written to and read from the storage nodes over the frontend network (topology/frontend.hpp),
// simulated by an engine: how long its bytes take to move, and what bound them.
//
// Traffic. The job's first `servers` servers each hold bytes / servers of the checkpoint (every server
// writes its shards at once, as Megatron-LM and PyTorch DCP save) and split them evenly over their
// frontend NICs. Each client NIC (port c of C) writes its share to k = min(frontend.stripes, P) storage
// NIC ports (of P), one flow each of bytes / (C x k): ports (c x k + j) mod P for j < k, so every storage
// port takes C x k / P flows, give or take one. A read is the same flows the other way.
// Storage media: a storage node's write (read) bandwidth W, when given, bounds what its G NIC ports take
// in (send out): W / G each, set as the payload rate of the link between the port's NIC and its host.
// Engine: the scenario's, unless it is too slow for terabytes (the packet engine): then the first engine
// that models contention and is cheap enough for many runs (the flow engine), said in `engine`.
// ASSUMPTIONS: the frontend is idle besides the checkpoint (no data loading beside it); the storage
// protocol's own overhead beyond the transport's headers is not modelled (storage.efficiency applies to
// the closed form only); every flow starts at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/options.hpp"
#include "plan/transfer_plan.hpp"
#include "topology/frontend.hpp"
#include "workload/job.hpp"

namespace podnet::study {

struct FrontendTransfer {
  double seconds = 0;      // the last byte's arrival
  double gbyte_per_s = 0;  // bytes / seconds
  std::string bound;       // what the busiest link is: "the servers' frontend NICs", "the storage nodes' media", ...
  std::string failure;     // the engine's words when a flow had no path (a drained switch cut its port off)
};

struct FrontendIo {
  double bytes = 0;
  int32_t servers = 0;
  int64_t flows = 0;
  std::string engine;
  FrontendTransfer write, read;
};

// Requires f.config.storage_nodes > 0 and 1 <= servers <= f.servers.
// `with_read` false: the write alone (the read is left at zero).
FrontendIo simulate_checkpoint(const topology::FrontendFabric& f, double bytes, int32_t servers,
                               const std::string& engine, const engine::NetworkOptions& options, bool with_read = true);

// A checkpoint written behind training where they share links (frontend.converged: the storage nodes on the
// back end), as an asynchronous checkpoint is. `servers_bytes[s]`: what server s writes (the job's servers).
// Method. One run of the iteration's plan with every write flow beside it, on one engine (the flow engine
// for the packet engine, as above), the storage media as for a checkpoint; the write is under way when the
// iteration starts. The iteration ends at its last transfer's finish T_i; slowdown = T_i / the same
// iteration run alone on that engine. The write's flows run on after T_i with the fabric to themselves
// and end at T_w; alone the write moves R = bytes / (its time alone) a second, so by T_i it has moved about
// bytes - R (T_w - T_i), at r = that / T_i. Behind back-to-back iterations like this one it takes bytes / r.
// A write that ends inside the iteration (T_w <= T_i) takes T_w; `outlasts` says which.
// ASSUMPTIONS: after T_i every write flow runs at its rate alone (they are alike: equal bytes, striped over
// the storage ports); each iteration meets the write as this one does.
struct WriteBehindTraining {
  double bytes = 0;
  double iteration_alone_s = 0;
  double iteration_s = 0;  // with the write behind it
  double slowdown = 1;
  double write_alone_s = 0;
  double write_s = 0;  // behind training
  bool outlasts = true;
  int64_t flows = 0;
  std::string engine;
};

WriteBehindTraining write_behind_training(const topology::FrontendFabric& f, const plan::TransferPlan& iteration,
                                          const std::vector<double>& servers_bytes, const std::string& engine,
                                          const engine::NetworkOptions& options);

// Data loading: the training samples of one iteration read from the storage nodes.
// Readers. Megatron-LM's get_batch loads a microbatch on the first pipeline stage (the inputs) and on the
// last (the labels), once per tensor-parallel group (TP rank 0 reads, then broadcasts inside the server). So
// each replica's samples (global_batch / replicas of them, 1/cp of each sequence per CP rank) are read by
// the server of its TP rank 0 on stage 0, sample_bytes each; when pp > 1 the server of stage pp - 1 reads
// their labels, label_bytes each (the sequence's token ids).
// Flows as a checkpoint read: each reading server's bytes split over its NICs, k storage ports each.
// Keeping up: the loader reads the next iteration's batch while this one runs (PyTorch DataLoader's
// prefetch), so it stalls the GPUs only by what its read takes beyond the iteration.
// ASSUMPTIONS: a sample is sample_bytes on storage and on the wire (no compression, no decode cost on the
// host); nothing is cached on the servers (a first epoch); the reads of one iteration start at once.
// A token id on storage: 4 B (Megatron-LM's indexed datasets store int32 ids once the vocabulary passes
// 65,535, as Llama 3's 128,256 does).
inline constexpr double kTokenIdBytes = 4;

// The data loader's bytes per sample (frontend.sample_size, else the sequence's token ids) and per label (the
// token ids).
struct SampleBytes {
  double sample = 0, label = 0;
};
inline SampleBytes sample_bytes(const topology::FrontendConfig& c, const workload::Job& job) {
  const double tokens = static_cast<double>(job.model.seq) * kTokenIdBytes;
  return {c.sample_bytes > 0 ? c.sample_bytes : tokens, tokens};
}

struct DataLoading {
  double bytes = 0;         // read per iteration, every reader together
  double sample_bytes = 0;  // per sample
  int32_t servers = 0;      // that read
  int64_t flows = 0;
  std::string engine;
  std::string routing;  // network.routing's policy
  FrontendTransfer read;
};

// Bytes each back-end server reads per iteration (indexed by server; zero for servers that do not read):
// the readers above for the job's placement `gpus` (GPU rank of each job rank) on `backend`.
std::vector<double> data_loading_bytes(const workload::Job& job, const std::vector<int32_t>& gpus,
                                       const topology::Topology& backend, double sample_bytes, double label_bytes);

// Requires f.config.storage_nodes > 0 and per_server.size() <= f.servers.
DataLoading simulate_data_loading(const topology::FrontendFabric& f, const std::vector<double>& per_server,
                                  double sample_bytes, const std::string& engine,
                                  const engine::NetworkOptions& options);

}  // namespace podnet::study
