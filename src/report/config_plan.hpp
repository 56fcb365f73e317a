// Device configurations from the address plan (topology/address_plan.hpp):
// what `podnet design --config-plan DIR` writes.
//
// - FRR (frr.conf, one per switch, FRR 8.x syntax as Debian 12 ships it):
//   `frr defaults datacenter`; interfaces with their description (cable label,
//   the far end and the cabling plan's port name) and /31 or /127 address (or
//   none for unnumbered switch-to-switch ports), `Loopback0` with the
//   loopback; `router bgp <ASN>` with `bgp router-id`, `no bgp
//   ebgp-requires-policy` (FRR 8 otherwise exchanges no eBGP route without a
//   policy, RFC 8212), `bgp bestpath as-path multipath-relax` (ECMP across
//   next hops in different ASNs, as the spines of different pods are), one
//   neighbor per switch-to-switch cable (`neighbor ADDR remote-as ASN`, or
//   `neighbor IFACE interface remote-as external` unnumbered), and in the
//   family's unicast address family `redistribute connected` (loopbacks and
//   server subnets) and `maximum-paths N`. FRR's own `vtysh --dryrun -f`
//   checks every file in ctest (tests/interop/check_configplan.py).
// - SONiC config_db.json fragment, one per switch, in the tables of SONiC's
//   Configuration Database Manual (sonic-net/sonic-buildimage,
//   src/sonic-yang-models/doc/Configuration.md): DEVICE_METADATA.localhost
//   (hostname, bgp_asn, bgp_router_id, type, docker_routing_config_mode),
//   PORT (one per cabled port: alias = the cabling plan's port name, index,
//   nominal lanes kLanesPerPort*p.., speed in Mb/s, mtu 9100, admin_status
//   up), INTERFACE ("Ethernet0": {} and "Ethernet0|10.0.0.0/31": {};
//   unnumbered ports {"ipv6_use_link_local_only": "enable"}),
//   LOOPBACK_INTERFACE ("Loopback0|10.255.0.1/32"), BGP_NEIGHBOR (keyed by
//   the peer's address: asn, local_addr, name, admin_status). config_db keys
//   BGP_NEIGHBOR by address, so unnumbered sessions live in the FRR file only
//   and the fragment says docker_routing_config_mode "split-unified" (FRR's
//   configuration not generated from config_db); numbered plans say
//   "unified". The lanes are nominal: a platform's own port_config.ini or
//   platform.json decides them. Values are strings, as config_db stores them;
//   keys sorted; checked against tests/interop/sonic_config_db.schema.json.
#pragma once

#include <string>
#include <vector>

#include "topology/address_plan.hpp"
#include "topology/tenants.hpp"
#include "topology/topology.hpp"

namespace podnet::report {

// frr.conf of switch `s` (an index into plan.switches).
// With `tenants` (topology/tenants.hpp), EVPN-VXLAN: every switch activates its sessions in the l2vpn evpn
// address family; a leaf with a tenant's servers puts their NIC ports in the tenant's VRF (`vrf Vrf-NAME` /
// `vni N`), advertises its VNIs from Loopback0 (its VTEP; advertise-all-vni) and runs `router bgp ASN vrf
// Vrf-NAME` with the VRF's connected routes as EVPN type-5 routes (advertise ipv4 unicast) under the
// tenant's route target, imported and exported. A site's frontend (topology/frontend.hpp) stays in the default
// VRF, where the storage nodes are, unless `storage` is given (frontend.tenants: isolated): then the frontend
// runs EVPN too, each tenant's frontend NIC ports sit in its VRF and the storage nodes' in `storage`'s VRF.
// The frontend's tenant VRFs import their own route target and the storage's, the storage VRF every tenant's:
// each tenant reaches the storage, none reaches another (servers outside every tenant keep the default VRF,
// which does not reach the storage).
std::string frr_config(const topology::Topology& t, const topology::AddressPlan& plan, size_t s,
                       const std::vector<topology::Tenant>& tenants = {}, const topology::Tenant* storage = nullptr);
// config_db.json fragment of switch `s`, indented 2, trailing newline.
// With `tenants`, a leaf serving some has the data plane of the FRR file's EVPN (SONiC's VXLAN EVPN design,
// sonic-net/SONiC doc/vxlan/EVPN/EVPN_VXLAN_HLD.md; sonic-vrf, sonic-vlan and sonic-vxlan YANG models): VRF
// (Vrf-NAME with its L3 VNI), VLAN and VLAN_INTERFACE (the VNI's VLAN, 1000 + i + 1, in the VRF),
// VXLAN_TUNNEL "vtep" from Loopback0, VXLAN_EVPN_NVO "nvo" on it, VXLAN_TUNNEL_MAP VNI -> VLAN, and the
// tenant's ports with vrf_name in INTERFACE. Every back-end switch of such a plan says
// docker_routing_config_mode "split-unified": its BGP (EVPN included) is the FRR file's.
std::string sonic_config_db(const topology::Topology& t, const topology::AddressPlan& plan, size_t s,
                            const std::vector<topology::Tenant>& tenants = {},
                            const topology::Tenant* storage = nullptr);

}  // namespace podnet::report
