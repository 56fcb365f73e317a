#include "report/export.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <initializer_list>
#include <iterator>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/append.hpp"
#include "core/ip.hpp"
#include "core/parallel.hpp"
#include "core/units.hpp"
#include "topology/bom.hpp"

namespace podnet::report {

using topology::kNone;
using topology::Link;
using topology::Media;
using topology::Node;
using topology::NodeId;
using topology::NodeKind;
using topology::Topology;

namespace {

bool is_cable(const Link& l) { return l.media == Media::Copper || l.media == Media::Optical; }

// Position in the cabling hierarchy: server-side nodes 0, switches their tier.
int level(const Node& n) { return n.kind == NodeKind::Switch ? static_cast<int>(n.tier) : 0; }

// "server" for server-side nodes, else the switch tier's name ("leaf", "spine", ...; "tier<k>" if unnamed).
std::string tier_name(const Topology& t, const Node& n) {
  const int lv = level(n);
  if (lv == 0) return "server";
  if (n.network != 0 && !t.frontend_tier_names.empty()) {  // a site topology's frontend switch
    const auto& names = t.frontend_tier_names;
    return "frontend-" +
           (static_cast<size_t>(lv) < names.size() && !names[lv].empty() ? names[lv] : fmt::format("tier{}", lv));
  }
  return static_cast<size_t>(lv) < t.tier_names.size() && !t.tier_names[lv].empty() ? t.tier_names[lv]
                                                                                    : fmt::format("tier{}", lv);
}

// A link's ends with the lower-tier end first (ties keep the stored order).
struct Ends {
  NodeId a;
  int32_t port_a;
  NodeId b;
  int32_t port_b;
};

Ends oriented(const Topology& t, const Link& l) {
  if (level(t.nodes[l.b]) < level(t.nodes[l.a])) return {l.b, l.port_b, l.a, l.port_a};
  return {l.a, l.port_a, l.b, l.port_b};
}

const std::string& class_name(const Topology& t, const Link& l) {
  static const std::string empty;
  return l.cls < t.link_classes.size() ? t.link_classes[l.cls] : empty;
}

double gbps(const Link& l) { return l.capacity.bps / 1e9; }  // division: 400e9 -> exactly 400
double latency_ns(const Link& l) { return static_cast<double>(l.latency.ps) / 1000.0; }
// length_m is a float; round to mm so 2.7f reads 2.7, not 2.700000047.
double length_m(const Link& l) { return std::round(static_cast<double>(l.length_m) * 1000.0) / 1000.0; }

std::string label_text(int32_t v) { return v == kNone ? std::string() : std::to_string(v); }

// As topology::compute_cost picks the parts (the same comparisons on the same length).
const char* netbox_cable_type(const Link& l, const CableTyping& typing) {
  if (l.media == Media::Copper) return "dac-passive";
  const double len = l.length_m;
  if (len <= typing.aoc_max_m) return "aoc";
  return len <= typing.multimode_max_m ? "mmf-om4" : "smf-os2";
}

// RFC 4180: quote only fields holding a comma, quote, CR or LF; double inner quotes. Appended to `out`.
void append_csv_field(std::string& out, std::string_view s) {
  // One pass over the field (find_first_of calls memchr over the four characters for each of its own).
  if (std::none_of(s.begin(), s.end(), [](char c) { return c == ',' || c == '"' || c == '\r' || c == '\n'; })) {
    out += s;
    return;
  }
  out += '"';
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  out += '"';
}

std::string csv_field(std::string_view s) {
  std::string r;
  append_csv_field(r, s);
  return r;
}

// DOT quoted string: escape '"' and '\' (a lone backslash would start a DOT escape).
std::string dot_id(std::string_view s) {
  std::string r = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') r += '\\';
    if (c == '\n') {
      r += "\\n";
      continue;
    }
    r += c;
  }
  r += '"';
  return r;
}

std::string xml_escape(std::string_view s) {
  std::string r;
  r.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': r += "&amp;"; break;
      case '<': r += "&lt;"; break;
      case '>': r += "&gt;"; break;
      case '"': r += "&quot;"; break;
      case '\'': r += "&apos;"; break;
      default: r += c;
    }
  }
  return r;
}

int64_t cable_count(const Topology& t) {
  int64_t n = 0;
  for (const auto& l : t.links) n += is_cable(l) ? 1 : 0;
  return n;
}

}  // namespace

void write_cabling_plan_csv(const Topology& t, std::ostream& out, const CableTyping& typing) {
  out << kNetboxCableColumns << '\n';
  const int64_t count = cable_count(t);
  int64_t ordinal = 0;
  std::string row;
  for (const auto& l : t.links) {
    if (!is_cable(l)) continue;
    ++ordinal;
    const Ends e = oriented(t, l);
    const Node& na = t.nodes[e.a];
    const Node& nb = t.nodes[e.b];
    const int32_t rail = na.rail != kNone ? na.rail : nb.rail;
    const int32_t group = na.group != kNone ? na.group : nb.group;
    row.clear();
    row += csv_field(t.device_name(e.a));
    row += ",dcim.interface,";
    row += csv_field(t.port_name(e.a, e.port_a));
    row += ',';
    row += csv_field(t.device_name(e.b));
    row += ",dcim.interface,";
    row += csv_field(t.port_name(e.b, e.port_b));
    row += ',';
    row += netbox_cable_type(l, typing);
    row += ",planned,";
    row += cable_label(ordinal, count);
    row += ',';
    row += format_number(length_m(l), 2);  // NetBox stores cable length with 2 decimals
    row += ",m,";
    row += csv_field(class_name(t, l));
    row += ',';
    row += label_text(rail);
    row += ',';
    row += label_text(group);
    row += ',';
    row += format_number(gbps(l), 3);
    row += '\n';
    out << row;
  }
}

namespace {

// NetBox interface type (dcim.choices.InterfaceTypeChoices) for a port speed: the OSFP / QSFP form factors of
// each Ethernet speed, "other" for any other speed (a torus chip's own ports are "other" at any speed).
const char* netbox_interface_type(double gbps, bool infiniband) {
  if (infiniband) {  // InfiniBand's rates by generation (NDR 400 Gbps a port, HDR 200, XDR 800, EDR 100)
    if (gbps == 800) return "infiniband-xdr";
    if (gbps == 400) return "infiniband-ndr";
    if (gbps == 200) return "infiniband-hdr";
    if (gbps == 100) return "infiniband-edr";
    return "other";
  }
  if (gbps == 800) return "800gbase-x-osfp";
  if (gbps == 400) return "400gbase-x-osfp";
  if (gbps == 200) return "200gbase-x-qsfp56";
  if (gbps == 100) return "100gbase-x-qsfp28";
  if (gbps == 25) return "25gbase-x-sfp28";
  return "other";
}

// NetBox slug: lower-case letters, digits, '-' and '_'; any other run of characters becomes one '-'.
std::string slug(std::string_view s) {
  std::string r;
  for (char c : s) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if ((l >= 'a' && l <= 'z') || (l >= '0' && l <= '9') || l == '_' || l == '-') r += l;
    else if (!r.empty() && r.back() != '-') r += '-';
  }
  while (!r.empty() && r.back() == '-') r.pop_back();
  return r.empty() ? std::string("podnet") : r;
}

// A site topology's storage node (frontend.hpp: the devices after the back end's servers), or a back-end
// server slot from `storage_slot` on (frontend.converged).
bool is_storage_node(const Topology& t, const Node& n, int32_t storage_slot = -1) {
  if (level(n) != 0) return false;
  if (storage_slot >= 0 && n.network == 0 && n.server >= storage_slot && n.server < t.servers) return true;
  return n.network != 0 && !t.frontend_tier_names.empty() && n.server >= t.servers;
}

// NetBox device role: "gpu-server" for a server, "storage-node" for a storage node, the tier's name for a switch
// ("frontend-leaf", ... for the frontend's).
std::string role_name(const Topology& t, const Node& n, int32_t storage_slot = -1) {
  if (level(n) == 0) return is_storage_node(t, n, storage_slot) ? "storage-node" : "gpu-server";
  return tier_name(t, n);
}

const char* role_color(int level) {
  static constexpr const char* colors[] = {"2196f3", "4caf50", "ff9800", "f44336", "9c27b0"};
  const int n = static_cast<int>(std::size(colors));
  return colors[level < n ? level : n - 1];
}

std::string rack_name(int32_t rack, int32_t racks) { return "rack-" + topology::padded(rack, racks); }

std::string row(std::initializer_list<std::string_view> fields) {
  std::string r;
  bool first = true;
  for (auto f : fields) {
    if (!first) r += ',';
    first = false;
    r += csv_field(f);
  }
  r += '\n';
  return r;
}

}  // namespace

std::vector<NetboxFile> netbox_import_set(const Topology& t, const topology::Hardware& hw, const std::string& site,
                                          const topology::AddressPlan* plan, bool infiniband, const CableTyping& typing,
                                          const topology::FrontendFabric* frontend, int32_t storage_slot) {
  if (frontend != nullptr && !frontend->config.present()) frontend = nullptr;
  std::vector<NetboxFile> files;
  auto add = [&files](const char* name, const char* header) -> std::string& {
    files.push_back({name, std::string(header) + "\n"});
    return files.back().text;
  };

  std::string& cf = add("00-custom-fields.csv", kNetboxCustomFieldColumns);
  cf += row({"podnet_link_class", "podnet link class", "text", "dcim.cable",
             "podnet's link class: nic-leaf, leaf-spine, spine-super_spine, ..."});
  cf += row({"podnet_rail", "podnet rail", "integer", "dcim.cable,dcim.device",
             "rail (NIC index in the server) of the cable's server end or of a rail-bound switch"});
  cf += row({"podnet_group", "podnet group", "integer", "dcim.cable,dcim.device",
             "aggregation group (scalable unit), dragonfly group or torus cube"});
  cf += row({"podnet_pod", "podnet pod", "integer", "dcim.device", "pod of a switch"});
  cf += row({"podnet_speed_gbps", "podnet speed (Gbps)", "decimal", "dcim.cable", "capacity per direction in Gbps"});

  add("01-sites.csv", kNetboxSiteColumns) += row({site, slug(site), "planned", "podnet " + t.family + " fabric"});

  // Racks that hold a device: every server's, a switch's when the builder placed it (dragonfly), and the
  // network racks the bill of materials packs the other switches into (topology::network_racks).
  const std::vector<int32_t> net_rack = topology::network_racks(t, hw);
  const auto rack_of = [&](size_t i) { return t.nodes[i].rack != kNone ? t.nodes[i].rack : net_rack[i]; };
  std::vector<char> rack_used(static_cast<size_t>(std::max(t.racks, 0)), 0);
  int32_t racks = t.racks;
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (rack_of(i) != kNone) racks = std::max(racks, rack_of(i) + 1);
  rack_used.resize(static_cast<size_t>(racks), 0);
  for (size_t i = 0; i < t.nodes.size(); ++i)
    if (rack_of(i) != kNone) rack_used[static_cast<size_t>(rack_of(i))] = 1;
  std::string& rk = add("02-racks.csv", kNetboxRackColumns);
  for (int32_t r = 0; r < racks; ++r)
    if (rack_used[static_cast<size_t>(r)]) rk += row({site, rack_name(r, racks), "planned", "19", "42"});

  add("03-manufacturers.csv", kNetboxManufacturerColumns) +=
      row({"Generic", "generic", "podnet does not pick vendors"});

  bool has_switch = false;
  for (const auto& n : t.nodes) has_switch = has_switch || n.kind == NodeKind::Switch;
  const std::string server_model = t.nics_per_server > 0
                                       ? fmt::format("gpu-server-{}gpu-{}nic", t.gpus_per_server, t.nics_per_server)
                                       : fmt::format("gpu-server-{}gpu", t.gpus_per_server);
  const std::string switch_model = fmt::format("switch-{}x{}g", hw.radix, format_number(hw.port_speed.bps / 1e9, 3));
  std::string& dt = add("04-device-types.csv", kNetboxDeviceTypeColumns);
  dt += row({"Generic", server_model, slug(server_model), "8", "GPU server"});
  if (has_switch) dt += row({"Generic", switch_model, slug(switch_model), "2", "switch"});
  // The frontend's switches and storage nodes (a site topology): their own types, unless the same as one above.
  std::string fe_switch_model = switch_model, storage_model;
  if (frontend != nullptr) {
    const topology::Hardware& fh = frontend->hardware;
    fe_switch_model = fmt::format("switch-{}x{}g", fh.radix, format_number(fh.port_speed.bps / 1e9, 3));
    if (fe_switch_model != switch_model || !has_switch)
      dt += row({"Generic", fe_switch_model, slug(fe_switch_model), "2", "frontend switch"});
    if (frontend->config.storage_nodes > 0) {
      storage_model = fmt::format("storage-node-{}nic", frontend->config.storage_nics);
      dt += row({"Generic", storage_model, slug(storage_model), "2", "storage node"});
    }
  }
  if (storage_slot >= 0 && storage_model.empty()) {  // converged: storage nodes with the back end's NICs
    storage_model = fmt::format("storage-node-{}nic", t.nics_per_server);
    dt += row({"Generic", storage_model, slug(storage_model), "2", "storage node"});
  }

  // Roles: gpu-server, then one per switch tier that has switches, in tier order; then the frontend's
  // (its switch tiers, storage-node).
  const size_t tiers = std::max(t.tier_names.size(), t.frontend_tier_names.size()) + 1;
  std::vector<char> tier_used(2 * tiers, 0);  // [network x tiers + tier]
  bool storage = false;
  for (const auto& n : t.nodes) {
    if (n.kind == NodeKind::Switch) tier_used[(n.network != 0 ? tiers : 0) + std::min<size_t>(n.tier, tiers - 1)] = 1;
    storage = storage || is_storage_node(t, n, storage_slot);
  }
  std::string& rl = add("05-device-roles.csv", kNetboxDeviceRoleColumns);
  rl += row({"gpu-server", "gpu-server", role_color(0), "GPU server (GPUs, NICs, NVLink domain)"});
  for (size_t k = 1; k < tier_used.size(); ++k) {
    if (!tier_used[k]) continue;
    Node probe;
    probe.kind = NodeKind::Switch;
    probe.network = k >= tiers ? 1 : 0;
    probe.tier = static_cast<uint8_t>(k % tiers);
    const std::string name = role_name(t, probe);
    rl += row({name, slug(name), role_color(probe.tier),
               fmt::format("{}switch tier {}", probe.network != 0 ? "frontend " : "", int{probe.tier})});
  }
  if (storage) rl += row({"storage-node", "storage-node", "607d8b", "storage node (file system or object store)"});

  // Devices: one per server and per switch, in node order.
  std::string& dv = add("06-devices.csv", kNetboxDeviceColumns);
  std::unordered_set<std::string> devices;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    std::string name = t.device_name(static_cast<NodeId>(i));
    if (!devices.insert(name).second) continue;
    const bool sw = n.kind == NodeKind::Switch;
    const std::string& type = sw ? (n.network != 0 ? fe_switch_model : switch_model)
                                 : (is_storage_node(t, n, storage_slot) ? storage_model : server_model);
    dv += row({name, role_name(t, n, storage_slot), "Generic", type, "planned", site,
               rack_of(i) != kNone ? rack_name(rack_of(i), racks) : std::string(),
               sw ? label_text(n.rail) : std::string(), label_text(n.group), sw ? label_text(n.pod) : std::string()});
  }

  // Interfaces: both ends of every cable, in cable order (side A then side B).
  std::string& it = add("07-interfaces.csv", kNetboxInterfaceColumns);
  std::unordered_set<std::string> interfaces;
  for (const auto& l : t.links) {
    if (!is_cable(l)) continue;
    const Ends e = oriented(t, l);
    const double g = gbps(l);
    for (auto [node, port] : {std::pair{e.a, e.port_a}, std::pair{e.b, e.port_b}}) {
      std::string device = t.device_name(node);
      std::string port_name = t.port_name(node, port);
      if (!interfaces.insert(device + '\n' + port_name).second) continue;
      // Description: the podnet node behind a server port ("gpu-node-0017/nic3"); a switch port is the switch.
      const Node& n = t.nodes[node];
      const bool ib = infiniband && n.network == 0;  // a frontend is Ethernet
      it += row({device, port_name, n.kind == NodeKind::Gpu ? "other" : netbox_interface_type(g, ib),
                 std::to_string(static_cast<int64_t>(std::llround(g * 1e6))),
                 n.kind == NodeKind::Switch ? std::string() : n.name});
    }
  }

  // Each switch's loopback, in node order (an InfiniBand fabric routes by LID: no IP on its switches).
  for (size_t i = 0; i < t.nodes.size() && !infiniband; ++i)
    if (t.nodes[i].kind == NodeKind::Switch)
      it += row({t.device_name(static_cast<NodeId>(i)), "Loopback0", "virtual", "", "loopback: router-id, BGP"});

  std::ostringstream cables;
  write_cabling_plan_csv(t, cables, typing);
  files.push_back({"08-cables.csv", cables.str()});
  if (infiniband) return files;  // no IP plan: the subnet manager assigns LIDs, nothing routes IP between switches
  if (plan) {
    files.push_back({"09-ip-addresses.csv", netbox_ip_addresses_csv(t, *plan)});
  } else {
    const auto fallback =
        topology::plan_addresses(t, topology::addressing_from(defaults_of(topology::addressing_params())));
    files.push_back({"09-ip-addresses.csv", netbox_ip_addresses_csv(t, fallback)});
  }
  return files;
}

namespace {

// The rows of links [from, to) of the plan (both ends of each numbered one), appended to `out`; `name` is
// scratch.
void append_link_ip_rows(const Topology& t, const topology::AddressPlan& plan, size_t from, size_t to, std::string& out,
                         std::string& name) {
  const bool v6 = plan.options.v6;
  const int plen = v6 ? 127 : 31;
  for (size_t i = from; i < to; ++i) {
    const topology::PlanLink& l = plan.links[i];
    if (!l.numbered) continue;
    for (bool upper : {true, false}) {
      const NodeId n = upper ? l.upper : l.lower, far = upper ? l.lower : l.upper;
      const int32_t port = upper ? l.upper_port : l.lower_port, far_port = upper ? l.lower_port : l.upper_port;
      // The address is digits, dots, colons and a slash: never quoted.
      append_ip(out, upper ? l.upper_addr : l.lower_addr, v6);
      out += '/';
      append_decimal(out, plen);
      out += ",reserved,,";
      name.clear();
      t.append_device_name(name, n);
      append_csv_field(out, name);
      out += ',';
      name.clear();
      t.append_port_name(name, n, port);
      append_csv_field(out, name);
      out += ",false,";
      name.clear();
      append_cable_label(name, l.cable, plan.cables);
      name += " to ";
      t.append_device_name(name, far);
      name += ':';
      t.append_port_name(name, far, far_port);
      append_csv_field(out, name);
      out += '\n';
    }
  }
}

}  // namespace

void netbox_ip_addresses_csv(const Topology& t, const topology::AddressPlan& plan, size_t workers,
                             const std::function<void(std::string_view)>& sink, size_t links_per_piece) {
  const bool v6 = plan.options.v6;
  if (workers == 0) workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  sink(std::string(kNetboxIpAddressColumns) + "\n");
  // Pieces of links_per_piece links, a window of them at a time made on the workers, then given to the sink in
  // order: the text is the same whatever the number of workers, and only a window of it is held at once.
  const size_t kLinksPerPiece = std::max<size_t>(1, links_per_piece);
  const size_t pieces = (plan.links.size() + kLinksPerPiece - 1) / kLinksPerPiece;
  const size_t window = 4 * workers;
  std::vector<std::string> text(std::min(window, pieces)), names(workers);
  for (size_t w0 = 0; w0 < pieces; w0 += window) {
    const size_t w1 = std::min(pieces, w0 + window);
    parallel_for_workers(w1 - w0, workers, [&](size_t k, size_t w) {
      const size_t from = (w0 + k) * kLinksPerPiece;
      std::string& out = text[k];
      out.clear();
      append_link_ip_rows(t, plan, from, std::min(plan.links.size(), from + kLinksPerPiece), out, names[w]);
    });
    for (size_t k = 0; k < w1 - w0; ++k) sink(text[k]);
  }
  std::string out;
  for (const auto& sw : plan.switches) {
    append_ip(out, sw.loopback, v6);
    out += '/';
    append_decimal(out, v6 ? 128 : 32);
    out += ",reserved,loopback,";
    append_csv_field(out, t.device_name(sw.node));
    out += ",Loopback0,true,loopback of AS ";
    append_decimal(out, sw.asn);
    out += '\n';
  }
  sink(out);
}

std::string netbox_ip_addresses_csv(const Topology& t, const topology::AddressPlan& plan) {
  std::string out;
  netbox_ip_addresses_csv(t, plan, 1, [&](std::string_view piece) { out += piece; });
  return out;
}

std::string cable_label(int64_t ordinal, int64_t count) {
  std::string s;
  append_cable_label(s, ordinal, count);
  return s;
}

void append_cable_label(std::string& out, int64_t ordinal, int64_t count) {
  size_t width = 6;
  for (int64_t c = count / 1000000; c > 0; c /= 10) ++width;
  out += 'C';
  append_zero_padded(out, ordinal, width);
}

namespace {

// DOT look of a device by its level (0 = server, else switch tier): shape and fill colour.
struct DotStyle {
  const char* shape;
  const char* fill;
};
DotStyle dot_style(int level) {
  static constexpr DotStyle styles[] = {{"box", "#dae8fc"},
                                        {"ellipse", "#d5e8d4"},
                                        {"hexagon", "#fff2cc"},
                                        {"octagon", "#ffe6cc"},
                                        {"doubleoctagon", "#f8cecc"}};
  const int n = static_cast<int>(std::size(styles));
  return styles[level < n ? level : n - 1];
}

}  // namespace

// A node's kind as exports name it: a frontend's Gpu nodes are host ports (topology.hpp).
const char* node_kind(const Topology& t, const Node& n) {
  return t.gpus_are_host_ports && n.kind == NodeKind::Gpu ? "host" : topology::kind_name(n.kind);
}

void write_dot(const Topology& t, std::ostream& out) {
  out << "graph " << dot_id(t.family.empty() ? std::string("podnet") : t.family) << " {\n";
  out << "  // physical cables only (copper and optical); NVLink and PCIe links inside servers are omitted\n";
  out << "  graph [rankdir=BT];\n";
  out << "  node [style=filled, fontname=\"Helvetica\"];\n";
  out << "  edge [fontname=\"Helvetica\", fontsize=8, labelfontsize=7];\n";
  // Devices that end a cable, once each, in node order (a server's GPUs, NICs and NVSwitch are one device).
  std::vector<char> cabled(t.nodes.size(), 0);
  for (const auto& l : t.links)
    if (is_cable(l)) cabled[l.a] = cabled[l.b] = 1;
  std::unordered_set<std::string> declared;
  std::string buf;
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    if (!cabled[i]) continue;
    const auto id = static_cast<NodeId>(i);
    std::string name = t.device_name(id);
    if (!declared.insert(name).second) continue;
    const Node& n = t.nodes[i];
    const DotStyle st = dot_style(level(n));
    out << "  " << dot_id(name) << " [tier=" << dot_id(tier_name(t, n)) << ", shape=" << st.shape << ", fillcolor=\""
        << st.fill << "\"];\n";
  }
  for (const auto& l : t.links) {
    if (!is_cable(l)) continue;
    const Ends e = oriented(t, l);
    buf.clear();
    buf += "  ";
    buf += dot_id(t.device_name(e.a));
    buf += " -- ";
    buf += dot_id(t.device_name(e.b));
    buf += " [label=";
    buf += dot_id(format_number(gbps(l), 3) + "G " + format_number(length_m(l), 2) + "m");
    buf += ", taillabel=";
    buf += dot_id(t.port_name(e.a, e.port_a));
    buf += ", headlabel=";
    buf += dot_id(t.port_name(e.b, e.port_b));
    buf += ", class=";
    buf += dot_id(class_name(t, l));
    buf += "];\n";
    out << buf;
  }
  out << "}\n";
}

void write_graphml(const Topology& t, std::ostream& out) {
  struct Key {
    const char* id;
    const char* domain;
    const char* name;
    const char* type;
  };
  static constexpr Key keys[] = {
      {"n_kind", "node", "kind", "string"},
      {"n_tier", "node", "tier", "int"},
      {"n_server", "node", "server", "int"},
      {"n_rack", "node", "rack", "int"},
      {"n_rail", "node", "rail", "int"},
      {"n_group", "node", "group", "int"},
      {"n_pod", "node", "pod", "int"},
      {"n_device", "node", "device", "string"},
      {"n_name", "node", "name", "string"},
      {"e_port_a", "edge", "port_a", "string"},
      {"e_port_b", "edge", "port_b", "string"},
      {"e_capacity_gbps", "edge", "capacity_gbps", "double"},
      {"e_latency_ns", "edge", "latency_ns", "double"},
      {"e_length_m", "edge", "length_m", "double"},
      {"e_media", "edge", "media", "string"},
      {"e_class", "edge", "class", "string"},
  };
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
         "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
         "xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
         "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n";
  for (const auto& k : keys)
    out << "  <key id=\"" << k.id << "\" for=\"" << k.domain << "\" attr.name=\"" << k.name << "\" attr.type=\""
        << k.type << "\"/>\n";
  out << "  <graph id=\"" << xml_escape(t.family.empty() ? std::string("podnet") : t.family)
      << "\" edgedefault=\"undirected\">\n";

  std::string buf;
  auto data = [&buf](const char* key, std::string_view value) {
    buf += "      <data key=\"";
    buf += key;
    buf += "\">";
    buf += xml_escape(value);
    buf += "</data>\n";
  };
  auto int_data = [&data](const char* key, int32_t v) {
    if (v != kNone) data(key, std::to_string(v));
  };
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    const auto id = static_cast<NodeId>(i);
    buf.clear();
    buf += fmt::format("    <node id=\"n{}\">\n", i);
    data("n_kind", node_kind(t, n));
    data("n_tier", std::to_string(n.tier));
    int_data("n_server", n.server);
    int_data("n_rack", n.rack);
    int_data("n_rail", n.rail);
    int_data("n_group", n.group);
    int_data("n_pod", n.pod);
    data("n_device", t.device_name(id));
    data("n_name", n.name);
    buf += "    </node>\n";
    out << buf;
  }
  for (size_t i = 0; i < t.links.size(); ++i) {
    const Link& l = t.links[i];
    buf.clear();
    buf += fmt::format("    <edge id=\"e{}\" source=\"n{}\" target=\"n{}\">\n", i, l.a, l.b);
    data("e_port_a", t.port_name(l.a, l.port_a));
    data("e_port_b", t.port_name(l.b, l.port_b));
    data("e_capacity_gbps", format_number(gbps(l), 6));
    data("e_latency_ns", format_number(latency_ns(l), 3));
    data("e_length_m", format_number(length_m(l), 3));
    data("e_media", topology::media_name(l.media));
    data("e_class", class_name(t, l));
    buf += "    </edge>\n";
    out << buf;
  }
  out << "  </graph>\n</graphml>\n";
}

nlohmann::json topology_json(const Topology& t) {
  nlohmann::json j;
  j["family"] = t.family;
  j["tiers"] = t.tier_names;
  j["link_classes"] = t.link_classes;
  auto nodes = nlohmann::json::array();
  for (size_t i = 0; i < t.nodes.size(); ++i) {
    const Node& n = t.nodes[i];
    nlohmann::json o;
    o["id"] = static_cast<int64_t>(i);
    o["name"] = n.name;
    o["kind"] = node_kind(t, n);
    o["tier"] = static_cast<int>(n.tier);
    auto label = [&o](const char* key, int32_t v) {
      if (v != kNone) o[key] = v;
    };
    label("server", n.server);
    label("rack", n.rack);
    label("rail", n.rail);
    label("group", n.group);
    label("pod", n.pod);
    nodes.push_back(std::move(o));
  }
  j["nodes"] = std::move(nodes);
  auto links = nlohmann::json::array();
  for (const auto& l : t.links) {
    nlohmann::json o;
    o["a"] = l.a;
    o["b"] = l.b;
    o["port_a"] = t.port_name(l.a, l.port_a);
    o["port_b"] = t.port_name(l.b, l.port_b);
    o["capacity_gbps"] = gbps(l);
    o["latency_ns"] = latency_ns(l);
    o["length_m"] = length_m(l);
    o["media"] = topology::media_name(l.media);
    o["class"] = class_name(t, l);
    links.push_back(std::move(o));
  }
  j["links"] = std::move(links);
  return j;
}

void write_topology_json(const Topology& t, std::ostream& out) { out << topology_json(t).dump(2) << '\n'; }

}  // namespace podnet::report
