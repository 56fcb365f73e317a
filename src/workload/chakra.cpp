#include "workload/chakra.hpp"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "core/error.hpp"
#include "workload/chakra_et.pb.h"

namespace podnet::workload::chakra {

namespace pb = podnet::chakra_et;

const char* node_type_name(int32_t type) {
  static constexpr const char* kNames[] = {"INVALID_NODE", "METADATA_NODE",  "MEM_LOAD_NODE",  "MEM_STORE_NODE",
                                           "COMP_NODE",    "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
                                           "STORAGE_NODE", "BATCH_NODE",     "CHECKPOINT_NODE"};
  return type >= 0 && type <= kCheckpointNode ? kNames[type] : "?";
}

const char* comm_type_name(int64_t type) {
  static constexpr const char* kNames[] = {"ALL_REDUCE", "REDUCE",         "ALL_GATHER",
                                           "GATHER",     "SCATTER",        "BROADCAST",
                                           "ALL_TO_ALL", "REDUCE_SCATTER", "REDUCE_SCATTER_BLOCK",
                                           "BARRIER"};
  return type >= 0 && type <= kBarrier ? kNames[type] : "?";
}

namespace {

const char* value_case_name(const pb::Attribute& a) {
  switch (a.value_case()) {
    case pb::Attribute::kDoubleVal: return "double_val";
    case pb::Attribute::kFloatVal: return "float_val";
    case pb::Attribute::kBoolVal: return "bool_val";
    case pb::Attribute::kStringVal: return "string_val";
    case pb::Attribute::kBytesVal: return "bytes_val";
    case pb::Attribute::VALUE_NOT_SET: return "no value (or a list)";
    default: return "an integer";
  }
}

// An integer attribute, whichever integer member holds it. False if it holds none.
bool int_value(const pb::Attribute& a, int64_t& out) {
  switch (a.value_case()) {
    case pb::Attribute::kInt32Val: out = a.int32_val(); return true;
    case pb::Attribute::kInt64Val: out = a.int64_val(); return true;
    case pb::Attribute::kUint32Val: out = a.uint32_val(); return true;
    case pb::Attribute::kSint32Val: out = a.sint32_val(); return true;
    case pb::Attribute::kSint64Val: out = a.sint64_val(); return true;
    case pb::Attribute::kFixed32Val: out = a.fixed32_val(); return true;
    case pb::Attribute::kSfixed32Val: out = a.sfixed32_val(); return true;
    case pb::Attribute::kSfixed64Val: out = a.sfixed64_val(); return true;
    case pb::Attribute::kUint64Val:
    case pb::Attribute::kFixed64Val: {
      const uint64_t v = a.value_case() == pb::Attribute::kUint64Val ? a.uint64_val() : a.fixed64_val();
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
      out = static_cast<int64_t>(v);
      return true;
    }
    default: return false;
  }
}

Node convert(const pb::Node& m, const std::string& source) {
  Node n;
  n.id = m.id();
  n.name = m.name();
  const std::string at = fmt::format("{}: node {}: ", source, n.id);
  if (m.type() < kInvalidNode || m.type() > kCheckpointNode)
    throw InputError(fmt::format("{}type: {} is not a Chakra node type (0..{})", at, m.type(), int{kCheckpointNode}));
  n.type = m.type();
  if (m.data_deps_size() + m.ctrl_deps_size() > kMaxDeps)
    throw InputError(fmt::format("{}data_deps: {} dependencies, podnet's limit is {}", at,
                                 m.data_deps_size() + m.ctrl_deps_size(), kMaxDeps));
  n.data_deps.assign(m.data_deps().begin(), m.data_deps().end());
  n.ctrl_deps.assign(m.ctrl_deps().begin(), m.ctrl_deps().end());
  const uint64_t max_us = static_cast<uint64_t>(kMaxTime.ps / 1'000'000);
  if (m.duration_micros() > max_us)
    throw InputError(fmt::format("{}duration_micros: {} us is beyond podnet's limit of {} us (1000 h)", at,
                                 m.duration_micros(), max_us));
  n.duration = Time(static_cast<int64_t>(m.duration_micros()) * 1'000'000);
  bool has_size = false;
  for (const auto& a : m.attr()) {
    const std::string& k = a.name();
    auto integer = [&](int64_t lo, int64_t hi, const char* what) {
      int64_t v = 0;
      if (!int_value(a, v))
        throw InputError(fmt::format("{}attr {}: expected an integer ({}), got {}", at, k, what, value_case_name(a)));
      if (v < lo || v > hi)
        throw InputError(fmt::format("{}attr {}: {} is outside {}..{} ({})", at, k, v, lo, hi, what));
      return v;
    };
    if (k == "comm_type") {
      n.comm_type = integer(0, kBarrier, "Chakra's CollectiveCommType");
    } else if (k == "comm_size") {
      n.comm_size = integer(0, kMaxBytes, "bytes, up to 1 PiB");
      has_size = true;
    } else if (k == "comm_src") {
      n.comm_src = integer(0, topology::kMaxGpus - 1, "a rank");
    } else if (k == "comm_dst") {
      n.comm_dst = integer(0, topology::kMaxGpus - 1, "a rank");
    } else if (k == "comm_tag") {
      n.comm_tag = integer(std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max(), "a tag");
    } else if (k == "pg_name") {
      int64_t v = 0;
      if (a.value_case() == pb::Attribute::kStringVal) n.pg_name = a.string_val();
      else if (int_value(a, v)) n.pg_name = std::to_string(v);
      else
        throw InputError(fmt::format("{}attr pg_name: expected a string (the process group's name), got {}", at,
                                     value_case_name(a)));
    } else if (k == "is_cpu_op") {
      int64_t v = 0;
      if (a.value_case() == pb::Attribute::kBoolVal) n.cpu = a.bool_val();
      else if (int_value(a, v)) n.cpu = v != 0;
      else throw InputError(fmt::format("{}attr is_cpu_op: expected a bool, got {}", at, value_case_name(a)));
    }
  }
  if (n.type == kCollNode) {
    if (n.comm_type < 0) throw InputError(fmt::format("{}attr comm_type: missing (a COMM_COLL_NODE needs it)", at));
    if (!has_size && n.comm_type != kBarrier)
      throw InputError(fmt::format("{}attr comm_size: missing (a COMM_COLL_NODE needs it)", at));
  } else if (n.type == kSendNode) {
    if (n.comm_dst < 0) throw InputError(fmt::format("{}attr comm_dst: missing (a COMM_SEND_NODE needs it)", at));
    if (!has_size) throw InputError(fmt::format("{}attr comm_size: missing (a COMM_SEND_NODE needs it)", at));
  } else if (n.type == kRecvNode) {
    if (n.comm_src < 0) throw InputError(fmt::format("{}attr comm_src: missing (a COMM_RECV_NODE needs it)", at));
  }
  return n;
}

}  // namespace

RankTrace parse_trace(std::istream& in, const std::string& source, int32_t rank) {
  RankTrace t;
  t.source = source;
  t.rank = rank;
  google::protobuf::io::IstreamInputStream zin(&in);
  std::unordered_map<uint64_t, int64_t> index;  // node id -> message number (lookups only)
  for (int64_t msg = 1;; ++msg) {
    // One CodedInputStream per message (its byte counters stay small on files of any size); on
    // destruction it hands back to `zin` what it read ahead.
    google::protobuf::io::CodedInputStream coded(&zin);
    const void* data = nullptr;
    int avail = 0;
    if (!coded.GetDirectBufferPointer(&data, &avail)) break;  // end of file, between messages
    uint64_t size = 0;
    if (!coded.ReadVarint64(&size))
      throw InputError(
          fmt::format("{}: message {}: truncated or malformed length prefix (a base-128 varint)", source, msg));
    if (size > static_cast<uint64_t>(kMaxMessageBytes))
      throw InputError(fmt::format("{}: message {}: length {} bytes is beyond podnet's limit of {} bytes", source, msg,
                                   size, kMaxMessageBytes));
    const auto limit = coded.PushLimit(static_cast<int>(size));
    const bool metadata = msg == 1;
    pb::GlobalMetadata meta;
    pb::Node node;
    const bool ok = metadata ? meta.ParseFromCodedStream(&coded) : node.ParseFromCodedStream(&coded);
    if (!ok || coded.BytesUntilLimit() != 0)
      throw InputError(fmt::format("{}: message {}: {} is truncated or not a {} message ({} bytes announced)", source,
                                   msg, metadata ? "the GlobalMetadata" : "a Node",
                                   metadata ? "GlobalMetadata" : "Node", size));
    coded.PopLimit(limit);
    if (metadata) {
      t.version = meta.version();
      continue;
    }
    if (static_cast<int64_t>(t.nodes.size()) >= kMaxNodes)
      throw InputError(fmt::format("{}: message {}: more than {} nodes, podnet's limit", source, msg, kMaxNodes));
    Node n = convert(node, source);
    if (!index.emplace(n.id, msg).second)
      throw InputError(
          fmt::format("{}: node {}: id: given twice (messages {} and {})", source, n.id, index[n.id], msg));
    t.nodes.push_back(std::move(n));
  }
  for (const Node& n : t.nodes)
    for (const auto* deps : {&n.data_deps, &n.ctrl_deps})
      for (uint64_t d : *deps) {
        if (!index.count(d))
          throw InputError(fmt::format("{}: node {}: {}: node {} is not in the file", source, n.id,
                                       deps == &n.data_deps ? "data_deps" : "ctrl_deps", d));
        if (d == n.id)
          throw InputError(fmt::format("{}: node {}: {}: the node depends on itself", source, n.id,
                                       deps == &n.data_deps ? "data_deps" : "ctrl_deps"));
      }
  return t;
}

std::vector<std::string> trace_files(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw InputError(fmt::format("--chakra {}: not a directory (expected one PREFIX.<rank>.et file per rank)", dir));
  std::map<std::string, std::map<int64_t, std::string>> by_prefix;  // sorted: deterministic messages
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    if (name.size() < 4 || name.compare(name.size() - 3, 3, ".et") != 0) continue;
    const std::string stem = name.substr(0, name.size() - 3);
    const size_t dot = stem.find_last_of('.');
    if (dot == std::string::npos || dot + 1 == stem.size()) continue;
    const std::string digits = stem.substr(dot + 1);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() > 9) continue;
    by_prefix[stem.substr(0, dot)][std::stoll(digits)] = e.path().string();
  }
  if (ec) throw InputError(fmt::format("--chakra {}: cannot list the directory: {}", dir, ec.message()));
  if (by_prefix.empty())
    throw InputError(fmt::format("--chakra {}: no PREFIX.<rank>.et file (Chakra names one file per rank so)", dir));
  if (by_prefix.size() > 1)
    throw InputError(fmt::format("--chakra {}: files of two traces, '{}.<rank>.et' and '{}.<rank>.et'; keep one", dir,
                                 by_prefix.begin()->first, std::next(by_prefix.begin())->first));
  const auto& ranks = by_prefix.begin()->second;
  std::vector<std::string> files;
  for (const auto& [r, path] : ranks) {
    if (r != static_cast<int64_t>(files.size()))
      throw InputError(fmt::format("--chakra {}: {}.{}.et is missing (ranks must run 0..{} without a gap)", dir,
                                   by_prefix.begin()->first, files.size(), ranks.rbegin()->first));
    if (r >= topology::kMaxGpus)
      throw InputError(fmt::format("--chakra {}: more than {} ranks, podnet's limit", dir, topology::kMaxGpus));
    files.push_back(path);
  }
  return files;
}

std::vector<RankTrace> load_traces(const std::string& dir) {
  std::vector<RankTrace> out;
  const auto files = trace_files(dir);
  for (size_t r = 0; r < files.size(); ++r) {
    std::ifstream in(files[r], std::ios::binary);
    if (!in) throw InputError(fmt::format("{}: cannot open", files[r]));
    out.push_back(parse_trace(in, files[r], static_cast<int32_t>(r)));
  }
  return out;
}

Job job_of(const std::vector<RankTrace>& traces, int64_t fabric_gpus) {
  const auto n = static_cast<int64_t>(traces.size());
  if (n == 0) throw InputError("--chakra: no rank");
  if (n > fabric_gpus)
    throw InputError(fmt::format("--chakra: the trace has {} ranks ({} .. {}), the fabric {} GPUs", n,
                                 traces.front().source, traces.back().source, fabric_gpus));
  Job j;
  j.model = ModelSpec{};
  const std::string& src = traces.front().source;
  std::string file = src.substr(src.find_last_of('/') + 1);  // PREFIX.0.et
  const size_t dot = file.rfind('.', file.size() > 3 ? file.size() - 4 : 0);
  j.model.name = "chakra:" + (dot != std::string::npos && dot > 0 ? file.substr(0, dot) : file);
  j.model.layers = 0;
  j.model.hidden = 0;
  j.model.heads = 1;
  j.model.kv_heads = 1;
  j.gpu = GpuSpec{};
  j.gpu.name = "imported";
  j.dp = n;
  j.microbatch = 1;
  j.global_batch = n;
  j.tokens = 0;
  j.recompute = false;
  return j;
}

namespace {

// One unit of the plan: a node, a matched send/recv pair, or one collective of a communicator.
struct Op {
  enum Kind : uint8_t { Compute, Marker, P2p, Coll } kind = Marker;
  std::vector<std::pair<int32_t, int32_t>> members;  // (rank, node index in its file)
  int32_t group = -1;                                // Imported::traffic index (P2p, Coll)
  std::vector<int32_t> deps;                         // op indices
  int32_t start = -1, end = -1;                      // transfer indices
};

std::string group_of(const Node& n) {
  return n.pg_name.empty() || n.pg_name == "0" ? std::string("world") : "pg " + n.pg_name;
}

collective::Op op_of(int64_t t) {
  switch (t) {
    case kAllReduce: return collective::Op::AllReduce;
    case kReduce: return collective::Op::Reduce;
    case kAllGather: return collective::Op::AllGather;
    case kBroadcast: return collective::Op::Broadcast;
    case kAllToAll: return collective::Op::AllToAll;
    default: return collective::Op::ReduceScatter;  // REDUCE_SCATTER, REDUCE_SCATTER_BLOCK
  }
}

std::string at(const RankTrace& t, const Node& n) { return fmt::format("{}: node {}", t.source, n.id); }

}  // namespace

TracePlan build_plan(const std::vector<RankTrace>& traces, const std::vector<int32_t>& gpu_of_rank,
                     const topology::Topology& topo, const TrainOptions& options) {
  const auto n = static_cast<int32_t>(traces.size());
  if (gpu_of_rank.size() != traces.size()) throw Error("internal: chakra::build_plan: one GPU per rank expected");
  TracePlan tp;
  Imported& im = tp.imported;
  im.ranks = n;
  im.version = n > 0 ? traces[0].version : "";
  std::vector<Op> ops;
  std::vector<std::vector<int32_t>> op_of_node(traces.size());
  std::map<std::string, int32_t> group_index;  // name -> traffic index, by name
  // Collectives per communicator, per rank, in file order; sends/receives by (src, dst, tag).
  std::map<std::string, std::vector<std::vector<int32_t>>> colls;
  std::map<std::tuple<int64_t, int64_t, int64_t>,
           std::pair<std::vector<std::pair<int32_t, int32_t>>, std::vector<std::pair<int32_t, int32_t>>>>
      p2p;
  for (int32_t r = 0; r < n; ++r) {
    const RankTrace& t = traces[r];
    op_of_node[r].assign(t.nodes.size(), -1);
    im.nodes += static_cast<int64_t>(t.nodes.size());
    for (int32_t i = 0; i < static_cast<int32_t>(t.nodes.size()); ++i) {
      const Node& nd = t.nodes[i];
      switch (nd.type) {
        case kCompNode:
          op_of_node[r][i] = static_cast<int32_t>(ops.size());
          ops.push_back({Op::Compute, {{r, i}}});
          break;
        case kCollNode: {
          if (nd.comm_type == kGather || nd.comm_type == kScatter)
            throw InputError(fmt::format("{}: attr comm_type: {} is not modelled by podnet (no algorithm for it)",
                                         at(t, nd), comm_type_name(nd.comm_type)));
          auto& per_rank = colls[group_of(nd)];
          per_rank.resize(traces.size());
          per_rank[r].push_back(i);
          break;
        }
        case kSendNode:
        case kRecvNode: {
          const bool send = nd.type == kSendNode;
          const int64_t src = send ? (nd.comm_src < 0 ? r : nd.comm_src) : nd.comm_src;
          const int64_t dst = send ? nd.comm_dst : (nd.comm_dst < 0 ? r : nd.comm_dst);
          if ((send ? src : dst) != r)
            throw InputError(fmt::format("{}: attr {}: {}, but this is rank {}'s file", at(t, nd),
                                         send ? "comm_src" : "comm_dst", send ? src : dst, r));
          const int64_t peer = send ? dst : src;
          if (peer >= n)
            throw InputError(fmt::format("{}: attr {}: rank {} is not in the trace (ranks 0..{})", at(t, nd),
                                         send ? "comm_dst" : "comm_src", peer, n - 1));
          if (peer == r)
            throw InputError(fmt::format("{}: attr {}: the node's own rank (podnet moves no bytes to itself)",
                                         at(t, nd), send ? "comm_dst" : "comm_src"));
          auto& e = p2p[{src, dst, nd.comm_tag}];
          (send ? e.first : e.second).push_back({r, i});
          break;
        }
        default:
          op_of_node[r][i] = static_cast<int32_t>(ops.size());
          ops.push_back({Op::Marker, {{r, i}}});
          ++im.skipped;
      }
    }
  }
  // Collectives: the k-th of a communicator in every member's file.
  for (const auto& [name, per_rank] : colls) {
    std::vector<int32_t> members;
    for (int32_t r = 0; r < n; ++r)
      if (name == "world" || !per_rank[r].empty()) members.push_back(r);
    const int32_t first = members.front();
    for (int32_t r : members)
      if (per_rank[r].size() != per_rank[first].size()) {
        const bool more = per_rank[r].size() > per_rank[first].size();
        const int32_t a = more ? r : first, b = more ? first : r;
        const size_t k = per_rank[b].size();
        const Node& nd = traces[a].nodes[per_rank[a][k]];
        throw InputError(fmt::format("{}: pg_name: collective #{} of communicator {} has no partner in {} (which "
                                     "has {} collectives on it, this file {})",
                                     at(traces[a], nd), k + 1, name, traces[b].source, k, per_rank[a].size()));
      }
    const auto g = static_cast<int32_t>(im.traffic.size());
    group_index[name] = g;
    im.traffic.push_back({name, static_cast<int32_t>(members.size())});
    for (size_t k = 0; k < per_rank[first].size(); ++k) {
      Op op{Op::Coll};
      op.group = g;
      const Node& ref = traces[first].nodes[per_rank[first][k]];
      for (int32_t r : members) {
        const int32_t i = per_rank[r][k];
        const Node& nd = traces[r].nodes[i];
        if (nd.comm_type != ref.comm_type || nd.comm_size != ref.comm_size)
          throw InputError(
              fmt::format("{}: attr {}: {}, but {} (collective #{} of communicator {} there too) has {}",
                          at(traces[r], nd), nd.comm_type != ref.comm_type ? "comm_type" : "comm_size",
                          nd.comm_type != ref.comm_type ? comm_type_name(nd.comm_type) : std::to_string(nd.comm_size),
                          at(traces[first], ref), k + 1, name,
                          nd.comm_type != ref.comm_type ? comm_type_name(ref.comm_type)
                                                        : std::to_string(ref.comm_size)));
        op.members.push_back({r, i});
        op_of_node[r][i] = static_cast<int32_t>(ops.size());
      }
      ++im.traffic[g].collectives;
      im.traffic[g].bytes += static_cast<double>(ref.comm_type == kBarrier ? 0 : ref.comm_size);
      ++im.collectives;
      ops.push_back(std::move(op));
    }
  }
  // Sends and receives, pairwise in file order.
  int32_t p2p_group = -1;
  for (const auto& [key, sr] : p2p) {
    const auto& [sends, recvs] = sr;
    if (sends.size() != recvs.size()) {
      const bool extra_send = sends.size() > recvs.size();
      const auto [r, i] = extra_send ? sends[recvs.size()] : recvs[sends.size()];
      const auto [src, dst, tag] = key;
      throw InputError(fmt::format("{}: attr {}: no matching {} on rank {} (send/receive #{} from rank {} to rank {} "
                                   "with comm_tag {}: {} sends, {} receives)",
                                   at(traces[r], traces[r].nodes[i]), extra_send ? "comm_dst" : "comm_src",
                                   extra_send ? "COMM_RECV_NODE" : "COMM_SEND_NODE", extra_send ? dst : src,
                                   std::min(sends.size(), recvs.size()) + 1, src, dst, tag, sends.size(),
                                   recvs.size()));
    }
    if (p2p_group < 0) {
      p2p_group = static_cast<int32_t>(im.traffic.size());
      im.traffic.push_back({"p2p", 0});
    }
    for (size_t k = 0; k < sends.size(); ++k) {
      Op op{Op::P2p, {sends[k], recvs[k]}, p2p_group};
      op_of_node[sends[k].first][sends[k].second] = static_cast<int32_t>(ops.size());
      op_of_node[recvs[k].first][recvs[k].second] = static_cast<int32_t>(ops.size());
      ++im.traffic[p2p_group].collectives;
      im.traffic[p2p_group].bytes += static_cast<double>(traces[sends[k].first].nodes[sends[k].second].comm_size);
      ++im.p2p_pairs;
      ops.push_back(std::move(op));
    }
  }
  if (p2p_group >= 0) {  // ranks that send or receive
    std::vector<char> in(traces.size(), 0);
    for (const Op& op : ops)
      if (op.kind == Op::P2p)
        for (const auto& [r, i] : op.members) in[r] = 1;
    im.traffic[p2p_group].ranks = static_cast<int32_t>(std::count(in.begin(), in.end(), 1));
  }
  // Dependencies between ops (a node's data and control deps, through the ops they belong to).
  for (int32_t r = 0; r < n; ++r) {
    std::unordered_map<uint64_t, int32_t> pos;
    for (int32_t i = 0; i < static_cast<int32_t>(traces[r].nodes.size()); ++i) pos[traces[r].nodes[i].id] = i;
    for (int32_t i = 0; i < static_cast<int32_t>(traces[r].nodes.size()); ++i) {
      const Node& nd = traces[r].nodes[i];
      Op& op = ops[op_of_node[r][i]];
      for (const auto* deps : {&nd.data_deps, &nd.ctrl_deps})
        for (uint64_t d : *deps) {
          const int32_t o = op_of_node[r][pos.at(d)];
          if (o == op_of_node[r][i])
            throw InputError(fmt::format("{}: {}: node {} is part of the same collective or send/receive",
                                         at(traces[r], nd), deps == &nd.data_deps ? "data_deps" : "ctrl_deps", d));
          op.deps.push_back(o);
        }
    }
  }
  for (Op& op : ops) {
    std::sort(op.deps.begin(), op.deps.end());
    op.deps.erase(std::unique(op.deps.begin(), op.deps.end()), op.deps.end());
  }
  // Kahn's order of the ops (ties by op index); what it cannot reach is a cycle.
  const auto m = static_cast<int32_t>(ops.size());
  std::vector<std::vector<int32_t>> dependents(m);
  std::vector<int32_t> indeg(m, 0);
  for (int32_t o = 0; o < m; ++o)
    for (int32_t d : ops[o].deps) {
      dependents[d].push_back(o);
      ++indeg[o];
    }
  std::vector<int32_t> order;
  std::vector<int32_t> ready;  // a min-heap by op index
  for (int32_t o = 0; o < m; ++o)
    if (indeg[o] == 0) ready.push_back(o);
  std::make_heap(ready.begin(), ready.end(), std::greater<>());
  while (!ready.empty()) {
    std::pop_heap(ready.begin(), ready.end(), std::greater<>());
    const int32_t o = ready.back();
    ready.pop_back();
    order.push_back(o);
    for (int32_t d : dependents[o])
      if (--indeg[d] == 0) {
        ready.push_back(d);
        std::push_heap(ready.begin(), ready.end(), std::greater<>());
      }
  }
  if (static_cast<int32_t>(order.size()) != m) {
    for (int32_t o = 0; o < m; ++o)
      if (indeg[o] > 0) {
        const auto [r, i] = ops[o].members.front();
        throw InputError(fmt::format("{}: data_deps/ctrl_deps: the node waits for itself through a dependency cycle "
                                     "(within the file, or across files through collectives or sends/receives "
                                     "issued in different orders)",
                                     at(traces[r], traces[r].nodes[i])));
      }
  }
  // The transfers, in that order.
  plan::TransferPlan& pl = tp.plan;
  std::map<std::tuple<std::vector<int32_t>, int, Bytes>, plan::TransferPlan> cache;
  auto add = [&](plan::Transfer t, int32_t rank, Category c, int32_t group) {
    if (static_cast<int64_t>(pl.transfers.size()) >= kMaxPlanTransfers)
      throw InputError(fmt::format("--chakra: the traces make more than {} transfers, podnet's limit",
                                   thousands(kMaxPlanTransfers)));
    tp.rank.push_back(rank);
    tp.category.push_back(c);
    tp.group.push_back(group);
    return pl.add(std::move(t));
  };
  auto marker = [](std::vector<int32_t> gpus, std::vector<int32_t> deps, std::string label) {
    plan::Transfer t;
    t.kind = plan::TransferKind::Compute;
    t.ranks = std::move(gpus);
    t.deps = std::move(deps);
    t.label = std::move(label);
    return t;
  };
  for (int32_t o : order) {
    Op& op = ops[o];
    std::vector<int32_t> deps;
    for (int32_t d : op.deps) deps.push_back(ops[d].end);
    const auto [r0, i0] = op.members.front();
    const Node& nd = traces[r0].nodes[i0];
    const std::string label = nd.name.empty() ? fmt::format("node {}", nd.id) : nd.name;
    switch (op.kind) {
      case Op::Compute:
      case Op::Marker: {
        plan::Transfer t = marker({gpu_of_rank[r0]}, std::move(deps), label);
        if (op.kind == Op::Compute) t.duration = nd.duration;
        op.start = op.end = add(std::move(t), r0, op.kind == Op::Compute ? Category::Compute : Category::Marker, -1);
        break;
      }
      case Op::P2p: {
        const int32_t src = op.members[0].first, dst = op.members[1].first;
        plan::Transfer t;
        if (nd.comm_size > 0) {
          t.kind = plan::TransferKind::P2p;
          t.ranks = {gpu_of_rank[src], gpu_of_rank[dst]};
          t.bytes = nd.comm_size;
          t.qps = options.collective.qps;
          t.deps = std::move(deps);
          t.label = label;
        } else {
          t = marker({gpu_of_rank[src], gpu_of_rank[dst]}, std::move(deps), label);
        }
        op.start = op.end = add(std::move(t), src, Category::Pp, op.group);
        break;
      }
      case Op::Coll: {
        std::vector<int32_t> gpus;
        for (const auto& [r, i] : op.members) gpus.push_back(gpu_of_rank[r]);
        op.start = add(marker(gpus, std::move(deps), label), -1, Category::Dp, op.group);
        op.end = op.start;
        if (nd.comm_type == kBarrier || gpus.size() < 2 || nd.comm_size <= 0) break;
        const collective::Op cop = op_of(nd.comm_type);
        const auto key = std::make_tuple(gpus, static_cast<int>(cop), nd.comm_size);
        auto it = cache.find(key);
        if (it == cache.end()) {
          // auto: NCCL's tuner when NCCL's model is on (training.hpp, TrainOptions::dp_algorithm).
          const auto* algo = collective::find_algorithm(options.dp_algorithm);
          const bool tuned = options.dp_algorithm == "auto" && options.collective.tuner;
          const std::string name = tuned                                      ? std::string("auto")
                                   : algo && collective::supports(*algo, cop) ? options.dp_algorithm
                                                                              : collective::default_algorithm(cop);
          // PAT's steps as one transfer each, as the training planner builds them (collective/pat.hpp).
          collective::Options co = options.collective;
          co.coupled_steps = true;
          it = cache.emplace(key, collective::make_plan(name, cop, gpus, nd.comm_size, co, topo)).first;
        }
        const plan::TransferPlan& sub = it->second;
        const auto base = static_cast<int32_t>(pl.transfers.size());
        std::vector<char> has_dependents(sub.transfers.size(), 0);
        for (const auto& s : sub.transfers) {
          plan::Transfer c = s;
          if (c.deps.empty()) c.deps = {op.start};
          else
            for (auto& d : c.deps) {
              has_dependents[static_cast<size_t>(d)] = 1;
              d += base;
            }
          c.label = label + "/" + c.label;
          add(std::move(c), -1, Category::Dp, op.group);
        }
        std::vector<int32_t> sinks;
        for (size_t k = 0; k < sub.transfers.size(); ++k)
          if (!has_dependents[k]) sinks.push_back(base + static_cast<int32_t>(k));
        if (!sinks.empty()) op.end = add(marker(gpus, std::move(sinks), label + "/done"), -1, Category::Dp, op.group);
        break;
      }
    }
  }
  tp.spans.assign(traces.size(), {});
  for (int32_t o : order) {
    const Op& op = ops[o];
    const Category c = op.kind == Op::Compute ? Category::Compute
                       : op.kind == Op::P2p   ? Category::Pp
                       : op.kind == Op::Coll  ? Category::Dp
                                              : Category::Marker;
    for (const auto& [r, i] : op.members) tp.spans[r].push_back({op.start, op.end, c, op.group, i});
  }
  return tp;
}

namespace {

using Interval = std::pair<Time, Time>;

// Sorted, merged intervals.
std::vector<Interval> merged(std::vector<Interval> v) {
  std::sort(v.begin(), v.end());
  std::vector<Interval> out;
  for (const auto& x : v) {
    if (x.second <= x.first) continue;
    if (!out.empty() && x.first <= out.back().second) out.back().second = std::max(out.back().second, x.second);
    else out.push_back(x);
  }
  return out;
}

Time length(const std::vector<Interval>& v) {
  Time t;
  for (const auto& x : v) t = t + (x.second - x.first);
  return t;
}

// |a minus b| for merged interval lists.
Time uncovered(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  Time out;
  size_t j = 0;
  for (const auto& x : a) {
    Time cur = x.first;
    while (j < b.size() && b[j].second <= cur) ++j;
    for (size_t k = j; k < b.size() && b[k].first < x.second; ++k) {
      if (b[k].first > cur) out = out + (b[k].first - cur);
      cur = std::max(cur, b[k].second);
      if (cur >= x.second) break;
    }
    if (cur < x.second) out = out + (x.second - cur);
  }
  return out;
}

}  // namespace

Result simulate(const std::vector<RankTrace>& traces, const std::vector<int32_t>& gpu_of_rank,
                const topology::Topology& topo, engine::NetworkBackend& backend, const TrainOptions& options) {
  TracePlan tp = build_plan(traces, gpu_of_rank, topo, options);
  const engine::RunReport run = backend.run(tp.plan);
  Result out;
  TrainResult& r = out.train;
  r.job = job_of(traces, static_cast<int64_t>(topo.gpus.size()));
  r.fabric_gpus = static_cast<int64_t>(topo.gpus.size());
  r.engine = backend.name();
  r.iteration = run.makespan;
  r.flows = run.flows;
  r.failures = run.failures;
  r.job_failed = run.job_failed;
  r.failed_at = run.failed_at;
  r.failure = run.failure;
  r.groups.dp_groups = 1;
  r.groups.dp_size = static_cast<int64_t>(traces.size());
  r.groups.tp_size = r.groups.pp_size = 1;
  r.plan_transfers = static_cast<int64_t>(tp.plan.transfers.size());
  r.p2p_transfers = tp.imported.p2p_pairs;
  r.dp_collectives = tp.imported.collectives;
  Imported& im = tp.imported;
  const Time T = run.makespan;
  Time latest;
  std::vector<std::vector<Interval>> by_group;
  for (size_t k = 0; k < traces.size(); ++k) {
    std::vector<Interval> comp, coll, p2p;
    Time last;
    for (const TracePlan::Span& s : tp.spans[k]) {
      const Interval x{run.transfers[s.start].start, run.transfers[s.end].finish};
      last = std::max(last, x.second);
      if (s.category == Category::Compute) comp.push_back(x);
      else if (s.category == Category::Dp) coll.push_back(x);
      else if (s.category == Category::Pp) p2p.push_back(x);
    }
    const auto c = merged(comp), cl = merged(coll), pp = merged(p2p);
    auto busy = c;
    busy.insert(busy.end(), cl.begin(), cl.end());
    busy = merged(busy);
    RankBreakdown b;
    b.compute = length(c);
    b.collective = uncovered(cl, c);
    b.p2p = uncovered(pp, busy);
    b.idle = T - b.compute - b.collective - b.p2p;
    im.per_rank.push_back(b);
    Breakdown sb;  // the training breakdown's slots: collectives as dp, sends/receives as pp, idle as bubble
    sb.compute = b.compute;
    sb.dp = b.collective;
    sb.pp = b.p2p;
    sb.bubble = b.idle;
    r.stages.push_back(sb);
    if (k == 0 || last > latest) {
      latest = last;
      im.critical_rank = static_cast<int32_t>(k);
    }
  }
  r.critical_stage = im.critical_rank;
  r.breakdown = r.stages.empty() ? Breakdown{} : r.stages[static_cast<size_t>(im.critical_rank)];
  // Per communicator on the critical rank: what its ops cover and compute does not.
  if (!traces.empty()) {
    std::vector<Interval> comp;
    std::vector<std::vector<Interval>> per(im.traffic.size());
    for (const TracePlan::Span& s : tp.spans[static_cast<size_t>(im.critical_rank)]) {
      const Interval x{run.transfers[s.start].start, run.transfers[s.end].finish};
      if (s.category == Category::Compute) comp.push_back(x);
      else if (s.group >= 0) per[static_cast<size_t>(s.group)].push_back(x);
    }
    const auto c = merged(comp);
    for (size_t g = 0; g < per.size(); ++g) im.traffic[g].exposed = uncovered(merged(per[g]), c);
  }
  if (options.trace) {
    r.trace_process = "rank";
    r.trace_lanes = {"compute", "collective", "p2p"};
    std::map<int32_t, std::pair<int32_t, int32_t>> p2p_slices;  // P2p transfer -> (send's slice, receive's slice)
    for (size_t k = 0; k < traces.size(); ++k)
      for (const TracePlan::Span& s : tp.spans[k]) {
        if (s.category == Category::Marker) continue;
        if (s.category == Category::Pp) {
          auto& pair = p2p_slices.try_emplace(s.start, -1, -1).first->second;
          (traces[k].nodes[static_cast<size_t>(s.node)].type == kSendNode ? pair.first : pair.second) =
              static_cast<int32_t>(r.trace.size());
        }
        const Node& nd = traces[k].nodes[static_cast<size_t>(s.node)];
        const Time a = run.transfers[s.start].start, b = run.transfers[s.end].finish;
        const int32_t lane = s.category == Category::Compute ? 0 : s.category == Category::Dp ? 1 : 2;
        const char* kind = s.category == Category::Compute ? "compute"
                           : s.category == Category::Dp    ? "collective"
                                                           : "p2p";
        int32_t peers = s.category == Category::Compute ? 0
                        : s.category == Category::Pp    ? 2
                                                        : im.traffic[s.group].ranks;
        std::string name = nd.name.empty() ? fmt::format("node {}", nd.id) : nd.name;
        r.trace.push_back({std::move(name), kind, static_cast<int32_t>(k), lane, a, b - a, kind,
                           s.category == Category::Compute ? 0 : nd.comm_size, peers, 0});
      }
    for (const auto& [transfer, pair] : p2p_slices)  // arrows: each send's slice to its receive's
      if (pair.first >= 0 && pair.second >= 0) r.trace_flows.push_back(pair);
    // Nodes of one rank may run at once (nothing orders independent nodes): slices that overlap go to
    // further lanes of their kind ("compute 2", ...), first fit by start time, so that no slice overlaps
    // another on its track (Perfetto drops a slice that starts inside another and ends after it).
    constexpr int kKinds = 3;
    std::vector<std::array<std::vector<int32_t>, kKinds>> by_rank(traces.size());
    for (int32_t i = 0; i < static_cast<int32_t>(r.trace.size()); ++i)
      by_rank[static_cast<size_t>(r.trace[i].pid)][static_cast<size_t>(r.trace[i].tid)].push_back(i);
    std::vector<int32_t> sub(r.trace.size(), 0);
    std::array<int32_t, kKinds> lanes{1, 1, 1};
    for (auto& kinds : by_rank)
      for (int c = 0; c < kKinds; ++c) {
        auto& idx = kinds[static_cast<size_t>(c)];
        std::stable_sort(idx.begin(), idx.end(),
                         [&](int32_t x, int32_t y) { return r.trace[x].start < r.trace[y].start; });
        std::vector<Time> ends;  // per sub-lane: when its last slice ends
        for (int32_t i : idx) {
          const TraceOp& op = r.trace[static_cast<size_t>(i)];
          size_t j = 0;
          while (j < ends.size() && ends[j] > op.start) ++j;
          if (j == ends.size()) ends.push_back(Time());
          ends[j] = op.start + op.dur;
          sub[static_cast<size_t>(i)] = static_cast<int32_t>(j);
        }
        lanes[static_cast<size_t>(c)] = std::max(lanes[static_cast<size_t>(c)], static_cast<int32_t>(ends.size()));
      }
    static constexpr const char* kLaneNames[kKinds] = {"compute", "collective", "p2p"};
    std::array<int32_t, kKinds> first{};
    r.trace_lanes.clear();
    for (int c = 0; c < kKinds; ++c) {
      first[static_cast<size_t>(c)] = static_cast<int32_t>(r.trace_lanes.size());
      for (int32_t j = 0; j < lanes[static_cast<size_t>(c)]; ++j)
        r.trace_lanes.push_back(j == 0 ? std::string(kLaneNames[c]) : fmt::format("{} {}", kLaneNames[c], j + 1));
    }
    for (size_t i = 0; i < r.trace.size(); ++i) r.trace[i].tid = first[static_cast<size_t>(r.trace[i].tid)] + sub[i];
  }
  out.imported = std::move(im);
  return out;
}

}  // namespace podnet::workload::chakra
