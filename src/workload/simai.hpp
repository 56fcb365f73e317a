// Importers for files written by Alibaba's SimAI / AICB (data only: podnet
// reads the formats, it neither links nor copies their code). Samples and their public
// sources: tests/data/simai/README.md.
//
// Workload text (AICB output, SimAI's input):
//   line 1  HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: <TP> ep: <EP> pp: <PP> vpp: <VPP>
//           ga: <GA> all_gpus: <N> checkpoints: 0 checkpoint_initiates: 0 pp_comm: <bytes>
//           (older files stop after model_parallel_NPU_group and the checkpoint keys: EP = PP = VPP =
//           GA = 1, the GPU count comes from the caller; "pp_comm 123" without a colon is accepted)
//   line 2  the number of layer rows
//   rows    name dep fwd_compute_ns fwd_comm_type fwd_bytes ig_compute_ns ig_comm_type ig_bytes
//           wg_compute_ns wg_comm_type wg_bytes [wg_update]
// Comm types NONE, ALLREDUCE, ALLGATHER, REDUCESCATTER, ALLTOALL, BROADCAST, optionally suffixed _EP or
// _DP_EP. Bytes are taken as the collective's size S in nccl-tests' sense (collective.hpp).
//
// How podnet runs it (the same op graph as its own models, training.hpp):
// - The rows are one pipeline stage's work for one microbatch; every stage runs the same rows; GA is the
//   number of microbatches per pipeline; d = GPUs / (TP x PP); 1F1B over the PP stages (VPP is read and
//   reported, not interleaved: the rows do not say how they split into chunks).
// - Forward pass = the rows top to bottom: fwd compute, then the fwd collective (blocking); backward =
//   the rows bottom to top: ig compute, ig collective (blocking), wg compute. Unsuffixed fwd/ig
//   collectives run in the TP group, _EP in the EP group, _DP_EP in the EDP group; each distinct
//   (op, group, bytes) is timed once on the engine (TP group of rank 0 etc.) and becomes a delay on the
//   stage, as for podnet's own TP collectives.
// - Weight-gradient collectives: unsuffixed ones on every DP group, _DP_EP ones on every EDP group, as
//   gradient buckets ready when their row's wg compute is done in the last microbatch's backward
//   (overlapped with the rest of it); _EP ones block like ig collectives. wg_update is ignored.
// - PP: pp_comm bytes per microbatch per direction between consecutive stages (split over the TP
//   rank pairs).
//
// Topology text (.topo):
//   line 1  <nodes> <gpus_per_server> <nvswitches> <switches> <links> <gpu_type>
//   line 2  the ids of all switch nodes, NVSwitches first (GPUs are ids 0..gpus-1)
//   links   src dst <bandwidth> <latency> <error_rate>   e.g. "0 16 900Gbps 0.000025ms 0"
// becomes a topology::Topology (family "simai"): GPU g on server g / gpus_per_server; a GPU-NVSwitch
// link is its NVLink; a GPU-switch link becomes a NIC node between them (GPU -PCIe- NIC -link- switch,
// the PCIe link at the same bandwidth, 0 latency), NIC rail = the GPU's local index; switch tiers by
// distance from the GPUs (1 = leaf/ASW, 2 = spine/PSW, 3 = ...); one aggregation group and pod; the
// file's latencies are the links' latencies and switches add none (switch_latency 0).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "engine/network.hpp"
#include "topology/topology.hpp"
#include "workload/job.hpp"
#include "workload/training.hpp"

namespace podnet::workload::simai {

enum class Scope : uint8_t { Default, Ep, DpEp };

struct Comm {
  bool none = true;
  collective::Op op = collective::Op::AllReduce;
  Scope scope = Scope::Default;
};

struct Row {
  int line = 0;  // 1-based line in the file
  std::string name;
  int64_t dep = -1;
  int64_t fwd_ns = 0, ig_ns = 0, wg_ns = 0;
  Comm fwd, ig, wg;
  Bytes fwd_bytes = 0, ig_bytes = 0, wg_bytes = 0;
  int64_t wg_update = 0;
};

struct Workload {
  std::string source;
  std::string policy;       // "HYBRID_TRANSFORMER_FWD_IN_BCKWD"
  bool new_header = false;  // has ep/pp/vpp/ga/all_gpus
  int64_t tp = 1, ep = 1, pp = 1, vpp = 1, ga = 1, all_gpus = 0;
  Bytes pp_comm = 0;
  std::vector<Row> rows;
};

// Throws InputError "SOURCE:LINE: ..." for a bad header, count or row.
Workload parse_workload(std::istream& in, const std::string& source);
Workload load_workload(const std::string& path);

// The job layout: TP, PP, EP from the header, d = gpus / (TP x PP) with gpus = all_gpus (or
// `gpus` when the header has none), GA microbatches. The model is unknown (no layers: no MFU).
// Throws InputError if the GPUs do not divide or exceed `fabric_gpus`.
Job job_of(const Workload& w, int64_t gpus, int64_t fabric_gpus);

// Per communicator kind ("tp", "ep", "dp", "edp"): collectives and bytes (sum of S) per iteration
// per GPU, and the blocking time they add to one stage (timed ones; 0 for the overlapped DP buckets).
struct GroupTraffic {
  std::string group;
  int64_t collectives = 0;
  double bytes = 0;
  Time blocking;
};

struct Imported {
  Job job;
  IterationTimes times;
  std::vector<GroupTraffic> traffic;
};

// Times the blocking collectives on `backend` and fills the iteration (header).
Imported import_iteration(const Workload& w, const Job& job, const std::vector<int32_t>& gpu_of_rank,
                          const topology::Topology& topo, engine::NetworkBackend& backend,
                          const TrainOptions& options);

// Throws InputError "SOURCE:LINE: ..." for a bad file.
topology::Topology parse_topology(std::istream& in, const std::string& source);
topology::Topology load_topology(const std::string& path);

}  // namespace podnet::workload::simai
