#include "report/config_plan.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <string_view>
#include <utility>

#include "core/append.hpp"
#include "core/ip.hpp"
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

void append_far_end(std::string& out, const Topology& t, const Side& s) {
  t.append_device_name(out, s.far);
  out += ':';
  t.append_port_name(out, s.far, s.far_port);
}

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
  // The lines of each port and session are appended piece by piece (a million-GPU plan writes 5 million).
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    const Side sd = side_of(l, sw.node);
    const topology::Tenant* x = tenant_at(t, tenants, l, sw.node, storage);
    out += "interface ";
    topology::append_device_port_name(out, sd.port);
    if (x) out.append(" vrf ").append(x->vrf);
    out += "\n description ";
    append_cable_label(out, l.cable, plan.cables);
    out += " to ";
    append_far_end(out, t, sd);
    out += " (port ";
    t.append_port_name(out, sw.node, sd.port);
    out += ")\n";
    if (l.numbered) {
      out += v6 ? " ipv6 address " : " ip address ";
      append_ip(out, sd.addr, v6);
      out += '/';
      append_decimal(out, plen(plan));
      out += '\n';
    }
    out += "exit\n!\n";
  }
  out += fmt::format("router bgp {}\n", sw.asn);
  out += fmt::format(" bgp router-id {}\n", format_ipv4(sw.router_id));
  out += " no bgp ebgp-requires-policy\n";
  if (v6) out += " no bgp default ipv4-unicast\n";
  out += " bgp bestpath as-path multipath-relax\n";
  std::string activate;  // one line per session, for each address family that needs it
  std::string who;
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    if (!l.session) continue;
    const Side sd = side_of(l, sw.node);
    const auto* peer = plan.find(sd.far);
    who.clear();
    if (l.numbered) append_ip(who, sd.far_addr, v6);
    else topology::append_device_port_name(who, sd.port);
    out.append(" neighbor ").append(who);
    if (l.numbered) {
      out += " remote-as ";
      append_decimal(out, peer->asn);
      out += '\n';
    } else {
      out += " interface remote-as external\n";
    }
    out.append(" neighbor ").append(who).append(" description ");
    append_far_end(out, t, sd);
    out += " AS ";
    append_decimal(out, peer->asn);
    out += ' ';
    append_cable_label(out, l.cable, plan.cables);
    out += '\n';
    activate.append("  neighbor ").append(who).append(" activate\n");
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
// 1,048,576-GPU fabric's 20,480 files hold about 5 million ports. A member may also be an object already
// written (raw: a port's or a neighbour's fields, written by `flat` at the depth it will stand at).
struct JsonObject {
  struct Member {
    std::string key, text;  // text: a string's value
    std::unique_ptr<JsonObject> object;
    bool raw = false;
    size_t raw_at = 0, raw_size = 0;  // a raw member's JSON: arena[raw_at, raw_at + raw_size)
  };
  std::vector<Member> members;
  std::string arena;  // the raw members' JSON, one after another (a string apiece cost a copy and an allocation)

  JsonObject& str(std::string key, std::string value) {
    members.push_back({std::move(key), std::move(value), nullptr});
    return *this;
  }
  JsonObject& obj(std::string key, JsonObject value) {
    members.push_back({std::move(key), {}, std::make_unique<JsonObject>(std::move(value))});
    return *this;
  }
  JsonObject& obj(std::string key) { return obj(std::move(key), JsonObject{}); }
  // A member whose JSON the caller appends to the string returned (the arena), then ends with raw_end().
  std::string& raw_begin(std::string key) {
    members.push_back({std::move(key), {}, nullptr, true, arena.size(), 0});
    return arena;
  }
  void raw_end() { members.back().raw_size = arena.size() - members.back().raw_at; }
  JsonObject& raw(std::string key, std::string_view json) {
    raw_begin(std::move(key)) += json;
    raw_end();
    return *this;
  }
  bool empty() const { return members.empty(); }

  static void quoted(std::string& out, std::string_view s) {
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
  // An object of string members whose keys are distinct and sorted, as write() writes it at `depth`.
  static void flat(std::string& out, int depth,
                   std::initializer_list<std::pair<std::string_view, std::string_view>> sorted) {
    if (sorted.size() == 0) {
      out += "{}";
      return;
    }
    out += "{\n";
    size_t i = 0;
    for (const auto& [key, value] : sorted) {
      out.append(2 * (depth + 1), ' ');
      quoted(out, key);
      out += ": ";
      quoted(out, value);
      out += ++i < sorted.size() ? ",\n" : "\n";
    }
    out.append(2 * depth, ' ');
    out += '}';
  }
  // Sorted by key; of equal keys the last one set stays (as assigning a key of a json object again does). The
  // members' places are sorted, not the members (each a few strings).
  void write(std::string& out, int depth) const {
    std::vector<uint32_t> order(members.size());
    for (uint32_t i = 0; i < order.size(); ++i) order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](uint32_t a, uint32_t b) { return members[a].key < members[b].key; });
    size_t kept = 0;
    for (size_t i = 0; i < order.size(); ++i)
      if (i + 1 == order.size() || members[order[i + 1]].key != members[order[i]].key) order[kept++] = order[i];
    order.resize(kept);
    if (order.empty()) {
      out += "{}";
      return;
    }
    out += "{\n";
    for (size_t i = 0; i < order.size(); ++i) {
      const Member& m = members[order[i]];
      out.append(2 * (depth + 1), ' ');
      quoted(out, m.key);
      out += ": ";
      if (m.object) m.object->write(out, depth + 1);
      else if (m.raw) out.append(arena, m.raw_at, m.raw_size);
      else quoted(out, m.text);
      out += i + 1 < order.size() ? ",\n" : "\n";
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
  // Each port's, interface's and neighbour's fields are written here, in key order, at the depth they stand
  // at (2: the document, its table, the entry); the tables sort the entries.
  std::string name, alias, description, lanes, speed, index, addr, far_addr, asn;
  for (int32_t li : sw.links) {
    const PlanLink& l = plan.links[static_cast<size_t>(li)];
    const Side sd = side_of(l, sw.node);
    name.clear();
    topology::append_device_port_name(name, sd.port);
    const topology::Tenant* x = tenant_at(t, tenants, l, sw.node, storage);
    lanes.clear();
    for (int k = 0; k < topology::kLanesPerPort; ++k) {
      if (k) lanes += ',';
      append_decimal(lanes, int64_t{topology::kLanesPerPort} * sd.port + k);
    }
    const double mbps = t.links[static_cast<size_t>(l.link)].capacity.bps / 1e6;
    alias.clear();
    t.append_port_name(alias, sw.node, sd.port);
    description.clear();
    append_cable_label(description, l.cable, plan.cables);
    description += " to ";
    append_far_end(description, t, sd);
    index.clear();
    append_decimal(index, sd.port);
    speed.clear();
    append_decimal(speed, static_cast<int64_t>(std::llround(mbps)));
    JsonObject::flat(port.raw_begin(name), 2,
                     {{"admin_status", "up"},
                      {"alias", alias},
                      {"description", description},
                      {"index", index},
                      {"lanes", lanes},
                      {"mtu", "9100"},
                      {"speed", speed}});
    port.raw_end();
    if (l.numbered) {
      if (x) JsonObject::flat(intf.raw_begin(name), 2, {{"vrf_name", x->vrf}});
      else JsonObject::flat(intf.raw_begin(name), 2, {});
      intf.raw_end();
      addr.clear();
      append_ip(addr, sd.addr, v6);
      std::string key = name;
      key += '|';
      key += addr;
      key += '/';
      append_decimal(key, plen(plan));
      intf.raw(std::move(key), "{}");
    } else {
      JsonObject::flat(intf.raw_begin(name), 2, {{"ipv6_use_link_local_only", "enable"}});
      intf.raw_end();
    }
    if (l.session && l.numbered) {
      far_addr.clear();
      append_ip(far_addr, sd.far_addr, v6);
      asn.clear();
      append_decimal(asn, plan.find(sd.far)->asn);
      JsonObject::flat(nbr.raw_begin(far_addr), 2,
                       {{"admin_status", "up"}, {"asn", asn}, {"local_addr", addr}, {"name", t.nodes[sd.far].name}});
      nbr.raw_end();
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
