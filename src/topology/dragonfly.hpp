// dragonfly (Kim, Dally, Scott, Abts, "Technology-Driven, Highly-Scalable
// Dragonfly Topology", ISCA 2008) and dragonfly_plus (Shpiner et al.,
// "Dragonfly+", HiPINEB 2017: groups are leaf/spine Clos).
//
// dragonfly. p terminals (NIC ports) per router, a routers per group, h
// global links per router, g groups.
//   router radix    k = p + (a - 1) + h            (must be <= switch.radix)
//   groups          g <= a h + 1                   (one global link per pair)
//   terminals       N = a p g,  max a p (a h + 1)
//   balanced        a = 2p = 2h  (each terminal's traffic crosses at most one
//                   global link; a h >= a p global ports carry it)
//   e.g. p = h = 8, a = 16: k = 31, N = 16 * 8 * 129 = 16,512.
// Routers of a group are joined all-to-all by "local" links
// (cabling.leaf_to_spine, a(a-1)/2 per group); terminals attach p per
// router in NIC order (cabling.server_to_leaf); routers are tier 1 "router".
//
// dragonfly_plus. A group is a 2-level Clos: `leaves` leaves with p
// terminals each, `spines` spines, every leaf linked to every spine of its
// group ("leaf-spine", cabling.leaf_to_spine); spines carry h global links
// each. Leaf radix p + spines, spine radix leaves + h (both <= switch.radix),
// g <= spines h + 1, N = leaves p g. Tiers: 1 "leaf", 2 "spine".
//
// Global links (both families; class "global", cabling.spine_to_super_spine).
// A group has P global ports (a h, resp. spines h); port j is on router (or
// spine) j / h. With G = g - 1 other groups: m = floor(P / G) links to every
// other group plus r = P - m G remaining ports per group, spent as a
// circulant: one more link to each group at offset +-1, ..., +-floor(r/2),
// and, when r is odd and g even, to the opposite group (offset g/2). If r is
// odd and g odd (only possible with P odd) one port per group stays unused
// (noted in facts). So group pairs differ by at most one link in count, the
// arrangement is the same from every group (rotation-symmetric), and with
// g = P + 1 (m = 1, r = 0) every pair of groups has exactly one link: port j
// of group i goes to group (i + j + 1) mod g and lands on its port P - 1 - j.
// Port order inside a group: copy 0 to offsets 1..g-1, copy 1 to offsets
// 1..g-1, ..., then the circulant extras (+1, -1, +2, -2, ..., g/2), so
// parallel links to one group land on different routers.
//
// Sizing (both). `gpus` (optional, a multiple of server.gpus) sets the
// servers S = gpus / server.gpus and terminals T = S * server.nics. Without
// gpus: if no shape key (p, a, h, g / p, leaves, spines, h, g) is given
// either, gpus = 1024 (as the Clos families; rounded down to whole servers);
// otherwise the g groups are filled: S = floor(N / server.nics). `g`
// (optional) defaults to ceil(T / terminals per group) with gpus, else to the
// maximum. The last group may be partially filled: it is still built whole
// (all switches, local and global links); its trailing edge switches carry
// fewer (or no) terminals. p, a, h default to a balanced dragonfly: p = a/2
// if a is given, else h if h is given, else the smallest p with
// 2p^2 (2p^2 + 1) >= T (gpus known; 1024 GPUs -> p = 4, a = 8, h = 4, g = 32),
// else the largest p with 4p - 1 <= switch.radix; a = 2p, h = p.
// dragonfly_plus: x = the smallest x with x^2 (x^2 + 1) >= T (gpus known) or
// floor(switch.radix / 2); leaves = spines = p = h = x unless given.
// At most 2^24 GPUs are built.
// NIC-to-switch links run at min(server.nic_speed, switch.port_speed),
// switch-to-switch links at switch.port_speed.
//
// Facts.
// - diameter: switch-to-switch links on the longest shortest path between two
//   edge switches (routers / leaves), by BFS from the edge switches of group 0
//   (enough: the wiring is the same seen from every group). Minimal routing is
//   local-global-local = 3 in a dragonfly (less in tiny ones: 0 for a single
//   router, 1 for one group or a = 1, 2 when every router reaches every group
//   directly); leaf-spine-spine-leaf = 3 in dragonfly_plus (2 with one group).
// - bisection: capacity of the switch-to-switch links crossing the cut groups
//   [0, floor(g/2)) vs the rest (one group: edge switches and spines with an
//   in-group index below half), per direction, counted from the built links.
//   With g = a h + 1 groups that is floor(g/2) ceil(g/2) global links.
// - oversubscription: router p:h (terminal to global ports); dragonfly_plus
//   leaf p:spines, spine leaves:h.
#pragma once

#include "topology/builders.hpp"

namespace podnet::topology {

BuilderInfo dragonfly_builder();
BuilderInfo dragonfly_plus_builder();

}  // namespace podnet::topology
