#include "collective/nccl/tuner.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <fmt/format.h>
#include <set>
#include <vector>

#include "core/error.hpp"

namespace podnet::collective {

namespace {

constexpr int kLL = 0, kLL128 = 1, kSimple = 2;
constexpr int kHwNvlink = 0, kHwPci = 1, kHwNet = 2;
constexpr int kMaxSearchChannels = 32;  // MAXCHANNELS / 2 (init.cc: ring graph)
constexpr int kMaxChannels = 64;        // MAXCHANNELS (device.h)
constexpr int kMaxNvlsArity = 32;       // NCCL_MAX_NVLS_ARITY (device.h)
constexpr int kMaxDirectArity = 7;      // NCCL_MAX_DIRECT_ARITY (device.h): CollNet runs with <= 8 GPUs per node
constexpr double kArityLatUs = 0.4;     // tuning.cc: collnet direct's "arity serialization latency" per peer
constexpr double kCollnetDirectEfficiency = 0.85;      // tuning.cc: collnet direct busBw x 0.85 on sm90 and later
constexpr double kCollnetGatherInterEfficiency = 0.9;  // tuning.cc: collnet direct all-gather / reduce-scatter

int ai(Algo a) { return static_cast<int>(a); }
int ci(Arch a) { return static_cast<int>(a); }

// Per-channel speeds the search tries (GB/s), fastest first (search.cc).
const std::vector<double>& intra_speeds(Arch a) {
  static const std::vector<double> pre = {40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static const std::vector<double> sm90 = {60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> sm100 = {90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  return a == Arch::Blackwell ? sm100 : a == Arch::Hopper ? sm90 : pre;
}
const std::vector<double>& inter_speeds(Arch a) {
  static const std::vector<double> pre = {48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> sm90 = {48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> sm100 = {96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                            20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
  return a == Arch::Blackwell ? sm100 : a == Arch::Hopper ? sm90 : pre;
}

// tuning.cc defaults. [algo][proto], algos in NCCL's order.
constexpr double kBaseLat[kNumAlgos][kNumProtos] = {{6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {0, 0, 0},      {0, 0, 0},
                                                    {0, 0, 0},        {0, 0, 0},        {8.0, 8.0, 8.0}};
constexpr double kHwLat[3][kNumAlgos][kNumProtos] = {
    {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}, {0, 0, 4.0}},
    {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}, {0, 0, 4.0}},
    {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 20.9}, {0, 0, 14}},
};
int nccl_index(Algo a) { return ai(a); }
// [arch][min(nodes,3)-1] (Intel CPU column for multi-node).
constexpr double kLlMaxBw[4][3] = {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
constexpr double kPerChRingLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 36.7}, {40, 40, 40}};
constexpr double kPerChTreeLL128[4][3] = {{20, 20, 20}, {20, 20, 20}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
constexpr double kPerChNvlsTree[4][3] = {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}};
constexpr double kNvlsEfficiency[4] = {0.0, 0.0, 0.85, 0.74};
// Tree correction per protocol, sizes 64 B << k (k = log2(S/64), 0..23).
constexpr double kTreeCorrection[kNumProtos][24] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9}};
// NCCL's NVLink figure per link / the link's raw rate per direction (topo.h).
double nvlink_factor(Arch a) { return a == Arch::Hopper ? 20.6 / 25.0 : a == Arch::Blackwell ? 40.1 / 50.0 : 0.8; }
constexpr double kNetOverheadUs = 1.0;  // getNetOverhead: x86 Intel (NCCL_NET_OVERHEAD)
constexpr double kPcieGbs = 24.0;       // a GPU without NVLink: PCIe Gen4 x16 as NCCL counts it

int log2i(int64_t v) {
  int r = -1;
  while (v > 0) v >>= 1, ++r;
  return r;
}

void dup_channels(const CommShape& s, SearchGraph& g) {
  if (g.channels == 0 || g.bw < 25.0) return;
  if (s.arch >= Arch::Hopper && g.bw < 50.0 && g.channels > 4) return;
  const int32_t dup = std::min(2 * g.channels, kMaxSearchChannels);
  g.bw /= (dup + g.channels - 1) / g.channels;
  g.channels = dup;
}

double total_intra(const CommShape& s) { return s.nvlink_gbs > 0 ? s.nvlink_gbs : kPcieGbs; }

std::string lower(std::string_view t) {
  std::string out(t);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

bool is_nccl_algorithm(std::string_view name) {
  for (int a = 0; a < kNumAlgos; ++a)
    if (name == algo_name(static_cast<Algo>(a))) return true;
  return false;
}

const char* algo_name(Algo a) {
  switch (a) {
    case Algo::Ring: return "ring";
    case Algo::Tree: return "tree";
    case Algo::Nvls: return "nvls";
    case Algo::NvlsTree: return "nvls_tree";
    case Algo::CollnetDirect: return "collnet_direct";
    case Algo::CollnetChain: return "collnet_chain";
    case Algo::Pat: return "pat";
  }
  return "?";
}

const char* proto_name(Proto p) {
  switch (p) {
    case Proto::LL: return "ll";
    case Proto::LL128: return "ll128";
    case Proto::Simple: return "simple";
  }
  return "?";
}

const char* arch_name(Arch a) {
  switch (a) {
    case Arch::Volta: return "volta";
    case Arch::Ampere: return "ampere";
    case Arch::Hopper: return "hopper";
    case Arch::Blackwell: return "blackwell";
  }
  return "?";
}

Arch parse_arch(std::string_view name) {
  for (Arch a : {Arch::Volta, Arch::Ampere, Arch::Hopper, Arch::Blackwell})
    if (name == arch_name(a)) return a;
  throw InputError(fmt::format("unknown GPU architecture '{}': expected volta, ampere, hopper or blackwell", name));
}

bool find_algo(std::string_view name, Algo& out) {
  for (int i = 0; i < kNumAlgos; ++i)
    if (name == algo_name(static_cast<Algo>(i))) return out = static_cast<Algo>(i), true;
  return false;
}

bool find_proto(std::string_view name, Proto& out) {
  for (int i = 0; i < kNumProtos; ++i)
    if (name == proto_name(static_cast<Proto>(i))) return out = static_cast<Proto>(i), true;
  return false;
}

double proto_efficiency(Proto p) {
  switch (p) {
    case Proto::LL: return 0.5;             // 8 B line = 4 B data + 4 B flag
    case Proto::LL128: return 120.0 / 128;  // 128 B line = 120 B data + 8 B flag
    case Proto::Simple: return 1.0;
  }
  return 1.0;
}

CommShape comm_shape(const Group& group, const topology::Topology& topo, Arch arch) {
  CommShape s;
  s.arch = arch;
  s.ranks = static_cast<int32_t>(group.size());
  if (group.empty()) return s;
  // Servers and the NICs their group GPUs use.
  std::vector<std::pair<int32_t, int32_t>> server_nic;  // (server or -1-rank, nic node)
  server_nic.reserve(group.size());
  for (int32_t r : group) {
    const auto& g = topo.nodes[topo.gpus[r]];
    const int32_t server = g.server != topology::kNone ? g.server : -1 - r;
    const int32_t nic = r < static_cast<int32_t>(topo.gpu_nic.size()) ? topo.gpu_nic[r] : topology::kNone;
    server_nic.emplace_back(server, nic);
  }
  std::sort(server_nic.begin(), server_nic.end());
  int32_t nodes = 0, fewest = 0, cur = 0;
  size_t first_node_ranks = 0, node_start = 0;
  for (size_t i = 0; i < server_nic.size(); ++i) {
    const bool new_server = i == 0 || server_nic[i].first != server_nic[i - 1].first;
    if (new_server) {
      if (i > 0) {
        fewest = nodes == 1 ? cur : std::min(fewest, cur);
        if (nodes == 1) first_node_ranks = i - node_start;
        else if (i - node_start != first_node_ranks) s.uniform = false;
      }
      ++nodes;
      cur = 0;
      node_start = i;
    }
    if (server_nic[i].second != topology::kNone && (new_server || server_nic[i].second != server_nic[i - 1].second))
      ++cur;
  }
  fewest = nodes == 1 ? cur : std::min(fewest, cur);
  if (nodes > 1 && server_nic.size() - node_start != first_node_ranks) s.uniform = false;
  s.nodes = nodes;
  s.nics = fewest;
  s.sharp = topo.sharp;
  s.chip_links = !topo.torus_dims.empty() && topo.nics.empty();
  // Bandwidths from the first GPU of the group (servers are uniform in every builder).
  const topology::NodeId gpu = topo.gpus[group[0]];
  double nvlink_bps = 0, other_bps = 0;
  for (auto [l, end] = topo.incident(gpu); l != end; ++l) {
    const auto& link = topo.links[*l];
    const auto& peer = topo.nodes[topo.other_end(*l, gpu)];
    if (link.media == topology::Media::NvLink) {
      nvlink_bps += link.capacity.bps;
      if (peer.kind == topology::NodeKind::NvSwitch) s.nvswitch = true;
    } else if (peer.kind != topology::NodeKind::Nic) {
      other_bps = std::max(other_bps, link.capacity.bps);
    }
  }
  s.nvlink_gbs = nvlink_bps / 8e9 * nvlink_factor(arch);
  const topology::NodeId nic = static_cast<size_t>(group[0]) < topo.gpu_nic.size() ? topo.gpu_nic[group[0]]
                                                                                   : topology::kNone;
  if (nic != topology::kNone) {
    double best = 0, planes = 0;  // a multi-plane NIC (topology/planes.hpp): its ports together
    for (auto [l, end] = topo.incident(nic); l != end; ++l) {
      const topology::NodeKind k = topo.nodes[topo.other_end(*l, nic)].kind;
      if (k != topology::NodeKind::Gpu) best = std::max(best, topo.links[*l].capacity.bps);
      if (k == topology::NodeKind::Switch) planes += topo.links[*l].capacity.bps;
    }
    s.nic_gbs = (topo.nic_planes > 1 ? planes : best) / 8e9;
  } else {
    s.nic_gbs = other_bps / 8e9;
    if (s.nic_gbs > 0 && s.nics == 0) s.nics = 1;
  }
  return s;
}

SearchGraph ring_graph(const CommShape& s) {
  SearchGraph g;
  if (s.ranks <= 1) return g;
  const double total = total_intra(s);
  if (s.nodes > 1) {
    const auto& speeds = inter_speeds(s.arch);
    const double max_bw = std::min(s.nic_gbs, total);
    size_t k = 0;
    while (k + 1 < speeds.size() && speeds[k] > max_bw) ++k;
    g.bw = speeds[k];
    const int32_t per_nic = std::max(1, static_cast<int32_t>(std::floor(s.nic_gbs / g.bw + 1e-9)));
    const int32_t enough = static_cast<int32_t>(std::ceil(total / g.bw - 1e-9));  // c x s >= total stops the search
    g.channels = std::clamp(std::min(std::max(1, s.nics) * per_nic, enough), 1, kMaxSearchChannels);
  } else {
    const auto& speeds = intra_speeds(s.arch);
    size_t k = 0;
    while (k + 1 < speeds.size() && speeds[k] > total) ++k;
    g.bw = speeds[k];
    g.channels = std::clamp(static_cast<int32_t>(std::floor(total / g.bw + 1e-9)), 1, kMaxSearchChannels);
    const double first = g.bw;
    for (size_t j = k + 1; j < speeds.size() && speeds[j] / first > 0.49; ++j) {
      const int32_t c = std::min(static_cast<int32_t>(std::floor(total / speeds[j] + 1e-9)), kMaxSearchChannels);
      if (c * speeds[j] > g.channels * g.bw + 1e-9) g.channels = c, g.bw = speeds[j];
    }
  }
  dup_channels(s, g);
  return g;
}

SearchGraph nvls_graph(const CommShape& s) {
  SearchGraph g;
  if (!s.nvswitch || s.arch < Arch::Hopper || s.ranks <= 1) return g;
  const int32_t ppn = s.ranks / std::max(1, s.nodes);
  if (s.nodes > 1) {
    // One head per NIC ring at the largest inter speed the NIC carries (within the GPU's
    // NVLink, which non-ring patterns count x ppn/(ppn-1)); at most ppn heads.
    if (ppn < 2 || s.nic_gbs <= 0) return g;
    const auto& speeds = inter_speeds(s.arch);
    const double total = total_intra(s) * ppn / (ppn - 1.0);
    const double max_bw = std::min(s.nic_gbs, total_intra(s));
    size_t k = 0;
    while (k + 1 < speeds.size() && (speeds[k] > max_bw || speeds[k] > total)) ++k;
    g.bw = speeds[k];
    const int32_t per_nic = std::max(1, static_cast<int32_t>(std::floor(s.nic_gbs / g.bw + 1e-9)));
    g.channels = std::min({ppn, kMaxNvlsArity, std::max(1, s.nics) * per_nic});
    return g;
  }
  const int32_t c = std::min(kMaxNvlsArity, ppn);
  const auto& speeds = intra_speeds(s.arch);
  const double total = total_intra(s);
  for (double sp : speeds)
    if (sp * c <= total + 1e-9) {
      g.channels = c;
      g.bw = sp;
      break;
    }
  return g;
}

SearchGraph collnet_graph(const CommShape& s) {
  SearchGraph g;
  if (s.ranks <= 1 || s.nodes < 2 || s.nic_gbs <= 0) return g;
  const int32_t ppn = s.ranks / s.nodes;
  if (ppn > kMaxDirectArity + 1) return g;
  const auto& speeds = inter_speeds(s.arch);
  const double max_bw = std::min(s.nic_gbs, total_intra(s));
  size_t k = 0;
  while (k + 1 < speeds.size() && speeds[k] > max_bw) ++k;
  g.bw = speeds[k];
  g.channels = std::min({ppn, kMaxDirectArity + 1, std::max(1, s.nics)});
  // Duplication as for the other graphs, within the graph's maximum of min(8, ppn) channels.
  if (g.bw >= 25.0 && !(s.arch >= Arch::Hopper && g.bw < 50.0 && g.channels > 4)) {
    const int32_t dup = std::min(2 * g.channels, std::min(kMaxDirectArity + 1, ppn));
    g.bw /= (dup + g.channels - 1) / g.channels;
    g.channels = dup;
  }
  return g;
}

int32_t execution_channels(const CommShape& s) {
  const SearchGraph g = ring_graph(s);
  if (g.channels == 0) return 1;
  int32_t e = std::min(kMaxChannels, 2 * g.channels);
  if (s.arch >= Arch::Hopper && s.nodes > 1 && g.bw > 45.0 && e < 16) e = std::min(kMaxChannels, 2 * e);
  return e;
}

int32_t size_channels(Algo a, Proto p, Bytes bytes, int32_t ranks, int32_t channels) {
  if (a != Algo::Ring && a != Algo::Tree) return channels;
  const int64_t threads = p == Proto::LL128 ? 640 : 512;  // NCCL_LL128_MAX_NTHREADS; LL and Simple 512
  int64_t threshold = p == Proto::Simple ? 64 : 8;        // NCCL_*_THREAD_THRESHOLD
  if (a == Algo::Ring && p == Proto::LL) threshold *= std::max(1, ranks);
  int32_t nc = channels;
  while (nc >= 2 && bytes < nc * threads * threshold) --nc;
  return nc;
}

ModelEntry model_entry(Op op, Algo a, Proto p, const CommShape& s) {
  ModelEntry m;
  const int32_t n = s.ranks;
  if (n <= 1 || s.nodes < 1) return m;
  const int pi = static_cast<int>(p);
  const int arch = ci(s.arch);
  const int i2 = s.nodes <= 2 ? s.nodes - 1 : 2;
  const int i1 = s.nodes == 1 ? arch : 0;
  const double ll_max = kLlMaxBw[i1][i2];
  const bool ag_rs = op == Op::AllGather || op == Op::ReduceScatter;
  const int32_t nsteps = op == Op::AllReduce ? 2 * (n - 1) : ag_rs ? n - 1 : n;
  if ((op == Op::Broadcast || op == Op::Reduce) && a != Algo::Ring) return m;
  if (ag_rs && a != Algo::Pat && a != Algo::Ring && a != Algo::Nvls && a != Algo::CollnetDirect) return m;
  if (op == Op::AllReduce && a == Algo::Pat) return m;
  if (op == Op::AllToAll || op == Op::SendRecv || op == Op::Permutation || op == Op::Incast) return m;
  if ((a == Algo::Nvls || a == Algo::NvlsTree) && p != Proto::Simple) return m;
  const bool collnet = a == Algo::CollnetDirect || a == Algo::CollnetChain;
  // CollNet: Simple only; podnet builds its all-reduce (section 5).
  // CollNet: Simple only, >= 2 nodes; all-reduce, and collnet_direct all-gather / reduce-scatter (section 5).
  if (collnet && (p != Proto::Simple || s.nodes < 2)) return m;
  if (a == Algo::CollnetChain && op != Op::AllReduce) return m;
  if (a == Algo::Pat && p != Proto::Simple) return m;
  if (a == Algo::NvlsTree && (op != Op::AllReduce || s.nodes < 2)) return m;
  const double ppn = static_cast<double>(n) / s.nodes;
  const bool nvls = a == Algo::Nvls || a == Algo::NvlsTree;

  SearchGraph g = nvls ? nvls_graph(s) : a == Algo::CollnetDirect ? collnet_graph(s) : ring_graph(s);
  if (g.channels == 0) return m;
  double bw = g.bw;
  if (nvls) {
    if (g.channels < 2) return m;
    double intra = g.bw * kNvlsEfficiency[arch] * (g.channels - 1) / g.channels;
    intra *= op == Op::AllReduce ? 2.0 : (ppn - 1) / ppn;
    if (a == Algo::Nvls) {
      // Pass 2 of the NVLS search raises bwInter while it is below 2 x bwIntra.
      const auto& speeds = intra_speeds(s.arch);
      size_t k = 0;
      while (k + 1 < speeds.size() && speeds[k] > g.bw) ++k;
      double inter = speeds[k];
      while (k > 0 && inter < 2 * g.bw) inter = speeds[--k];
      bw = std::min(intra, inter);
    } else {
      // NVLS tree: the network tree moves each head's shard; with 2 nodes every node is the
      // root of one tree and a leaf of the other, so a NIC carries half: bwInter x 2.
      const double inter = g.bw * (s.nodes <= 2 ? 2.0 : 1.0);
      bw = std::min({intra, inter, kPerChNvlsTree[arch][i2]});
    }
  }
  double bus = g.channels * bw;
  if (a == Algo::Ring && p == Proto::LL) bus = std::min(ll_max, bus * 0.5);
  if (a == Algo::Ring && p == Proto::LL128) bus = std::min(bus * 0.92, g.channels * kPerChRingLL128[arch][i2]);
  if (a == Algo::Tree && op == Op::AllReduce) bus = std::min(bus * 0.92, g.channels * kPerChTree[arch][i2]);
  if (a == Algo::Tree && p == Proto::LL) bus = std::min(bus / 3.8, ll_max);
  if (a == Algo::Tree && p == Proto::LL128)
    bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), g.channels * kPerChTreeLL128[arch][i2]);
  if (a == Algo::Pat) bus *= 0.75;
  if (a == Algo::CollnetDirect && ag_rs) {
    // One head per GPU (1:1 GPU:NIC) or NCCL disables it: busBw = ppn x min(bwIntra, 0.9 bwInter), which is
    // the algorithm bandwidth (no conversion below).
    if (ppn > g.channels || ppn > s.nics) return m;
    bus = ppn * std::min(g.bw, kCollnetGatherInterEfficiency * g.bw);
  } else if (a == Algo::CollnetDirect) {
    double f = ppn / g.channels;  // GPUs per NIC
    f -= (f - 1) / 2;
    bus /= f;
    if (s.arch >= Arch::Hopper) bus *= kCollnetDirectEfficiency;
  }
  if (!(a != Algo::Ring && ag_rs)) bus *= (a == Algo::Ring || nvls) ? static_cast<double>(n) / nsteps : 0.5;
  m.bw_gbs = bus;

  const int intra_hw = s.nvlink_gbs > 0 ? kHwNvlink : kHwPci;
  const int na = nccl_index(a);
  double lat = kBaseLat[na][pi];
  double intra_lat = kHwLat[intra_hw][na][pi];
  const double inter_lat = ppn == 1 ? kHwLat[kHwNet][nccl_index(Algo::Tree)][pi] : kHwLat[kHwNet][na][pi];
  if (a == Algo::Ring) {
    if (op == Op::Broadcast || op == Op::Reduce) {
      const int hw = s.nodes == 1 ? intra_hw : kHwNet;
      const double step = p == Proto::Simple ? kHwLat[hw][nccl_index(Algo::Tree)][pi] : kHwLat[hw][na][pi];
      lat += nsteps * step;
    } else {
      double net_overhead = 0;
      if (s.nodes > 1) net_overhead = kNetOverheadUs * (p == Proto::Simple ? 3 : 1);
      intra_lat = std::max(intra_lat, net_overhead);
      const int32_t inter_steps = s.nodes == 1 ? 0 : op == Op::AllReduce ? 2 * (s.nodes - 1) : s.nodes - 1;
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
  } else if (a == Algo::Tree) {
    if (op == Op::AllReduce) lat += 2 * ((n / s.nodes - 1) * intra_lat + log2i(s.nodes) * inter_lat);
  } else if (a == Algo::CollnetDirect) {
    const double peers = static_cast<double>(n / s.nodes - 1);
    lat += 2 * (std::min(1.0, peers) * intra_lat + peers * kArityLatUs) + inter_lat;
  } else if (a == Algo::CollnetChain) {
    lat += 2 * static_cast<double>(n / s.nodes - 1) * intra_lat + inter_lat;
  } else if (a == Algo::Nvls) {
    lat = intra_lat;
    if (s.nodes > 1) lat += inter_lat;
  } else if (a == Algo::NvlsTree) {
    lat += intra_lat + 2 * log2i(s.nodes) * inter_lat;
  } else if (a == Algo::Pat) {
    lat += log2i(s.nodes) * (inter_lat / 3.5) + n * 2.8;  // NCCL: a log part and a linear part per rank
  }
  m.latency_us = lat;
  return m;
}

double model_latency_us(Op op, Algo a, Proto p, const CommShape& s, Bytes bytes) {
  ModelEntry m = model_entry(op, a, p, s);
  if (a == Algo::Ring && p == Proto::Simple && s.nodes > 1 && op == Op::AllReduce &&
      bytes / (static_cast<int64_t>(execution_channels(s)) * s.ranks) >= 64)
    m.latency_us *= s.arch < Arch::Ampere ? 1.9 : 1.4;  // the ring's plateau
  return m.latency_us;
}

int32_t network_steps(Op op, Algo a, const CommShape& s) {
  if (s.nodes <= 1) return 0;
  switch (a) {
    case Algo::Ring: return op == Op::AllReduce ? 2 * (s.nodes - 1) : s.nodes - 1;
    case Algo::Tree:
    case Algo::NvlsTree: return 2 * log2i(s.nodes);
    case Algo::Pat: return log2i(s.nodes);
    default: return 1;  // NVLS, CollNet: one network crossing (NCCL adds inter_lat once)
  }
}

double model_time_us(Op op, Algo a, Proto p, const CommShape& s, Bytes bytes) {
  const ModelEntry m = model_entry(op, a, p, s);
  if (m.bw_gbs <= 0) return -1;
  double bw = m.bw_gbs;
  const int log_size = log2i(bytes >> 6);
  if (a == Algo::Tree && op == Op::AllReduce && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[static_cast<int>(p)][log_size];
  // NCCL applies the tree correction to NVLS tree on Blackwell (x86 hosts) only.
  if (a == Algo::NvlsTree && s.arch == Arch::Blackwell && op == Op::AllReduce && log_size >= 0 && log_size < 24)
    bw *= kTreeCorrection[static_cast<int>(p)][log_size];
  return model_latency_us(op, a, p, s, bytes) + static_cast<double>(bytes) / (1000.0 * bw);
}

bool enabled_by_default(Op, Algo a, Proto p, const CommShape& s) {
  if (a == Algo::Nvls && (s.nodes > 1 || !s.nvswitch || s.arch < Arch::Hopper))
    return false;  // needs CollNet beyond one node
  if (a == Algo::NvlsTree && (s.nodes == 1 || !s.nvswitch || s.arch < Arch::Hopper)) return false;
  // NVLS tree and CollNet need the same number of GPUs on every node; auto skips them otherwise.
  if ((a == Algo::NvlsTree || a == Algo::CollnetDirect || a == Algo::CollnetChain) && !s.uniform) return false;
  if (a == Algo::CollnetDirect || a == Algo::CollnetChain) {
    // A CollNet network (SHARP switches), >= 2 nodes of <= 8 GPUs; direct on NVSwitch systems only.
    if (!s.sharp || s.nodes < 2 || s.ranks / s.nodes > kMaxDirectArity + 1) return false;
    if (a == Algo::CollnetDirect && !s.nvswitch) return false;
  }
  if (a == Algo::Pat && s.nodes != s.ranks) return false;  // one GPU per node only
  if (p == Proto::LL128) {
    // Hopper+: up to PXN inter, NVLink (or no) intra; older: same on NVLink nodes.
    const double ppn = static_cast<double>(s.ranks) / std::max(1, s.nodes);
    if (s.arch < Arch::Volta) return false;
    if (ppn > 1 && s.nvlink_gbs <= 0) return false;
  }
  return true;
}

std::string why_not(Algo a, const CommShape& s) {
  const bool hopper = s.arch >= Arch::Hopper;
  switch (a) {
    case Algo::Nvls:
      if (!s.nvswitch) return "nvls reduces in an NVSwitch, and these GPUs have none";
      if (!hopper) return "nvls needs Hopper or later (collective.arch / the GPU)";
      if (s.nodes > 1)
        return fmt::format("nvls runs inside one server, and the group spans {} (use nvls_tree)", s.nodes);
      return "";
    case Algo::NvlsTree:
      if (s.nodes == 1) return "nvls_tree spans servers, and the group is on one (use nvls)";
      if (!s.nvswitch) return "nvls_tree reduces in an NVSwitch, and these GPUs have none";
      if (!hopper) return "nvls_tree needs Hopper or later (collective.arch / the GPU)";
      if (!s.uniform) return "nvls_tree needs the same number of the group's GPUs on every server";
      return "";
    case Algo::CollnetDirect:
    case Algo::CollnetChain: {
      const char* name = a == Algo::CollnetDirect ? "collnet_direct" : "collnet_chain";
      if (!s.sharp)
        return fmt::format("{} reduces in the switches, and this fabric's do not (switch.in_network_reduction: sharp)",
                           name);
      if (s.nodes < 2) return fmt::format("{} spans servers, and the group is on one", name);
      if (s.ranks / s.nodes > kMaxDirectArity + 1)
        return fmt::format("{} runs with at most {} GPUs per server (NCCL_MAX_DIRECT_ARITY + 1)", name,
                           kMaxDirectArity + 1);
      if (!s.uniform) return fmt::format("{} needs the same number of the group's GPUs on every server", name);
      if (a == Algo::CollnetDirect && !s.nvswitch) return "collnet_direct needs an NVSwitch in each server";
      return "";
    }
    case Algo::Pat:
      if (s.nodes != s.ranks) return "pat runs with one GPU per server only";
      return "";
    default: return "";
  }
}

namespace {

Selection parse_list(std::string_view text, Selection base, const std::string& key, bool algos) {
  const std::string t = lower(text);
  if (t == "auto" || t.empty()) return base;
  std::string_view body = t;
  bool negate = false;
  if (body.front() == '^') negate = true, body.remove_prefix(1);
  const int count = algos ? kNumAlgos : kNumProtos;
  std::vector<bool> listed(count, false);
  size_t pos = 0;
  while (pos <= body.size()) {
    size_t comma = body.find(',', pos);
    if (comma == std::string_view::npos) comma = body.size();
    std::string item(body.substr(pos, comma - pos));
    item.erase(std::remove(item.begin(), item.end(), ' '), item.end());
    int found = -1;
    for (int i = 0; i < count; ++i) {
      std::string name = algos ? algo_name(static_cast<Algo>(i)) : proto_name(static_cast<Proto>(i));
      std::string nccl = name;
      nccl.erase(std::remove(nccl.begin(), nccl.end(), '_'), nccl.end());
      if (item == name || item == nccl) found = i;
    }
    if (found < 0) {
      std::string all;
      for (int i = 0; i < count; ++i)
        all +=
            (i ? ", " : "") + std::string(algos ? algo_name(static_cast<Algo>(i)) : proto_name(static_cast<Proto>(i)));
      throw InputError(fmt::format("{} = {}: unknown {} '{}': expected auto or a list of {} (NCCL_{} syntax, '^' "
                                   "before the list excludes)",
                                   key, text, algos ? "algorithm" : "protocol", item, all, algos ? "ALGO" : "PROTO"));
    }
    listed[found] = true;
    pos = comma + 1;
  }
  for (int i = 0; i < count; ++i) {
    const bool on = negate ? !listed[i] : listed[i];
    if (algos) base.algos[i] = on;
    else base.protos[i] = on;
  }
  (algos ? base.algos_given : base.protos_given) = true;
  return base;
}

}  // namespace

Selection parse_algorithms(std::string_view text, Selection base, const std::string& key) {
  return parse_list(text, base, key, true);
}
Selection parse_protocols(std::string_view text, Selection base, const std::string& key) {
  return parse_list(text, base, key, false);
}

Choice tune(Op op, const CommShape& s, Bytes bytes, const Selection& sel,
            const std::array<bool, kNumAlgos>& candidates) {
  Choice best;
  // NCCL's loop order: algorithms Tree, Ring, CollNet..., NVLS, NVLS tree, PAT; protocols LL, LL128, Simple.
  for (Algo a :
       {Algo::Tree, Algo::Ring, Algo::CollnetDirect, Algo::CollnetChain, Algo::Nvls, Algo::NvlsTree, Algo::Pat}) {
    if (!candidates[ai(a)] || !sel.algos[ai(a)]) continue;
    // On chip-to-chip links NCCL's tree and PAT price multi-hop paths as one hop (a 1 GiB all-reduce on a ring
    // of 512 chips chose a tree: 5.5x the ring's time); auto skips them, a user's list may still name them.
    if (s.chip_links && !sel.algos_given && (a == Algo::Tree || a == Algo::Pat)) continue;
    for (Proto p : {Proto::LL, Proto::LL128, Proto::Simple}) {
      if (!sel.protos[static_cast<int>(p)]) continue;
      // A protocol the user listed is on; the default rules decide the rest.
      const bool proto_ok = p != Proto::LL128 || sel.protos_given || enabled_by_default(op, a, p, s);
      if (!proto_ok || !enabled_by_default(op, a, Proto::Simple, s)) continue;
      const double t = model_time_us(op, a, p, s, bytes);
      if (t < 0) continue;
      if (best.time_us < 0 || t < best.time_us) best = {a, p, t};
    }
  }
  return best;
}

}  // namespace podnet::collective
