#include "collective/ring_order.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

namespace podnet::collective {

using topology::kNone;
using topology::Node;
using topology::Topology;

namespace {

const Node& gpu_node(int32_t rank, const Topology& t) { return t.nodes[t.gpus[rank]]; }

// Rail of a GPU's NIC; GPUs without a NIC count as rail 0.
int32_t rail_of(int32_t rank, const Topology& t) {
  const auto nic = t.gpu_nic[rank];
  if (nic == kNone) return 0;
  const int32_t r = t.nodes[nic].rail;
  return r == kNone ? 0 : r;
}

// Segment of one server: entry, the others in cyclic local order after the
// entry (skipping the exit), then the exit.
void append_segment(const Group& block, size_t entry, size_t exit, Group& out) {
  const size_t m = block.size();
  out.push_back(block[entry]);
  for (size_t i = 1; i < m; ++i) {
    const size_t p = (entry + i) % m;
    if (p != exit) out.push_back(block[p]);
  }
  if (exit != entry) out.push_back(block[exit]);
}

// Torus (NIC-less, chips are routers): a boustrophedon ("snake") walk of the
// group's coordinates, slowest dimension outermost, each inner dimension
// reflected on every other step of the dimensions outside it. On a box of
// chips consecutive GPUs are torus neighbours, so every ring hop is one link
// and no two hops share a directed link (the closing hop runs back along the
// outermost dimension when the inner extents are even).
Group torus_snake_order(const Group& group, const Topology& t) {
  const int dn = static_cast<int>(t.torus_dims.size());
  std::vector<std::vector<int64_t>> vals(dn);  // distinct coordinates per dimension
  const auto coord = [&](int32_t r, int d) {
    int64_t s = 1;
    for (int e = 0; e < d; ++e) s *= t.torus_dims[e];
    return (r / s) % t.torus_dims[d];
  };
  for (int d = 0; d < dn; ++d) {
    for (int32_t r : group) vals[d].push_back(coord(r, d));
    std::sort(vals[d].begin(), vals[d].end());
    vals[d].erase(std::unique(vals[d].begin(), vals[d].end()), vals[d].end());
  }
  std::vector<std::pair<std::vector<int64_t>, int32_t>> keyed;
  for (int32_t r : group) {
    std::vector<int64_t> key;
    bool flip = false;
    for (int d = dn - 1; d >= 0; --d) {  // slowest (last) dimension first
      const auto n = static_cast<int64_t>(vals[d].size());
      const int64_t idx = std::lower_bound(vals[d].begin(), vals[d].end(), coord(r, d)) - vals[d].begin();
      key.push_back(flip ? n - 1 - idx : idx);
      flip = flip != (idx % 2 == 1);
    }
    keyed.emplace_back(std::move(key), r);
  }
  std::sort(keyed.begin(), keyed.end());
  Group out;
  for (auto& [k, r] : keyed) out.push_back(r);
  return out;
}

}  // namespace

int32_t home_rail(int32_t channel, int32_t rails) {
  if (rails <= 1) return 0;
  const int64_t c2 = 2 * static_cast<int64_t>(channel);
  return static_cast<int32_t>((c2 + c2 / rails) % rails);
}

using ServerKey = std::tuple<int32_t, int32_t, int32_t, int32_t, int32_t>;  // pod, group, server, local, rank

// The group's GPUs in (pod, group, server, local) order.
std::vector<ServerKey> server_keys(const Group& group, const Topology& t) {
  std::vector<ServerKey> keys;
  keys.reserve(group.size());
  for (int32_t r : group) {
    const Node& n = gpu_node(r, t);
    keys.emplace_back(n.pod, n.group, n.server, n.local, r);
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

// The sorted keys' GPUs, a block per server.
std::vector<Group> blocks_of(const std::vector<ServerKey>& keys) {
  std::vector<Group> blocks;
  int32_t current = kNone;
  for (size_t i = 0; i < keys.size(); ++i) {
    const int32_t s = std::get<2>(keys[i]);
    if (i == 0 || s != current) blocks.emplace_back();
    current = s;
    blocks.back().push_back(std::get<4>(keys[i]));
  }
  return blocks;
}

std::vector<Group> group_by_server(const Group& group, RingOrder order, const Topology& t) {
  std::vector<Group> blocks;
  if (order == RingOrder::Naive) {
    std::map<int32_t, size_t> index;  // server -> block
    for (int32_t r : group) {
      const int32_t s = gpu_node(r, t).server;
      auto [it, fresh] = index.emplace(s, blocks.size());
      if (fresh) blocks.emplace_back();
      blocks[it->second].push_back(r);
    }
    return blocks;
  }
  return blocks_of(server_keys(group, t));
}

Group topology_aware_order(const Group& group, const Topology& t, int32_t channel) {
  if (!t.torus_dims.empty()) {  // rule 6: odd channels the other way round, on the links' other direction
    Group order = torus_snake_order(group, t);
    if (channel % 2 == 1 && order.size() > 2) std::reverse(order.begin() + 1, order.end());
    return order;
  }
  Group out;
  out.reserve(group.size());
  const std::vector<ServerKey> keys = server_keys(group, t);
  // One GPU per server (a data-parallel group of TP-filled servers): the ring visits the servers in order, and
  // the rail path below, which only picks where a server's GPUs are entered and left, has nothing to choose.
  bool one_each = true;
  for (size_t i = 1; i < keys.size() && one_each; ++i) one_each = std::get<2>(keys[i]) != std::get<2>(keys[i - 1]);
  if (one_each) {
    for (const ServerKey& k : keys) out.push_back(std::get<4>(k));
    return out;
  }
  const std::vector<Group> blocks = blocks_of(keys);
  const size_t N = blocks.size();
  if (N == 0) return out;

  int32_t R = std::max<int32_t>(1, t.rails);
  for (int32_t r : group) R = std::max(R, rail_of(r, t) + 1);
  const auto cyc = [R](int32_t a, int32_t b) { return ((a - b) % R + R) % R; };  // (a - b) mod R

  // Rule 4: the rails the channels spread over are those every server has
  // (the first server's when no rail is common to all), so a group of part
  // servers does not send every channel homed on a missing rail to one rail.
  std::vector<char> common(static_cast<size_t>(R), 0), seen(static_cast<size_t>(R));
  for (int32_t r : blocks[0]) common[static_cast<size_t>(rail_of(r, t))] = 1;
  std::vector<char> first = common;
  for (size_t k = 1; k < N; ++k) {
    std::fill(seen.begin(), seen.end(), 0);
    for (int32_t r : blocks[k]) seen[static_cast<size_t>(rail_of(r, t))] = 1;
    for (int32_t x = 0; x < R; ++x) common[static_cast<size_t>(x)] &= seen[static_cast<size_t>(x)];
  }
  if (std::find(common.begin(), common.end(), 1) == common.end()) common = first;
  std::vector<int32_t> spread;  // the rails, ascending
  for (int32_t x = 0; x < R; ++x)
    if (common[static_cast<size_t>(x)]) spread.push_back(x);
  const int32_t preferred = spread[static_cast<size_t>(home_rail(channel, static_cast<int32_t>(spread.size())))];
  size_t entry0 = 0;
  for (size_t i = 1; i < blocks[0].size(); ++i)
    if (cyc(rail_of(blocks[0][i], t), preferred) < cyc(rail_of(blocks[0][entry0], t), preferred)) entry0 = i;
  const int32_t h = rail_of(blocks[0][entry0], t);
  if (N == 1) {
    const Group& b = blocks[0];
    for (size_t i = 0; i < b.size(); ++i) out.push_back(b[(entry0 + i) % b.size()]);
    return out;
  }
  // h' = the next spread rail after h (h itself if none).
  int32_t h_next = h;
  for (int32_t j = 1; j < R; ++j)
    if (common[static_cast<size_t>((h + j) % R)]) {
      h_next = (h + j) % R;
      break;
    }
  const auto pairs_with = [&](int32_t x) { return x == h ? h_next : h; };

  // Rail counts per server.
  std::vector<int32_t> count(N * static_cast<size_t>(R), 0);
  for (size_t k = 0; k < N; ++k)
    for (int32_t r : blocks[k]) ++count[k * R + rail_of(r, t)];
  const auto cnt = [&](size_t k, int32_t r) { return count[k * R + r]; };
  const auto feasible = [&](size_t k, int32_t x, int32_t y) {
    if (blocks[k].size() == 1) return x == y;
    return cnt(k, y) > 0 && (x != y || cnt(k, x) >= 2);
  };
  const auto dev = [&](size_t k, int32_t x, int32_t y) -> int64_t {
    return blocks[k].size() >= 2 && y != pairs_with(x) ? 1 : 0;
  };

  // Cost = cross-rail hops * W + deviations (W > any deviation total).
  const int64_t W = static_cast<int64_t>(N) + 1;
  constexpr int64_t kInf = std::numeric_limits<int64_t>::max() / 4;
  std::vector<int64_t> f(R, kInf), g(R);
  std::vector<int32_t> gx(R);
  f[h] = 0;
  // from[k * R + z] = (entry rail, exit rail) of server k-1 on the best path entering server k at z.
  std::vector<std::pair<int32_t, int32_t>> from(N * static_cast<size_t>(R), {kNone, kNone});
  // Ties go to the rail nearest at or after server k's start rail cyclically, the i-th rail visited
  // being (start[k] + i) mod R, where start[k] is the rail of server k at the position h has among the
  // spread rails (h itself when the server has them all). Each channel's choices are then a rotation
  // of channel 0's: an odd ring's detours, and the rails of servers that share none, spread over the
  // rails instead of all landing on the lowest.
  const auto h_index = static_cast<int32_t>(std::find(spread.begin(), spread.end(), h) - spread.begin());
  std::vector<int32_t> start(N, h);
  for (size_t k = 0; k < N; ++k) {
    if (cnt(k, h) > 0) continue;
    int32_t own = 0;  // the server's rails
    for (int32_t x = 0; x < R; ++x) own += cnt(k, x) > 0 ? 1 : 0;
    for (int32_t x = 0, want = h_index % own; x < R; ++x)
      if (cnt(k, x) > 0 && want-- == 0) {
        start[k] = x;
        break;
      }
  }
  const auto rail_at = [&](size_t k, int32_t i) { return (start[k] + i) % R; };
  const auto relax_exit = [&](size_t k) {  // g[y] = min_x f[x] + dev(k, x, y)
    std::fill(g.begin(), g.end(), kInf);
    std::fill(gx.begin(), gx.end(), kNone);
    for (int32_t i = 0; i < R; ++i) {
      const int32_t x = rail_at(k, i);
      if (f[x] >= kInf) continue;
      for (int32_t j = 0; j < R; ++j) {
        const int32_t y = rail_at(k, j);
        if (!feasible(k, x, y)) continue;
        const int64_t c = f[x] + dev(k, x, y);
        if (c < g[y]) g[y] = c, gx[y] = x;
      }
    }
  };
  for (size_t k = 0; k + 1 < N; ++k) {
    relax_exit(k);
    int32_t best_y = kNone;
    for (int32_t j = 0; j < R; ++j) {
      const int32_t y = rail_at(k, j);
      if (g[y] < kInf && (best_y == kNone || g[y] < g[best_y])) best_y = y;
    }
    std::vector<int64_t> next(R, kInf);
    for (int32_t z = 0; z < R; ++z) {
      if (cnt(k + 1, z) == 0) continue;
      int32_t y = best_y;
      int64_t c = g[best_y] + W;
      if (g[z] < kInf && g[z] <= c) y = z, c = g[z];
      next[z] = c;
      from[(k + 1) * R + z] = {gx[y], y};
    }
    f.swap(next);
  }
  // Last server: its exit closes the ring onto the first server's entry rail h.
  relax_exit(N - 1);
  int32_t last_y = kNone;
  int64_t last_c = kInf;
  for (int32_t j = 0; j < R; ++j) {
    const int32_t y = rail_at(N - 1, j);
    if (g[y] >= kInf) continue;
    const int64_t c = g[y] + (y != h ? W : 0);
    if (c < last_c) last_c = c, last_y = y;
  }
  std::vector<int32_t> entry_rail(N), exit_rail(N);
  exit_rail[N - 1] = last_y;
  entry_rail[N - 1] = gx[last_y];
  for (size_t k = N - 1; k >= 1; --k) {
    const auto [x, y] = from[k * R + entry_rail[k]];
    entry_rail[k - 1] = x;
    exit_rail[k - 1] = y;
  }

  for (size_t k = 0; k < N; ++k) {
    const Group& b = blocks[k];
    const size_t m = b.size();
    size_t entry = 0;
    if (k == 0) {
      entry = entry0;
    } else {
      while (rail_of(b[entry], t) != entry_rail[k]) ++entry;
    }
    size_t exit = entry;
    for (size_t i = 1; i < m; ++i) {
      const size_t p = (entry + i) % m;
      if (rail_of(b[p], t) == exit_rail[k]) {
        exit = p;
        break;
      }
    }
    append_segment(b, entry, exit, out);
  }
  return out;
}

Group ring_order(const Group& group, RingOrder order, int32_t channel, const Topology& topo) {
  if (order == RingOrder::Naive) return group;
  return topology_aware_order(group, topo, channel);
}

RingStats ring_stats(const Group& order, const Topology& t, bool open) {
  RingStats s;
  const size_t n = order.size();
  if (n < 2) return s;
  const size_t hops = open ? n - 1 : n;
  for (size_t i = 0; i < hops; ++i) {
    const int32_t a = order[i], b = order[(i + 1) % n];
    const Node& na = gpu_node(a, t);
    const Node& nb = gpu_node(b, t);
    ++s.hops;
    if (na.server == nb.server) {
      ++s.intra_server;
      continue;
    }
    if (na.pod != nb.pod) ++s.cross_pod;
    else if (na.group != nb.group) ++s.cross_group;
    else ++s.cross_server;
    const auto nic_a = t.gpu_nic[a], nic_b = t.gpu_nic[b];
    if (nic_a != kNone && nic_b != kNone && t.nodes[nic_a].rail != t.nodes[nic_b].rail) ++s.cross_rail_hops;
  }
  return s;
}

}  // namespace podnet::collective
