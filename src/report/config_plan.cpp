#include "report/config_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "report/export.hpp"

namespace podnet::report {

using topology::AddressPlan;
using topology::device_port_name;
using topology::PlanLink;
using topology::Topology;

namespace {

// One end of an addressed cable as seen from switch node `self`.
struct Side {
  int32_t port, far_port;
  topology::NodeId far;
  Uint128 addr, far_addr;
};

Side side_of(const PlanLink& l, topology::NodeId self) {
  if (l.upper == self) return {l.upper_port, l.lower_port, l.lower, l.upper_addr, l.lower_addr};
  return {l.lower_port, l.upper_port, l.upper, l.lower_addr, l.upper_addr};
}

int plen(const AddressPlan& p) { return p.options.v6 ? 127 : 31; }
int host_len(const AddressPlan& p) { return p.options.v6 ? 128 : 32; }

std::string far_end(const Topology& t, const Side& s) {
  return t.device_name(s.far) + ":" + t.port_name(s.far, s.far_port);
}

std::string label(const AddressPlan& p, const PlanLink& l) { return cable_label(l.cable, p.cables); }

// The tenant behind the far end of switch `self`'s cable `l`: a back-end NIC of a tenant's server; with
// `storage` (tenants isolated on the frontend) also a frontend NIC of a tenant's server, or `storage` for a
// storage node's; else null.
const topology::Tenant* tenant_at(const Topology& t, const std::vector<topology::Tenant>& tenants, const PlanLink& l,
                                  topology::NodeId self, const topology::Tenant* storage) {
  const topology::Node& far = t.nodes[side_of(l, self).far];
  if (far.kind != topology::NodeKind::Nic || (far.network != 0 && storage == nullptr)) return nullptr;
  if (far.network != 0 && far.server >= t.servers) return storage;  // a storage node (site_topology)
  return topology::tenant_of(tenants, far.server);
}

// The tenants switch `s` serves, in the order its cables first reach them.
std::vector<const topology::Tenant*> served_tenants(const Topology& t, const AddressPlan& plan, size_t s,
                                                    const std::vector<topology::Tenant>& tenants,
                                                    const topology::Tenant* storage) {
  const auto& sw = plan.switches[s];
  std::vector<const topology::Tenant*> served;
  for (int32_t li : sw.links)
    if (const auto* x = tenant_at(t, tenants, plan.links[static_cast<size_t>(li)], sw.node, storage))
      if (std::find(served.begin(), served.end(), x) == served.end()) served.push_back(x);
  return served;
}

}  // namespace

std::string frr_config(const Topology& t, const AddressPlan& plan, size_t s,
                       const std::vector<topology::Tenant>& tenants, const topology::Tenant* storage) {
  const auto& sw = plan.switches[s];
  const auto& node = t.nodes[sw.node];
  const bool v6 = plan.options.v6;
  std::string out;
  out.reserve(256 + sw.links.size() * 160);
  out += fmt::format("! FRR configuration of {}, tier {} ({}), AS {}: podnet design --config-plan\n", node.name,
                     node.tier, static_cast<size_t>(node.tier) < t.tier_names.size() ? t.tier_names[node.tier] : "",
                     sw.asn);
  out += "frr defaults datacenter\n";
  out += fmt::format("hostname {}\n", node.name);
  out += "service integrated-vtysh-config\n!\n";
  const std::vector<const topology::Tenant*> served = served_tenants(t, plan, s, tenants, storage);
  // EVPN: the back end's switches with tenants; the frontend's too when it isolates them.
  const bool evpn = !tenants.empty() && (node.network == 0 || storage != nullptr);
  for (const auto* x : served) out += fmt::format("vrf {}\n vni {}\nexit-vrf\n!\n", x->vrf, x->vni);
  out += fmt::format("interface Loopback0\n {} address {}/{}\nexit\n!\n", v6 ? "ipv6" : "ip",
                     format_ip(sw.loopback, v6), host_len(plan));
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    const Side sd = side_of(l, sw.node);
    const topology::Tenant* x = tenant_at(t, tenants, l, sw.node, storage);
    out += fmt::format("interface {}{}\n description {} to {} (port {})\n", device_port_name(sd.port),
                       x ? " vrf " + x->vrf : "", label(plan, l), far_end(t, sd), t.port_name(sw.node, sd.port));
    if (l.numbered) out += fmt::format(" {} address {}/{}\n", v6 ? "ipv6" : "ip", format_ip(sd.addr, v6), plen(plan));
    out += "exit\n!\n";
  }
  out += fmt::format("router bgp {}\n", sw.asn);
  out += fmt::format(" bgp router-id {}\n", format_ipv4(sw.router_id));
  out += " no bgp ebgp-requires-policy\n";
  if (v6) out += " no bgp default ipv4-unicast\n";
  out += " bgp bestpath as-path multipath-relax\n";
  std::string activate;  // one line per session, for each address family that needs it
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    if (!l.session) continue;
    const Side sd = side_of(l, sw.node);
    const auto* peer = plan.find(sd.far);
    const std::string who = l.numbered ? format_ip(sd.far_addr, v6) : device_port_name(sd.port);
    if (l.numbered) out += fmt::format(" neighbor {} remote-as {}\n", who, peer->asn);
    else out += fmt::format(" neighbor {} interface remote-as external\n", who);
    out += fmt::format(" neighbor {} description {} AS {} {}\n", who, far_end(t, sd), peer->asn, label(plan, l));
    activate += fmt::format("  neighbor {} activate\n", who);
  }
  out += fmt::format(" !\n address-family {} unicast\n", v6 ? "ipv6" : "ipv4");
  out += "  redistribute connected\n";
  out += fmt::format("  maximum-paths {}\n", std::clamp(sw.sessions, 1, topology::kMaxEcmpPaths));
  if (v6) out += activate;  // IPv4 unicast is FRR's default family; IPv6 is activated per neighbor
  out += " exit-address-family\n";
  if (evpn) {
    out += " !\n address-family l2vpn evpn\n" + activate;
    if (!served.empty()) out += "  advertise-all-vni\n";
    out += " exit-address-family\n";
  }
  out += "exit\n!\n";
  for (const auto* x : served) {
    out += fmt::format("router bgp {} vrf {}\n", sw.asn, x->vrf);
    out += fmt::format(" bgp router-id {}\n", format_ipv4(sw.router_id));
    out += " no bgp ebgp-requires-policy\n";
    out += fmt::format(" !\n address-family {} unicast\n  redistribute connected\n exit-address-family\n",
                       v6 ? "ipv6" : "ipv4");
    out += fmt::format(" !\n address-family l2vpn evpn\n  advertise {} unicast\n", v6 ? "ipv6" : "ipv4");
    // On an isolating frontend: a tenant imports the storage's routes too, the storage every tenant's.
    std::vector<std::string> imports = {x->route_target};
    if (node.network != 0 && storage != nullptr) {
      if (x == storage)
        for (const auto& y : tenants) imports.push_back(y.route_target);
      else imports.push_back(storage->route_target);
    }
    for (const std::string& rt : imports) out += fmt::format("  route-target import {}\n", rt);
    out += fmt::format("  route-target export {}\n", x->route_target);
    out += " exit-address-family\nexit\n!\n";
  }
  return out;
}

namespace {

// A JSON object of strings and objects, written as nlohmann::json's dump(2) writes one (keys sorted bytewise, as
// its std::map keeps them; two-space indent; an empty object as {}) without building that library's tree: a
// 1,048,576-GPU fabric's 20,480 files hold about 5 million ports.
struct JsonObject {
  struct Member {
    std::string key, text;  // text: a string's value
    std::unique_ptr<JsonObject> object;
  };
  std::vector<Member> members;

  JsonObject& str(std::string key, std::string value) {
    members.push_back({std::move(key), std::move(value), nullptr});
    return *this;
  }
  JsonObject& obj(std::string key, JsonObject value) {
    members.push_back({std::move(key), {}, std::make_unique<JsonObject>(std::move(value))});
    return *this;
  }
  JsonObject& obj(std::string key) { return obj(std::move(key), JsonObject{}); }
  bool empty() const { return members.empty(); }

  static void quoted(std::string& out, const std::string& s) {
    out += '"';
    if (std::none_of(s.begin(), s.end(), [](char ch) {
          return static_cast<unsigned char>(ch) < 0x20 || ch == '"' || ch == '\\';
        })) {  // nothing to escape: most keys and values
      out += s;
      out += '"';
      return;
    }
    for (const char ch : s) {
      const auto c = static_cast<unsigned char>(ch);
      switch (c) {
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          if (c < 0x20) out += fmt::format("\\u{:04x}", c);
          else out += ch;
      }
    }
    out += '"';
  }
  // Sorted by key; of equal keys the last one set stays (as assigning a key of a json object again does).
  void write(std::string& out, int depth) {
    std::stable_sort(members.begin(), members.end(), [](const Member& a, const Member& b) { return a.key < b.key; });
    std::vector<const Member*> kept;
    for (size_t i = 0; i < members.size(); ++i)
      if (i + 1 == members.size() || members[i + 1].key != members[i].key) kept.push_back(&members[i]);
    if (kept.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < kept.size(); ++i) {
      out.append(2 * (depth + 1), ' ');
      quoted(out, kept[i]->key);
      out += ": ";
      if (kept[i]->object) kept[i]->object->write(out, depth + 1);
      else quoted(out, kept[i]->text);
      out += i + 1 < kept.size() ? ",\n" : "\n";
    }
    out.append(2 * depth, ' ');
    out += '}';
  }
};

}  // namespace

std::string sonic_config_db(const Topology& t, const AddressPlan& plan, size_t s,
                            const std::vector<topology::Tenant>& tenants, const topology::Tenant* storage) {
  const auto& sw = plan.switches[s];
  const auto& node = t.nodes[sw.node];
  const bool v6 = plan.options.v6;
  // EVPN (tenants on the back end) lives in the FRR file, as unnumbered sessions do.
  const bool frr_file = plan.options.unnumbered || (!tenants.empty() && (node.network == 0 || storage != nullptr));
  JsonObject meta;
  meta.str("hostname", node.name)
      .str("bgp_asn", std::to_string(sw.asn))
      .str("bgp_router_id", format_ipv4(sw.router_id))
      .str("type", topology::sonic_device_type(node.tier, node.network != 0))
      .str("docker_routing_config_mode", frr_file ? "split-unified" : "unified");
  if (v6) meta.str("bgp_adv_lo_prefix_as_128", "true");
  JsonObject port, intf, nbr;
  port.members.reserve(sw.links.size());
  intf.members.reserve(2 * sw.links.size());
  nbr.members.reserve(sw.links.size());
  const std::vector<const topology::Tenant*> served = served_tenants(t, plan, s, tenants, storage);
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    const Side sd = side_of(l, sw.node);
    const std::string name = device_port_name(sd.port);
    const topology::Tenant* x = tenant_at(t, tenants, l, sw.node, storage);
    std::string lanes;
    for (int k = 0; k < topology::kLanesPerPort; ++k)
      lanes.append(k ? "," : "").append(std::to_string(topology::kLanesPerPort * sd.port + k));
    const double mbps = t.links[static_cast<size_t>(l.link)].capacity.bps / 1e6;
    JsonObject p;
    p.str("admin_status", "up")
        .str("alias", t.port_name(sw.node, sd.port))
        .str("description", fmt::format("{} to {}", label(plan, l), far_end(t, sd)))
        .str("index", std::to_string(sd.port))
        .str("lanes", std::move(lanes))
        .str("mtu", "9100")
        .str("speed", std::to_string(static_cast<int64_t>(std::llround(mbps))));
    port.obj(name, std::move(p));
    if (l.numbered) {
      JsonObject in;
      if (x) in.str("vrf_name", x->vrf);
      intf.obj(name, std::move(in));
      intf.obj(fmt::format("{}|{}/{}", name, format_ip(sd.addr, v6), plen(plan)));
    } else {
      intf.obj(name, std::move(JsonObject{}.str("ipv6_use_link_local_only", "enable")));
    }
    if (l.session && l.numbered) {
      JsonObject n;
      n.str("admin_status", "up")
          .str("asn", std::to_string(plan.find(sd.far)->asn))
          .str("local_addr", format_ip(sd.addr, v6))
          .str("name", t.nodes[sd.far].name);
      nbr.obj(format_ip(sd.far_addr, v6), std::move(n));
    }
  }
  JsonObject doc;
  doc.obj("DEVICE_METADATA", std::move(JsonObject{}.obj("localhost", std::move(meta))));
  doc.obj("LOOPBACK_INTERFACE",
          std::move(JsonObject{}
                        .obj("Loopback0")
                        .obj(fmt::format("Loopback0|{}/{}", format_ip(sw.loopback, v6), host_len(plan)))));
  doc.obj("PORT", std::move(port));
  doc.obj("INTERFACE", std::move(intf));
  if (!nbr.empty()) doc.obj("BGP_NEIGHBOR", std::move(nbr));
  if (!served.empty()) {  // the VTEP (Loopback0), the EVPN NVO and each tenant's VRF, L3 VNI and its VLAN
    JsonObject vrf, vlan, vlan_intf, map;
    for (const auto* x : served) {
      const std::string v = fmt::format("Vlan{}", x->vlan);
      vrf.obj(x->vrf, std::move(JsonObject{}.str("vni", std::to_string(x->vni))));
      vlan.obj(v, std::move(JsonObject{}.str("vlanid", std::to_string(x->vlan))));
      vlan_intf.obj(v, std::move(JsonObject{}.str("vrf_name", x->vrf)));
      map.obj(fmt::format("vtep|map_{}_{}", x->vni, v),
              std::move(JsonObject{}.str("vlan", v).str("vni", std::to_string(x->vni))));
    }
    doc.obj("VRF", std::move(vrf));
    doc.obj("VLAN", std::move(vlan));
    doc.obj("VLAN_INTERFACE", std::move(vlan_intf));
    doc.obj("VXLAN_TUNNEL",
            std::move(JsonObject{}.obj("vtep", std::move(JsonObject{}.str("src_ip", format_ip(sw.loopback, v6))))));
    doc.obj("VXLAN_EVPN_NVO", std::move(JsonObject{}.obj("nvo", std::move(JsonObject{}.str("source_vtep", "vtep")))));
    doc.obj("VXLAN_TUNNEL_MAP", std::move(map));
  }
  std::string out;
  out.reserve(512 * sw.links.size() + 1024);
  doc.write(out, 0);
  out += '\n';
  return out;
}

}  // namespace podnet::report
