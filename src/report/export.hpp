// Export a built Topology in the formats other network tools read.
//
// - Cabling plan CSV: one row per physical cable (Copper or Optical link;
//   NVLink and PCIe links are inside a server and are not cables), in
//   NetBox's cable-import columns (CableImportForm in
//   netbox/dcim/forms/bulk_import.py, NetBox v4.6) and podnet's data as
//   NetBox custom fields (`cf_podnet_link_class, cf_podnet_rail,
//   cf_podnet_group, cf_podnet_speed_gbps`; NetBox rejects any other column,
//   and a `cf_` column only imports once its custom field exists: see the
//   import set below). NetBox cable type: `dac-passive`
//   for copper; optical follows the parts the bill of materials prices for
//   it (topology/cost.hpp, CableTyping below): `aoc` up to cost.aoc_max_length,
//   then `mmf-om4` up to cost.sr_max_length (multimode SR optics: 400GBASE-SR8
//   and SR4.2 reach 100 m on OM4, IEEE 802.3cm), `smf-os2` beyond (DR/FR
//   optics). Until 2026-11 the cut was a fixed 50 m while the bill priced SR
//   optics up to 100 m, so links of 50-100 m were OS2 fibre between
//   multimode transceivers. Side A is the lower-tier end
//   (server NIC before leaf, leaf before spine, ...), whatever order the
//   builder connected them in. Labels `C000001`, `C000002`, ... number the
//   cables in link order (1-based, at least 6 digits). `length` has at most 2
//   decimals (NetBox's Cable.length is a DecimalField with decimal_places=2
//   and rejects more). RFC 4180 quoting (only
//   fields holding a comma, quote, CR or LF are quoted), LF line ends.
// - NetBox import set: the files a user imports, in file-name order, into
//   an empty NetBox (each page is <model> > Import, CSV): custom fields,
//   site, racks, manufacturer, device types, device roles, devices,
//   interfaces, cables. Columns are the import forms' own field names
//   (netbox/dcim/forms/bulk_import.py and netbox/extras/forms/bulk_import.py
//   in netbox-community/netbox, v4.6.8), listed in the k*Columns constants
//   below; podnet's extra data is only in `cf_podnet_*` custom fields, which
//   00-custom-fields.csv creates first. Choices: every status `planned`;
//   racks 19 in, 42 U; one manufacturer `Generic` (podnet picks no vendor);
//   device types `gpu-server-<g>gpu-<n>nic` (8 U, as an 8-GPU HGX/DGX H100
//   chassis) and `switch-<radix>x<speed>g` (2 U); roles `gpu-server` and one
//   per switch tier named as the tier (leaf, spine, super_spine, ...);
//   devices are servers and switches (a server's GPUs, NICs and NVSwitch are
//   not devices), in racks where podnet placed them (servers always;
//   switches only when the builder did, as dragonfly does); interfaces are
//   both ends of every cable, typed by speed (400G `400gbase-x-osfp`, 800G
//   `800gbase-x-osfp`, 200G `200gbase-x-qsfp56`, 100G `100gbase-x-qsfp28`,
//   25G `25gbase-x-sfp28`, else `other`; a torus chip's own chip-to-chip
//   ports are `other`), speed in Kb/s (NetBox's unit), the
//   podnet node name as description; each switch also has a virtual
//   `Loopback0`. 09-ip-addresses.csv assigns the address plan
//   (topology/address_plan.hpp) to those interfaces: both ends of every
//   numbered cable (/31 or /127) and each switch's loopback (/32 or /128,
//   role loopback, the device's primary address). Checked by
//   tests/interop/check_netbox.py.
// - DOT: `graph "<family>" { ... }` for Graphviz: physical cables only, one
//   node per device (a server with its NICs, or a switch), declared once in
//   node order with `tier` (server, leaf, spine, ...), a shape and a fill
//   colour by tier (server box, tier 1 ellipse, 2 hexagon, 3 octagon, 4+
//   doubleoctagon); one edge per cable, oriented as in the CSV, with `label`
//   speed and length ("400G 3m"), `taillabel`/`headlabel` the side A/B port
//   names and `class` the link class. Port names are labels, not DOT ports:
//   `"device":"port"` endpoints need record or HTML-table nodes, and Graphviz
//   warns once per endpoint without them. `rankdir=BT` draws servers at the
//   bottom. Checked by rendering with `dot -Tsvg` (tests/interop/).
// - GraphML: every topology node (GPUs, NICs, NVSwitches, switches) and every
//   link, NVLink and PCIe included, so networkx.read_graphml gets the whole
//   graph with typed attributes. Node ids are `n<index>`, edge ids
//   `e<index>`; source/target follow the stored link (a -> b). Labels equal
//   to kNone (-1) are omitted rather than written as -1.
// - JSON: the same full graph as a plain object (see topology_json()).
//
// All numbers use fixed formatting independent of locale (format_number or
// nlohmann's own dtoa); every order is node/link order, so output is
// byte-stable for a given Topology.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "topology/address_plan.hpp"
#include "topology/frontend.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::report {

// How an optical cable is typed, from the cost model's part choice (topology::CostModel: aoc_max_m,
// sr_max_m): an active optical cable up to aoc_max_m, multimode OM4 fibre up to multimode_max_m (SR optics),
// single-mode OS2 beyond (DR/FR optics). The defaults are the cost model's.
struct CableTyping {
  double aoc_max_m = 0;
  double multimode_max_m = 100;
};

// NetBox CSV import columns, one constant per file of the import set.
inline constexpr const char* kNetboxCustomFieldColumns = "name,label,type,object_types,description";
inline constexpr const char* kNetboxSiteColumns = "name,slug,status,description";
inline constexpr const char* kNetboxRackColumns = "site,name,status,width,u_height";
inline constexpr const char* kNetboxManufacturerColumns = "name,slug,description";
inline constexpr const char* kNetboxDeviceTypeColumns = "manufacturer,model,slug,u_height,description";
inline constexpr const char* kNetboxDeviceRoleColumns = "name,slug,color,description";
inline constexpr const char* kNetboxDeviceColumns =
    "name,role,manufacturer,device_type,status,site,rack,cf_podnet_rail,cf_podnet_group,cf_podnet_pod";
inline constexpr const char* kNetboxInterfaceColumns = "device,name,type,speed,description";
// IPAddressImportForm (netbox/ipam/forms/bulk_import.py): status `reserved` (NetBox's IP statuses are active,
// reserved, deprecated, dhcp, slaac: a planned address is reserved), role `loopback` for loopbacks.
inline constexpr const char* kNetboxIpAddressColumns = "address,status,role,device,interface,is_primary,description";
// cf_podnet_link_class = link class name ("nic-leaf", "leaf-spine", ...)
// cf_podnet_rail  = rail label of side A if it has one, else of side B, else empty
// cf_podnet_group = aggregation group of side A (lower tier) if it has one, else of
//                   side B, else empty (server NICs carry no group; their leaf does)
// cf_podnet_speed_gbps = capacity per direction in Gb/s ("400", "112.5")
inline constexpr const char* kNetboxCableColumns =
    "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,status,label,length,"
    "length_unit,cf_podnet_link_class,cf_podnet_rail,cf_podnet_group,cf_podnet_speed_gbps";

// A cable's label in the cabling plan: "C000001" (1-based ordinal, at least 6 digits, wider when `count`, the
// number of cables, needs it).
std::string cable_label(int64_t ordinal, int64_t count);
void append_cable_label(std::string& out, int64_t ordinal, int64_t count);  // the same, appended to `out`

// NetBox cable-import CSV (see above), header kNetboxCableColumns.
void write_cabling_plan_csv(const topology::Topology& t, std::ostream& out, const CableTyping& typing = {});

struct NetboxFile {
  std::string name;  // "00-custom-fields.csv", ... "08-cables.csv": import in this order
  std::string text;  // CSV with header
};
// The NetBox import set (see above) for a fabric on one site named `site`, with the IP addresses of `plan`
// (the default `addressing:` plan when null). `infiniband` (network.transport: infiniband): the switch and
// NIC ports are NetBox's InfiniBand types (infiniband-ndr at 400 Gb/s, ...), not Ethernet's, and the set ends
// with 08-cables.csv: no switch loopbacks and no 09-ip-addresses.csv (an InfiniBand subnet is addressed by its
// subnet manager with LIDs; its switches route no IP, as `--config-plan` refusing such a fabric says).
// A site topology (topology::site_topology) with its `frontend`: the frontend's switches (roles
// frontend-leaf, frontend-spine, ..., their own device type) and storage nodes (role storage-node) join the
// back end's devices, their cables and interfaces follow the back end's, and their addresses come from the
// same plan. `storage_slot` >= 0 (frontend.converged): the back end's servers from that one on are storage
// nodes (role storage-node, device type storage-node-<N>nic with the back end's NICs).
std::vector<NetboxFile> netbox_import_set(const topology::Topology& t, const topology::Hardware& hw,
                                          const std::string& site, const topology::AddressPlan* plan = nullptr,
                                          bool infiniband = false, const CableTyping& typing = {},
                                          const topology::FrontendFabric* frontend = nullptr,
                                          int32_t storage_slot = -1);
// 09-ip-addresses.csv of the set: every address of the plan on its interface (header kNetboxIpAddressColumns).
std::string netbox_ip_addresses_csv(const topology::Topology& t, const topology::AddressPlan& plan);
// The same text in pieces, each given to `sink` in order (the header first), made on `workers` threads (0: every
// core) and the same whatever their number: a 1,048,576-GPU plan's file is 660 MB, written as it is made.
// `links_per_piece`: how many of the plan's links each piece covers (tests make it small).
void netbox_ip_addresses_csv(const topology::Topology& t, const topology::AddressPlan& plan, size_t workers,
                             const std::function<void(std::string_view)>& sink, size_t links_per_piece = 16384);

// Graphviz DOT of the physical cables (devices as nodes, ports as edge end labels).
void write_dot(const topology::Topology& t, std::ostream& out);

// GraphML of the full graph.
// Node data: kind, tier (int, 0 for non-switches), server, rack, rail, group,
//   pod (int, omitted when kNone), device, name (string).
// Edge data: port_a, port_b (string), capacity_gbps, latency_ns, length_m
//   (double), media, class (string).
void write_graphml(const topology::Topology& t, std::ostream& out);

// {"family": str, "tiers": [tier_names, index = Node::tier, [0] = ""],
//  "link_classes": [str],
//  "nodes": [{"id","name","kind","tier","server","rack","rail","group","pod"}],
//  "links": [{"a","b","port_a","port_b","capacity_gbps","latency_ns","length_m","media","class"}]}
// Node labels equal to kNone are omitted. port_a/port_b are port names;
// a/b are node ids (indices into "nodes"). Object keys are sorted.
nlohmann::json topology_json(const topology::Topology& t);
// topology_json(t) dumped with indent 2 and a trailing newline.
void write_topology_json(const topology::Topology& t, std::ostream& out);

}  // namespace podnet::report
