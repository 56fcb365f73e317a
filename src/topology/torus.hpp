// torus: 1D ring, 2D or 3D torus of GPU chips with wrap-around links
// (TPU-style ICI).
//
// Structure. dims = [k0(, k1(, k2))], N = prod k_i chips, each chip its own
// router (no switches, no NICs). Chip rank r has coordinates
//   x0 = r mod k0,  x1 = (r / k0) mod k1,  x2 = r / (k0 k1)      (x0 fastest)
// and links to its +1 neighbour in every dimension, (x_d + 1) mod k_d. A link
// is stored with `a` = the chip whose +d neighbour `b` is (so a -> b is the +
// direction, also for the wrap link k_d - 1 -> 0), and with fixed ports:
// port 2d = toward +d, port 2d+1 = toward -d on every chip. Link class
// "torus-x" / "torus-y" / "torus-z" names the dimension.
//   A dimension of size 2 has a single neighbour: +1 and -1 are the same chip,
//   so it gets one link (not two parallel ones); its chips use one of their
//   two ports in that dimension.
//   One dimension is a ring of k0 chips (k0 links; a ring of 2 is one link).
// Degree: 2 per dimension of size >= 3, 1 per dimension of size 2
//   (4 in 2D, 6 in 3D when every k_i >= 3).
// Links: sum_d (k_d >= 3 ? N : N/2)  (= N * D when every k_i >= 3).
//
// Cubes. `cube` = [c0, c1, c2] (first D entries used; c_d is clamped to k_d)
// tiles the torus into blocks (TPU v4: 4x4x4 chips per rack, cube faces go
// to optical circuit switches). A link whose two chips lie in the same block
// is short copper (`intra_cube_length`, default 1 m); a link leaving the block
// is optical (`inter_cube_length`, default 30 m). With k_d = c_d the wrap link
// of that dimension stays inside the block (a folded ring) and is copper.
// Group label = block index (block coordinates x_d / c_d, dimension 0
// fastest); a block that does not fit (c_d does not divide k_d) is partial.
//
// Servers. Servers are server.gpus consecutive ranks (labels only: rack and
// server for cabling/BOM); server.nics is forced to 0 and NVLink off, every
// chip-to-chip link is a torus link. N must be a multiple of server.gpus.
// Racks follow the usual power packing (consecutive servers), not cubes.
//
// Latency per link = cable propagation (length * cabling.propagation) +
// `hop_latency` (router traversal of the chip the link leaves from);
// Topology::switch_latency is 0 (no switches). Topology::torus_dims = dims.
// The links are chip-to-chip (link class `ici`, engine/link_classes.hpp): the
// engines charge them no NIC transport stack and no Ethernet header, only
// the link latency (+ the class's added latency, 0 by default).
//
// Facts.
// - diameter (chip-to-chip links) = sum_d floor(k_d / 2): dimensions route
//   independently, and on a ring of k the farthest chip is floor(k/2) away.
// - bisection: cut the largest dimension k_max into x < floor(k_max/2) and the
//   rest. Every ring along that dimension (N / k_max of them) crosses the cut
//   twice (the middle and the wrap-around) when k_max >= 3, once when
//   k_max = 2, so 2 N / k_max (resp. N / 2) links x link_speed per direction.
//   (For odd k_max the halves are floor/ceil.) Counted from the built links.
// - max_gpus = N: a torus has no switch-radix bound (2 ports per dimension per
//   chip); it grows by lengthening dimensions, at the price of diameter
//   (sum k/2) and bisection per chip (2 / k_max links).
//
// Sizing from `gpus` (when `dims` is absent): the most cube-like 3D
// factorization a <= b <= c of gpus with every factor >= 2 (smallest c, then
// largest a), else the most square 2D one; 4096 -> [16, 16, 16],
// 1024 -> [8, 8, 16]. Neither given: [4, 4, 4].
#pragma once

#include "topology/builders.hpp"

namespace podnet::topology {

BuilderInfo torus_builder();

}  // namespace podnet::topology
