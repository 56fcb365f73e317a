// Multi-plane fabrics (server.nic_planes = P > 1).
//
// Model: every back-end NIC of nic_speed R is P ports of R / P, port p wired to
// plane p; a plane is a whole copy of the family's switch fabric built for NICs
// of R / P (the same switches, tiers, links and cable lengths), and no switch
// or link joins two planes. This is the fabric of MRC (OCP, 2026; deployed on
// GB200 clusters): an 800G NIC as 8 x 100G ports on 8 planes, each plane a
// two-tier Clos of 100G switch ports, so a 51.2T switch's 512 ports reach
// 512 x 256 NIC ports per plane in two tiers where 64 x 800G ports need three.
//
// Built by split_planes() after the family's builder (which sees a NIC of R / P):
//   - every switch of the back end is copied P - 1 times; switches are named
//     "p<plane>-<name>" and carry Node::plane;
//   - every switch-to-switch link is copied into each plane; every NIC-to-switch
//     link is copied too, from the same NIC to the plane's copy of the switch,
//     so NIC n has P switch links, the p-th (in link-id order) into plane p;
//   - facts: bisection x P (the planes are parallel cuts), the same diameter,
//     oversubscription and reach (each plane reaches what the family does at
//     this radix), a part-filled pod's spare layer x P.
// Routing (routing/router.hpp) picks the plane at the source NIC as a switch
// picks a next hop (ECMP: one plane per flow; spray: every plane), then routes
// inside that plane. The packet engine (engine/packet/packet_sim.hpp §7) lets
// a NIC send each packet of a QP on whichever of its ports is free.
#pragma once

#include <string>
#include <string_view>

#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::topology {

// The NIC of R / P the family's builder is given for a fabric of `hw`.
Hardware plane_hardware(const Hardware& hw);
// Copies t's switch fabric into hw.nic_planes planes (no-op for 1). Throws ParamError (server.nic_planes) for a
// family that is not a Clos (`clos`: BuilderInfo::planes) or a NIC with other than one switch link.
void split_planes(Topology& t, const Hardware& hw, std::string_view family, bool clos);
// The switch of hw's capacity (radix x port speed) with ports of `port` instead, as a note names it: "the same
// 0.4 Tb/s switch as 8 ports of 50Gbps is switch.port_speed=50Gbps with switch.radix=8" (a slower NIC or plane
// port takes a whole switch port).
std::string same_switch_with_ports_of(const Hardware& hw, Bandwidth port);

}  // namespace podnet::topology
