// The flow backend's guard on what an observed run records (options.hpp,
// NetworkOptions::flow.memory_limit): the link-load step record stops the run with
// an InputError, naming --max-memory, instead of growing past the limit. Its
// series links (flow_backend.hpp): which links they are, and a run with them
// left out of the solver gives what the run with every link gives.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "engine/flow/flow_backend.hpp"
#include "engine/plan_compiler.hpp"
#include "routing/route.hpp"
#include "routing/router.hpp"
#include "topology/builders.hpp"

#include "core/error.hpp"
#include "engine/registry.hpp"
#include "engine/test_util.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine {
namespace {

using testing::nic_link;
using testing::p2p_plan;
using topology::testing::hw_with;

topology::Topology fabric() {
  return topology::build_with("fat_tree", {{"gpus", "8"}, {"tiers", "2"}}, hw_with(1, 1, 8));
}

TEST(FlowBackend, ObservedRunStopsWhenItsRecordPassesTheMemoryLimit) {
  const topology::Topology t = fabric();
  // GPU 0 -> 1 moves 1 MiB: its links' loads step up when it starts and down when it ends, so the
  // record needs at least 2 steps.
  const plan::TransferPlan plan = p2p_plan({{0, 1}}, Bytes{1} << 20);
  NetworkOptions o;
  size_t steps = 0;
  o.observers.observe = [&](const RunObservation& r) { steps = r.link_steps ? r.link_steps->size() : 0; };
  // No limit: the run records its steps.
  make_backend("flow", t, o)->run(plan);
  EXPECT_GE(steps, 2u);
  // A limit of 1 byte is below what the process already holds: no room, a cap of 1 step.
  o.flow.memory_limit = 1;
  try {
    make_backend("flow", t, o)->run(plan);
    ADD_FAILURE() << "the observed run passed its memory limit";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("reached 1 steps"), std::string::npos) << what;
    EXPECT_NE(what.find("--max-memory"), std::string::npos) << what;
  }
  // Unobserved, the same limit records nothing and the run goes through.
  o.observers.observe = nullptr;
  EXPECT_GT(make_backend("flow", t, o)->run(plan).makespan.ps, 0);
}

// The PCIe link between GPU `rank` and its NIC.
topology::LinkId pcie_link(const topology::Topology& t, int32_t rank) {
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l)
    if ((t.links[l].a == t.gpus[rank] && t.links[l].b == t.gpu_nic[rank]) ||
        (t.links[l].b == t.gpus[rank] && t.links[l].a == t.gpu_nic[rank]))
      return l;
  return -1;
}

TEST(FlowBackend, SeriesLinksAreANicsTwoLinksEachWay) {
  const topology::Topology t = fabric();  // one GPU and one NIC per server: GPU - PCIe - NIC - leaf
  const int32_t n = routing::dir_link_count(t);
  const topology::LinkId pcie = pcie_link(t, 3), net = nic_link(t, 3);
  ASSERT_GE(pcie, 0);
  ASSERT_GE(net, 0);
  const topology::NodeId gpu = t.gpus[3], nic = t.gpu_nic[3];
  const topology::NodeId leaf = t.links[net].a == nic ? t.links[net].b : t.links[net].a;
  const routing::DirLink up_pcie = routing::dir_link(pcie, gpu, t), up_net = routing::dir_link(net, nic, t);
  const routing::DirLink down_net = routing::dir_link(net, leaf, t), down_pcie = routing::dir_link(pcie, nic, t);
  // PCIe slower (every link 2 bit/s, PCIe 1): the PCIe directions represent their classes.
  std::vector<double> cap(static_cast<size_t>(n), 2.0);
  cap[static_cast<size_t>(up_pcie)] = cap[static_cast<size_t>(down_pcie)] = 1.0;
  std::vector<routing::DirLink> rep = flow::series_representatives(t, cap);
  EXPECT_EQ(rep[static_cast<size_t>(up_pcie)], up_pcie);
  EXPECT_EQ(rep[static_cast<size_t>(up_net)], up_pcie);  // the way out of the NIC follows the way in
  EXPECT_EQ(rep[static_cast<size_t>(down_net)], down_pcie);
  EXPECT_EQ(rep[static_cast<size_t>(down_pcie)], down_pcie);
  // The NIC's link slower: it represents them.
  cap.assign(static_cast<size_t>(n), 2.0);
  cap[static_cast<size_t>(up_net)] = cap[static_cast<size_t>(down_net)] = 1.0;
  rep = flow::series_representatives(t, cap);
  EXPECT_EQ(rep[static_cast<size_t>(up_pcie)], up_net);
  EXPECT_EQ(rep[static_cast<size_t>(down_pcie)], down_net);
  // Equal: the lower index. A switch's links (many per switch) stay alone.
  cap.assign(static_cast<size_t>(n), 2.0);
  rep = flow::series_representatives(t, cap);
  EXPECT_EQ(rep[static_cast<size_t>(up_net)], std::min(up_pcie, up_net));
  int32_t switch_links = 0;
  for (topology::LinkId l = 0; l < static_cast<topology::LinkId>(t.links.size()); ++l)
    if (t.nodes[t.links[l].a].kind == topology::NodeKind::Switch &&
        t.nodes[t.links[l].b].kind == topology::NodeKind::Switch)
      for (const routing::DirLink d : {2 * l, 2 * l + 1}) {
        EXPECT_EQ(rep[static_cast<size_t>(d)], d);
        ++switch_links;
      }
  EXPECT_GT(switch_links, 0);
}

// The same contended plan with the series links left out (unobserved, same_flow_links off), with every link
// that carries the same flows as another left out (the default) and with every link in the solver
// (observed: the record of each link's steps turns both off) gives the same times and link loads, whichever
// of a NIC's two links binds.
TEST(FlowBackend, LeavingSeriesLinksOutChangesNoResult) {
  for (const double pcie_gbps : {8.0, 400.0}) {  // 8 GB/s: PCIe binds; 400 GB/s: the 400G NIC does
    topology::Hardware hw = hw_with(1, 1, 8);
    hw.pcie_bw = Bandwidth(pcie_gbps * 8e9);
    const topology::Topology t = topology::build_with("fat_tree", {{"gpus", "8"}, {"tiers", "2"}}, hw);
    // An incast on GPU 4, flows crossing the spines both ways, and a coupled set of three edges, of
    // different sizes so that they finish apart and the rest re-share.
    plan::TransferPlan plan = p2p_plan({{0, 4}, {1, 4}, {2, 5}, {6, 1}, {7, 4}}, Bytes{3} << 20);
    plan.transfers[2].bytes = Bytes{1} << 20;
    plan.transfers[3].bytes = Bytes{5} << 20;
    plan::Transfer c;
    c.kind = plan::TransferKind::Coupled;
    c.edges = {{0, 6}, {3, 4}, {5, 2}};
    c.ranks = {0, 2, 3, 4, 5, 6};
    c.bytes = Bytes{2} << 20;
    plan.add(c);
    NetworkOptions o;
    o.hottest_links = 1000;  // every link that carried bytes
    const RunReport same = make_backend("flow", t, o)->run(plan);
    o.flow.same_flow_links = false;
    const RunReport out = make_backend("flow", t, o)->run(plan);
    o.observers.observe = [](const RunObservation&) {};
    const RunReport all = make_backend("flow", t, o)->run(plan);
    SCOPED_TRACE(pcie_gbps);
    // More links carry the same flows than a NIC's series pair (a link that one flow alone crosses merges
    // with that flow's other lone links): fewer terms.
    EXPECT_LT(same.solver_terms, out.solver_terms);
    // The series shortcut ran: each of the 8 routes (5 P2p, 3 coupled edges between distinct GPUs) crosses
    // two NICs and leaves one of each NIC's two links out of the solver: 2 x 8 terms fewer than observed,
    // where every link goes to the solver.
    EXPECT_GT(all.solver_terms, 0u);
    EXPECT_EQ(out.solver_terms + 2 * 8, all.solver_terms);
    // Both give the results of the run with every link.
    for (const RunReport* x : {&same, &out}) {
      SCOPED_TRACE(x == &same ? "same-flow links" : "series links");
      EXPECT_EQ(x->makespan.ps, all.makespan.ps);
      ASSERT_EQ(x->transfers.size(), all.transfers.size());
      for (size_t i = 0; i < x->transfers.size(); ++i)
        EXPECT_EQ(x->transfers[i].finish.ps, all.transfers[i].finish.ps) << i;
      ASSERT_EQ(x->hottest.size(), all.hottest.size());
      for (size_t i = 0; i < x->hottest.size(); ++i) {
        EXPECT_EQ(x->hottest[i].link, all.hottest[i].link) << i;
        EXPECT_NEAR(x->hottest[i].bytes, all.hottest[i].bytes, 1e-6 * all.hottest[i].bytes) << i;
        EXPECT_NEAR(x->hottest[i].peak_utilization, all.hottest[i].peak_utilization, 1e-9) << i;
      }
      ASSERT_EQ(x->by_class.size(), all.by_class.size());
      for (size_t i = 0; i < x->by_class.size(); ++i) {
        EXPECT_NEAR(x->by_class[i].bytes, all.by_class[i].bytes, 1e-6 * all.by_class[i].bytes) << i;
        EXPECT_NEAR(x->by_class[i].max_utilization, all.by_class[i].max_utilization, 1e-9) << i;
        EXPECT_NEAR(x->by_class[i].mean_utilization, all.by_class[i].mean_utilization, 1e-9) << i;
      }
    }
  }
}

// What the shortcut rests on (flow_backend.hpp): every route the flow engine compiles runs GPU to GPU and
// crosses a node of two links in through one and out through the other, so a left-out link is on a route
// exactly when its representative is, with the same share. Checked on every GPU pair, two QPs each, of
// small fabrics of each family (NICs shared by two GPUs, rails, three tiers, torus chips, dragonfly
// routers), under each routing policy that applies, PXN on and off.
TEST(FlowBackend, EveryRouteCrossesASeriesLinkWithItsRepresentative) {
  struct Case {
    const char* family;
    std::vector<std::pair<std::string, std::string>> params;
    int gpus, nics, radix;
  };
  const std::vector<Case> cases = {
      {"fat_tree", {{"gpus", "32"}, {"tiers", "2"}}, 1, 1, 8},
      {"fat_tree", {{"gpus", "64"}, {"tiers", "3"}}, 2, 2, 8},
      {"fat_tree", {{"gpus", "32"}}, 4, 2, 8},  // two GPUs per NIC
      {"fat_tree", {{"gpus", "32"}, {"rail_optimized", "true"}}, 2, 4, 8},
      {"rail_clos", {{"gpus", "64"}, {"tiers", "3"}}, 4, 4, 8},
      {"tree3", {{"gpus", "32"}}, 1, 1, 8},
      {"torus", {{"dims", "[4,4]"}}, 1, 1, 8},
      {"dragonfly", {{"p", "1"}, {"a", "2"}, {"h", "1"}, {"g", "3"}}, 1, 1, 8},
  };
  int64_t checked = 0;
  for (const Case& c : cases) {
    topology::Hardware hw = hw_with(c.gpus, c.nics, c.radix);
    const topology::Topology t = topology::build_with(c.family, c.params, hw);
    // Capacities that differ link to link, so that representatives are not just the lower index.
    std::vector<double> cap(static_cast<size_t>(routing::dir_link_count(t)));
    for (size_t d = 0; d < cap.size(); ++d) cap[d] = 1.0 + static_cast<double>((d / 2 * 7919) % 5);
    const std::vector<routing::DirLink> rep = flow::series_representatives(t, cap);
    for (const char* policy : {"ecmp", "spray", "static", "adaptive", "valiant", "ugal", "dimension_order"})
      for (const bool pxn : {true, false}) {
        routing::RouteOptions o;
        o.policy = policy;
        o.pxn = pxn;
        std::unique_ptr<routing::Router> router;
        try {
          router = std::make_unique<routing::Router>(t, o);
        } catch (const Error&) {
          continue;  // a policy that does not apply to this family
        }
        std::vector<routing::PathPart> route;
        std::map<routing::DirLink, double> share;
        const auto g = static_cast<int32_t>(t.gpus.size());
        for (int32_t a = 0; a < g; ++a)
          for (int32_t b = 0; b < g; ++b)
            for (uint64_t qp = 0; qp < 2; ++qp) {
              route.clear();
              router->route(a, b, qp, 1.0, route);
              share.clear();
              for (const auto& p : route) share[p.link] += p.fraction;
              for (const auto& [d, f] : share) {
                const routing::DirLink r = rep[static_cast<size_t>(d)];
                if (r == d) continue;
                ++checked;
                const auto it = share.find(r);
                ASSERT_TRUE(it != share.end() && it->second == f)
                    << c.family << " " << policy << " pxn " << pxn << ": GPU " << a << " -> " << b << " QP " << qp
                    << " crosses link " << d << " (share " << f << ") without its representative " << r;
              }
            }
      }
  }
  EXPECT_GT(checked, 100000);
}

// What the plan-wide merge rests on (flow_backend.hpp, same_flow_representatives): a link left out is crossed
// by exactly the flows that cross its representative, each with the same coefficient, and has no less
// capacity. Checked link by link against the flows compiled one by one, on a three-tier rail fabric under
// ECMP with P2p transfers on two QPs, rings and a coupled set of edges, so that classes hold several links.
TEST(FlowBackend, MergedLinksCarryTheSameFlowsAsTheirRepresentative) {
  const topology::Topology t = topology::build_with("rail_clos", {{"gpus", "64"}, {"tiers", "3"}}, hw_with(4, 4, 8));
  plan::TransferPlan plan = p2p_plan({{0, 17}, {5, 40}, {33, 2}, {12, 63}}, Bytes{1} << 20);
  for (auto& tr : plan.transfers) tr.qps = 2;
  plan::Transfer ring;
  ring.kind = plan::TransferKind::Ring;
  ring.ranks = {0, 8, 16, 24, 32, 40, 48, 56};
  ring.bytes = Bytes{1} << 20;
  plan.add(ring);
  ring.ranks = {1, 9, 17, 25, 33, 41, 49, 57};
  plan.add(ring);
  plan::Transfer c;
  c.kind = plan::TransferKind::Coupled;
  for (int32_t r = 0; r < 32; ++r) c.edges.push_back({r, r + 32});
  for (int32_t r = 0; r < 64; ++r) c.ranks.push_back(r);
  c.bytes = Bytes{1} << 20;
  plan.add(c);
  const auto n = static_cast<size_t>(routing::dir_link_count(t));
  std::vector<double> cap(n);
  for (size_t d = 0; d < n; ++d) cap[d] = 1.0 + static_cast<double>((d / 2 * 7919) % 3);
  routing::Router router(t, routing::RouteOptions{});
  PlanCompiler compiler(t, router, transport_preset("rocev2"));
  const std::vector<routing::DirLink> rep = flow::same_flow_representatives(plan, compiler, cap);
  // Each link's terms, (transfer, flow, coefficient), from the flows compiled one by one.
  std::vector<std::map<std::pair<int32_t, size_t>, double>> terms(n);
  std::vector<CompiledFlow> flows;
  for (int32_t i = 0; i < static_cast<int32_t>(plan.transfers.size()); ++i) {
    flows.clear();
    compiler.compile(plan, i, flows);
    for (size_t k = 0; k < flows.size(); ++k)
      for (const auto& p : flows[k].parts) terms[static_cast<size_t>(p.link)][{i, k}] += p.fraction;
  }
  size_t merged = 0, lone = 0;
  for (size_t d = 0; d < n; ++d) {
    const auto r = static_cast<size_t>(rep[d]);
    ASSERT_EQ(static_cast<size_t>(rep[r]), r) << "a representative represents itself";
    if (r == d) continue;
    ++merged;
    EXPECT_EQ(terms[d], terms[r]) << "link " << d << " and its representative " << r;
    EXPECT_LE(cap[r], cap[d]) << d;
    lone += terms[d].size() == 1;
  }
  // Beyond the series pairs (one per NIC direction used): links that only one flow crosses, within rings.
  EXPECT_GT(merged, 64u);
  EXPECT_GT(lone, 0u);
  // And no two classes carry the same terms: every link whose terms equal another's is merged with it.
  std::map<std::map<std::pair<int32_t, size_t>, double>, size_t> seen;
  for (size_t d = 0; d < n; ++d) {
    if (terms[d].empty() || static_cast<size_t>(rep[d]) != d) continue;
    EXPECT_TRUE(seen.emplace(terms[d], d).second) << "links " << seen[terms[d]] << " and " << d << " not merged";
  }
}

}  // namespace
}  // namespace podnet::engine
