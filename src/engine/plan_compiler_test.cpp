// PlanCompiler's route cache: a transfer compiled again (same kind, ranks or edges, QPs, channel) takes the
// routes and latencies it had, with its own bytes and index; a link-state change or load-tracking routing
// (adaptive) routes afresh.
#include "engine/plan_compiler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "engine/test_util.hpp"

namespace podnet::engine {
namespace {

topology::Topology fabric() { return testing::fat_tree_32(); }

plan::TransferPlan two_rings(plan::TransferKind kind, Bytes first, Bytes second, int32_t qps) {
  plan::TransferPlan p;
  for (Bytes b : {first, second}) {
    plan::Transfer t;
    t.kind = kind;
    t.ranks = kind == plan::TransferKind::P2p ? std::vector<int32_t>{0, 17} : std::vector<int32_t>{0, 9, 17, 25};
    t.bytes = b;
    t.qps = qps;
    t.latency_steps = 1;
    t.channel = 3;
    p.add(t);
  }
  return p;
}

void expect_same_routes(const CompiledFlow& a, const CompiledFlow& b) {
  ASSERT_EQ(a.parts.size(), b.parts.size());
  for (size_t i = 0; i < a.parts.size(); ++i) {
    EXPECT_EQ(a.parts[i].link, b.parts[i].link);
    EXPECT_EQ(a.parts[i].fraction, b.parts[i].fraction);
  }
  EXPECT_EQ(a.latency, b.latency);
  EXPECT_EQ(a.route_weight, b.route_weight);
}

TEST(PlanCompiler, ACompiledAgainTransferTakesItsRoutesWithItsOwnBytes) {
  const topology::Topology t = fabric();
  for (auto kind : {plan::TransferKind::Ring, plan::TransferKind::P2p}) {
    // P2p of 11 bytes over 3 QPs after one of 10: 4 + 4 + 3 (10: 4 + 3 + 3), the remainder on the first QPs.
    const plan::TransferPlan p = two_rings(kind, 10, 11, 3);
    routing::Router cached_router(t, routing::RouteOptions{}), fresh_router(t, routing::RouteOptions{});
    PlanCompiler cached(t, cached_router, transport_preset("rocev2")),
        fresh(t, fresh_router, transport_preset("rocev2"));
    std::vector<CompiledFlow> a, b;
    cached.compile(p, 0, a);
    cached.compile(p, 1, a);  // from the cache
    fresh.compile(p, 1, b);   // routed afresh
    const size_t n = kind == plan::TransferKind::P2p ? 3 : 1;
    ASSERT_EQ(a.size(), 2 * n);
    ASSERT_EQ(b.size(), n);
    for (size_t q = 0; q < n; ++q) {
      expect_same_routes(a[n + q], b[q]);
      EXPECT_EQ(a[n + q].transfer, 1);
      EXPECT_EQ(a[n + q].bytes, b[q].bytes);
    }
    if (kind == plan::TransferKind::P2p) {
      EXPECT_EQ(a[0].bytes + a[1].bytes + a[2].bytes, 10);
      EXPECT_EQ(a[3].bytes, 4);
      EXPECT_EQ(a[4].bytes, 4);
      EXPECT_EQ(a[5].bytes, 3);
    } else {
      EXPECT_EQ(a[1].bytes, 11);
    }
  }
}

// A Coupled transfer of two lanes loads each link with what the two channels' transfers load it with apart: lane
// k's edges take channel 3 + k's ECMP entropy (plan::Transfer::lanes).
TEST(PlanCompiler, ATransferOfTwoLanesLoadsWhatItsChannelsLoadApart) {
  const topology::Topology t = fabric();
  const std::vector<std::pair<int32_t, int32_t>> edges{{0, 17}, {9, 25}, {17, 0}};
  plan::TransferPlan p;
  for (int32_t c : {3, 4}) {
    plan::Transfer one;
    one.kind = plan::TransferKind::Coupled;
    one.edges = edges;
    one.ranks = {0, 9, 17, 25};
    one.bytes = 1000;
    one.qps = 2;
    one.channel = c;
    p.add(one);
  }
  plan::Transfer both = p.transfers[0];
  std::vector<std::pair<int32_t, int32_t>> twice = edges;
  twice.insert(twice.end(), edges.begin(), edges.end());
  both.edges = twice;
  both.lanes = 2;
  p.add(both);
  routing::Router router(t, routing::RouteOptions{});
  PlanCompiler compiler(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> f;
  for (int32_t i = 0; i < 3; ++i) compiler.compile(p, i, f);
  ASSERT_EQ(f.size(), 3u);
  std::map<routing::DirLink, double> apart, merged;
  for (int k = 0; k < 2; ++k)
    for (const auto& part : f[static_cast<size_t>(k)].parts) apart[part.link] += part.fraction;
  for (const auto& part : f[2].parts) merged[part.link] += part.fraction;
  ASSERT_EQ(merged.size(), apart.size());
  for (const auto& [link, coef] : apart) EXPECT_NEAR(merged[link], coef, 1e-12) << link;
  // The two channels part somewhere: some link carries one channel's QPs and not the other's.
  std::map<routing::DirLink, double> first;
  for (const auto& part : f[0].parts) first[part.link] = part.fraction;
  bool differ = false;
  for (const auto& [link, coef] : apart) differ = differ || std::abs(coef - 2 * first[link]) > 1e-12;
  EXPECT_TRUE(differ);
}

// A full cache lets its oldest entry go: with room for one entry, a second transfer evicts the first,
// which is then routed afresh (a miss, with the same routes) and kept again; a third look is a hit.
TEST(PlanCompiler, SharedFlowsAreTheCompiledOnesWithoutACopy) {
  // compile_shared hands out the route cache's flows instead of copies: the same routes, latencies, bytes
  // (P2p: 11 bytes over 3 QPs, 4 + 4 + 3) and indices as compile's, and the second transfer's point at the
  // very routes the first one's do.
  const topology::Topology t = fabric();
  for (auto kind : {plan::TransferKind::Ring, plan::TransferKind::P2p}) {
    const plan::TransferPlan p = two_rings(kind, 10, 11, 3);
    routing::Router ra(t, routing::RouteOptions{}), rb(t, routing::RouteOptions{});
    PlanCompiler copying(t, ra, transport_preset("rocev2")), sharing(t, rb, transport_preset("rocev2"));
    std::vector<CompiledFlow> a;
    std::vector<SharedFlow> b;
    for (int32_t i : {0, 1}) {
      copying.compile(p, i, a);
      sharing.compile_shared(p, i, b);
    }
    ASSERT_EQ(a.size(), b.size());
    for (size_t f = 0; f < a.size(); ++f) {
      expect_same_routes(a[f], b[f].route());
      EXPECT_EQ(a[f].bytes, b[f].bytes);
      EXPECT_EQ(a[f].transfer, b[f].transfer);
    }
    const size_t half = b.size() / 2;
    EXPECT_EQ(b[half].routes.get(), b[0].routes.get());
    if (kind == plan::TransferKind::P2p) {
      EXPECT_EQ(b[half].bytes, 4);
      EXPECT_EQ(b[half + 2].bytes, 3);
    }
  }
}

TEST(PlanCompiler, AFullCacheLetsItsOldestEntryGo) {
  const topology::Topology t = fabric();
  plan::TransferPlan p = two_rings(plan::TransferKind::Ring, 10, 10, 1);
  p.transfers[1].ranks = {1, 10, 18, 26};  // another ring: another entry
  routing::Router router(t, routing::RouteOptions{});
  PlanCompiler c(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> first, out;
  c.compile(p, 0, first);
  const size_t one = c.cache_bytes();
  ASSERT_GT(one, 0u);
  c.set_cache_limit(one + one / 2);  // one entry of this size, not two
  c.compile(p, 1, out);              // kept: transfer 0's entry leaves
  EXPECT_EQ(c.cache_evictions(), 1u);
  EXPECT_EQ(c.cache_hits(), 0u);
  out.clear();
  c.compile(p, 0, out);  // a miss: routed afresh, the same routes
  EXPECT_EQ(c.cache_hits(), 0u);
  EXPECT_EQ(c.cache_evictions(), 2u);
  expect_same_routes(first[0], out[0]);
  c.compile(p, 0, out);  // kept again: a hit
  EXPECT_EQ(c.cache_hits(), 1u);
}

TEST(PlanCompiler, ALinkDownRoutesAfresh) {
  const topology::Topology t = fabric();
  const plan::TransferPlan p = two_rings(plan::TransferKind::P2p, 1000, 1000, 1);
  routing::Router router(t, routing::RouteOptions{});
  PlanCompiler c(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> a;
  c.compile(p, 0, a);
  // Take down a switch-to-switch link the route uses (the route is NIC -> leaf -> spine -> leaf -> NIC).
  topology::LinkId used = -1;
  for (const auto& part : a[0].parts) {
    const auto& l = t.links[routing::link_of(part.link)];
    if (t.nodes[l.a].kind == topology::NodeKind::Switch && t.nodes[l.b].kind == topology::NodeKind::Switch)
      used = routing::link_of(part.link);
  }
  ASSERT_GE(used, 0);
  router.set_link_up(used, false);
  c.compile(p, 1, a);
  for (const auto& part : a[1].parts) EXPECT_NE(routing::link_of(part.link), used);
}

TEST(PlanCompiler, AdaptiveRoutingIsNeverCached) {
  // Adaptive routing puts the second of two identical P2p transfers, while the first is still routed, on the
  // least-loaded uplink: another spine than the first (a leaf has 4 uplinks, each loaded 0 but the first's).
  const topology::Topology t = fabric();
  const plan::TransferPlan p = two_rings(plan::TransferKind::P2p, 1000, 1000, 1);
  routing::RouteOptions o;
  o.policy = "adaptive";
  routing::Router router(t, o);
  PlanCompiler c(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> a;
  c.compile(p, 0, a);
  c.compile(p, 1, a);
  bool differ = a[0].parts.size() != a[1].parts.size();
  for (size_t i = 0; !differ && i < a[0].parts.size(); ++i) differ = a[0].parts[i].link != a[1].parts[i].link;
  EXPECT_TRUE(differ);
}

TEST(PlanCompiler, ARunOfDistinctTransfersStopsLookingUpUntilOneHits) {
  // A plan of distinct transfers (a large all-to-all) misses every time: after kBypassAfter misses in a row only
  // every kProbeEvery-th transfer is looked up; a probe that hits resumes the lookups. Routes never change.
  const topology::Topology t = fabric();
  constexpr int32_t kRun = static_cast<int32_t>(PlanCompiler::kBypassAfter), kProbe = PlanCompiler::kProbeEvery;
  plan::TransferPlan p;
  for (int32_t i = 0; i < kRun + 2 * kProbe; ++i) {  // distinct: the channel is part of the key
    plan::Transfer x;
    x.kind = plan::TransferKind::P2p;
    x.ranks = {i % 32, (i + 1 + i / 32 % 31) % 32};
    x.bytes = 1000;
    x.channel = i;
    p.add(x);
  }
  p.add(p.transfers[0]);  // index kRun + 2 kProbe: a repeat of transfer 0, met at a probe
  p.add(p.transfers[1]);  // looked up again after that hit
  routing::Router router(t, routing::RouteOptions{}), fresh_router(t, routing::RouteOptions{});
  PlanCompiler c(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> a, b;
  for (int32_t i = 0; i < static_cast<int32_t>(p.transfers.size()); ++i) {
    c.compile(p, i, a);
    PlanCompiler fresh(t, fresh_router, transport_preset("rocev2"));  // routes afresh: an empty cache
    fresh.compile(p, i, b);
  }
  // kRun misses looked up; then the transfers kRun + j, j = 0 .. 2 kProbe - 1, are looked up at j = 0 and
  // j = kProbe (2 more misses); the repeat of transfer 0 sits at j = 2 kProbe, a probe: it hits, and the repeat
  // of transfer 1 is looked up (and hits): kRun + 4 lookups, 2 hits.
  EXPECT_EQ(c.cache_lookups(), static_cast<uint64_t>(kRun) + 4);
  EXPECT_EQ(c.cache_hits(), 2u);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    expect_same_routes(a[i], b[i]);
    EXPECT_EQ(a[i].transfer, b[i].transfer);
  }
}

// A coupled transfer over many hops touches more links than the sort's small-list path takes (512): its
// parts still come out once each, ascending (the radix sort), and each hop adds its links' coefficient 1.
TEST(PlanCompiler, AManyHopTransferHasItsLinksOnceEachInOrder) {
  const topology::Topology t = topology::build_with("rail_clos", {{"gpus", "1024"}}, topology::default_hardware());
  plan::TransferPlan p;
  plan::Transfer ring;
  ring.kind = plan::TransferKind::Ring;
  for (int32_t r = 0; r < 1024; ++r)
    ring.ranks.push_back((r * 8) % 1024 + (r * 8) / 1024);  // every hop leaves its server
  ring.bytes = 1 << 20;
  p.add(ring);
  routing::Router router(t, routing::RouteOptions{});
  PlanCompiler compiler(t, router, transport_preset("rocev2"));
  std::vector<CompiledFlow> out;
  compiler.compile(p, 0, out);
  ASSERT_EQ(out.size(), 1u);
  ASSERT_GT(out[0].parts.size(), 512u);
  double total = 0;
  for (size_t i = 0; i < out[0].parts.size(); ++i) {
    if (i > 0) EXPECT_LT(out[0].parts[i - 1].link, out[0].parts[i].link);
    total += out[0].parts[i].fraction;
  }
  // The coefficients add up to the links of every hop's route, each route counted once.
  double expected = 0;
  for (int32_t h = 0; h < 1024; ++h) {
    std::vector<routing::PathPart> route;
    router.route(ring.ranks[static_cast<size_t>(h)], ring.ranks[static_cast<size_t>((h + 1) % 1024)], 0, 1.0, route);
    for (const auto& part : route) expected += part.fraction;
  }
  EXPECT_DOUBLE_EQ(total, expected);
}

// Unsorted parts (set_sorted_parts(false)) are the sorted ones in the order the hops first cross their links:
// the same links with the same coefficients, each once.
TEST(PlanCompiler, UnsortedPartsAreTheSortedOnesInTheHopsOrder) {
  const topology::Topology t = topology::build_with("rail_clos", {{"gpus", "1024"}}, topology::default_hardware());
  plan::TransferPlan p;
  plan::Transfer ring;
  ring.kind = plan::TransferKind::Ring;
  for (int32_t r = 0; r < 1024; ++r) ring.ranks.push_back((r * 8) % 1024 + (r * 8) / 1024);
  ring.bytes = 1 << 20;
  p.add(ring);
  routing::Router sorted_router(t, routing::RouteOptions{}), unsorted_router(t, routing::RouteOptions{});
  PlanCompiler sorted(t, sorted_router, transport_preset("rocev2")),
      unsorted(t, unsorted_router, transport_preset("rocev2"));
  unsorted.set_sorted_parts(false);
  std::vector<CompiledFlow> a, b;
  sorted.compile(p, 0, a);
  unsorted.compile(p, 0, b);
  ASSERT_EQ(a.size(), 1u);
  ASSERT_EQ(b.size(), 1u);
  // The first hop's route leads the unsorted parts, in route order.
  std::vector<routing::PathPart> first;
  sorted_router.route(ring.ranks[0], ring.ranks[1], 0, 1.0, first);
  ASSERT_GE(b[0].parts.size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(b[0].parts[i].link, first[i].link);
  auto by_link = b[0].parts;
  std::sort(by_link.begin(), by_link.end(), [](const auto& x, const auto& y) { return x.link < y.link; });
  ASSERT_EQ(by_link.size(), a[0].parts.size());
  for (size_t i = 0; i < by_link.size(); ++i) {
    EXPECT_EQ(by_link[i].link, a[0].parts[i].link);
    EXPECT_EQ(by_link[i].fraction, a[0].parts[i].fraction);
  }
  EXPECT_EQ(b[0].latency, a[0].latency);
}

// A long edge list enters the cache's key as a number given to its content: a copy built apart (its own
// buffer) with the same edges finds the entry; one edge changed does not. Short lists (32 edges or fewer) are
// their content in the key, as before.
TEST(PlanCompiler, ALongListBuiltApartWithTheSameContentFindsItsEntry) {
  const topology::Topology t = fabric();
  for (const int32_t n : {8, 32, 64}) {
    plan::TransferPlan p;
    for (int32_t k = 0; k < 3; ++k) {
      plan::Transfer c;
      c.kind = plan::TransferKind::Coupled;
      for (int32_t i = 0; i < n; ++i) c.edges.push_back({i % 32, (i + 1 + (k == 2 && i == n - 1)) % 32});
      c.bytes = 1 << 20;
      c.latency_steps = 1;
      p.add(c);  // three buffers: the first two equal, the third's last edge one further
    }
    ASSERT_FALSE(p.transfers[0].edges.shares_with(p.transfers[1].edges));
    routing::Router router(t, routing::RouteOptions{});
    PlanCompiler c(t, router, transport_preset("rocev2"));
    std::vector<CompiledFlow> out;
    c.compile(p, 0, out);
    const uint64_t first = c.last_entry();
    c.compile(p, 1, out);
    EXPECT_EQ(c.last_entry(), first) << n << " edges";
    EXPECT_EQ(c.cache_hits(), 1u);
    c.compile(p, 2, out);
    EXPECT_NE(c.last_entry(), first) << n << " edges";
    EXPECT_EQ(c.cache_hits(), 1u);
    c.compile(p, 0, out);  // the first buffer again
    EXPECT_EQ(c.last_entry(), first);
    EXPECT_EQ(c.cache_hits(), 2u);
  }
}

}  // namespace
}  // namespace podnet::engine

namespace podnet::engine {
namespace {

// A plan as training makes them: coupled steps over many edges (a PAT step: position i sends to i + d), rings
// and QP-split point-to-point transfers, some repeated (the same key twice), plus a compute delay.
plan::TransferPlan mixed_plan() {
  plan::TransferPlan p;
  for (int32_t channel = 0; channel < 2; ++channel)
    for (int32_t d : {16, 8, 4, 2, 1}) {
      plan::Transfer t;
      t.kind = plan::TransferKind::Coupled;
      for (int32_t i = 0; i < 32; ++i) t.edges.push_back({i, (i + d) % 32});
      t.bytes = 1 << 20;
      t.channel = channel;
      t.latency_steps = 1;
      p.add(t);
    }
  for (int32_t r = 0; r < 8; ++r) {
    plan::Transfer t;
    t.kind = r % 2 ? plan::TransferKind::Ring : plan::TransferKind::P2p;
    t.ranks = r % 2 ? std::vector<int32_t>{r, r + 9, r + 18, r + 23} : std::vector<int32_t>{r, 31 - r};
    t.qps = 1 + r % 3;
    t.bytes = 1000 + r;
    t.latency_steps = 1;
    p.add(t);
  }
  plan::Transfer compute;
  compute.kind = plan::TransferKind::Compute;
  compute.duration = Time(5000);
  p.add(compute);
  plan::Transfer again = p.transfers[3];  // a repeated key
  again.deps.clear();
  p.add(again);
  return p;
}

// Routes compiled ahead on 1 to 4 workers are those compile() makes alone, transfer by transfer; compile()
// then finds every one of them in the cache.
TEST(PlanCompiler, RoutesCompiledAheadOnWorkersAreTheOnesCompiledAlone) {
  const topology::Topology t = fabric();
  const plan::TransferPlan p = mixed_plan();
  const auto n = static_cast<int32_t>(p.transfers.size());
  routing::Router alone_router(t, routing::RouteOptions{});
  PlanCompiler alone(t, alone_router, transport_preset("rocev2"));
  std::vector<CompiledFlow> want;
  for (int32_t i = 0; i < n; ++i) alone.compile(p, i, want);
  for (int workers : {1, 2, 4}) {
    SCOPED_TRACE(workers);
    routing::Router router(t, routing::RouteOptions{});
    PlanCompiler ahead(t, router, transport_preset("rocev2"));
    std::vector<int32_t> all(static_cast<size_t>(n));
    for (int32_t i = 0; i < n; ++i) all[static_cast<size_t>(i)] = i;
    // Distinct keys that route: 10 coupled steps and 8 others (the compute delay and the repeat are not compiled).
    EXPECT_EQ(ahead.prefetch(p, all, workers), workers < 2 ? 0u : 18u);
    std::vector<CompiledFlow> got;
    for (int32_t i = 0; i < n; ++i) ahead.compile(p, i, got);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      expect_same_routes(got[k], want[k]);
      EXPECT_EQ(got[k].transfer, want[k].transfer);
      EXPECT_EQ(got[k].bytes, want[k].bytes);
    }
    if (workers >= 2) {
      EXPECT_EQ(ahead.cache_lookups(), 19u);  // every transfer but the compute delay
      EXPECT_EQ(ahead.cache_hits(), 19u);
    }
  }
}

// Nothing is compiled ahead where a route depends on what was routed before (adaptive) or after a link changed.
TEST(PlanCompiler, NothingIsCompiledAheadForAdaptiveRoutingOrAfterALinkChange) {
  const topology::Topology t = fabric();
  const plan::TransferPlan p = mixed_plan();
  const std::vector<int32_t> all{0, 1, 2, 3};
  routing::RouteOptions o;
  o.policy = "adaptive";
  routing::Router adaptive(t, o);
  PlanCompiler a(t, adaptive, transport_preset("rocev2"));
  EXPECT_EQ(a.prefetch(p, all, 4), 0u);
  routing::Router changed(t, routing::RouteOptions{});
  changed.set_link_up(0, false);
  changed.set_link_up(0, true);
  PlanCompiler c(t, changed, transport_preset("rocev2"));
  EXPECT_EQ(c.prefetch(p, all, 4), 0u);
}

}  // namespace
}  // namespace podnet::engine
