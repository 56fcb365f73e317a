// MLCommons Chakra execution traces (data only: podnet reads the format with
// its own schema, workload/chakra_et.proto; it neither links nor copies
// Chakra's code). The semantics below were read from (mlcommons/chakra at
// 21585d8, astra-sim/astra-sim at 518bd51):
//   chakra    schema/protobuf/et_def.proto           the messages and their field numbers
//   chakra    src/third_party/utils/protolib.py      encodeMessage: each message preceded by its length
//             (a base-128 varint), the file = GlobalMetadata, then the Nodes
//   chakra    src/feeder/et_feeder_node.cpp          the attributes a simulator reads (comm_type,
//             comm_size, comm_src, comm_dst, comm_tag, pg_name, is_cpu_op)
//   astra-sim astra-sim/workload/Workload.cc         how ASTRA-sim runs them: one file PREFIX.<rank>.et
//             per rank; a node is issued when its data and control dependencies are done; duration_micros
//             is a compute node's time; pg_name "" or "0" is every rank
//
// A trace directory holds one file per rank, PREFIX.0.et .. PREFIX.<n-1>.et (one PREFIX, every rank
// from 0 to n-1 present). Rank r runs on GPU gpu_of_rank[r] of the fabric (the study places them).
//
// How podnet runs the ranks' nodes as ONE plan::TransferPlan (any engine):
// - Dependencies: a node starts when every node of its data_deps and ctrl_deps (ids in the same file)
//   has completed, as in ASTRA-sim; nothing else orders the nodes of a rank (independent nodes run
//   concurrently: podnet does not model ASTRA-sim's one-compute-node-at-a-time GPU).
// - COMP_NODE: a Compute of duration_micros on the rank's GPU (is_cpu_op nodes alike: host time).
// - COMM_COLL_NODE: comm_type (all-reduce, reduce, all-gather, broadcast, all-to-all, reduce-scatter,
//   reduce-scatter-block as reduce-scatter; barrier as a synchronization with no bytes) over its
//   communicator with comm_size bytes taken as the collective's size S in nccl-tests' sense
//   (collective.hpp). The communicator is pg_name: "" or "0" (or no pg_name) is every rank, as in
//   ASTRA-sim; any other name is the ranks whose files have collectives on it (every member of a
//   NCCL communicator calls each of its collectives). The k-th collective of a communicator in each
//   member's file (in file order) is one collective: it starts when every member's node is ready
//   (the union of their dependencies), and each member's node completes when the collective does.
//   Members must agree on comm_type and comm_size. The plan is collective::make_plan's for the
//   members' GPUs (algorithm: TrainOptions::dp_algorithm where it supports the op, else the op's
//   default), merged in. GATHER and SCATTER are refused (no podnet algorithm).
// - COMM_SEND_NODE (on rank s, to comm_dst d) and COMM_RECV_NODE (on rank d, from comm_src s) with
//   the same comm_tag (0 when absent) pair in file order: the k-th send s->d with a tag matches the
//   k-th receive. The pair is one P2p transfer of the send's comm_size bytes that starts when both
//   nodes are ready (NCCL's send/recv rendezvous); both nodes complete with it. comm_src of a send
//   and comm_dst of a receive default to the file's rank and must equal it.
// - Any other node (METADATA, MEM_LOAD/STORE, STORAGE, BATCH, CHECKPOINT, INVALID) takes no time
//   but keeps its place in the dependency graph; the import counts them (`skipped`).
//
// The iteration time is the plan's makespan. Per rank, over [0, T]: compute = the time its compute
// nodes cover; collective and p2p = the time its collectives and sends/receives cover and compute
// does not (exposed); idle = the rest. The critical rank is the one whose last node ends last.
// What a trace does not say - the model, the GPU, the batch, which parallelism a communicator
// serves - is unknown ('-' in the report).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "collective/collective.hpp"
#include "engine/backend.hpp"
#include "topology/topology.hpp"
#include "workload/training.hpp"

namespace podnet::workload::chakra {

// Chakra's NodeType and CollectiveCommType numbers.
enum NodeType : int32_t {
  kInvalidNode = 0,
  kMetadataNode = 1,
  kMemLoadNode = 2,
  kMemStoreNode = 3,
  kCompNode = 4,
  kSendNode = 5,
  kRecvNode = 6,
  kCollNode = 7,
  kStorageNode = 8,
  kBatchNode = 9,
  kCheckpointNode = 10,
};
enum CommType : int32_t {
  kAllReduce = 0,
  kReduce = 1,
  kAllGather = 2,
  kGather = 3,
  kScatter = 4,
  kBroadcast = 5,
  kAllToAll = 6,
  kReduceScatter = 7,
  kReduceScatterBlock = 8,
  kBarrier = 9,
};
const char* node_type_name(int32_t type);  // "COMP_NODE", ...; "?" beyond the list
const char* comm_type_name(int64_t type);  // "ALL_REDUCE", ...; "?" beyond the list

struct Node {
  uint64_t id = 0;
  std::string name;
  int32_t type = kInvalidNode;
  std::vector<uint64_t> data_deps, ctrl_deps;
  Time duration;  // duration_micros
  bool cpu = false;
  int64_t comm_type = -1;  // -1: absent
  Bytes comm_size = 0;
  int64_t comm_src = -1, comm_dst = -1;  // -1: absent
  int64_t comm_tag = 0;
  std::string pg_name;
};

struct RankTrace {
  std::string source;  // the file, for messages
  int32_t rank = 0;
  std::string version;  // GlobalMetadata.version
  std::vector<Node> nodes;
};

// Limits (InputError beyond them, so that no file can exhaust the machine): a message up to 64 MiB and
// no longer than what is left of the file; up to 10^7 nodes per file and 4,096 dependencies per node;
// duration_micros up to kMaxTime (1000 h); comm_size up to kMaxBytes (1 PiB); up to topology::kMaxGpus
// ranks.
inline constexpr int64_t kMaxMessageBytes = int64_t{64} << 20;
inline constexpr int64_t kMaxNodes = 10'000'000;
inline constexpr int64_t kMaxDeps = 4096;

// Parses one rank's file (GlobalMetadata, then Nodes). Throws InputError "SOURCE: node ID: FIELD: ..."
// ("SOURCE: message N: ..." before a node's id is known) for a truncated or malformed message, a node
// id given twice, a dependency on an id the file does not have, a node type or comm_type outside
// Chakra's lists, an attribute of the wrong kind, a missing comm_size / comm_type / comm_dst /
// comm_src where the node needs it, or a value beyond the limits above.
RankTrace parse_trace(std::istream& in, const std::string& source, int32_t rank);

// The files of a trace directory, by rank: PREFIX.<rank>.et. Throws InputError naming the directory
// when it has no .et file, two prefixes, or a rank missing from 0..n-1.
std::vector<std::string> trace_files(const std::string& dir);
std::vector<RankTrace> load_traces(const std::string& dir);

// Per communicator (pg_name; "world" for every rank) or "p2p": collectives (or matched send/recv
// pairs) per iteration, bytes (sum of S, or of the sends' sizes) and the members.
struct CommTraffic {
  std::string group;
  int32_t ranks = 0;
  int64_t collectives = 0;
  double bytes = 0;
  Time exposed;  // on the critical rank, covered by this communicator's ops and not by compute
};

// One rank's timeline over [0, T] (header).
struct RankBreakdown {
  Time compute, collective, p2p, idle;
};

struct Imported {
  int32_t ranks = 0;
  std::string version;               // of rank 0's file
  int64_t nodes = 0;                 // all files
  int64_t skipped = 0;               // nodes that take no time (neither compute nor communication)
  int64_t p2p_pairs = 0;             // matched send/recv pairs
  int64_t collectives = 0;           // collectives (each once, not per member)
  std::vector<CommTraffic> traffic;  // by group name, "p2p" last
  std::vector<RankBreakdown> per_rank;
  int32_t critical_rank = 0;
};

// The plan of the traces (header) and what each transfer stands for.
struct TracePlan {
  plan::TransferPlan plan;
  std::vector<int32_t> rank;       // per transfer: the rank whose timeline it is on (-1: a whole communicator)
  std::vector<Category> category;  // Compute, Dp (collective) or Pp (p2p); Marker for 0-time nodes
  std::vector<int32_t> group;      // per transfer: index into Imported::traffic (-1: none)
  // Per rank, each of its nodes as the transfers it spans: from the start of `start` to the finish of
  // `end` (a collective's entry and exit markers; one transfer otherwise), in the plan's order.
  struct Span {
    int32_t start = 0, end = 0;
    Category category = Category::Marker;
    int32_t group = -1;  // Imported::traffic index (-1: none)
    int32_t node = 0;    // index in the rank's file
  };
  std::vector<std::vector<Span>> spans;
  Imported imported;
};

// Builds the plan. gpu_of_rank[r] = the fabric GPU of rank r (distinct, within topo). Throws InputError
// naming the file, node id and field for a collective its communicator's members disagree on
// (comm_type, comm_size, how many collectives), a send or receive without its partner, a rank outside
// the trace, an unsupported comm_type, or a dependency cycle (within a file, or across files through
// collectives issued in different orders).
TracePlan build_plan(const std::vector<RankTrace>& traces, const std::vector<int32_t>& gpu_of_rank,
                     const topology::Topology& topo, const TrainOptions& options);

// Runs the plan on `backend` and fills a TrainResult: iteration = makespan, the critical rank, a job
// of one "DP" group of n ranks (what placement needs; the report prints the trace's fields instead),
// per-op trace slices (options.trace: one process per rank, lanes compute / collective / p2p, and further
// lanes of a kind, "compute 2", ..., for nodes of a rank that run at the same time, so that no slice
// overlaps another on its lane), arrows from each send's slice to its receive's.
struct Result {
  TrainResult train;
  Imported imported;
};
Result simulate(const std::vector<RankTrace>& traces, const std::vector<int32_t>& gpu_of_rank,
                const topology::Topology& topo, engine::NetworkBackend& backend, const TrainOptions& options);

// The job placement needs: n ranks as TP1 x PP1 x DPn, no model.
Job job_of(const std::vector<RankTrace>& traces, int64_t fabric_gpus);

}  // namespace podnet::workload::chakra
