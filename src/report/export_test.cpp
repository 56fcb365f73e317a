#include "report/export.hpp"

#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "report/config_plan.hpp"
#include "topology/bom.hpp"
#include "topology/builders.hpp"
#include "topology/cost.hpp"
#include "topology/hardware.hpp"
#include "topology/topology.hpp"

namespace podnet::report {
namespace {

using namespace podnet::literals;
using topology::Media;
using topology::Node;
using topology::NodeKind;
using topology::Topology;

// Hardware set by hand (no dependency on builders): 2 GPUs, 2 NICs per server.
topology::Hardware tiny_hardware() {
  topology::Hardware hw;
  hw.gpus_per_server = 2;
  hw.nics_per_server = 2;
  hw.nvlink_domain = 2;
  hw.nvlink_bw = 450_GBps;
  hw.nvlink_latency = 500_ns;
  hw.pcie_bw = 64_GBps;
  hw.pcie_latency = 500_ns;
  hw.nic_speed = 400_Gbps;
  hw.server_power_w = 10200;
  hw.port_speed = 400_Gbps;
  hw.switch_latency = 600_ns;
  hw.rack_power_w = 40000;
  return hw;
}

// Nodes (add_servers order per server: NVSwitch, NICs, GPUs):
//   server 0: 0 nvswitch, 1 nic0, 2 nic1, 3 gpu0, 4 gpu1; server 1: 5..9; 10 leaf-0; 11 spine-0.
// Links:
//   0..7   per server gpu0-nvswitch (NVLink), gpu0-nic0 (PCIe), gpu1-nvswitch, gpu1-nic1
//   8..11  nic -> leaf, copper 3 m, in order s0n0, s0n1, s1n0, s1n1 (leaf ports 0..3)
//   12     spine -> leaf (connected upside down on purpose), optical 30 m (leaf port 4, spine port 0)
//   13     leaf -> spine, optical 100 m (leaf port 5, spine port 1)
// Cables = 4 copper + 2 optical = 6; all links = 8 + 6 = 14.
Topology tiny_topology(const std::string& leaf_name = "leaf-0") {
  Topology t;
  t.family = "tiny";
  topology::add_servers(t, tiny_hardware(), 2);
  t.tier_names = {"", "leaf", "spine"};
  Node leaf;
  leaf.kind = NodeKind::Switch;
  leaf.tier = 1;
  leaf.local = 0;
  leaf.group = 0;
  leaf.name = leaf_name;
  const auto leaf_id = t.add_node(leaf);
  Node spine;
  spine.kind = NodeKind::Switch;
  spine.tier = 2;
  spine.local = 0;
  spine.name = "spine-0";
  const auto spine_id = t.add_node(spine);
  const auto nic_leaf = t.link_class("nic-leaf");
  const auto leaf_spine = t.link_class("leaf-spine");
  for (auto nic : t.nics) t.connect(nic, leaf_id, 400_Gbps, 15_ns, 3, Media::Copper, nic_leaf);
  t.connect(spine_id, leaf_id, 400_Gbps, 150_ns, 30, Media::Optical, leaf_spine);
  t.connect(leaf_id, spine_id, 400_Gbps, 500_ns, 100, Media::Optical, leaf_spine);
  t.finalize();
  return t;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + what.size())) ++n;
  return n;
}

std::string csv(const Topology& t) {
  std::ostringstream s;
  write_cabling_plan_csv(t, s);
  return s.str();
}
std::string dot(const Topology& t) {
  std::ostringstream s;
  write_dot(t, s);
  return s.str();
}
std::string graphml(const Topology& t) {
  std::ostringstream s;
  write_graphml(t, s);
  return s.str();
}
std::string json_text(const Topology& t) {
  std::ostringstream s;
  write_topology_json(t, s);
  return s.str();
}

TEST(ExportTest, TinyTopologyIsWhatTheTestsAssume) {
  const Topology t = tiny_topology();
  ASSERT_EQ(t.nodes.size(), 12u);
  ASSERT_EQ(t.links.size(), 14u);
  EXPECT_EQ(t.nodes[10].name, "leaf-0");
  EXPECT_EQ(t.links[8].media, Media::Copper);
}

TEST(ExportTest, CsvHeaderExactAndOneRowPerCable) {
  const auto rows = lines(csv(tiny_topology()));
  ASSERT_FALSE(rows.empty());
  EXPECT_EQ(rows[0], "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,"
                     "type,status,label,length,length_unit,cf_podnet_link_class,cf_podnet_rail,cf_podnet_group,"
                     "cf_podnet_speed_gbps");
  // 2 servers x 2 NICs copper + 2 leaf-spine optical = 6 cables; NVLink/PCIe skipped.
  EXPECT_EQ(rows.size(), 1u + 6u);
}

TEST(ExportTest, CsvNicLeafRowExact) {
  const auto rows = lines(csv(tiny_topology()));
  ASSERT_GE(rows.size(), 3u);
  // Second cable: server 0's NIC 1 on the leaf's second port (index 1 -> Ethernet1/2);
  // rail 1 from the NIC; group 0 from the leaf (NICs carry none); 3 m copper -> dac-passive.
  EXPECT_EQ(rows[2], "gpu-node-000,dcim.interface,gpu1_eth,leaf-0,dcim.interface,Ethernet1/2,"
                     "dac-passive,planned,C000002,3,m,nic-leaf,1,0,400");
  EXPECT_EQ(rows[4], "gpu-node-001,dcim.interface,gpu1_eth,leaf-0,dcim.interface,Ethernet1/4,"
                     "dac-passive,planned,C000004,3,m,nic-leaf,1,0,400");
}

TEST(ExportTest, CsvOrientsLowerTierFirstAndPicksFiberByLength) {
  const auto rows = lines(csv(tiny_topology()));
  ASSERT_EQ(rows.size(), 7u);
  // Link 12 was connected spine -> leaf; side A must still be the leaf (its port 4 -> Ethernet1/5).
  // 30 m <= the cost model's 100 m SR reach -> multimode OM4; no rail on either end -> empty rail column.
  EXPECT_EQ(rows[5], "leaf-0,dcim.interface,Ethernet1/5,spine-0,dcim.interface,Ethernet1/1,"
                     "mmf-om4,planned,C000005,30,m,leaf-spine,,0,400");
  // 100 m <= 100 m: still SR optics in the bill (topology::compute_cost), so multimode.
  EXPECT_EQ(rows[6], "leaf-0,dcim.interface,Ethernet1/6,spine-0,dcim.interface,Ethernet1/2,"
                     "mmf-om4,planned,C000006,100,m,leaf-spine,,0,400");
}

TEST(ExportTest, OpticalCableTypeFollowsThePartsTheBillPrices) {
  // The same two optical cables (30 m, 100 m) under other cost models: SR optics only up to 50 m -> the 100 m
  // cable is single-mode (DR optics); AOC up to 30 m -> the 30 m cable is an active optical cable.
  std::ostringstream a, b;
  write_cabling_plan_csv(tiny_topology(), a, CableTyping{0, 50});
  write_cabling_plan_csv(tiny_topology(), b, CableTyping{30, 100});
  const auto ra = lines(a.str()), rb = lines(b.str());
  ASSERT_EQ(ra.size(), 7u);
  ASSERT_EQ(rb.size(), 7u);
  EXPECT_NE(ra[5].find(",mmf-om4,"), std::string::npos);
  EXPECT_NE(ra[6].find(",smf-os2,"), std::string::npos);
  EXPECT_NE(rb[5].find(",aoc,"), std::string::npos);
  EXPECT_NE(rb[6].find(",mmf-om4,"), std::string::npos);
  EXPECT_NE(rb[2].find(",dac-passive,"), std::string::npos);  // copper stays a DAC
}

TEST(ExportTest, CableTypesCountTheBillsParts) {
  // A 3-tier fat tree (k = 8) with copper access cables and optical leaf-spine and spine-core links of the
  // builder's lengths: under each cost model the cabling plan's aoc cables are the bill's AOCs, its mmf-om4
  // cables half its SR transceivers (two per cable), its smf-os2 cables half its DR + FR ones.
  topology::Hardware hw = topology::default_hardware();
  hw.gpus_per_server = 4;  // k/2 = 4 host ports per edge switch: 4-NIC servers
  hw.nics_per_server = 4;
  hw.nvlink_domain = 4;
  const Topology t = topology::build_with("fat_tree", {{"k", "8"}}, hw);
  const topology::Bom bom = topology::compute_bom(t, hw);
  for (const auto& [aoc, sr] : std::vector<std::pair<double, double>>{{0, 100}, {0, 20}, {40, 100}, {200, 300}}) {
    topology::CostModel m;
    m.aoc_max_m = aoc;
    m.sr_max_m = sr;
    const topology::Cost cost = topology::compute_cost(t, hw, bom, m);
    std::map<std::string, int64_t> parts, cables;
    for (const auto& it : cost.items) parts[it.part] += it.count;
    std::ostringstream out;
    write_cabling_plan_csv(t, out, CableTyping{aoc, sr});
    for (const auto& row : lines(out.str())) {
      for (const char* type : {"dac-passive", "aoc", "mmf-om4", "smf-os2"})
        if (row.find(std::string(",") + type + ",") != std::string::npos) ++cables[type];
    }
    EXPECT_EQ(cables["dac-passive"], parts["dac"]) << aoc << " " << sr;
    EXPECT_EQ(cables["aoc"], parts["aoc"]) << aoc << " " << sr;
    EXPECT_EQ(2 * cables["mmf-om4"], parts["transceiver_sr"]) << aoc << " " << sr;
    EXPECT_EQ(2 * cables["smf-os2"], parts["transceiver_dr"] + parts["transceiver_fr"]) << aoc << " " << sr;
    EXPECT_GT(cables["dac-passive"] + cables["aoc"] + cables["mmf-om4"] + cables["smf-os2"], 0);
  }
}

TEST(ExportTest, CsvQuotesOnlyFieldsWithCommaOrQuote) {
  const auto rows = lines(csv(tiny_topology("leaf,\"a\"")));
  ASSERT_EQ(rows.size(), 7u);
  // RFC 4180: wrap in quotes, double the inner quotes; other fields stay bare.
  EXPECT_EQ(rows[1], "gpu-node-000,dcim.interface,gpu0_eth,\"leaf,\"\"a\"\"\",dcim.interface,Ethernet1/1,"
                     "dac-passive,planned,C000001,3,m,nic-leaf,0,0,400");
}

TEST(ExportTest, CsvFractionalLengthAndSpeed) {
  Topology t;
  t.family = "pair";
  t.tier_names = {"", "leaf", "spine"};
  Node a;
  a.kind = NodeKind::Switch;
  a.tier = 2;
  a.name = "up";
  Node b = a;
  b.tier = 1;
  b.name = "down";
  t.add_node(a);
  t.add_node(b);
  // 2.7 m is not exact in float: must print "2.7" (no float noise, no trailing zeros); 112.5 Gbps stays "112.5".
  t.connect(0, 1, Bandwidth(112.5e9), 13_ns, 2.7, Media::Copper, t.link_class("leaf-spine"));
  // 2.346 m: the CSV rounds to NetBox's 2 decimals (2.35); JSON keeps millimetres (2.346).
  t.connect(0, 1, Bandwidth(112.5e9), 13_ns, 2.346, Media::Copper, t.link_class("leaf-spine"));
  t.finalize();
  const auto rows = lines(csv(t));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[1], "down,dcim.interface,Ethernet1/1,up,dcim.interface,Ethernet1/1,"
                     "dac-passive,planned,C000001,2.7,m,leaf-spine,,,112.5");
  EXPECT_EQ(rows[2], "down,dcim.interface,Ethernet1/2,up,dcim.interface,Ethernet1/2,"
                     "dac-passive,planned,C000002,2.35,m,leaf-spine,,,112.5");
  const auto j = topology_json(t);
  EXPECT_EQ(j["links"][0]["length_m"].dump(), "2.7");
  EXPECT_EQ(j["links"][0]["capacity_gbps"].dump(), "112.5");
  EXPECT_EQ(j["links"][1]["length_m"].dump(), "2.346");
}

TEST(ExportTest, DotHasOneNodePerDeviceAndOneEdgePerCable) {
  const std::string text = dot(tiny_topology());
  const auto ls = lines(text);
  ASSERT_GE(ls.size(), 2u);
  EXPECT_EQ(ls.front(), "graph \"tiny\" {");
  EXPECT_EQ(ls.back(), "}");
  EXPECT_EQ(count(text, " -- "), 6u);  // 4 copper + 2 optical; NVLink/PCIe omitted
  // header + comment + 3 default-attribute lines + 4 devices (2 servers, leaf, spine) + 6 cables + closing brace
  ASSERT_EQ(ls.size(), 16u);
  // Devices in node order: server 0's nodes (0..4) come first, then server 1's, the leaf (10), the spine (11).
  EXPECT_EQ(ls[5], "  \"gpu-node-000\" [tier=\"server\", shape=box, fillcolor=\"#dae8fc\"];");
  EXPECT_EQ(ls[6], "  \"gpu-node-001\" [tier=\"server\", shape=box, fillcolor=\"#dae8fc\"];");
  EXPECT_EQ(ls[7], "  \"leaf-0\" [tier=\"leaf\", shape=ellipse, fillcolor=\"#d5e8d4\"];");
  EXPECT_EQ(ls[8], "  \"spine-0\" [tier=\"spine\", shape=hexagon, fillcolor=\"#fff2cc\"];");
  // Second cable: server 0's NIC 1 on the leaf's port index 1 (Ethernet1/2), 400G copper, 3 m.
  EXPECT_EQ(ls[10], "  \"gpu-node-000\" -- \"leaf-0\" [label=\"400G 3m\", taillabel=\"gpu1_eth\", "
                    "headlabel=\"Ethernet1/2\", class=\"nic-leaf\"];");
  // Link 12 was connected spine -> leaf: the edge still goes leaf (tail) -- spine (head), leaf port 4 = Ethernet1/5.
  EXPECT_EQ(ls[13], "  \"leaf-0\" -- \"spine-0\" [label=\"400G 30m\", taillabel=\"Ethernet1/5\", "
                    "headlabel=\"Ethernet1/1\", class=\"leaf-spine\"];");
  // No "device":"port" endpoints: Graphviz warns on each unless nodes are records.
  EXPECT_EQ(text.find("\":\""), std::string::npos);
}

TEST(ExportTest, DotEscapesQuotes) {
  const std::string text = dot(tiny_topology("leaf\"x"));
  EXPECT_NE(text.find("  \"leaf\\\"x\" [tier=\"leaf\""), std::string::npos) << text;
  EXPECT_NE(text.find("\"gpu-node-000\" -- \"leaf\\\"x\" [label"), std::string::npos) << text;
}

TEST(ExportTest, GraphmlHasEveryNodeAndLink) {
  const Topology t = tiny_topology();
  const std::string text = graphml(t);
  EXPECT_EQ(text.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  // Full graph: NVLink and PCIe links included.
  EXPECT_EQ(count(text, "<node "), t.nodes.size());
  EXPECT_EQ(count(text, "</node>"), t.nodes.size());
  EXPECT_EQ(count(text, "<edge "), t.links.size());
  EXPECT_EQ(count(text, "</edge>"), t.links.size());
  EXPECT_EQ(count(text, "<key "), 16u);  // 9 node + 7 edge attributes
  EXPECT_NE(text.find("<key id=\"e_capacity_gbps\" for=\"edge\" attr.name=\"capacity_gbps\" attr.type=\"double\"/>"),
            std::string::npos);
  EXPECT_NE(text.find("<key id=\"n_rail\" for=\"node\" attr.name=\"rail\" attr.type=\"int\"/>"), std::string::npos);
  // Link 12 (spine 11 -> leaf 10), written as stored.
  EXPECT_NE(text.find("<edge id=\"e12\" source=\"n11\" target=\"n10\">\n"
                      "      <data key=\"e_port_a\">Ethernet1/1</data>\n"
                      "      <data key=\"e_port_b\">Ethernet1/5</data>\n"
                      "      <data key=\"e_capacity_gbps\">400</data>\n"
                      "      <data key=\"e_latency_ns\">150</data>\n"
                      "      <data key=\"e_length_m\">30</data>\n"
                      "      <data key=\"e_media\">optical</data>\n"
                      "      <data key=\"e_class\">leaf-spine</data>\n"
                      "    </edge>"),
            std::string::npos);
  EXPECT_EQ(text.substr(text.size() - 22), "  </graph>\n</graphml>\n");
}

TEST(ExportTest, GraphmlEscapesXml) {
  Topology t = tiny_topology("leaf<&>\"'");
  t.family = "a&b";
  const std::string text = graphml(t);
  EXPECT_NE(text.find("<graph id=\"a&amp;b\" edgedefault=\"undirected\">"), std::string::npos);
  EXPECT_NE(text.find("<data key=\"n_name\">leaf&lt;&amp;&gt;&quot;&apos;</data>"), std::string::npos);
  EXPECT_EQ(text.find("leaf<&"), std::string::npos);  // never written raw
}

TEST(ExportTest, GraphmlOmitsUnsetLabels) {
  const std::string text = graphml(tiny_topology());
  // Node 1 = server 0's NIC 0: server 0, rack 0, rail 0; no group, no pod.
  const std::string nic0 = "    <node id=\"n1\">\n"
                           "      <data key=\"n_kind\">nic</data>\n"
                           "      <data key=\"n_tier\">0</data>\n"
                           "      <data key=\"n_server\">0</data>\n"
                           "      <data key=\"n_rack\">0</data>\n"
                           "      <data key=\"n_rail\">0</data>\n"
                           "      <data key=\"n_device\">gpu-node-000</data>\n"
                           "      <data key=\"n_name\">gpu-node-000/nic0</data>\n"
                           "    </node>\n";
  EXPECT_NE(text.find(nic0), std::string::npos) << text;
}

TEST(ExportTest, JsonCountsAndLabels) {
  const Topology t = tiny_topology();
  const auto j = topology_json(t);
  EXPECT_EQ(j["family"], "tiny");
  EXPECT_EQ(j["tiers"], nlohmann::json::array({"", "leaf", "spine"}));
  EXPECT_EQ(j["link_classes"], nlohmann::json::array({"nvlink", "pcie", "nic-leaf", "leaf-spine"}));
  ASSERT_EQ(j["nodes"].size(), 12u);
  ASSERT_EQ(j["links"].size(), 14u);
  // Leaf: tier 1, group 0; no server/rack/rail/pod keys (kNone omitted).
  const auto& leaf = j["nodes"][10];
  EXPECT_EQ(leaf, nlohmann::json({{"id", 10}, {"name", "leaf-0"}, {"kind", "switch"}, {"tier", 1}, {"group", 0}}));
  // GPU 1 of server 1 (node 9) uses NIC 1: rail 1.
  EXPECT_EQ(j["nodes"][9]["rail"], 1);
  EXPECT_FALSE(j["nodes"][9].contains("group"));
  const auto& link = j["links"][12];
  EXPECT_EQ(link, nlohmann::json({{"a", 11},
                                  {"b", 10},
                                  {"port_a", "Ethernet1/1"},
                                  {"port_b", "Ethernet1/5"},
                                  {"capacity_gbps", 400.0},
                                  {"latency_ns", 150.0},
                                  {"length_m", 30.0},
                                  {"media", "optical"},
                                  {"class", "leaf-spine"}}));
  EXPECT_EQ(j["links"][0]["media"], "nvlink");
}

TEST(ExportTest, JsonTextIsIndentedParsesAndEndsWithNewline) {
  const Topology t = tiny_topology();
  const std::string text = json_text(t);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  EXPECT_EQ(text.rfind("{\n  \"family\": \"tiny\",\n", 0), 0u) << text.substr(0, 80);
  EXPECT_EQ(nlohmann::json::parse(text), topology_json(t));
}

// File name -> its rows (header first).
std::map<std::string, std::vector<std::string>> netbox(const Topology& t) {
  std::map<std::string, std::vector<std::string>> m;
  for (const auto& f : netbox_import_set(t, tiny_hardware(), "lab 1")) m[f.name] = lines(f.text);
  return m;
}

TEST(ExportTest, NetboxImportSetFilesInOrderWithDocumentedHeaders) {
  const auto files = netbox_import_set(tiny_topology(), tiny_hardware(), "lab 1");
  std::vector<std::string> names;
  for (const auto& f : files) names.push_back(f.name);
  EXPECT_EQ(names,
            (std::vector<std::string>{"00-custom-fields.csv", "01-sites.csv", "02-racks.csv", "03-manufacturers.csv",
                                      "04-device-types.csv", "05-device-roles.csv", "06-devices.csv",
                                      "07-interfaces.csv", "08-cables.csv", "09-ip-addresses.csv"}));
  const char* headers[] = {kNetboxCustomFieldColumns,  kNetboxSiteColumns,       kNetboxRackColumns,
                           kNetboxManufacturerColumns, kNetboxDeviceTypeColumns, kNetboxDeviceRoleColumns,
                           kNetboxDeviceColumns,       kNetboxInterfaceColumns,  kNetboxCableColumns,
                           kNetboxIpAddressColumns};
  for (size_t i = 0; i < files.size(); ++i) EXPECT_EQ(lines(files[i].text).at(0), headers[i]) << files[i].name;
  // The cables file is the cabling plan.
  EXPECT_EQ(files[8].text, csv(tiny_topology()));
}

TEST(ExportTest, NetboxImportSetRows) {
  const auto m = netbox(tiny_topology());
  // Site: the slug folds the space to '-'.
  EXPECT_EQ(m.at("01-sites.csv").at(1), "lab 1,lab-1,planned,podnet tiny fabric");
  // Both servers in rack 0 (40 kW / 10.2 kW = 3 servers per rack); the leaf and the spine in the network rack
  // after it, rack 1 (2 switches, far below 40 kW and 21 switches: topology::network_racks).
  EXPECT_EQ(m.at("02-racks.csv"), (std::vector<std::string>{kNetboxRackColumns, "lab 1,rack-000,planned,19,42",
                                                            "lab 1,rack-001,planned,19,42"}));
  // Device types: 2 GPUs and 2 NICs per server; radix 128 (Hardware's default), 400G ports.
  EXPECT_EQ(m.at("04-device-types.csv").at(1), "Generic,gpu-server-2gpu-2nic,gpu-server-2gpu-2nic,8,GPU server");
  EXPECT_EQ(m.at("04-device-types.csv").at(2), "Generic,switch-128x400g,switch-128x400g,2,switch");
  // Roles: gpu-server, then the tiers that have switches.
  EXPECT_EQ(m.at("05-device-roles.csv"),
            (std::vector<std::string>{kNetboxDeviceRoleColumns,
                                      "gpu-server,gpu-server,2196f3,\"GPU server (GPUs, NICs, NVLink domain)\"",
                                      "leaf,leaf,4caf50,switch tier 1", "spine,spine,ff9800,switch tier 2"}));
  // Devices: 2 servers + leaf + spine; the leaf carries group 0 (cf_podnet_group); the switches rack 1.
  EXPECT_EQ(m.at("06-devices.csv"),
            (std::vector<std::string>{kNetboxDeviceColumns,
                                      "gpu-node-000,gpu-server,Generic,gpu-server-2gpu-2nic,planned,lab 1,rack-000,,,",
                                      "gpu-node-001,gpu-server,Generic,gpu-server-2gpu-2nic,planned,lab 1,rack-000,,,",
                                      "leaf-0,leaf,Generic,switch-128x400g,planned,lab 1,rack-001,,0,",
                                      "spine-0,spine,Generic,switch-128x400g,planned,lab 1,rack-001,,,"}));
  // Interfaces: both ends of 6 cables = 12, in cable order; 400G -> 400gbase-x-osfp, 400e6 Kb/s; then the
  // 2 switches' Loopback0.
  const auto& it = m.at("07-interfaces.csv");
  ASSERT_EQ(it.size(), 1u + 12u + 2u);
  EXPECT_EQ(it[13], "leaf-0,Loopback0,virtual,,\"loopback: router-id, BGP\"");
  EXPECT_EQ(it[1], "gpu-node-000,gpu0_eth,400gbase-x-osfp,400000000,gpu-node-000/nic0");
  EXPECT_EQ(it[2], "leaf-0,Ethernet1/1,400gbase-x-osfp,400000000,");
  // Cable 5 (link 12, spine -> leaf, oriented leaf first): leaf port 4 = Ethernet1/5, spine port 0.
  EXPECT_EQ(it[9], "leaf-0,Ethernet1/5,400gbase-x-osfp,400000000,");
  EXPECT_EQ(it[10], "spine-0,Ethernet1/1,400gbase-x-osfp,400000000,");
  {
    // An InfiniBand fabric (network.transport: infiniband): the same ports as NDR InfiniBand ports.
    std::map<std::string, std::vector<std::string>> ib;
    for (const auto& f : netbox_import_set(tiny_topology(), tiny_hardware(), "lab 1", nullptr, true))
      ib[f.name] = lines(f.text);
    EXPECT_EQ(ib.at("07-interfaces.csv")[2], "leaf-0,Ethernet1/1,infiniband-ndr,400000000,");
    // No IP plan: no switch loopbacks (Ethernet: 2 x 6 cable ends + 2 loopbacks), no 09-ip-addresses.csv.
    EXPECT_EQ(ib.at("07-interfaces.csv").size(), 1u + 12u);
    EXPECT_EQ(m.at("07-interfaces.csv").size(), 1u + 12u + 2u);
    EXPECT_EQ(ib.count("09-ip-addresses.csv"), 0u);
    EXPECT_EQ(m.count("09-ip-addresses.csv"), 1u);
  }
  // Custom fields: every cf_ column of devices and cables is created, for its object type.
  const auto& cf = m.at("00-custom-fields.csv");
  ASSERT_EQ(cf.size(), 1u + 5u);
  // object_types holds a comma, so it is quoted.
  EXPECT_EQ(cf[2].rfind("podnet_rail,podnet rail,integer,\"dcim.cable,dcim.device\",", 0), 0u) << cf[2];
}

// The default addressing: plan of the tiny fabric (topology/address_plan.hpp): spine-0 AS 4200000000, leaf-0 AS
// 4200000001; cable i takes 10.0.0.(2i-2) at its upper end and 10.0.0.(2i-1) at its lower end; cable 5 (link 12,
// leaf port 4 = Ethernet1/5 = Ethernet32, spine port 0) is 10.0.0.8 spine / 10.0.0.9 leaf, cable 6 (leaf port 5,
// spine port 1) 10.0.0.10 spine / 10.0.0.11 leaf; loopbacks 10.255.0.1 (leaf), 10.255.0.2 (spine).
topology::AddressPlan tiny_plan(const Topology& t, const std::string& bgp = "numbered") {
  Params p = defaults_of(topology::addressing_params());
  p.set("bgp", bgp, bgp);
  return topology::plan_addresses(t, topology::addressing_from(p));
}

TEST(ExportTest, NetboxIpAddresses) {
  const Topology t = tiny_topology();
  const auto ips = lines(netbox_ip_addresses_csv(t, tiny_plan(t)));
  // Header, 6 cables x 2 ends, 2 loopbacks.
  ASSERT_EQ(ips.size(), 1u + 12u + 2u);
  EXPECT_EQ(ips[0], kNetboxIpAddressColumns);
  EXPECT_EQ(ips[1], "10.0.0.0/31,reserved,,leaf-0,Ethernet1/1,false,C000001 to gpu-node-000:gpu0_eth");
  EXPECT_EQ(ips[2], "10.0.0.1/31,reserved,,gpu-node-000,gpu0_eth,false,C000001 to leaf-0:Ethernet1/1");
  EXPECT_EQ(ips[10], "10.0.0.9/31,reserved,,leaf-0,Ethernet1/5,false,C000005 to spine-0:Ethernet1/1");
  EXPECT_EQ(ips[14], "10.255.0.2/32,reserved,loopback,spine-0,Loopback0,true,loopback of AS 4200000000");
  // Unnumbered: the 2 leaf-spine cables carry no address: 15 - 4 lines.
  EXPECT_EQ(lines(netbox_ip_addresses_csv(t, tiny_plan(t, "unnumbered"))).size(), 11u);
}

TEST(ExportTest, NetboxIpAddressesInPiecesAreTheWholeOnAnyNumberOfWorkers) {
  // The config plan writes the file as it is made: pieces of a few links, made on several threads, must come
  // to the whole text, in order. 6 cables in pieces of 4: the header, 2 pieces, the loopbacks.
  const Topology t = tiny_topology();
  for (const char* bgp : {"numbered", "unnumbered"}) {
    const topology::AddressPlan plan = tiny_plan(t, bgp);
    const std::string whole = netbox_ip_addresses_csv(t, plan);
    for (size_t workers : {1, 2, 3}) {
      std::string joined;
      int pieces = 0;
      netbox_ip_addresses_csv(
          t, plan, workers,
          [&](std::string_view piece) {
            joined += piece;
            ++pieces;
          },
          4);
      EXPECT_EQ(joined, whole) << bgp << ", " << workers << " workers";
      EXPECT_EQ(pieces, 1 + 2 + 1);
    }
  }
}

TEST(ExportTest, FrrConfigOfTheLeaf) {
  const Topology t = tiny_topology();
  const std::string frr = frr_config(t, tiny_plan(t), 0);  // switch 0 = leaf-0 (node order)
  EXPECT_NE(frr.find("hostname leaf-0\n"), std::string::npos) << frr;
  EXPECT_NE(frr.find("interface Loopback0\n ip address 10.255.0.1/32\nexit\n"), std::string::npos) << frr;
  EXPECT_NE(frr.find("interface Ethernet0\n description C000001 to gpu-node-000:gpu0_eth (port Ethernet1/1)\n"
                     " ip address 10.0.0.0/31\nexit\n"),
            std::string::npos)
      << frr;
  EXPECT_NE(frr.find("interface Ethernet32\n description C000005 to spine-0:Ethernet1/1 (port Ethernet1/5)\n"
                     " ip address 10.0.0.9/31\n"),
            std::string::npos)
      << frr;
  EXPECT_NE(frr.find("router bgp 4200000001\n bgp router-id 10.255.0.1\n no bgp ebgp-requires-policy\n"
                     " bgp bestpath as-path multipath-relax\n neighbor 10.0.0.8 remote-as 4200000000\n"),
            std::string::npos)
      << frr;
  EXPECT_NE(frr.find(" neighbor 10.0.0.10 remote-as 4200000000\n"), std::string::npos) << frr;
  // Two sessions -> maximum-paths 2; IPv4 unicast is FRR's default family, so no activate lines.
  EXPECT_NE(frr.find(
                " address-family ipv4 unicast\n  redistribute connected\n  maximum-paths 2\n exit-address-family\n"),
            std::string::npos)
      << frr;
  EXPECT_EQ(count(frr, "remote-as"), 2u);
  // Unnumbered: neighbors are the leaf's two spine ports, and those ports carry no address.
  const std::string un = frr_config(t, tiny_plan(t, "unnumbered"), 0);
  EXPECT_NE(un.find(" neighbor Ethernet32 interface remote-as external\n"), std::string::npos) << un;
  EXPECT_NE(un.find(" neighbor Ethernet40 interface remote-as external\n"), std::string::npos) << un;
  EXPECT_EQ(un.find("10.0.0.9"), std::string::npos) << un;
}

// Tenant "a": server 0, VRF Vrf-a, L3 VNI 10001 (VLAN 1001), route target asn_base:10001.
topology::Tenant tenant_a() {
  topology::Tenant a;
  a.name = "a";
  a.vrf = "Vrf-a";
  a.vni = 10001;
  a.vlan = 1001;
  a.route_target = "4200000000:10001";
  a.first_server = 0;
  a.servers = 1;
  return a;
}

TEST(ExportTest, FrrConfigCarriesATenantOverEvpn) {
  // Tenant "a" holds server 0 (cables C000001-C000002, the leaf's Ethernet0 and Ethernet8); server 1 stays in
  // the default VRF. The leaf: the VRF and its VNI, the tenant's ports in it, EVPN on both sessions with its
  // VNIs advertised, and the tenant's BGP instance under route target asn_base:VNI. The spine: EVPN only.
  const Topology t = tiny_topology();
  const topology::Tenant a = tenant_a();
  const std::string leaf = frr_config(t, tiny_plan(t), 0, {a});
  EXPECT_NE(leaf.find("vrf Vrf-a\n vni 10001\nexit-vrf\n"), std::string::npos) << leaf;
  EXPECT_NE(leaf.find("interface Ethernet0 vrf Vrf-a\n description C000001"), std::string::npos) << leaf;
  EXPECT_EQ(count(leaf, " vrf Vrf-a\n description"), 2u) << leaf;  // server 0's two NIC ports
  EXPECT_NE(leaf.find("interface Ethernet16\n description C000003"), std::string::npos) << leaf;
  EXPECT_NE(leaf.find(" address-family l2vpn evpn\n  neighbor 10.0.0.8 activate\n  neighbor 10.0.0.10 activate\n"
                      "  advertise-all-vni\n exit-address-family\n"),
            std::string::npos)
      << leaf;
  EXPECT_NE(leaf.find("router bgp 4200000001 vrf Vrf-a\n bgp router-id 10.255.0.1\n"), std::string::npos) << leaf;
  EXPECT_NE(leaf.find(" address-family l2vpn evpn\n  advertise ipv4 unicast\n  route-target import 4200000000:10001\n"
                      "  route-target export 4200000000:10001\n"),
            std::string::npos)
      << leaf;
  const std::string spine = frr_config(t, tiny_plan(t), 1, {a});
  EXPECT_NE(spine.find(" address-family l2vpn evpn\n  neighbor 10.0.0.9 activate\n"), std::string::npos) << spine;
  EXPECT_EQ(spine.find("advertise-all-vni"), std::string::npos) << spine;
  EXPECT_EQ(spine.find("vrf"), std::string::npos) << spine;
  // Without tenants, no EVPN at all: the plan is as before.
  EXPECT_EQ(frr_config(t, tiny_plan(t), 0).find("evpn"), std::string::npos);
}

TEST(ExportTest, SonicConfigDbCarriesATenantsDataPlane) {
  // The same tenant as above: on the leaf, its VRF with the L3 VNI, the VNI's VLAN 1001 in the VRF, the VTEP
  // on Loopback0 (10.255.0.1), the NVO, the VNI -> VLAN map, and server 0's two ports (Ethernet0, Ethernet8)
  // in the VRF; the spine carries none of it. Both say split-unified: their BGP is the FRR file's.
  const Topology t = tiny_topology();
  const topology::Tenant a = tenant_a();
  const auto leaf = nlohmann::json::parse(sonic_config_db(t, tiny_plan(t), 0, {a}));
  EXPECT_EQ(leaf["VRF"], nlohmann::json({{"Vrf-a", {{"vni", "10001"}}}}));
  EXPECT_EQ(leaf["VLAN"], nlohmann::json({{"Vlan1001", {{"vlanid", "1001"}}}}));
  EXPECT_EQ(leaf["VLAN_INTERFACE"], nlohmann::json({{"Vlan1001", {{"vrf_name", "Vrf-a"}}}}));
  EXPECT_EQ(leaf["VXLAN_TUNNEL"], nlohmann::json({{"vtep", {{"src_ip", "10.255.0.1"}}}}));
  EXPECT_EQ(leaf["VXLAN_EVPN_NVO"], nlohmann::json({{"nvo", {{"source_vtep", "vtep"}}}}));
  EXPECT_EQ(leaf["VXLAN_TUNNEL_MAP"],
            nlohmann::json({{"vtep|map_10001_Vlan1001", {{"vlan", "Vlan1001"}, {"vni", "10001"}}}}));
  EXPECT_EQ(leaf["INTERFACE"]["Ethernet0"], nlohmann::json({{"vrf_name", "Vrf-a"}}));
  EXPECT_EQ(leaf["INTERFACE"]["Ethernet8"], nlohmann::json({{"vrf_name", "Vrf-a"}}));
  EXPECT_EQ(leaf["INTERFACE"]["Ethernet16"], nlohmann::json::object());  // server 1: the default VRF
  EXPECT_EQ(leaf["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"], "split-unified");
  const auto spine = nlohmann::json::parse(sonic_config_db(t, tiny_plan(t), 1, {a}));
  EXPECT_FALSE(spine.contains("VRF"));
  EXPECT_FALSE(spine.contains("VXLAN_TUNNEL"));
  EXPECT_EQ(spine["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"], "split-unified");
}

TEST(ExportTest, SonicConfigDbOfTheSpine) {
  const Topology t = tiny_topology();
  const auto j = nlohmann::json::parse(sonic_config_db(t, tiny_plan(t), 1));  // switch 1 = spine-0
  EXPECT_EQ(j["DEVICE_METADATA"]["localhost"], nlohmann::json({{"hostname", "spine-0"},
                                                               {"bgp_asn", "4200000000"},
                                                               {"bgp_router_id", "10.255.0.2"},
                                                               {"type", "BackEndLeafRouter"},
                                                               {"docker_routing_config_mode", "unified"}}));
  EXPECT_EQ(j["LOOPBACK_INTERFACE"], nlohmann::json({{"Loopback0", nlohmann::json::object()},
                                                     {"Loopback0|10.255.0.2/32", nlohmann::json::object()}}));
  // Spine port 1 (cable 6) is Ethernet8: lanes 8..15, 400 Gb/s = 400000 Mb/s.
  EXPECT_EQ(j["PORT"]["Ethernet8"], nlohmann::json({{"admin_status", "up"},
                                                    {"alias", "Ethernet1/2"},
                                                    {"description", "C000006 to leaf-0:Ethernet1/6"},
                                                    {"index", "1"},
                                                    {"lanes", "8,9,10,11,12,13,14,15"},
                                                    {"mtu", "9100"},
                                                    {"speed", "400000"}}));
  EXPECT_EQ(j["INTERFACE"].size(), 4u);  // 2 ports, each "EthernetN" and "EthernetN|prefix"
  EXPECT_TRUE(j["INTERFACE"].contains("Ethernet0|10.0.0.8/31"));
  EXPECT_TRUE(j["INTERFACE"].contains("Ethernet8|10.0.0.10/31"));
  EXPECT_EQ(j["BGP_NEIGHBOR"],
            nlohmann::json(
                {{"10.0.0.9",
                  {{"admin_status", "up"}, {"asn", "4200000001"}, {"local_addr", "10.0.0.8"}, {"name", "leaf-0"}}},
                 {"10.0.0.11",
                  {{"admin_status", "up"}, {"asn", "4200000001"}, {"local_addr", "10.0.0.10"}, {"name", "leaf-0"}}}}));
  // Unnumbered: no BGP_NEIGHBOR (config_db keys it by address), link-local-only ports, FRR's file rules.
  const auto u = nlohmann::json::parse(sonic_config_db(t, tiny_plan(t, "unnumbered"), 1));
  EXPECT_FALSE(u.contains("BGP_NEIGHBOR"));
  EXPECT_EQ(u["INTERFACE"]["Ethernet0"], nlohmann::json({{"ipv6_use_link_local_only", "enable"}}));
  EXPECT_EQ(u["DEVICE_METADATA"]["localhost"]["docker_routing_config_mode"], "split-unified");
}

TEST(ExportTest, SonicConfigDbIsWrittenAsTheJsonLibraryWouldWriteIt) {
  // sonic_config_db writes its JSON itself (a million-GPU plan has 5 million ports); parsed and written again
  // by nlohmann::json (keys sorted, two-space indent) it must come back byte for byte, whatever the options:
  // numbered, unnumbered, IPv6, a tenant, and a tenant whose VRF name needs escaping.
  const Topology t = tiny_topology();
  topology::Tenant odd = tenant_a();
  odd.vrf = "Vrf-\"q\"\\\t\x01";
  Params v6 = defaults_of(topology::addressing_params());
  v6.set("family", "ipv6", "ipv6");
  const topology::AddressPlan plans[] = {tiny_plan(t), tiny_plan(t, "unnumbered"),
                                         topology::plan_addresses(t, topology::addressing_from(v6))};
  int checked = 0;
  for (const auto& plan : plans)
    for (const auto& tenants : {std::vector<topology::Tenant>{}, {tenant_a()}, {odd}})
      for (size_t s = 0; s < plan.switches.size(); ++s) {
        const std::string out = sonic_config_db(t, plan, s, tenants);
        EXPECT_EQ(nlohmann::json::parse(out).dump(2) + "\n", out);
        ++checked;
      }
  EXPECT_EQ(checked, 3 * 3 * 2);
  const auto leaf = nlohmann::json::parse(sonic_config_db(t, plans[0], 0, {odd}));
  EXPECT_EQ(leaf["INTERFACE"]["Ethernet0"]["vrf_name"], "Vrf-\"q\"\\\t\x01");
}

TEST(ExportTest, OutputsAreDeterministic) {
  const Topology t1 = tiny_topology();
  const Topology t2 = tiny_topology();
  EXPECT_EQ(csv(t1), csv(t1));
  EXPECT_EQ(csv(t1), csv(t2));
  EXPECT_EQ(dot(t1), dot(t2));
  EXPECT_EQ(graphml(t1), graphml(t2));
  EXPECT_EQ(json_text(t1), json_text(t2));
  EXPECT_EQ(netbox(t1), netbox(t2));
}

}  // namespace
}  // namespace podnet::report
