#include "collective/torus.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unordered_map>

#include "collective/plan_util.hpp"
#include "collective/ring_order.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::collective {

namespace {

constexpr const char* kDimNames[] = {"x", "y", "z"};
// torus_astra: chunks a collective is cut into (ASTRA-sim's preferred-dataset-splits of its shipped examples).
constexpr int32_t kAstraChunks = 4;

// The group's coordinates along each dimension of the torus, ascending (rank r = x0 + k0 (x1 + k1 x2)).
struct Box {
  std::vector<int64_t> stride;               // [dim]: rank distance of one step along it
  std::vector<std::vector<int32_t>> coords;  // [dim]
  std::vector<int> active;                   // dimensions with two or more coordinates, ascending
};

int32_t coordinate(int32_t rank, const std::vector<int32_t>& dims, size_t d) {
  int64_t r = rank;
  for (size_t m = 0; m < d; ++m) r /= dims[m];
  return static_cast<int32_t>(r % dims[d]);
}

Box box_of(const Group& group, const topology::Topology& topo) {
  const auto& dims = topo.torus_dims;
  Box b;
  b.stride.resize(dims.size());
  b.coords.resize(dims.size());
  int64_t stride = 1;
  for (size_t d = 0; d < dims.size(); ++d) {
    b.stride[d] = stride;
    stride *= dims[d];
    auto& c = b.coords[d];
    for (int32_t r : group) c.push_back(coordinate(r, dims, d));
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    if (c.size() >= 2) b.active.push_back(static_cast<int>(d));
  }
  return b;
}

int64_t combinations(const Box& b) {
  int64_t n = 1;
  for (const auto& c : b.coords) n *= static_cast<int64_t>(c.size());
  return n;
}

// The lines of the box along dimension d: every combination of the other dimensions' coordinates, each
// line's chips in ascending coordinate d.
std::vector<Group> lines(const Box& b, size_t d) {
  std::vector<Group> out;
  const size_t dims = b.coords.size();
  std::vector<size_t> at(dims, 0);  // an odometer over the other dimensions
  while (true) {
    int64_t base = 0;
    for (size_t m = 0; m < dims; ++m)
      if (m != d) base += b.coords[m][at[m]] * b.stride[m];
    Group line;
    line.reserve(b.coords[d].size());
    for (int32_t v : b.coords[d]) line.push_back(static_cast<int32_t>(base + v * b.stride[d]));
    out.push_back(std::move(line));
    size_t m = 0;
    for (; m < dims; ++m) {
      if (m == d) continue;
      if (++at[m] < b.coords[m].size()) break;
      at[m] = 0;
    }
    if (m == dims) break;
  }
  return out;
}

enum class Phase : uint8_t { ReduceScatter, AllGather, AllReduce };

enum class Schedule : uint8_t { Rotated, DimOrder, Astra };
const char* schedule_name(Schedule s) {
  return s == Schedule::Rotated ? "torus" : s == Schedule::DimOrder ? "torus_dimorder" : "torus_astra";
}

plan::TransferPlan build(Op op, const Group& group, Bytes bytes, const Options& o, const topology::Topology& topo,
                         Schedule schedule) {
  plan::TransferPlan plan;
  if (group.size() <= 1 || bytes == 0) return plan;
  const Box box = box_of(group, topo);
  if (topo.torus_dims.empty() || combinations(box) != static_cast<int64_t>(group.size()))
    throw InputError(fmt::format("{} {} over {} GPUs: {}", schedule_name(schedule), op_name(op), group.size(),
                                 torus_box_problem(group, topo)));
  const bool rotate = schedule == Schedule::Rotated;
  const bool astra = schedule == Schedule::Astra;
  const int D = static_cast<int>(box.active.size());
  std::vector<std::vector<Group>> line_sets(box.coords.size());
  for (int d : box.active) line_sets[static_cast<size_t>(d)] = lines(box, static_cast<size_t>(d));
  const int rotations = rotate ? D : 1;
  const auto shares = detail::split(bytes, astra ? kAstraChunks : 2 * rotations);
  std::vector<int32_t> slot(topo.gpus.size(), -1);  // a chip's ring in the previous phase (its transfer index)
  // torus_astra: a dimension's queue runs one chunk at a time: [phase][line] -> the previous chunk's ring.
  std::vector<std::vector<int32_t>> queue;
  for (int32_t part = 0; part < static_cast<int32_t>(shares.size()); ++part) {
    const Bytes share = shares[static_cast<size_t>(part)];
    const int j = astra ? 0 : part / 2;
    const bool part_backwards = !astra && part % 2 == 1;
    std::vector<int> order;  // the dimensions in the order this part reduces them
    for (int i = 0; i < D; ++i) order.push_back(box.active[static_cast<size_t>((i + j) % D)]);
    // The phases: (position in `order`, kind).
    std::vector<std::pair<int, Phase>> phases;
    switch (op) {
      case Op::AllReduce:
        for (int i = 0; i + 1 < D; ++i) phases.emplace_back(i, Phase::ReduceScatter);
        phases.emplace_back(D - 1, Phase::AllReduce);
        for (int i = D - 2; i >= 0; --i) phases.emplace_back(i, Phase::AllGather);
        break;
      case Op::ReduceScatter:
        for (int i = 0; i < D; ++i) phases.emplace_back(i, Phase::ReduceScatter);
        break;
      case Op::AllGather:
        for (int i = D - 1; i >= 0; --i) phases.emplace_back(i, Phase::AllGather);
        break;
      default: break;  // not registered for other ops
    }
    bool first = true;
    int32_t previous_phase = -1;  // coupled_steps: this part's previous phase
    queue.resize(phases.size());
    for (size_t ph = 0; ph < phases.size(); ++ph) {
      const auto [i, kind] = phases[ph];
      // ASTRA-sim runs reduce-scatters (and the middle all-reduce) clockwise, all-gathers anticlockwise.
      const bool backwards = astra ? kind == Phase::AllGather : part_backwards;
      const size_t d = static_cast<size_t>(order[static_cast<size_t>(i)]);
      const int64_t e = static_cast<int64_t>(box.coords[d].size());
      int64_t held = e;  // prod_{m <= i} e_m: what the data a chip holds at phase i divides by, times e
      for (int m = 0; m < i; ++m) held *= static_cast<int64_t>(box.coords[static_cast<size_t>(order[m])].size());
      const bool both = kind == Phase::AllReduce;
      const Bytes hop = detail::scale_up(share, (both ? 2 : 1) * (e - 1), held);
      const int32_t steps = static_cast<int32_t>((both ? 2 : 1) * (e - 1));
      const std::string label = fmt::format("{}/torus-{}",
                                            detail::op_code(kind == Phase::ReduceScatter ? Op::ReduceScatter
                                                            : kind == Phase::AllGather   ? Op::AllGather
                                                                                         : Op::AllReduce),
                                            kDimNames[d]);
      if (o.coupled_steps) {  // one transfer for the phase: every line's ring in lockstep
        plan::Transfer t;
        t.kind = plan::TransferKind::Coupled;
        t.bytes = hop;
        t.latency_steps = steps;
        t.qps = o.qps;
        t.channel = part;
        t.label = label;
        for (const Group& line : line_sets[d])
          for (size_t h = 0; h < line.size(); ++h) {
            const int32_t a = line[h], b = line[(h + 1) % line.size()];
            t.edges.emplace_back(backwards ? b : a, backwards ? a : b);
            t.ranks.push_back(a);
          }
        std::sort(t.ranks.begin(), t.ranks.end());
        if (previous_phase >= 0) t.deps.push_back(previous_phase);
        if (astra && !queue[ph].empty()) t.deps.push_back(queue[ph].front());
        std::sort(t.deps.begin(), t.deps.end());
        previous_phase = plan.add(std::move(t));
        if (astra) queue[ph] = {previous_phase};
        continue;
      }
      std::vector<int32_t> placed;
      placed.reserve(line_sets[d].size());
      for (const Group& line : line_sets[d]) {
        Group ring = line;
        if (backwards) std::reverse(ring.begin(), ring.end());
        plan::Transfer t = detail::ring(ring, hop, steps, o, part, label);
        if (!first)
          for (int32_t chip : line) t.deps.push_back(slot[static_cast<size_t>(chip)]);
        if (astra && !queue[ph].empty()) t.deps.push_back(queue[ph][placed.size()]);
        std::sort(t.deps.begin(), t.deps.end());
        t.deps.erase(std::unique(t.deps.begin(), t.deps.end()), t.deps.end());
        placed.push_back(plan.add(std::move(t)));
      }
      if (astra) queue[ph] = placed;
      for (size_t l = 0; l < line_sets[d].size(); ++l)
        for (int32_t chip : line_sets[d][l]) slot[static_cast<size_t>(chip)] = placed[l];
      first = false;
    }
  }
  return plan;
}

// Bytes per directed chip-to-chip link of a set of hops, each routed minimally dimension by dimension
// (dimension_order, routing/router.hpp; a tie at k/2 split over both ways, as ecmp spreads it).
class LinkLoads {
 public:
  explicit LinkLoads(const std::vector<int32_t>& dims) : dims_(dims) {}
  void hop(int32_t a, int32_t b, double bytes) {
    int64_t at = a, stride = 1;
    for (size_t d = 0; d < dims_.size(); ++d) {
      const int64_t k = dims_[d];
      const int64_t xa = (at / stride) % k, xb = (static_cast<int64_t>(b) / stride) % k;
      const int64_t delta = ((xb - xa) % k + k) % k;
      if (delta != 0) {
        const bool tie = 2 * delta == k;
        if (delta <= k - delta) walk(at, stride, k, d, +1, delta, tie ? bytes / 2 : bytes);
        if (delta >= k - delta) walk(at, stride, k, d, -1, k - delta, tie ? bytes / 2 : bytes);
        at += (xb - xa) * stride;
      }
      stride *= k;
    }
  }
  double busiest() const {
    double m = 0;
    for (const auto& [link, bytes] : load_) m = std::max(m, bytes);
    return m;
  }

 private:
  void walk(int64_t chip, int64_t stride, int64_t k, size_t d, int dir, int64_t steps, double bytes) {
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t x = (chip / stride) % k;
      load_[(chip * static_cast<int64_t>(dims_.size()) + static_cast<int64_t>(d)) * 2 + (dir > 0 ? 0 : 1)] += bytes;
      const int64_t next = ((x + dir) % k + k) % k;
      chip += (next - x) * stride;
    }
  }
  const std::vector<int32_t>& dims_;
  std::unordered_map<int64_t, double> load_;
};

void add_ring(LinkLoads& loads, const Group& ring, double bytes) {
  for (size_t i = 0; i < ring.size(); ++i) loads.hop(ring[i], ring[(i + 1) % ring.size()], bytes);
}

plan::TransferPlan build_rotated(Op op, const Group& group, Bytes bytes, const Options& o,
                                 const topology::Topology& topo) {
  return build(op, group, bytes, o, topo, Schedule::Rotated);
}

plan::TransferPlan build_dimorder(Op op, const Group& group, Bytes bytes, const Options& o,
                                  const topology::Topology& topo) {
  return build(op, group, bytes, o, topo, Schedule::DimOrder);
}

plan::TransferPlan build_astra(Op op, const Group& group, Bytes bytes, const Options& o,
                               const topology::Topology& topo) {
  return build(op, group, bytes, o, topo, Schedule::Astra);
}

}  // namespace

std::string torus_box_problem(const Group& group, const topology::Topology& topo) {
  if (topo.torus_dims.empty()) return "the fabric is not a torus (topology.family: torus)";
  const Box b = box_of(group, topo);
  const int64_t n = combinations(b);
  if (n == static_cast<int64_t>(group.size())) return "";
  std::string shape;
  for (size_t d = 0; d < b.coords.size(); ++d)
    shape += fmt::format("{}{} {}", d ? ", " : "", b.coords[d].size(), kDimNames[d]);
  return fmt::format("its {} chips are not a box of the torus: they use {} coordinates, whose {} combinations a "
                     "box would hold (a group of whole lines, planes or blocks of chips is one)",
                     thousands(static_cast<int64_t>(group.size())), shape, thousands(n));
}

TorusEstimate torus_estimate(Op op, const Group& group, Bytes bytes, const topology::Topology& topo) {
  TorusEstimate e;
  const int64_t n = static_cast<int64_t>(group.size());
  if (topo.torus_dims.empty() || n < 2) return e;
  const Box b = box_of(group, topo);
  if (combinations(b) != n) return e;
  for (const auto& l : topo.links) e.link_bytes_per_s = std::max(e.link_bytes_per_s, l.capacity.bps / 8);
  double latency = 0;
  for (const auto& l : topo.links) latency += l.latency.seconds();
  latency /= static_cast<double>(std::max<size_t>(1, topo.links.size()));
  LinkLoads torus(topo.torus_dims), snake(topo.torus_dims);
  for (const auto& t : build(op, group, bytes, Options{}, topo, Schedule::Rotated).transfers)
    add_ring(torus, t.ranks, static_cast<double>(t.bytes));
  const double hop = static_cast<double>(bytes) / 2 * (op == Op::AllReduce ? 2.0 : 1.0) * static_cast<double>(n - 1) /
                     static_cast<double>(n);
  for (int32_t c = 0; c < 2; ++c) add_ring(snake, ring_order(group, RingOrder::TopologyAware, c, topo), hop);
  int64_t steps = 0;  // a part's chain of ring steps: e_d - 1 per reduce-scatter or all-gather, twice for both
  for (int d : b.active)
    steps += (op == Op::AllReduce ? 2 : 1) * (static_cast<int64_t>(b.coords[static_cast<size_t>(d)].size()) - 1);
  e.torus_s = torus.busiest() / e.link_bytes_per_s + static_cast<double>(steps) * latency;
  e.snake_busiest_bytes = snake.busiest();
  return e;
}

AlgorithmInfo torus_algorithm() {
  return {"torus",
          "torus (NIC-less chips): per dimension a reduce-scatter ring then an all-gather ring, both directions, "
          "the data split so that every dimension is busy at once; auto's choice there for all-reduce, all-gather "
          "and reduce-scatter where it is no slower than NCCL's ring",
          {Op::AllReduce, Op::AllGather, Op::ReduceScatter},
          build_rotated,
          false,
          true};
}

AlgorithmInfo torus_dimorder_algorithm() {
  return {"torus_dimorder",
          "torus (NIC-less chips): per dimension in turn a reduce-scatter ring, then all-gather rings in reverse, "
          "both directions at once; one dimension busy at a time",
          {Op::AllReduce, Op::AllGather, Op::ReduceScatter},
          build_dimorder,
          false,
          true};
}

AlgorithmInfo torus_astra_algorithm() {
  return {"torus_astra",
          "torus (NIC-less chips) as ASTRA-sim's localBWAware schedule: 4 chunks, each a reduce-scatter per "
          "dimension clockwise, then all-gathers anticlockwise, one chunk at a time in each dimension's queue",
          {Op::AllReduce, Op::AllGather, Op::ReduceScatter},
          build_astra,
          false,
          true};
}

}  // namespace podnet::collective
