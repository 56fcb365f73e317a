#include "collective/pairwise.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "collective/plan_util.hpp"
#include "core/error.hpp"

namespace podnet::collective {

namespace {

plan::TransferPlan build_alltoall(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const int64_t n = static_cast<int64_t>(group.size());
  const int64_t count = n * (n - 1);
  if (count > kMaxP2pTransfers)
    throw InputError(fmt::format("alltoall over {} GPUs needs {} point-to-point transfers, more than {}: use the "
                                 "analytical engine or fewer GPUs",
                                 n, count, kMaxP2pTransfers));
  if (n <= 1 || bytes == 0) return plan;
  const Bytes chunk = detail::scale_up(bytes, 1, n);
  plan.transfers.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t d = 1; d < n; ++d) plan.add(detail::p2p(group[i], group[(i + d) % n], chunk, o, 0, "a2a"));
  return plan;
}

plan::TransferPlan build_sendrecv(Op, const Group& group, Bytes bytes, const Options& o, const topology::Topology&) {
  plan::TransferPlan plan;
  const size_t n = group.size();
  if (n <= 1 || bytes == 0) return plan;
  for (size_t i = 0; i < n; ++i) plan.add(detail::p2p(group[i], group[(i + 1) % n], bytes, o, 0, "sr"));
  return plan;
}

// The server of GPU `rank` when its NVLinks end at an NVSwitch (a torus's chip-to-chip links do not), else kNone;
// with its NVLink bandwidth (bits/s, one direction, summed over its links).
std::pair<int32_t, double> nvswitch_server(const topology::Topology& topo, int32_t rank) {
  const topology::NodeId g = topo.gpus[static_cast<size_t>(rank)];
  if (topo.nodes[g].server == topology::kNone) return {topology::kNone, 0};
  double bps = 0;
  bool nvswitch = false;
  for (auto [l, end] = topo.incident(g); l != end; ++l)
    if (topo.links[*l].media == topology::Media::NvLink) {
      bps += topo.links[*l].capacity.bps;
      nvswitch = nvswitch || topo.nodes[topo.other_end(*l, g)].kind == topology::NodeKind::NvSwitch;
    }
  return {nvswitch ? topo.nodes[g].server : topology::kNone, bps};
}

// The source's NVLink bandwidth (bits/s) when P2p transfer t stays inside one NVSwitch server, else 0.
double nvswitch_pair_bps(const topology::Topology& topo, const plan::Transfer& t) {
  if (t.kind != plan::TransferKind::P2p || t.bytes <= 0) return 0;
  const auto [a, bps] = nvswitch_server(topo, t.ranks[0]);
  return a != topology::kNone && a == nvswitch_server(topo, t.ranks[1]).first ? bps : 0;
}

int64_t pow2_up(int64_t v) {
  int64_t p = 1;
  while (p < v) p <<= 1;
  return p;
}

}  // namespace

void scale_alltoall_nvlink(plan::TransferPlan& plan, const topology::Topology& topo) {
  for (auto& t : plan.transfers)
    if (nvswitch_pair_bps(topo, t) > 0)
      t.bytes = static_cast<Bytes>(std::ceil(static_cast<double>(t.bytes) / kAlltoallNvlinkEfficiency));
}

namespace {

// addP2pToPlan's channels for one operation of `bytes` in a communicator of `ranks` ranks with `p2p` p2p channels
// and `per_peer` a peer: it starts on per_peer halved while x ranks exceeds p2p ("one channel per operation" when
// every peer is busy), at most one per `min_part` bytes, and doubles while a channel's part exceeds `max_part` and
// the per-peer count allows.
int32_t op_channels(Bytes bytes, int64_t ranks, int64_t p2p, int64_t per_peer, int64_t min_part, int64_t max_part) {
  int64_t lo = per_peer;
  while (lo * ranks > p2p && lo > 1) lo /= 2;
  int64_t n = std::min<int64_t>(lo, std::max<int64_t>(1, (bytes + min_part - 1) / min_part));
  int64_t part = std::max<int64_t>(min_part, (bytes + n - 1) / n);
  while (part > max_part && n <= per_peer / 2) {
    n *= 2;
    part = (bytes + n - 1) / n;
  }
  return static_cast<int32_t>(n);
}

}  // namespace

int32_t nccl_p2p_channels(Bytes bytes, int32_t ranks, int32_t nvlinks, int32_t comm_channels) {
  const int64_t p2p = std::min<int64_t>(32, pow2_up(std::max(1, comm_channels)));               // p2pnChannels
  const int64_t per_peer = std::min<int64_t>(p2p, pow2_up(2 * int64_t{std::max(1, nvlinks)}));  // NVLink peers
  return op_channels(bytes, ranks, p2p, per_peer, int64_t{64} << 10, int64_t{16} << 20);        // step / 8, step x 32
}

int32_t nccl_p2p_net_channels(Bytes bytes, int32_t ranks, int32_t comm_channels, double nic_gbs) {
  const int64_t p2p = std::min<int64_t>(32, pow2_up(std::max(1, comm_channels)));  // p2pnChannels
  // A network peer: max(netCount = 1, divUp((int) NIC GB/s, 14)) (2 without a NIC); NVLink peers ask for more.
  const auto gbs = static_cast<int64_t>(nic_gbs);
  int64_t per_peer = gbs > 0 ? pow2_up(std::max<int64_t>(1, (gbs + 13) / 14)) : 2;
  const int64_t rounds = (int64_t{ranks} + 7) / 8;  // NCCL_MAX_DEV_WORK_P2P_PER_BATCH = 8
  while (per_peer * rounds > p2p && per_peer > 1) per_peer /= 2;
  return op_channels(bytes, ranks, p2p, per_peer, int64_t{64} << 10, int64_t{128} << 10);  // net chunk / 2, chunk
}

double nccl_p2p_rate_cap_bps(const topology::Topology& topo, int32_t from, int32_t to, Bytes bytes,
                             const CommShape& shape, int32_t comm_channels, const Options& o) {
  if (from == to || bytes <= 0) return 0;
  const auto [sa, nvlink_bps] = nvswitch_server(topo, from);
  double payload = 0, cap = 0;  // bytes/s
  if (sa != topology::kNone && sa == nvswitch_server(topo, to).first) {
    const auto nvlinks = static_cast<int32_t>(std::lround(nvlink_bps / 8 / 25e9));  // NVLink 4: 25 GB/s a link
    payload = nvlink_bps / 8 * o.nvlink_efficiency;
    const int32_t ch = shape.nodes > 1 ? nccl_p2p_net_channels(bytes, shape.ranks, comm_channels, shape.nic_gbs)
                                       : nccl_p2p_channels(bytes, shape.ranks, nvlinks, comm_channels);
    cap = ch * kP2pChannelGBs * 1e9;
  } else {
    const auto nic = [&](int32_t r) {
      return static_cast<size_t>(r) < topo.gpu_nic.size() ? topo.gpu_nic[static_cast<size_t>(r)] : topology::kNone;
    };
    if (nic(from) == topology::kNone || nic(to) == topology::kNone || shape.nic_gbs <= 0) return 0;
    const auto server = [&](int32_t r) { return topo.nodes[topo.gpus[static_cast<size_t>(r)]].server; };
    if (server(from) == server(to) && server(from) != topology::kNone) return 0;  // PCIe-only server: not modelled
    payload = shape.nic_gbs * 1e9 * o.network_efficiency;
    cap = nccl_p2p_net_channels(bytes, shape.ranks, comm_channels, shape.nic_gbs) * kP2pNetChannelGBs * 1e9;
  }
  return cap < payload ? 8 * cap : 0;
}

void cap_sendrecv_channels(plan::TransferPlan& plan, const topology::Topology& topo, Bytes bytes,
                           const CommShape& shape, int32_t comm_channels, const Options& o) {
  for (auto& t : plan.transfers)
    if (t.kind == plan::TransferKind::P2p && t.bytes > 0)
      t.max_rate_bps = nccl_p2p_rate_cap_bps(topo, t.ranks[0], t.ranks[1], bytes, shape, comm_channels, o);
}

AlgorithmInfo pairwise_algorithm() {
  return {"pairwise",
          "alltoall: every rank sends S/n to every other rank, n(n-1) concurrent transfers",
          {Op::AllToAll},
          build_alltoall};
}

AlgorithmInfo p2p_algorithm() {
  return {"p2p",
          "sendrecv: rank i sends S to rank (i+1) mod n, n concurrent transfers",
          {Op::SendRecv},
          build_sendrecv};
}

}  // namespace podnet::collective
