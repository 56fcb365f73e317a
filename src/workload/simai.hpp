// Importers for files written by Alibaba's SimAI / AICB (data only: podnet
// reads the formats, it neither links nor copies their code). Samples and their public
// sources: tests/data/simai/README.md. The semantics below were read from (aliyun/SimAI at
// cef83f9, aliyun/aicb at 23eec3c):
//   aicb  workload_generator/SimAI_training_workload_generator.py   writes the file (workload_generate,
//         dump_file)
//   SimAI astra-sim-alibabacloud/astra-sim/workload/Workload.cc     reads it (initialize_workload) and
//         runs it (iterate_hybrid_parallel_Transformer_fwd_in_bckwd)
//   SimAI astra-sim-alibabacloud/astra-sim/workload/Layer.cc        the analytical breakdown (report,
//         compute_time); astra-sim/system/calbusbw.cc its bus bandwidths
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
// (SimAI also knows ALLREDUCEALLTOALL, which podnet refuses, and reads BROADCAST as no collective.)
//
// What the rows are. AICB writes `for _ in range(ga_num): for layer in layers: ...`: the rows are ONE
// ITERATION of one pipeline stage, every one of its GA microbatches already unrolled (the 9,216-GPU
// sample: 24 embedding_layer rows, one per microbatch), plus the gradient rows (DP/EDP reduce-scatter
// and all-gather, written first) and the loss/optimizer rows. SimAI runs the rows once per pass
// (forward top to bottom, then input and weight gradient bottom to top) and counts their compute once:
// an iteration's compute is the sum of the rows, never x GA. VPP is the number of model chunks per GPU
// (SimAI's docs: one layer per virtual stage, so AICB writes the layer count); SimAI's bubble is
// (PP - 1)/(GA x VPP) of a stage's work (Layer::report), Megatron's interleaved-1F1B bubble.
//
// How podnet runs it (the same op graph as its own models, training.hpp):
// - Job: TP, PP, EP from the header, d = GPUs / (TP x PP), GA microbatches per pipeline, v = VPP model
//   chunks per GPU (interleaved 1F1B) when GA divides into groups of PP as Megatron requires, else 1F1B
//   (v = 1). Every stage runs the same rows (SimAI models one stage too).
// - Passes: the iteration's totals of one stage (fwd compute; ig + wg compute; blocking collectives)
//   split evenly over its GA x v passes (one chunk on one microbatch each): forward = sum of fwd
//   compute / (GA v), then its blocking collectives; backward likewise. Blocking collectives are the fwd
//   and ig ones: unsuffixed in the TP group, _EP in the EP group, _DP_EP in the EDP group; each distinct
//   (op, group, bytes) is timed once on the engine (the group of rank 0) and summed over the rows.
//   Collectives of 0 bytes (AICB writes some) move nothing and are not counted.
// - Weight-gradient collectives: unsuffixed ones on every DP group, _DP_EP ones on every EDP group, as
//   gradient buckets of the last backward pass of chunk 0 (the last pass the schedule runs): a row whose
//   gradients are ready a time x before the end of the iteration's backward work is ready x before the
//   end of that pass (at its start if earlier), and overlaps the rest of it; _EP ones block like ig
//   collectives. wg_update is ignored. (SimAI-Analytical exposes all of the weight-gradient
//   communication unless given -dp_o; podnet exposes what the backward pass does not hide.)
// - PP: pp_comm is the message one GPU sends per microbatch and chunk boundary and direction (AICB:
//   2 b s h bytes, / TP with sequence parallelism; SimAI's PP time is 2 x VPP x GA messages of it), so
//   each of the TP rank pairs between consecutive virtual stages carries pp_comm bytes.
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
#include "engine/backend.hpp"
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
  int header_line = 1;      // 1-based line of the header (errors about its keys name it)
  int64_t tp = 1, ep = 1, pp = 1, vpp = 1, ga = 1, all_gpus = 0;
  Bytes pp_comm = 0;
  std::vector<Row> rows;
};

// Limits (InputError "SOURCE:LINE: KEY: ..." beyond them, so that no file can overflow, divide by
// zero or exhaust the machine): TP, EP, PP and all_gpus up to topology::kMaxGpus (2^20); VPP up to
// 1024 (workload.interleave's limit); GA x VPP x PP up to kMaxPipelinePasses (job.hpp); a compute
// time up to 1000 h (kMaxTime) per row and per iteration; a byte count (pp_comm, a row's) up to
// kMaxBytes (1 PiB); a row count up to 10^7.
//
// Throws InputError "SOURCE:LINE: ..." for a bad header, count or row.
Workload parse_workload(std::istream& in, const std::string& source);
Workload load_workload(const std::string& path);

// The job layout: TP, PP, EP from the header, d = gpus / (TP x PP) with gpus = all_gpus (or
// `gpus` when the header has none), GA microbatches, v = VPP chunks when PP > 1 and PP divides GA.
// The model is unknown (no layers: no params, FLOPs, MFU or tokens; the report prints '-').
// Throws InputError "SOURCE:LINE: KEY: ..." (the header's line) if the GPUs do not divide or exceed
// `fabric_gpus`, or the iteration exceeds kMaxPipelinePasses.
Job job_of(const Workload& w, int64_t gpus, int64_t fabric_gpus);

// Per communicator kind ("tp", "ep", "dp", "edp"): collectives and bytes (sum of S) per iteration
// per GPU, and the blocking time they add to one stage per iteration (timed ones; 0 for the DP buckets,
// whose exposed part the simulation measures).
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
  int64_t passes = 1;  // GA x v: the passes per stage over which the rows' totals are split
};

// Times the blocking collectives on `backend` and fills the iteration (header).
Imported import_iteration(const Workload& w, const Job& job, const std::vector<int32_t>& gpu_of_rank,
                          const topology::Topology& topo, engine::NetworkBackend& backend, const TrainOptions& options);

// Throws InputError "SOURCE:LINE: ..." for a bad file: among others a switch id given twice, more than
// topology::kMaxGpus GPUs, more than 16 x kMaxGpus nodes or links.
topology::Topology parse_topology(std::istream& in, const std::string& source);
topology::Topology load_topology(const std::string& path);

}  // namespace podnet::workload::simai
