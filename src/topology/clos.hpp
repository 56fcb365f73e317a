// Folded-Clos families: fat_tree, rail_clos and tree3 share one builder.
//
// Structure (R = switch radix, o1/o2 = oversubscription down:up at tier 1/2):
// - Tier 1 (leaf/access): d1 = floor(R*o1/(o1+1)) down-ports, u1 = R - d1 up.
//   Attachment `tor`: all NICs of a server on one leaf, floor(d1/nics) servers
//   per leaf, a leaf is an aggregation group. Attachment `rail`: NIC r of each
//   server goes to the rail-r leaf of its group; a group is d1 servers and
//   `rails` leaves (d1 * GPUs per server GPUs: 64 * 8 = 512 with R = 128).
// - Tier 2 (spine/aggregation): a spine domain is all leaves of a pod (or, in
//   rail_clos, all leaves of one rail in a pod). Each of its Ld leaves links to
//   every spine of the domain with p parallel links, p the largest divisor of
//   u1 with Ld*p <= spine down-ports; spines per domain = u1/p. In a 2-tier
//   fabric a spine's ports are all down (R); in 3 tiers d2 = floor(R*o2/(o2+1)).
// - Tier 3 (super-spine/core): plane k joins spine k of every domain; each of
//   the D domains' spine links to every super-spine of the plane with q
//   parallel links, q the largest divisor of u2 with D*q <= R.
// - Tier 4 (core; tier 3 is then super_spine): a zone is Pz pods; super-spine
//   plane k of a zone joins spine k of the zone's Dz = Pz * domains-per-pod
//   domains (q links each, Dz*q <= d3 = floor(R*o3/(o3+1))), C per plane; core
//   plane (k, c) joins super-spine (k, c) of every one of the Z zones with r
//   parallel links, r the largest divisor of u3 = R - d3 with Z*r <= R. The
//   recursive folded Clos of Al-Fares et al. (SIGCOMM 2008) one level up, as
//   Meta's zones of pods joined by aggregation switches (Gangidi et al.,
//   SIGCOMM 2024, section 3).
// So non-blocking 3-tier has one link per NIC per tier (3 links per NIC), the
// k-ary fat-tree (k pods of k/2 + k/2 switches, (k/2)^2 cores) is the case
// R = k, o = 1, one NIC per host, k/2 leaves per pod.
//
// Limits: 2 tiers: Ld <= R leaves per domain; 3 tiers: Ld <= d2 and D <= R;
// 4 tiers: Ld <= d2, Dz <= d3 and Z <= R (radix 128, 8 rails of 512-GPU
// groups: 64 groups a pod, 8 pods a zone, 128 zones = 33.5 million GPUs, past
// podnet's 1,048,576). Diameter (switch-to-switch links): 0 with one leaf, 2
// within a domain, 4 across domains (3 tiers), 6 across zones (4 tiers).
// Bisection: half the smallest total capacity a tier offers upward (NICs,
// leaf, spine and super-spine uplinks) - the standard bound for a balanced
// folded Clos.
#pragma once

#include "topology/builders.hpp"

namespace podnet::topology {

BuilderInfo fat_tree_builder();
BuilderInfo rail_clos_builder();
BuilderInfo tree3_builder();

}  // namespace podnet::topology
