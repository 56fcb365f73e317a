#include "topology/tenants.hpp"

#include <cmath>
#include <fmt/format.h>

#include "core/error.hpp"
#include "core/units.hpp"

namespace podnet::topology {

std::vector<Tenant> plan_tenants(const Topology& t, const std::vector<TenantRequest>& requests, int64_t asn_base) {
  std::vector<Tenant> out;
  const int64_t per_server = std::max(1, t.gpus_per_server);
  const auto fabric_gpus = static_cast<int64_t>(t.gpus.size());
  int32_t next = 0;
  if (static_cast<int64_t>(requests.size()) > kMaxTenants)
    throw ParamError("tenants", fmt::format("{} tenants; expected at most {} (SONiC maps each tenant's L3 VNI to a "
                                            "VLAN of its own, 1001 to 4094)",
                                            thousands(static_cast<int64_t>(requests.size())), thousands(kMaxTenants)));
  for (size_t i = 0; i < requests.size(); ++i) {
    const TenantRequest& r = requests[i];
    const int64_t gpus =
        r.fraction > 0 ? static_cast<int64_t>(std::ceil(r.fraction * static_cast<double>(fabric_gpus) - 1e-9)) : r.gpus;
    const int64_t servers = (gpus + per_server - 1) / per_server;
    if (next + servers > t.servers)
      throw ParamError(
          fmt::format("tenants[{}].gpus", i),
          fmt::format("tenant {} needs {} server{} for its {} GPUs ({} a server), but only {} of the fabric's {} "
                      "are left; expected the tenants to fit in the fabric",
                      r.name, thousands(servers), servers == 1 ? "" : "s", thousands(gpus), per_server,
                      thousands(t.servers - next), thousands(t.servers)));
    Tenant x;
    x.name = r.name;
    x.vrf = "Vrf-" + r.name;
    x.vni = 10000 + static_cast<int64_t>(i) + 1;
    x.vlan = 1000 + static_cast<int64_t>(i) + 1;
    x.route_target = fmt::format("{}:{}", asn_base, x.vni);
    x.asked_gpus = gpus;
    x.first_server = next;
    x.servers = static_cast<int32_t>(servers);
    next += x.servers;
    out.push_back(std::move(x));
  }
  return out;
}

Tenant storage_tenant(int64_t asn_base) {
  Tenant x;
  x.name = "storage";
  x.vrf = "Vrf-storage";
  x.vni = 10000;
  x.vlan = 999;
  x.route_target = fmt::format("{}:{}", asn_base, x.vni);
  return x;
}

const Tenant* tenant_of(const std::vector<Tenant>& tenants, int32_t server) {
  for (const auto& x : tenants)
    if (x.holds(server)) return &x;
  return nullptr;
}

}  // namespace podnet::topology
