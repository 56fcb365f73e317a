#include "report/html.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "report/web_assets.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::report {
namespace {

using topology::Link;
using topology::Node;
using topology::NodeKind;

// Two servers (one GPU + one NIC each) in groups 0 and 1 of pod 0, one leaf
// per group, one spine; every leaf has two 400 Gb/s links to the spine.
topology::Topology tiny() {
  topology::Topology t;
  t.tier_names = {"", "leaf", "spine"};
  auto add = [&](NodeKind k, uint8_t tier, int32_t server, int32_t group, const std::string& name) {
    Node n;
    n.kind = k;
    n.tier = tier;
    n.server = server;
    n.group = group;
    n.pod = 0;
    n.name = name;
    t.nodes.push_back(n);
    return static_cast<int32_t>(t.nodes.size() - 1);
  };
  auto link = [&](int32_t a, int32_t b) {
    Link l;
    l.a = a;
    l.b = b;
    l.capacity = Bandwidth(400e9);
    t.links.push_back(l);
  };
  const int32_t g0 = add(NodeKind::Gpu, 0, 0, 0, "s0/gpu0"), n0 = add(NodeKind::Nic, 0, 0, 0, "s0/nic0");
  const int32_t g1 = add(NodeKind::Gpu, 0, 1, 1, "s1/gpu0"), n1 = add(NodeKind::Nic, 0, 1, 1, "s1/nic0");
  const int32_t l0 = add(NodeKind::Switch, 1, topology::kNone, 0, "leaf0");
  const int32_t l1 = add(NodeKind::Switch, 1, topology::kNone, 1, "leaf1");
  const int32_t sp = add(NodeKind::Switch, 2, topology::kNone, topology::kNone, "spine0");
  link(g0, n0);
  link(g1, n1);
  link(n0, l0);
  link(n1, l1);
  for (int i = 0; i < 2; ++i) {
    link(l0, sp);
    link(l1, sp);
  }
  return t;
}

TEST(FabricDrawing, OneMarkPerGroupWhenSmall) {
  const auto d = fabric_drawing(tiny(), 200);
  EXPECT_EQ(d["granularity"], "tier, pod, group and rail");
  // Aggregates: servers of group 0 and 1, leaf of group 0 and 1, the spine (group none) = 5.
  ASSERT_EQ(d["nodes"].size(), 5u);
  EXPECT_EQ(d["level_names"], nlohmann::json::array({"servers", "leaf", "spine"}));
  // GPU-NIC links lie inside one aggregate and are dropped: edges are the two
  // NIC-leaf links (1 each) and leaf-spine (2 links x 400 = 800 Gb/s each).
  ASSERT_EQ(d["edges"].size(), 4u);
  int64_t links = 0;
  double gbps = 0;
  for (const auto& e : d["edges"]) {
    links += e["links"].get<int64_t>();
    gbps += e["gbps"].get<double>();
  }
  EXPECT_EQ(links, 1 + 1 + 2 + 2);
  EXPECT_DOUBLE_EQ(gbps, 6 * 400.0);
}

// Suspects placed on the drawing of tiny(). Aggregates (key order level, pod, group, rail): 0 servers of
// group 0, 1 servers of group 1, 2 leaf0, 3 leaf1, 4 spine0. Links: 0 g0-n0, 1 g1-n1, 2 n0-leaf0,
// 3 n1-leaf1, 4 and 6 leaf0-spine, 5 and 7 leaf1-spine; directed link d is link d / 2, so 16 directions
// and node n is component 16 + n.
TEST(FabricDrawing, SuspectsLandOnTheirMarksAndEdges) {
  const topology::Topology t = tiny();
  study::DiagnoseResult r;
  auto loss = [&](const std::string& name, const std::string& kind, int32_t c, bool hidden) {
    study::SuspectRow x;
    x.name = name;
    x.kind = kind;
    x.s.component = c;
    x.s.loss = 0.001;
    x.hidden = hidden;
    r.suspects.push_back(x);
  };
  loss("leaf0 -> spine0", "link", 8, true);     // link 4 = leaf0 (2) - spine0 (4): the edge 2-4
  loss("spine0", "switch", 16 + 6, false);      // node 6 is spine0: its mark 4
  loss("s0/gpu0 -> s0/nic0", "link", 1, true);  // link 0 lies inside the servers of group 0: mark 0
  study::DelayRow slow;
  slow.name = "s0/nic0 -> leaf0";
  slow.kind = "link";
  slow.s.component = 4;  // link 2 = nic0 (aggregate 0) - leaf0 (2)
  slow.s.rtt_added_s = 20e-6;
  r.delay_suspects.push_back(slow);
  r.score = study::Score{};
  const auto s = suspects_on_drawing(t, r, 200);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_EQ(s[0]["marks"], nlohmann::json::array({2, 4}));
  EXPECT_EQ(s[0]["edge"], nlohmann::json::array({2, 4}));
  EXPECT_EQ(s[0]["finding"], "loss");
  EXPECT_DOUBLE_EQ(s[0]["value"].get<double>(), 0.001);
  EXPECT_EQ(s[0]["hidden_fault"], true);
  EXPECT_EQ(s[1]["marks"], nlohmann::json::array({4}));
  EXPECT_TRUE(s[1]["edge"].is_null());
  EXPECT_EQ(s[1]["hidden_fault"], false);
  EXPECT_EQ(s[2]["marks"], nlohmann::json::array({0}));
  EXPECT_TRUE(s[2]["edge"].is_null());
  EXPECT_EQ(s[3]["component"], "s0/nic0 -> leaf0");
  EXPECT_EQ(s[3]["finding"], "latency");
  EXPECT_DOUBLE_EQ(s[3]["value"].get<double>(), 20.0);  // 20e-6 s = 20 us
  EXPECT_EQ(s[3]["edge"], nlohmann::json::array({0, 2}));
  // The edges named are edges of the drawing.
  const auto d = fabric_drawing(t, 200);
  for (size_t i : {0u, 3u}) {
    bool found = false;
    for (const auto& e : d["edges"])
      found = found || (e["source"] == s[i]["edge"][0] && e["target"] == s[i]["edge"][1]);
    EXPECT_TRUE(found) << s[i]["component"];
  }
  // Coarsened to 3 marks (servers 0, leaf 1, spine 2): the leaf-spine link is the edge 1-2.
  const auto coarse = suspects_on_drawing(t, r, 3);
  EXPECT_EQ(coarse[0]["edge"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(coarse[1]["marks"], nlohmann::json::array({2}));
}

TEST(FabricDrawing, CoarsensToStayUnderTheLimit) {
  // 5 aggregates > 3: (tier, pod) gives servers, leaf, spine = 3.
  const auto d = fabric_drawing(tiny(), 3);
  EXPECT_EQ(d["granularity"], "tier and pod");
  ASSERT_EQ(d["nodes"].size(), 3u);
  const auto& servers = d["nodes"][0];
  EXPECT_EQ(servers["level"], 0);
  EXPECT_EQ(servers["count"], 2);  // two servers
  EXPECT_EQ(servers["gpus"], 2);
  EXPECT_EQ(d["nodes"][1]["count"], 2);  // two leaves
  EXPECT_EQ(d["nodes"][2]["count"], 1);  // one spine
  // One mark per level: centred (x = 1000 * 0.5), levels 200 apart, spine on top.
  EXPECT_EQ(servers["x"], 500.0);
  EXPECT_EQ(servers["y"], 400);
  EXPECT_EQ(d["nodes"][2]["y"], 0);
  ASSERT_EQ(d["edges"].size(), 2u);
  EXPECT_EQ(d["edges"][0]["links"], 2);      // servers-leaf: two NIC links
  EXPECT_EQ(d["edges"][1]["links"], 4);      // leaf-spine
  EXPECT_EQ(d["edges"][1]["gbps"], 1600.0);  // 4 x 400
}

TEST(FabricDrawing, FourTierSuperSpinesAreOneMarkPerZone) {
  // The 4-level fat tree of 4-port switches (clos_test: 8 pods, 4 zones of 2): per tier and pod, the
  // super-spines (no pod) are one mark per zone, the cores one mark.
  const auto t = topology::build_with("fat_tree", {{"gpus", "32"}}, topology::testing::hw_with(1, 1, 4));
  ASSERT_EQ(t.switch_tiers(), 4);
  const auto d = fabric_drawing(t, 40);
  EXPECT_EQ(d["granularity"], "tier and pod");
  std::vector<std::string> supers;
  int cores = 0;
  for (const auto& n : d["nodes"]) {
    if (n["level"] == 3) supers.push_back(n["name"].get<std::string>());
    if (n["level"] == 4) ++cores;
  }
  EXPECT_EQ(supers, (std::vector<std::string>{"super_spine zone 0", "super_spine zone 1", "super_spine zone 2",
                                              "super_spine zone 3"}));
  EXPECT_EQ(cores, 1);
}

TEST(GoodputCurve, DalysGoodputAroundTheAdvisedInterval) {
  // M = 1 h, no checkpoint or restart cost: goodput(τ) = τ / (M (e^(τ/M) − 1));
  // at τ = 60 min = M: 1 / (e − 1) = 0.5819767; at τ = 60/8 min = M/8:
  // (1/8) / (e^(1/8) − 1) = 0.125 / 0.13314845 = 0.9388017.
  const nlohmann::json doc = {
      {"mtbi_hours", 1.0},
      {"checkpoint", {{"interval_minutes", 60.0}, {"checkpoint_cost_minutes", 0.0}, {"restart_cost_minutes", 0.0}}}};
  const auto c = goodput_curve(doc);
  ASSERT_EQ(c["points"].size(), 49u);
  EXPECT_NEAR(c["optimum"][1].get<double>(), 1 / (std::exp(1.0) - 1), 1e-9);
  EXPECT_NEAR(c["points"][0][0].get<double>(), 7.5, 1e-9);
  EXPECT_NEAR(c["points"][0][1].get<double>(), 0.9388017, 1e-6);
  EXPECT_NEAR(c["points"][48][0].get<double>(), 480.0, 1e-9);
  EXPECT_NEAR(c["points"][24][1].get<double>(), 1 / (std::exp(1.0) - 1), 1e-9);
}

TEST(GoodputCurve, EmptyWhenNeverInterrupted) {
  const nlohmann::json doc = {
      {"mtbi_hours", nullptr},
      {"checkpoint",
       {{"interval_minutes", nullptr}, {"checkpoint_cost_minutes", 5.0}, {"restart_cost_minutes", 10.0}}}};
  EXPECT_TRUE(goodput_curve(doc)["points"].empty());
}

TEST(Html, JsonCannotCloseTheScriptElement) {
  const nlohmann::json j = {{"name", "</script><script>alert(1)</script>"}};
  const std::string s = script_safe_json(j);
  EXPECT_EQ(s.find("</"), std::string::npos);
  EXPECT_EQ(nlohmann::json::parse(s), j);  // "<\/" is a JSON escape of "</"
}

TEST(Html, PageEmbedsTheDocumentAndTheAssets) {
  if (!dashboard_installed()) GTEST_SKIP() << kDashboardMissing;
  const nlohmann::json payload = {{"kind", "bench"}, {"document", {{"rows", nlohmann::json::array()}}}};
  const std::string page = html_page(payload, "a <title>");
  EXPECT_NE(page.find("<title>a &lt;title&gt;</title>"), std::string::npos);
  EXPECT_NE(page.find(script_safe_json(payload)), std::string::npos);
  EXPECT_NE(page.find("podnet.renderReport"), std::string::npos);
  // No asset is fetched: no src= or href= attribute in the page's own markup.
  const std::string own = page.substr(0, page.find("<script>"));
  EXPECT_EQ(own.find("src="), std::string::npos);
  EXPECT_EQ(own.find("href="), std::string::npos);
}

TEST(WebAssets, LookupIsByExactNameOnly) {
  EXPECT_NE(find_web_asset("podnet.js"), nullptr);
  EXPECT_NE(find_web_asset("index.html"), nullptr);
  EXPECT_EQ(find_web_asset("../podnet.js"), nullptr);
  EXPECT_EQ(find_web_asset("/podnet.js"), nullptr);
  EXPECT_EQ(find_web_asset(""), nullptr);
}

}  // namespace
}  // namespace podnet::report
