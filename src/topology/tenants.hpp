// Tenants on the back end (the scenario's `tenants:`): each a run of whole servers, isolated in a VRF of its
// own that EVPN-VXLAN carries across the fabric (report/config_plan.hpp writes it for FRR).
//
// Servers. Tenant i takes the next ceil(GPUs / gpus per server) servers in server order (a share: of the
// fabric's GPUs); the servers left over belong to no tenant and stay in the default VRF.
// Naming. VRF "Vrf-<name>" (SONiC's VRF names start with "Vrf"; Linux's at most 15 characters); an L3 VNI
// of 10000 + i + 1 (RFC 8365's 24-bit VNI); route target <addressing.asn_base>:<VNI>, given explicitly on
// every leaf, since the automatic ones (the leaf's own ASN : VNI) differ from leaf to leaf in an eBGP fabric
// with one ASN per leaf (RFC 7938) and would import nothing.
// VTEPs: each leaf's Loopback0, the source of its VXLAN tunnels.
// SONiC maps an L3 VNI through a VLAN of its own: tenant i's is VLAN 1000 + i + 1, so at most
// kMaxTenants tenants (VLAN ids end at 4094).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace podnet::topology {

inline constexpr int64_t kMaxTenants = 4094 - 1000;

struct TenantRequest {
  std::string name;
  int64_t gpus = 0;      // a count, or
  double fraction = -1;  // a share of the fabric's GPUs
};

struct Tenant {
  std::string name;
  std::string vrf;  // "Vrf-<name>"
  int64_t vni = 0;
  int64_t vlan = 0;          // SONiC's VLAN for the L3 VNI
  std::string route_target;  // "<asn_base>:<vni>"
  int64_t asked_gpus = 0;    // the count asked, or the share's GPUs (rounded up to whole servers)
  int32_t first_server = 0;
  int32_t servers = 0;
  bool holds(int32_t server) const { return server >= first_server && server < first_server + servers; }
};

// ParamError naming "tenants[i].gpus" when the tenants need more servers than the fabric has.
std::vector<Tenant> plan_tenants(const Topology& t, const std::vector<TenantRequest>& requests, int64_t asn_base);

// The storage nodes' VRF when tenants are isolated on the frontend (frontend.tenants: isolated): Vrf-storage,
// VNI 10000 and VLAN 999, below every tenant's numbers, route target "<asn_base>:10000".
Tenant storage_tenant(int64_t asn_base);

// The tenant a server belongs to, or null.
const Tenant* tenant_of(const std::vector<Tenant>& tenants, int32_t server);

}  // namespace podnet::topology
