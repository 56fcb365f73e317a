// torus builder. The structure, the maths of its facts and the assumptions
// are in torus.hpp; this file follows them step by step:
//   resolve dims (dims | gpus | [4,4,4]) -> servers of chips (no NICs, no
//   NVLink) -> one +1 link per chip per dimension (one link for size 2) with
//   ports 2d (+) / 2d+1 (-) -> cube labels and cable lengths -> facts.
#include "topology/torus.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "core/error.hpp"

namespace podnet::topology {

namespace {

constexpr int64_t kMaxChips = kMaxGpus;  // topology.hpp

std::string list_text(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// Most cube-like factorization of n (see torus.hpp); empty if n has none.
std::vector<int64_t> cube_like_dims(int64_t n) {
  std::vector<int64_t> best;
  for (int64_t a = 2; a * a * a <= n; ++a) {
    if (n % a != 0) continue;
    for (int64_t b = a; a * b * b <= n; ++b) {
      if ((n / a) % b != 0) continue;
      const int64_t c = n / a / b;
      if (best.empty() || c < best[2] || (c == best[2] && a > best[0])) best = {a, b, c};
    }
  }
  if (!best.empty()) return best;
  for (int64_t a = 2; a * a <= n; ++a)
    if (n % a == 0) best = {a, n / a};
  return best;
}

std::vector<ParamSpec> torus_params() {
  return {
      {"dims",
       ParamType::IntList,
       "",
       "chips per dimension, 1, 2 or 3 entries, each >= 2 (e.g. [16, 16, 16], 8x8, or [8] for a ring); default: "
       "[4, 4, 4], or the most cube-like factorization of topology.gpus",
       2,
       65536,
       {},
       true},
      {"gpus",
       ParamType::Int,
       "",
       "chips in the torus; with dims it must equal their product, without dims it sets them",
       4,
       static_cast<double>(kMaxChips),
       {},
       true},
      {"link_speed", ParamType::Bandwidth, "400Gbps",
       "chip-to-chip link bandwidth per direction (TPU v4 ICI: 400 Gbps each way)"},
      {"cube", ParamType::IntList, "[4, 4, 4]",
       "block of chips wired with short copper (a rack; TPU v4: 4x4x4); the first len(dims) entries are used", 1,
       65536},
      {"intra_cube_length", ParamType::Length, "1m", "cable length of a link inside a cube"},
      {"inter_cube_length", ParamType::Length, "30m", "cable length of a link between cubes (optical)"},
      {"hop_latency", ParamType::Time, "100ns", "router traversal per chip hop, added to each link's latency"},
  };
}

Topology build_torus(const Params& prm, const Hardware& hw_in) {
  // --- dims
  std::vector<int64_t> dims;
  const bool has_gpus = prm.has("gpus");
  if (prm.has("dims")) {
    dims = prm.get_int_list("dims");
    if (dims.empty() || dims.size() > 3)
      throw ParamError("topology.dims", fmt::format("topology.dims = {} has {} entries: expected 1, 2 or 3 (a "
                                                    "ring, a 2D or a 3D torus), such as [8], [16, 16] or "
                                                    "[16, 16, 16]",
                                                    list_text(dims), dims.size()));
    for (int64_t k : dims)
      if (k < 2)
        throw ParamError("topology.dims", fmt::format("topology.dims = {} has a dimension of {}: expected every "
                                                      "dimension >= 2",
                                                      list_text(dims), k));
  } else if (has_gpus) {
    dims = cube_like_dims(prm.get_int("gpus"));
    if (dims.empty())
      throw ParamError("topology.gpus", fmt::format("topology.gpus = {} cannot be factored into a 2D or 3D torus "
                                                    "with every dimension >= 2: expected a composite number, or "
                                                    "set topology.dims",
                                                    prm.get_int("gpus")));
  } else {
    dims = {4, 4, 4};
  }
  const int dn = static_cast<int>(dims.size());
  int64_t n64 = 1;
  for (int64_t k : dims) {
    n64 *= k;
    if (n64 > kMaxChips)
      throw ParamError("topology.dims", fmt::format("topology.dims = {} holds more than {} chips: expected a "
                                                    "smaller torus",
                                                    list_text(dims), kMaxChips));
  }
  if (has_gpus && prm.get_int("gpus") != n64)
    throw ParamError("topology.gpus", fmt::format("topology.gpus = {} but topology.dims = {} holds {} chips: "
                                                  "expected gpus = the product of dims, or omit one of them",
                                                  prm.get_int("gpus"), list_text(dims), n64));
  const auto n = static_cast<int32_t>(n64);

  // --- cubes
  const auto& cube_in = prm.get_int_list("cube");
  if (static_cast<int>(cube_in.size()) < dn)
    throw ParamError("topology.cube", fmt::format("topology.cube = {} has {} entries but the torus has {} "
                                                  "dimensions: expected at least {} entries",
                                                  list_text(cube_in), cube_in.size(), dn, dn));
  std::vector<int64_t> cube(dn), cubes_along(dn);
  int32_t cubes = 1;
  for (int d = 0; d < dn; ++d) {
    if (cube_in[d] < 1)
      throw ParamError("topology.cube",
                       fmt::format("topology.cube = {}: expected every entry >= 1", list_text(cube_in)));
    cube[d] = std::min(cube_in[d], dims[d]);
    cubes_along[d] = (dims[d] + cube[d] - 1) / cube[d];
    cubes *= static_cast<int32_t>(cubes_along[d]);
  }

  // --- servers: labels only (no NICs, no NVLink)
  if (n % hw_in.gpus_per_server != 0)
    throw ParamError("server.gpus", fmt::format("server.gpus = {} does not divide the {} chips of torus {}: "
                                                "expected a divisor of {}",
                                                hw_in.gpus_per_server, n, list_text(dims), n));
  Hardware hw = hw_in;
  hw.nics_per_server = 0;
  hw.nvlink_bw = Bandwidth(0);
  hw.nvlink_domain = hw.gpus_per_server;

  Topology t;
  t.family = "torus";
  add_servers(t, hw, n / hw.gpus_per_server);

  std::vector<int64_t> stride(dn, 1);
  for (int d = 1; d < dn; ++d) stride[d] = stride[d - 1] * dims[d - 1];
  auto coord = [&](int64_t r, int d) { return (r / stride[d]) % dims[d]; };
  for (int32_t r = 0; r < n; ++r) {
    int64_t group = 0, gstride = 1;
    for (int d = 0; d < dn; ++d) {
      group += coord(r, d) / cube[d] * gstride;
      gstride *= cubes_along[d];
    }
    t.nodes[t.gpus[r]].group = static_cast<int32_t>(group);
  }
  t.groups = cubes;
  t.pods = 0;
  t.torus_dims.assign(dims.begin(), dims.end());
  t.switch_latency = Time(0);  // no switches: each chip's router time is in its links (hop_latency)

  // --- links
  const Bandwidth speed = prm.get_bandwidth("link_speed");
  const Time hop = prm.get_time("hop_latency");
  const double short_m = prm.get_real("intra_cube_length");
  const double long_m = prm.get_real("inter_cube_length");
  static const char* const kClass[] = {"torus-x", "torus-y", "torus-z"};
  int64_t links_per_dim[3] = {0, 0, 0};
  for (int d = 0; d < dn; ++d) {
    const uint8_t cls = t.link_class(kClass[d]);
    for (int32_t r = 0; r < n; ++r) {
      const int64_t x = coord(r, d);
      if (dims[d] == 2 && x == 1) continue;  // size 2: the 0 -> 1 link is the only one
      const int64_t nx = (x + 1) % dims[d];
      const auto nb = static_cast<int32_t>(r + (nx - x) * stride[d]);
      const double len = (x / cube[d] == nx / cube[d]) ? short_m : long_m;
      const LinkId l =
          t.connect(t.gpus[r], t.gpus[nb], speed, cable_latency(hw, len) + hop, len, media_for(hw, len), cls);
      t.links[l].port_a = 2 * d;      // + direction on a
      t.links[l].port_b = 2 * d + 1;  // - direction on b
      ++links_per_dim[d];
    }
  }
  for (int32_t r = 0; r < n; ++r) t.nodes[t.gpus[r]].ports = 2 * dn;

  // --- facts
  Facts& f = t.facts;
  f.max_gpus = n;
  f.max_gpus_reason = fmt::format("the torus as built ({} chips); a torus has no switch-radix bound (2 ports per "
                                  "dimension per chip) and grows by lengthening dimensions, at the cost of diameter "
                                  "(sum floor(k/2)) and bisection per chip (2/k_max links)",
                                  n);
  for (int64_t k : dims) f.diameter_hops += static_cast<int>(k / 2);
  int dmax = 0;
  for (int d = 1; d < dn; ++d)
    if (dims[d] > dims[dmax]) dmax = d;
  const int64_t half = dims[dmax] / 2;
  std::vector<int32_t> rank_of(t.nodes.size(), kNone);
  for (int32_t r = 0; r < n; ++r) rank_of[t.gpus[r]] = r;
  int64_t cut = 0;
  for (const Link& l : t.links)
    if (rank_of[l.a] != kNone && rank_of[l.b] != kNone &&
        (coord(rank_of[l.a], dmax) < half) != (coord(rank_of[l.b], dmax) < half))
      ++cut;
  f.bisection_bps = static_cast<double>(cut) * speed.bps;
  f.bisection_method = fmt::format("cut dimension {} (k = {}, the largest) into x < {} and the rest: each of the {} "
                                   "rings along it crosses the cut {} ({} links x {} per direction)",
                                   dmax, dims[dmax], half, n64 / dims[dmax],
                                   dims[dmax] >= 3 ? "twice (middle and wrap-around)" : "once (size 2)", cut,
                                   format_bandwidth(speed));
  std::string per_dim;
  for (int d = 0; d < dn; ++d) per_dim += fmt::format("{}{} {}", d ? ", " : "", kClass[d], links_per_dim[d]);
  f.notes.push_back(fmt::format("{} {} = {} chips, x fastest in rank order; links per dimension: {}",
                                dn == 1 ? std::string("ring") : fmt::format("{}D torus", dn), list_text(dims), n,
                                per_dim));
  f.notes.push_back(fmt::format("cubes of {} ({} cubes, group label = cube): links inside a cube {} ({}), links "
                                "between cubes {} ({})",
                                list_text(cube), cubes, format_length(short_m), media_name(media_for(hw, short_m)),
                                format_length(long_m), media_name(media_for(hw, long_m))));
  f.notes.push_back(fmt::format("each chip routes its own traffic: {} per hop is added to each link's latency; "
                                "ports 2d/2d+1 face +d/-d",
                                format_time(hop)));
  for (int d = 0; d < dn; ++d)
    if (dims[d] == 2)
      f.notes.push_back(fmt::format("dimension {} has size 2: one link per chip pair (not a doubled ring)", d));
  if (hw_in.nics_per_server > 0)
    f.notes.push_back(fmt::format("server.nics = {} ignored: torus chips have no NICs (every link is chip-to-chip)",
                                  hw_in.nics_per_server));
  f.notes.push_back(
      fmt::format("servers are {} consecutive chips (labels only, no NVLink inside a server)", hw.gpus_per_server));
  t.finalize();
  return t;
}

}  // namespace

BuilderInfo torus_builder() {
  return {"torus",
          "1D ring, 2D or 3D torus of GPU chips with wrap-around links, no switches or NICs (TPU-style "
          "ICI)",
          &torus_params, &build_torus};
}

}  // namespace podnet::topology
