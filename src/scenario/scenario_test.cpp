// Scenario loading: strict validation with file, line and key in every error.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.hpp"
#include "engine/link_classes.hpp"
#include "engine/network_params.hpp"
#include "engine/packet/packet_backend.hpp"
#include "scenario/estimate.hpp"
#include "scenario/examples.hpp"
#include "scenario/scenario.hpp"
#include "scenario/setup.hpp"
#include "topology/bom.hpp"

namespace podnet::scenario {
namespace {

const char* kBase = "schema_version: 1\n"      // line 1
                    "name: t\n"                // 2
                    "topology:\n"              // 3
                    "  family: rail_clos\n"    // 4
                    "  gpus: 1024\n"           // 5
                    "server:\n"                // 6
                    "  nic_speed: 400Gbps\n";  // 7

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}, bool build = false) {
  try {
    Scenario sc = load_text(text, "t.yaml", "t", sets);
    if (build) sc.build_topology();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// An error about two keys points at the one the command line set: --set server.gpus=7 makes the file's (or the
// default) server.nics = 8 not divide, and the --set is what to change.
TEST(Scenario, AnErrorAboutTwoKeysBlamesTheOneTheCommandLineSet) {
  const std::string e = error_of(std::string(kBase), {"server.gpus=7"}, true);
  EXPECT_EQ(e.rfind("--set server.gpus: server.nics = 8 does not divide evenly among server.gpus = 7", 0), 0u) << e;
}

// links: per-class efficiency and latency, defaults from engine/link_classes.hpp,
// strict like every section (file:line, key, expected range).
TEST(Scenario, LinkClassesSection) {
  Scenario sc =
      load_text(std::string(kBase) + "links:\n  nvlink_efficiency: 0.8\n  ici_latency: 50ns\n", "t.yaml", "t");
  const engine::LinkClassOptions lc = engine::link_classes_from(sc.section("links"));
  EXPECT_DOUBLE_EQ(lc[engine::LinkClass::NvLink].efficiency, 0.8);
  EXPECT_EQ(lc[engine::LinkClass::Ici].latency.ps, 50000);
  EXPECT_DOUBLE_EQ(lc[engine::LinkClass::Pcie].efficiency, 0.894);  // default: 128/130 x 256/282
  EXPECT_DOUBLE_EQ(lc[engine::LinkClass::Ethernet].efficiency, 1.0);
  std::string e = error_of(std::string(kBase) + "links:\n  nvlink_eficiency: 0.8\n");
  EXPECT_NE(e.find("t.yaml:9: links.nvlink_eficiency: unknown key (did you mean 'nvlink_efficiency'?)"),
            std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "links:\n  pcie_efficiency: 1.5\n");
  EXPECT_NE(e.find("t.yaml:9: links.pcie_efficiency"), std::string::npos) << e;
  e = error_of(kBase, {"links.ethernet_latency=fast"});
  EXPECT_NE(e.find("--set links.ethernet_latency"), std::string::npos) << e;
}

// addressing: prefixes parsed and canonicalized by the loader, errors at their line (topology/address_plan.hpp).
TEST(Scenario, AddressingSection) {
  Scenario sc = load_text(std::string(kBase) + "addressing:\n  link_pool_v6: FD00:0:0:2:0::/64\n", "t.yaml", "t");
  EXPECT_EQ(sc.section("addressing").get_string("link_pool_v6"), "fd00:0:0:2::/64");  // RFC 5952 form
  EXPECT_EQ(sc.section("addressing").get_string("link_pool_v4"), "10.0.0.0/9");       // default
  // Line 9: host bits set; the message names the network.
  std::string e = error_of(std::string(kBase) + "addressing:\n  link_pool_v4: 10.0.0.1/8\n");
  EXPECT_NE(e.find("t.yaml:9: addressing.link_pool_v4"), std::string::npos) << e;
  EXPECT_NE(e.find("10.0.0.0/8"), std::string::npos) << e;
  // An IPv6 prefix where IPv4 is expected.
  e = error_of(std::string(kBase) + "addressing:\n  family: ipv4\n  loopback_pool_v4: fd00::/64\n");
  EXPECT_NE(e.find("t.yaml:10: addressing.loopback_pool_v4: 'fd00::/64' is not valid: expected an IPv4 prefix"),
            std::string::npos)
      << e;
  // Overlapping pools: 10.0.0.0/8 holds the default loopback pool 10.255.0.0/16; blamed on the loopback key.
  e = error_of(kBase, {"addressing.link_pool_v4=10.0.0.0/8"});
  EXPECT_NE(e.find("addressing.loopback_pool_v4: 10.255.0.0/16 overlaps link_pool_v4 10.0.0.0/8"), std::string::npos)
      << e;
  // ASNs outside RFC 6996's private 4-byte range.
  e = error_of(kBase, {"addressing.asn_base=65000"});
  EXPECT_NE(e.find("--set addressing.asn_base"), std::string::npos) << e;
}

TEST(Scenario, LoadsWithDefaults) {
  Scenario sc = load_text(kBase, "t.yaml", "t");
  EXPECT_EQ(sc.family, "rail_clos");
  EXPECT_EQ(sc.topology.get_int("gpus"), 1024);
  EXPECT_EQ(sc.section("switch").get_int("radix"), 128);  // default
  EXPECT_DOUBLE_EQ(sc.section("server").get_bandwidth("nic_speed").bps, 400e9);
  EXPECT_EQ(sc.seed, 1u);
}

TEST(Scenario, AKaryFatTreeShowsTheSizeAndRadixItBuilds) {
  // fat-tree-k48: k^3/4 = 48^3/4 = 27,648 NIC ports, 8 GPUs per 8 NICs -> 27,648 GPUs (the default 1,024 was
  // shown before); k = 8 with 4-GPU, 4-NIC servers: 128 ports -> 128 GPUs and radix 8 (the file's 48 follows k).
  const Scenario k48 = load("fat-tree-k48");
  EXPECT_EQ(k48.topology.get_int("gpus"), 27648);
  EXPECT_EQ(k48.section("switch").get_int("radix"), 48);
  EXPECT_NE(k48.resolved_yaml().find("  gpus: 27648\n"), std::string::npos);
  EXPECT_EQ(k48.build_topology().gpus.size(), 27648u);
  const Scenario k8 = load("fat-tree-k48", {"topology.k=8", "server.gpus=4", "server.nics=4"});
  EXPECT_EQ(k8.topology.get_int("gpus"), 128);
  EXPECT_EQ(k8.section("switch").get_int("radix"), 8);
  EXPECT_EQ(k8.build_topology().gpus.size(), 128u);
  // A GPU count given beside k is refused unless it is k's (it was dropped without a word); the resolved scenario,
  // which writes k's count in, loads again.
  try {
    (void)load("fat-tree-k48", {"topology.gpus=4096"});
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("--set topology.gpus: topology.gpus = 4,096, but topology.k = 48 builds the "
                                         "k-ary fat tree of 27,648 GPUs; expected topology.gpus left out, or "
                                         "topology.k dropped (--set topology.k=)"),
              std::string::npos)
        << x.what();
  }
  EXPECT_EQ(load("fat-tree-k48", {"topology.gpus=27648"}).topology.get_int("gpus"), 27648);
  EXPECT_EQ(load("fat-tree-k48", {"topology.gpus=4096", "topology.k="}).build_topology().gpus.size(), 4096u);
  // A radix given beside k is refused the same way (--set switch.radix=32 built k = 48's radix-48 switches).
  try {
    (void)load("fat-tree-k48", {"switch.radix=32"});
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("--set switch.radix: switch.radix = 32, but topology.k = 48 builds the "
                                         "k-ary fat tree of radix-48 switches; expected switch.radix left out, or "
                                         "topology.k dropped (--set topology.k=)"),
              std::string::npos)
        << x.what();
  }
  EXPECT_EQ(load("fat-tree-k48", {"switch.radix=48"}).section("switch").get_int("radix"), 48);
  EXPECT_EQ(load("fat-tree-k48", {"switch.radix=32", "topology.k="}).section("switch").get_int("radix"), 32);
}

TEST(Scenario, UnknownKeyNamesFileLineAndKey) {
  std::string text = kBase;
  text += "  nic_sped: 400Gbps\n";  // line 8
  std::string e = error_of(text);
  EXPECT_NE(e.find("t.yaml:8: server.nic_sped: unknown key"), std::string::npos) << e;
  EXPECT_NE(e.find("did you mean 'nic_speed'"), std::string::npos) << e;
  // A word of its own is no typo: `colour` is three edits from `power`, and no key is suggested.
  e = error_of(std::string(kBase) + "  colour: red\n");
  EXPECT_NE(e.find("t.yaml:8: server.colour: unknown key; expected one of:"), std::string::npos) << e;
  EXPECT_EQ(e.find("did you mean"), std::string::npos) << e;
}

TEST(Scenario, KeysOfAMapGivenWholeWithSetBlameTheSet) {
  // `podnet optimize` sets the whole topology map per design point; a key of it is the --set's, not a file line.
  std::string e = error_of(kBase, {"topology={family: fat_tree, gpus: 100000, tiers: 2}"}, true);
  EXPECT_EQ(e.rfind("--set topology.gpus: ", 0), 0u) << e;
  // a key the file gives keeps its line
  e = error_of(kBase, {"topology.gpus=1000000000"}, true);
  EXPECT_EQ(e.find("t.yaml:5"), std::string::npos) << e;
  EXPECT_NE(e.find("--set topology.gpus"), std::string::npos) << e;
}

TEST(Scenario, UnknownTopLevelKey) {
  std::string e = error_of(std::string(kBase) + "topolgy: {}\n");
  EXPECT_NE(e.find("t.yaml:8: topolgy: unknown key"), std::string::npos) << e;
}

TEST(Scenario, BadUnit) {
  std::string text = "schema_version: 1\ntopology:\n  family: rail_clos\nserver:\n  nic_speed: 400GHz\n";
  std::string e = error_of(text);
  EXPECT_NE(e.find("t.yaml:5: server.nic_speed: '400GHz' is not valid: expected a positive bandwidth"),
            std::string::npos)
      << e;
}

TEST(Scenario, MissingRequired) {
  std::string e = error_of("name: x\ntopology:\n  family: fat_tree\n");
  EXPECT_NE(e.find("schema_version: missing required key"), std::string::npos) << e;
  e = error_of("schema_version: 1\n");
  EXPECT_NE(e.find("topology: missing required section"), std::string::npos) << e;
  e = error_of("schema_version: 1\ntopology:\n  gpus: 8\n");
  EXPECT_NE(e.find("t.yaml:2: topology.family: missing required key"), std::string::npos) << e;
}

TEST(Scenario, UnknownFamilySuggests) {
  std::string e = error_of("schema_version: 1\ntopology:\n  family: rail_clo\n");
  EXPECT_NE(e.find("t.yaml:3: topology.family: unknown family 'rail_clo' (did you mean 'rail_clos'?)"),
            std::string::npos)
      << e;
}

TEST(Scenario, OutOfRangeValue) {
  std::string e = error_of("schema_version: 1\ntopology:\n  family: rail_clos\nswitch:\n  radix: 2\n");
  EXPECT_NE(e.find("t.yaml:5: switch.radix: '2' is not valid: expected an integer in [4, 4096]"), std::string::npos)
      << e;
}

TEST(Scenario, ImpossibleValueFromBuilderIsLocated) {
  // 7 GPUs per server on an 8-rail fabric: server.gpus = 7 with server.nics = 8.
  std::string text = "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 700\nserver:\n  gpus: 7\n  nics: 8\n";
  std::string e = error_of(text, {}, true);
  EXPECT_NE(e.find("t.yaml:7: server.nics"), std::string::npos) << e;
  // a radix that cannot host the requested GPUs in 2 tiers
  text = "schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 65544\n  tiers: 2\n";
  e = error_of(text, {}, true);
  EXPECT_NE(e.find("t.yaml:4: topology.gpus: topology.gpus = 65,544 exceeds the 65,536 GPUs"), std::string::npos) << e;
}

TEST(Scenario, SetOverridesAndIsNamed) {
  Scenario sc = load_text(kBase, "t.yaml", "t", {"topology.gpus=4096", "switch.radix=64"});
  EXPECT_EQ(sc.topology.get_int("gpus"), 4096);
  EXPECT_EQ(sc.section("switch").get_int("radix"), 64);
  std::string e = error_of(kBase, {"topology.gpus=lots"});
  EXPECT_NE(e.find("--set topology.gpus: 'lots' is not valid: expected an integer"), std::string::npos) << e;
  e = error_of(kBase, {"topology.gpsu=8"});
  EXPECT_NE(e.find("--set topology.gpsu: unknown key"), std::string::npos) << e;
  e = error_of(kBase, {"nonsense"});
  EXPECT_NE(e.find("expected KEY.PATH=VALUE"), std::string::npos) << e;
}

TEST(Scenario, YamlSyntaxError) {
  std::string e = error_of("schema_version: 1\ntopology: [unclosed\n");
  EXPECT_NE(e.find("t.yaml:"), std::string::npos) << e;
  EXPECT_NE(e.find("YAML syntax error"), std::string::npos) << e;
}

TEST(Scenario, ResolvedRoundTrips) {
  Scenario a = load_text(kBase, "t.yaml", "t");
  std::string y = a.resolved_yaml();
  Scenario b = load_text(y, "resolved.yaml", "t");
  EXPECT_EQ(y, b.resolved_yaml());
  EXPECT_NE(y.find("  radix: 128\n"), std::string::npos);
  EXPECT_NE(y.find("  oversubscription: \"1:1\"\n"), std::string::npos);
}

TEST(Scenario, EveryBuiltinExampleLoadsAndBuilds) {
  ASSERT_GE(builtin_examples().size(), 3u);
  for (const auto& ex : builtin_examples()) {
    Scenario sc = load(ex.name);
    EXPECT_EQ(sc.name, ex.name);
    topology::Topology t = sc.build_topology();
    EXPECT_GT(t.gpus.size(), 0u) << ex.name;
    // the resolved form of each example loads again to the same scenario
    EXPECT_EQ(load_text(sc.resolved_yaml(), "r.yaml", ex.name).resolved_yaml(), sc.resolved_yaml()) << ex.name;
    // and so does the form `podnet resolve` prints, whose recipe keys are comments: the same values back
    EXPECT_EQ(load_text(sc.resolved_yaml(true), "r.yaml", ex.name).resolved_yaml(), sc.resolved_yaml()) << ex.name;
  }
}

TEST(Scenario, FailuresListIsValidatedAndResolved) {
  std::string text = std::string(kBase) + "failures:\n"                                                          // 8
                                          "  - {at: 2ms, link: \"su000-leaf-r0:Ethernet1/65\", action: down}\n"  // 9
                                          "  - {at: 1ms, gpu: 3, action: slow, factor: 2}\n";                    // 10
  Scenario sc = load_text(text, "t.yaml", "t");
  ASSERT_EQ(sc.failures.size(), 2u);
  topology::Topology t = sc.build_topology();
  auto evs = sc.failure_events(t);
  ASSERT_EQ(evs.size(), 2u);
  EXPECT_EQ(evs[0].gpu, 3);  // sorted by time: the 1 ms straggler first
  ASSERT_EQ(evs[1].links.size(), 1u);
  // port 65 of a 128-port leaf with 64 down-ports is its first uplink
  EXPECT_EQ(t.nodes[t.links[evs[1].links[0]].a].name, "su000-leaf-r0");
  // the resolved scenario echoes them
  EXPECT_NE(sc.resolved_yaml().find("  - {at: 2ms, link: \"su000-leaf-r0:Ethernet1/65\", action: down}"),
            std::string::npos);
  std::string e = error_of(std::string(kBase) + "failures:\n  - {at: 2ms, link: x, action: explode}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].action: 'explode' is not valid for a link"), std::string::npos) << e;
  // A missing action says it is missing (it read "'' is not valid for a link"); a misspelt share key is named.
  e = error_of(std::string(kBase) + "failures:\n  - {at: 2ms, link: x}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].action: missing: expected what happens to the link: action: one of down, "
                   "up, degrade, drain"),
            std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "failures:\n  - {at: 2ms, switch: spine, cont: 1, action: down}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].cont: unknown key (did you mean 'count'?); expected one device"),
            std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "failures:\n  - {at: soon, link: x, action: down}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].at: 'soon' is not valid: expected the time"), std::string::npos) << e;
  Scenario bad =
      load_text(std::string(kBase) + "failures:\n  - {at: 2ms, link: nowhere, action: down}\n", "t.yaml", "t");
  try {
    bad.failure_events(bad.build_topology());
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("t.yaml:9: failures[0].link: no network link 'nowhere'"), std::string::npos)
        << x.what();
  }
  // A name padded for another fabric's size (docs show gpu-node-0003 from 1,000+ servers) suggests the same
  // number here, not the closest spelling (gpu-node-000).
  Scenario padded = load_text(std::string(kBase) + "failures:\n  - {at: 2ms, link: \"gpu-node-0003/nic2\", "
                                                   "action: down}\n",
                              "t.yaml", "t");
  try {
    padded.failure_events(padded.build_topology());
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("(did you mean 'gpu-node-003/nic2'?)"), std::string::npos) << x.what();
  }
  // A key another action reads is refused rather than ignored (rate is degrade's, factor slow's).
  e = error_of(std::string(kBase) + "failures:\n  - {at: 2ms, link: x, action: down, rate: 100Gbps}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].rate: rate is read by action: degrade only, not by down"), std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "failures:\n  - {at: 2ms, link: x, action: down, factor: 9}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].factor: factor is read by action: slow only"), std::string::npos) << e;
  // A degrade above the link's speed would make it faster than its port: refused with the speed (the
  // access link of aipod-16k's NIC runs at 400 Gb/s).
  Scenario fast = load_text(std::string(kBase) + "failures:\n  - {at: 0s, link: \"gpu-node-000/nic0\", action: "
                                                 "degrade, rate: 1600Gbps}\n",
                            "t.yaml", "t");
  try {
    fast.failure_events(fast.build_topology());
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("t.yaml:9: failures[0].rate: 1.6Tbps is above the speed of "
                                         "gpu-node-000/nic0 (400Gbps)"),
              std::string::npos)
        << x.what();
  }
  // a switch name missing its pod prefix: the full name is suggested
  Scenario near =
      load_text(std::string(kBase) + "failures:\n  - {at: 2ms, switch: spine-r0-000, action: down}\n", "t.yaml", "t");
  try {
    near.failure_events(near.build_topology());
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("(did you mean 'pod000-spine-r0-000'?)"), std::string::npos) << x.what();
  }
}

TEST(Scenario, RandomFailuresAreDrawnFromTheJobAndSeeded) {
  std::string text = std::string(kBase) + "failures:\n"                                                     // 8
                                          "  - {random: 5, parts: [optic, switch], until: 10ms}\n"          // 9
                                          "  - {random: poisson, scale: 1e12, parts: [gpu], from: 1ms}\n";  // 10
  Scenario sc = load_text(text, "t.yaml", "t");
  ASSERT_EQ(sc.failures.size(), 2u);
  const topology::Topology t = sc.build_topology();
  // The job: GPUs 0..7 (one server). The poisson entry draws over [1 ms, 4 ms):
  // 8 GPUs at 1/79,230 h, scale 1e12, 3 ms: 8e12 / 79230 per hour / 3.6e6 ms/h x 3 ms = 84 expected.
  const std::vector<int32_t> job = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto evs = sc.failure_events(t, Time(4000000000), job);
  int optics_or_switches = 0, gpus = 0;
  for (const auto& e : evs) {
    if (e.action == engine::FailureAction::Stop) {
      ++gpus;
      EXPECT_TRUE(e.gpu >= 0 && e.gpu < 8) << e.what;
      EXPECT_GE(e.at, Time(1000000000));
      EXPECT_LT(e.at, Time(4000000000));
    } else {
      ++optics_or_switches;
      EXPECT_LT(e.at, Time(10000000000));
      EXPECT_TRUE(e.what.find("optic") != std::string::npos || e.what.find("switch") != std::string::npos) << e.what;
    }
  }
  EXPECT_EQ(optics_or_switches, 5);
  EXPECT_NEAR(gpus, 84, 5 * std::sqrt(84.0));  // Poisson: within 5 sigma
  // Same scenario and seed: the same draw; another seed: another.
  auto whats = [](const std::vector<engine::FailureEvent>& v) {
    std::vector<std::string> w;
    for (const auto& e : v) w.push_back(e.what + "@" + std::to_string(e.at.ps));
    return w;
  };
  EXPECT_EQ(whats(sc.failure_events(t, Time(4000000000), job)), whats(evs));
  Scenario other = load_text(text, "t.yaml", "t", {"seed=2"});
  EXPECT_NE(whats(other.failure_events(t, Time(4000000000), job)), whats(evs));
  // echoed as written
  EXPECT_NE(sc.resolved_yaml().find("  - {random: 5, parts: [optic, switch], until: 10ms}"), std::string::npos)
      << sc.resolved_yaml();
  // no run length and no until: a located error
  Scenario open = load_text(std::string(kBase) + "failures:\n  - {random: 2}\n", "t.yaml", "t");
  try {
    open.failure_events(t);
    FAIL();
  } catch (const InputError& x) {
    EXPECT_NE(std::string(x.what()).find("t.yaml:9: failures[0].until:"), std::string::npos) << x.what();
  }
  std::string e = error_of(std::string(kBase) + "failures:\n  - {random: 3, parts: [optics]}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].parts: unknown part 'optics' (did you mean 'optic'?)"), std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "failures:\n  - {random: 3, scale: 10}\n");
  EXPECT_NE(e.find("failures[0].scale: scale applies to `random: poisson`"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "failures:\n  - {random: often}\n");
  EXPECT_NE(e.find("failures[0].random: 'often' is not valid"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "failures:\n  - {random: 3, at: 2ms}\n");
  EXPECT_NE(e.find("failures[0].at: unknown key"), std::string::npos) << e;
}

TEST(Scenario, BadFailureRateIsRefusedAtLoad) {
  // Rates are strings the section's types cannot check; every command refuses them at load.
  std::string e = error_of(std::string(kBase) + "reliability:\n  gpu_mtbf: 12 parsecs\n");  // line 9
  EXPECT_NE(e.find("t.yaml:9: reliability.gpu_mtbf: '12 parsecs' is not valid"), std::string::npos) << e;
  e = error_of(kBase, {"reliability.checkpoint_cost=0s"});
  EXPECT_NE(e.find("--set reliability.checkpoint_cost:"), std::string::npos) << e;
  // 1 to 99 trials were skipped with an empty reason; an interval of 0 dropped its section without a word.
  e = error_of(std::string(kBase) + "reliability:\n  monte_carlo_trials: 50\n");  // line 9
  EXPECT_NE(e.find("t.yaml:9: reliability.monte_carlo_trials: 50 trials are too few for a 95 % interval; expected 0 "
                   "(the closed form alone) or at least 100"),
            std::string::npos)
      << e;
  e = error_of(kBase, {"reliability.checkpoint_interval=0s"});
  EXPECT_NE(e.find("--set reliability.checkpoint_interval: '0s' is not valid: expected a positive interval"),
            std::string::npos)
      << e;
}

// switch.in_network_reduction: sharp marks the fabric's switches as reducing (collective/collnet.hpp);
// it needs the infiniband transport and switches, with errors at the key's line.
TEST(Scenario, InNetworkReductionKnob) {
  const std::string small = "schema_version: 1\nname: t\ntopology:\n  family: fat_tree\n  gpus: 32\n";
  EXPECT_FALSE(resolve(load_text(small, "t.yaml", "t")).fabric.sharp);
  const std::string sharp = small + "switch:\n  in_network_reduction: sharp\n";  // line 7
  const scenario::Setup s = resolve(load_text(sharp + "network: {transport: infiniband}\n", "t.yaml", "t"));
  EXPECT_TRUE(s.fabric.sharp);
  std::string e;
  try {
    resolve(load_text(sharp, "t.yaml", "t"));  // rocev2, the default transport
  } catch (const InputError& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("t.yaml:7: switch.in_network_reduction:"), std::string::npos) << e;
  EXPECT_NE(e.find("network.transport: infiniband"), std::string::npos) << e;
  e = error_of(small + "switch:\n  in_network_reduction: sharpp\n");
  EXPECT_NE(e.find("t.yaml:7: switch.in_network_reduction: 'sharpp' is not valid"), std::string::npos) << e;
  // A torus has no switches to reduce in.
  e = error_of("schema_version: 1\nname: t\ntopology:\n  family: torus\n  dims: [4, 4, 4]\nswitch:\n"
               "  in_network_reduction: sharp\n",
               {}, true);
  EXPECT_NE(e.find("t.yaml:7: switch.in_network_reduction:"), std::string::npos) << e;
  EXPECT_NE(e.find("no switches"), std::string::npos) << e;
}

TEST(Scenario, PacketEngineKnobsReachThePacketOptions) {
  // cc auto follows the transport; cc, pfc and switch_buffer given reach PacketOptions.
  Scenario ib = load_text(std::string(kBase) + "network: {transport: infiniband}\n", "t.yaml", "t");
  EXPECT_EQ(engine::packet::default_packet_options(engine::network_options_from(ib.section("network"), 1)).cc,
            "infiniband");
  Scenario roce = load_text(kBase, "t.yaml", "t");
  EXPECT_EQ(engine::packet::default_packet_options(engine::network_options_from(roce.section("network"), 1)).cc,
            "dcqcn_nic");
  Scenario sc =
      load_text(std::string(kBase) + "network: {cc: dcqcn_paper, pfc: false, switch_buffer: 16MiB}\n", "t.yaml", "t");
  const auto p = engine::packet::default_packet_options(engine::network_options_from(sc.section("network"), 1));
  EXPECT_EQ(p.cc, "dcqcn_paper");
  EXPECT_FALSE(p.pfc);
  EXPECT_EQ(p.buffer_bytes, 16 * 1048576);  // 16 MiB
  // Not given: the congestion control's own band (< 0) and the automatic timeout (0).
  EXPECT_LT(p.ecn_kmin, 0);
  EXPECT_LT(p.ecn_pmax, 0);
  EXPECT_EQ(p.rto.ps, 0);
  Scenario band =
      load_text(std::string(kBase) + "network: {ecn_kmin: 20KB, ecn_kmax: 200KB, ecn_pmax: 0.2, rto: 2ms}\n", "t.yaml",
                "t");
  const auto q = engine::packet::default_packet_options(engine::network_options_from(band.section("network"), 1));
  EXPECT_EQ(q.ecn_kmin, 20'000);
  EXPECT_EQ(q.ecn_kmax, 200'000);
  EXPECT_DOUBLE_EQ(q.ecn_pmax, 0.2);
  EXPECT_EQ(q.rto, Time::from_seconds(2e-3));
  std::string e = error_of(std::string(kBase) + "network: {cc: dcqn}\n");
  EXPECT_NE(e.find("t.yaml:8: network.cc: 'dcqn' is not valid"), std::string::npos) << e;
}

TEST(Scenario, UnknownScenarioName) {
  try {
    load("aipod-16");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'aipod-16k'"), std::string::npos) << e.what();
  }
}

TEST(Scenario, RootMustBeAMapEvenWithOverrides) {
  // A bare scalar or a list used to reach yaml-cpp's operator[] through --set ("operator[] call on a scalar").
  for (const std::vector<std::string>& sets :
       {std::vector<std::string>{}, std::vector<std::string>{"topology.gpus=8"}}) {
    std::string e = error_of("42\n", sets);
    EXPECT_NE(e.find("t.yaml:1: expected a YAML map with schema_version and topology, got a single value"),
              std::string::npos)
        << e;
    e = error_of("- a\n- b\n", sets);
    EXPECT_NE(e.find("t.yaml:1: expected a YAML map with schema_version and topology, got a list"), std::string::npos)
        << e;
  }
}

TEST(Scenario, DuplicateKeysNameBothLines) {
  // YAML leaves duplicates to the application; yaml-cpp kept both and the last one won silently.
  std::string e = error_of(std::string(kBase) + "  nic_speed: 200Gbps\n");  // line 8 repeats line 7
  EXPECT_NE(e.find("t.yaml:8: server.nic_speed: given twice (first at line 7)"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "server:\n  nics: 8\n");  // a second `server:` at line 8 (first at 6)
  EXPECT_NE(e.find("t.yaml:8: server: given twice (first at line 6)"), std::string::npos) << e;
  e = error_of("schema_version: 1\ntopology:\n  family: rail_clos\n  gpus: 64\n  gpus: 128\n");
  EXPECT_NE(e.find("t.yaml:5: topology.gpus: given twice (first at line 4)"), std::string::npos) << e;
  // Inside a failures entry too.
  e = error_of(std::string(kBase) + "failures:\n  - {at: 1ms, at: 2ms, gpu: 0, action: slow, factor: 2}\n");
  EXPECT_NE(e.find("failures[0].at: given twice"), std::string::npos) << e;
}

TEST(Scenario, SetOfAnUnknownSectionBlamesTheSet) {
  const std::string e = error_of(kBase, {"foo.bar=1"});
  EXPECT_EQ(e.rfind("--set foo: unknown key", 0), 0u) << e;
}

TEST(Scenario, ValuesBeyondTheLimitsNameTheirKey) {
  // 2000 h = 7.2e18 ps is past the 1000 h limit (units.hpp); it used to surface as an engine's
  // "latency must be >= 0" after the sum of a few such latencies wrapped int64.
  std::string e = error_of(kBase, {"switch.latency=2000h"});
  EXPECT_NE(e.find("--set switch.latency: '2000h' is not valid"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "switch:\n  latency: 1e308h\n");  // line 9
  EXPECT_NE(e.find("t.yaml:9: switch.latency: '1e308h' is not valid"), std::string::npos) << e;
  e = error_of(kBase, {"server.nic_speed=1bps"});
  EXPECT_NE(e.find("--set server.nic_speed: '1bps' is not valid: expected a positive bandwidth from 1Mbps"),
            std::string::npos)
      << e;
  // 1e308:1e-308 = inf:1 used to leave a leaf with -2147483648 down ports.
  e = error_of(kBase, {"topology.oversubscription=1e308:1e-308"}, true);
  EXPECT_NE(e.find("--set topology.oversubscription: '1e308:1e-308' is not valid"), std::string::npos) << e;
  // More GPUs than podnet builds (topology::kMaxGpus = 2^20 = 1,048,576).
  e = error_of(kBase, {"topology.gpus=100000000"});
  EXPECT_NE(e.find("--set topology.gpus: '100000000' is not valid: expected an integer in [1, 1048576]"),
            std::string::npos)
      << e;
  // A failure at 2600 h would wrap the clock; a degrade to 1e308 Tbps is infinite.
  e = error_of(std::string(kBase) + "failures:\n  - {at: 2600h, gpu: 0, action: slow, factor: 2}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].at: '2600h' is not valid: expected the time of the event"), std::string::npos)
      << e;
  e = error_of(std::string(kBase) +
               "failures:\n  - {at: 0s, link: \"gpu-node-000/nic0\", action: degrade, rate: 1e308Tbps}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].rate: degrade needs the new rate"), std::string::npos) << e;
  // No rate at all: the message says what to write (it ended in a colon and nothing).
  e = error_of(std::string(kBase) + "failures:\n  - {at: 0s, link: \"gpu-node-000/nic0\", action: degrade}\n");
  EXPECT_NE(e.find("t.yaml:9: failures[0].rate: degrade needs the new rate, rate: with a unit (such as rate: "
                   "100Gbps)"),
            std::string::npos)
      << e;
}

TEST(Scenario, RoutingPolicyMustFitTheFamily) {
  // ugal is dragonfly's (routing/policies.cpp); on a rail_clos it used to fail at the first route, exit 1.
  std::string e = error_of(std::string(kBase) + "network:\n  routing: ugal\n");  // line 9
  EXPECT_NE(e.find("t.yaml:9: network.routing: policy 'ugal' applies to dragonfly"), std::string::npos) << e;
  EXPECT_NE(e.find("expected one of: ecmp"), std::string::npos) << e;
  e = error_of(kBase, {"network.routing=ugal"});
  EXPECT_EQ(e.rfind("--set network.routing: policy 'ugal'", 0), 0u) << e;
  EXPECT_EQ(error_of(std::string(kBase) + "network:\n  routing: adaptive\n"), "");
}

}  // namespace
}  // namespace podnet::scenario

namespace podnet::scenario {
namespace {

// faults: (podnet diagnose) are parsed strictly, resolved against the fabric, and echoed in the resolved scenario.
TEST(Faults, ParsedResolvedAndEchoed) {
  const std::string text = std::string(kBase) +
                           "faults:\n"                                                            // 8
                           "  - {kind: drop, link: \"gpu-node-000/nic0\", probability: 0.001}\n"  // 9
                           "  - {kind: corrupt, link: \"gpu-node-000/nic1\", direction: both, probability: 1e-4}\n"
                           "  - {kind: degrade, link: \"gpu-node-001/nic0\", direction: rx, latency: 20us}\n"
                           "  - {kind: flap, link: \"gpu-node-002/nic0\", period: 30s, down: 2s, at: 1min}\n";
  const Scenario sc = load_text(text, "t.yaml", "t");
  ASSERT_EQ(sc.faults.size(), 4u);
  const topology::Topology t = sc.build_topology();
  const std::vector<diagnose::Fault> f = sc.fault_list(t);
  ASSERT_EQ(f.size(), 4u);
  // tx of a NIC: the direction leaving the NIC; both: two directions; rx: the one entering it.
  ASSERT_EQ(f[0].dirs.size(), 1u);
  EXPECT_EQ(t.nodes[routing::dir_from(f[0].dirs[0], t)].name, "gpu-node-000/nic0");
  EXPECT_DOUBLE_EQ(f[0].probability, 0.001);
  EXPECT_EQ(f[1].dirs.size(), 2u);
  ASSERT_EQ(f[2].dirs.size(), 1u);
  EXPECT_EQ(t.nodes[routing::dir_to(f[2].dirs[0], t)].name, "gpu-node-001/nic0");
  EXPECT_EQ(f[2].latency, Time::from_seconds(20e-6));
  EXPECT_EQ(f[3].kind, diagnose::FaultKind::Flap);
  EXPECT_EQ(f[3].start, Time::from_seconds(60));
  // The resolved scenario carries them and loads back to the same.
  const Scenario back = load_text(sc.resolved_yaml(), "r.yaml", "t");
  EXPECT_EQ(back.resolved_yaml(), sc.resolved_yaml());
  EXPECT_EQ(back.faults.size(), 4u);
}

TEST(Faults, BadEntriesNameFileLineAndKey) {
  const std::string base = std::string(kBase) + "faults:\n";  // entries on line 9
  EXPECT_NE(error_of(base + "  - {kind: melt, link: \"x\"}\n").find("t.yaml:9: faults[0].kind: 'melt' is not a fault"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"gpu-node-000/nic0\"}\n")
                .find("t.yaml:9: faults[0].probability: expected the probability"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"a\", probability: 2}\n").find("faults[0].probability"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: flap, link: \"a\", period: 1s, down: 2s}\n")
                .find("faults[0].down: expected 0 < down <= period"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"a\", probability: 0.1, direction: up}\n")
                .find("faults[0].direction: 'up'"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, probability: 0.1, colour: red}\n").find("faults[0].colour: unknown key"),
            std::string::npos);
  // Keys of another kind are refused rather than ignored (latency is degrade's, period and down flap's).
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"a\", probability: 0.1, latency: 50us}\n")
                .find("t.yaml:9: faults[0].latency: a drop has no latency (degrade has)"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: corrupt, link: \"a\", probability: 0.1, period: 5s, down: 1s}\n")
                .find("t.yaml:9: faults[0].period: a corrupt has no period (flap has)"),
            std::string::npos);
  // A name the fabric does not have is found when resolved, at the entry's line, with a suggestion.
  const Scenario sc = load_text(base + "  - {kind: drop, switch: \"spine-9\", probability: 0.1}\n", "t.yaml", "t");
  const topology::Topology t = sc.build_topology();
  try {
    sc.fault_list(t);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("t.yaml:9: faults[0].switch: no switch named 'spine-9'"), std::string::npos)
        << e.what();
  }
}

// A pfc_storm names the NIC that sends PAUSE; it becomes a PauseStorm on the
// direction entering that NIC (engine/failures.hpp), not a probe fault.
TEST(Faults, PfcStormIsThePausedDirectionIntoTheNamedNic) {
  const std::string text = std::string(kBase) +
                           "faults:\n"
                           "  - {kind: pfc_storm, link: \"gpu-node-001/nic0\", at: 20us, duration: 2ms}\n"
                           "  - {kind: drop, link: \"gpu-node-000/nic0\", probability: 0.001}\n";
  const Scenario sc = load_text(text, "t.yaml", "t");
  const topology::Topology t = sc.build_topology();
  EXPECT_EQ(sc.fault_list(t).size(), 1u);  // the drop only
  const auto st = sc.pause_storms(t);
  ASSERT_EQ(st.size(), 1u);
  EXPECT_EQ(t.nodes[routing::dir_to(st[0].port, t)].name, "gpu-node-001/nic0");
  EXPECT_EQ(st[0].start, Time::from_seconds(20e-6));
  EXPECT_EQ(st[0].end, Time::from_seconds(20e-6 + 2e-3));
  const Scenario back = load_text(sc.resolved_yaml(), "r.yaml", "t");
  EXPECT_EQ(back.resolved_yaml(), sc.resolved_yaml());
  const std::string base = std::string(kBase) + "faults:\n";  // entries on line 9
  EXPECT_NE(error_of(base + "  - {kind: pfc_storm, link: \"gpu-node-001/nic0\"}\n")
                .find("t.yaml:9: faults[0].duration: a pfc_storm needs duration"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: pfc_storm, switch: \"x\", duration: 1ms}\n")
                .find("t.yaml:9: faults[0].switch: a pfc_storm is sent by a NIC"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"a\", probability: 0.1, duration: 1ms}\n")
                .find("t.yaml:9: faults[0].duration: a drop has no duration"),
            std::string::npos);
}

// jobs: each entry's workload keys on top of the scenario's workload:, its defaults, errors at the entry's line,
// and the echo in the resolved scenario (which loads back to the same jobs).
TEST(ScenarioJobs, ParsedMergedAndEchoed) {
  const std::string text = std::string(kBase) +               // lines 1-7
                           "workload:\n"                      // 8
                           "  model: llama3-8b\n"             // 9
                           "  tp: 8\n"                        // 10
                           "jobs:\n"                          // 11
                           "  - {gpus: 64}\n"                 // 12
                           "  - name: big\n"                  // 13
                           "    gpus: 128\n"                  // 14
                           "    start: 5ms\n"                 // 15
                           "    placement: random\n"          // 16
                           "    workload: {tp: 4, pp: 2}\n";  // 17
  const Scenario sc = load_text(text, "t.yaml", "t");
  ASSERT_EQ(sc.jobs.size(), 2u);
  EXPECT_EQ(sc.jobs[0].name, "job0");
  EXPECT_EQ(sc.jobs[0].gpus, 64);
  EXPECT_EQ(sc.jobs[0].start.ps, 0);
  EXPECT_EQ(sc.jobs[0].placement, "");
  EXPECT_EQ(sc.jobs[0].workload.get_int("tp"), 8);  // the scenario's workload:
  EXPECT_EQ(sc.jobs[0].workload.get_string("model"), "llama3-8b");
  EXPECT_EQ(sc.jobs[1].name, "big");
  EXPECT_EQ(sc.jobs[1].start, Time(5'000'000'000));
  EXPECT_EQ(sc.jobs[1].placement, "random");
  EXPECT_EQ(sc.jobs[1].workload.get_int("tp"), 4);  // its own, over the scenario's 8
  EXPECT_EQ(sc.jobs[1].workload.get_int("pp"), 2);
  EXPECT_EQ(sc.jobs[1].workload.get_string("model"), "llama3-8b");
  EXPECT_EQ(sc.jobs[1].keys, (std::vector<std::string>{"tp", "pp"}));
  EXPECT_EQ(sc.where("jobs[1].workload.tp"), "t.yaml:17: jobs[1].workload.tp");
  EXPECT_EQ(sc.section("scheduler").get_string("policy"), "first-fit");
  const std::string yaml = sc.resolved_yaml();
  EXPECT_NE(yaml.find("  - {name: job0, gpus: 64, start: 0s}\n"), std::string::npos) << yaml;
  EXPECT_NE(yaml.find("  - {name: big, gpus: 128, start: 5ms, placement: random, workload: {tp: 4, pp: 2}}\n"),
            std::string::npos)
      << yaml;
  const Scenario again = load_text(yaml, "r.yaml", "r");
  ASSERT_EQ(again.jobs.size(), 2u);
  EXPECT_EQ(again.jobs[1].workload.get_int("tp"), 4);
  EXPECT_EQ(again.jobs[1].start, sc.jobs[1].start);
  EXPECT_EQ(again.resolved_yaml(), yaml);
}

TEST(ScenarioJobs, BadEntriesNameFileLineAndKey) {
  const std::string base = std::string(kBase) + "jobs:\n";  // the entry is line 9
  std::string e = error_of(base + "  - {name: a}\n");
  EXPECT_NE(e.find("t.yaml:9: jobs[0].gpus: expected the job's GPU count"), std::string::npos) << e;
  e = error_of(base + "  - {gpus: 8, gpu: 8}\n");
  EXPECT_NE(e.find("t.yaml:9: jobs[0].gpu: unknown key (did you mean 'gpus'?)"), std::string::npos) << e;
  e = error_of(base + "  - {gpus: 8, placement: best}\n");
  EXPECT_NE(e.find("t.yaml:9: jobs[0].placement: unknown scheduler policy 'best'; expected one of: first-fit, "
                   "topology-aware, random"),
            std::string::npos)
      << e;
  e = error_of(base + "  - {gpus: 8, start: 5}\n");
  EXPECT_NE(e.find("t.yaml:9: jobs[0].start"), std::string::npos) << e;
  e = error_of(base + "  - {name: a, gpus: 8}\n  - {name: a, gpus: 8}\n");
  EXPECT_NE(e.find("t.yaml:10: jobs[1].name: 'a' names an earlier job too"), std::string::npos) << e;
  e = error_of(base + "  - gpus: 8\n    workload: {tpp: 8}\n");
  EXPECT_NE(e.find("t.yaml:10: jobs[0].workload.tpp: unknown key (did you mean 'tp'?)"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "jobs: {gpus: 8}\n");
  EXPECT_NE(e.find("t.yaml:8: jobs: expected a list of jobs"), std::string::npos) << e;
  e = error_of(std::string(kBase) + "scheduler:\n  policy: best\n");
  EXPECT_NE(e.find("t.yaml:9: scheduler.policy"), std::string::npos) << e;
}

// drifted_thresholds name a switch; they become the packet engine's ThresholdDrift (engine/failures.hpp),
// not a probe fault: kmin/kmax in bytes, pmax, pfc_alpha a power of two (alpha = 2^-dt_shift).
TEST(Faults, DriftedThresholdsAreTheNamedSwitchsBand) {
  const std::string base = std::string(kBase) + "faults:\n";  // entries on line 9
  const Scenario sc0 =
      load_text(base + "  - {kind: drop, link: \"gpu-node-000/nic0\", probability: 0.001}\n", "t.yaml", "t");
  const topology::Topology t = sc0.build_topology();
  std::string sw;
  for (const auto& n : t.nodes)
    if (n.kind == topology::NodeKind::Switch) {
      sw = n.name;
      break;
    }
  const Scenario sc = load_text(base + "  - {kind: drifted_thresholds, switch: \"" + sw +
                                    "\", kmin: 20KB, kmax: 80KB, pmax: 0.5, pfc_alpha: 0.5}\n",
                                "t.yaml", "t");
  EXPECT_TRUE(sc.fault_list(t).empty());
  const auto d = sc.threshold_drifts(t);
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(t.nodes[d[0].node].name, sw);
  EXPECT_EQ(d[0].kmin, 20'000);
  EXPECT_EQ(d[0].kmax, 80'000);
  EXPECT_EQ(d[0].pmax, 0.5);
  EXPECT_EQ(d[0].dt_shift, 1);  // 0.5 = 2^-1
  const Scenario back = load_text(sc.resolved_yaml(), "r.yaml", "t");
  EXPECT_EQ(back.resolved_yaml(), sc.resolved_yaml());
  EXPECT_NE(error_of(base + "  - {kind: drifted_thresholds, link: \"gpu-node-000/nic0\", kmin: 1KB}\n")
                .find("t.yaml:9: faults[0].link: drifted_thresholds are a switch's"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drifted_thresholds, switch: \"x\", pfc_alpha: 0.3}\n")
                .find("t.yaml:9: faults[0].pfc_alpha: expected the PFC dynamic threshold's alpha as a power of two"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drifted_thresholds, switch: \"x\", kmin: 80KB, kmax: 20KB}\n")
                .find("t.yaml:9: faults[0].kmax: expected kmax >= kmin"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drifted_thresholds, switch: \"x\"}\n")
                .find("t.yaml:9: faults[0]: drifted_thresholds need at least one of kmin, kmax, pmax, pfc_alpha"),
            std::string::npos);
  EXPECT_NE(error_of(base + "  - {kind: drop, link: \"a\", probability: 0.1, kmin: 1KB}\n")
                .find("t.yaml:9: faults[0].kmin: a drop has no kmin"),
            std::string::npos);
}

}  // namespace
}  // namespace podnet::scenario

namespace podnet::scenario {
namespace {

// The analytical engine's threads past the first are in the memory estimate (1,536 B per GPU each, the larger
// measured slope): 4 threads on 1,000 GPUs add 3 x 1,000 x 1,536 = 4,608,000 B; one thread or another engine none.
TEST(MemoryGuard, CountsTheAnalyticalEnginesExtraThreads) {
  estimate::Estimate e;
  estimate::add_threads(e, "analytical", 1000, 4);
  ASSERT_EQ(e.parts.size(), 1u);
  EXPECT_DOUBLE_EQ(e.bytes(), 4608000.0);
  EXPECT_EQ(e.parts[0].shrink, "network.threads");
  estimate::Estimate none;
  estimate::add_threads(none, "analytical", 1000, 1);
  estimate::add_threads(none, "flow", 1000, 4);
  EXPECT_TRUE(none.parts.empty());
}

// A newcomer's slips are said as what to fix: an indentation error as indentation, a section's key at the top
// level as that section's, a misspelt model with the nearest one (each read as yaml-cpp's bare words before).
TEST(Intake, NewcomersSlipsSayWhatToFix) {
  std::string e = error_of(std::string(kBase) + "  gpus: 8\n   nics: 8\n");
  EXPECT_NE(e.find("t.yaml:9:8: YAML syntax error: illegal map value (a `key: value` where none can be: is this line "
                   "indented deeper"),
            std::string::npos)
      << e;
  e = error_of("schema_version: 1\nname: t\ntopology:\n  family: rail_clos\n gpus: 64\n");
  EXPECT_NE(e.find("end of map not found (is this line indented less than the keys beside it?"), std::string::npos)
      << e;
  e = error_of(std::string(kBase) + "workload:\nmodel: llama3-8b\n");
  EXPECT_NE(e.find("t.yaml:9: model: unknown key at the top level; it is a key of `workload:`: indent it under its "
                   "section"),
            std::string::npos)
      << e;
  e = error_of(std::string(kBase), {"workload.model=llama3-7b"});
  EXPECT_NE(e.find("'llama3-7b' is not valid (did you mean 'llama3-8b'?)"), std::string::npos) << e;
}

// The GPU preset's NVLink per direction (workload.gpu) is the server's unless the scenario or --set gives one:
// a B200 what-if is a B200 server (until 2026-12 every GPU ran on the default 450 GB/s).
TEST(GpuPreset, SetsTheServersNvlinkUnlessGiven) {
  Scenario sc = load_text(std::string(kBase), "t.yaml", "t", {"workload.gpu=b200"});
  EXPECT_DOUBLE_EQ(sc.hardware().nvlink_bw.bytes_per_second(), 900e9);
  EXPECT_EQ(sc.gpu_kept.count("server.nvlink_bandwidth"), 0u);
  sc = load_text(std::string(kBase), "t.yaml", "t", {"workload.gpu=a100"});
  EXPECT_DOUBLE_EQ(sc.hardware().nvlink_bw.bytes_per_second(), 300e9);
  // Given: kept, and recorded with the GPU's figure for the note.
  sc = load_text(std::string(kBase) + "  nvlink_bandwidth: 450GB/s\n", "t.yaml", "t", {"workload.gpu=b200"});
  EXPECT_DOUBLE_EQ(sc.hardware().nvlink_bw.bytes_per_second(), 450e9);
  ASSERT_EQ(sc.gpu_kept.count("server.nvlink_bandwidth"), 1u);
  EXPECT_EQ(sc.gpu_kept.at("server.nvlink_bandwidth"), std::make_pair(std::string("450"), std::string("900")));
  sc = load_text(std::string(kBase), "t.yaml", "t", {"workload.gpu=b200", "server.nvlink_bandwidth=1TB/s"});
  EXPECT_DOUBLE_EQ(sc.hardware().nvlink_bw.bytes_per_second(), 1e12);
}

// An 8-GPU server's power follows the GPU preset unless given (NVIDIA's DGX specifications: DGX A100 6.5 kW, DGX
// H100 10.2 kW, DGX B200 14.3 kW): a B200 what-if had kept the H100 server's 10.2 kW, and the design's power and
// energy with it. Given, it stays and is recorded for the note; other servers keep server.power.
TEST(GpuPreset, SetsAnEightGpuServersPowerUnlessGiven) {
  Scenario sc = load_text(std::string(kBase), "t.yaml", "t", {"workload.gpu=b200"});
  EXPECT_DOUBLE_EQ(sc.hardware().server_power_w, 14300);
  EXPECT_EQ(sc.gpu_keys.at("server.power"), "workload.gpu");
  sc = load_text(std::string(kBase), "t.yaml", "t", {"workload.gpu=a100"});
  EXPECT_DOUBLE_EQ(sc.hardware().server_power_w, 6500);
  sc = load_text(std::string(kBase) + "  power: 10.2kW\n", "t.yaml", "t", {"workload.gpu=b200"});
  EXPECT_DOUBLE_EQ(sc.hardware().server_power_w, 10200);
  ASSERT_EQ(sc.gpu_kept.count("server.power"), 1u);
  EXPECT_EQ(sc.gpu_kept.at("server.power"), std::make_pair(std::string("10.2kW"), std::string("14.3kW")));
  // A 4-GPU server: no DGX figure applies.
  sc = load_text(std::string(kBase) + "  gpus: 4\n  nics: 4\n", "t.yaml", "t", {"workload.gpu=b200"});
  EXPECT_DOUBLE_EQ(sc.hardware().server_power_w, 10200);
}

// A deployment preset (network.preset) fills the network keys the scenario leaves out, key by key.
TEST(NetworkPreset, FillsTheKeysTheScenarioLeavesOut) {
  Scenario sc = load_text(std::string(kBase) + "network:\n  preset: uec\n", "t.yaml", "t");
  const Params& n = sc.section("network");
  EXPECT_EQ(n.get_string("cc"), "nscc");
  EXPECT_FALSE(n.get_bool("pfc"));
  EXPECT_EQ(n.get_string("routing"), "reps");
  EXPECT_EQ(sc.preset_keys.at("network.cc"), "uec");
  // A key the file gives is the file's; one --set gives is the command line's.
  sc = load_text(std::string(kBase) + "network:\n  preset: uec\n  routing: spray\n", "t.yaml", "t",
                 {"network.cc=dctcp"});
  EXPECT_EQ(sc.section("network").get_string("routing"), "spray");
  EXPECT_EQ(sc.section("network").get_string("cc"), "dctcp");
  EXPECT_FALSE(sc.section("network").get_bool("pfc"));
  EXPECT_EQ(sc.preset_keys.count("network.routing"), 0u);
  // Without a preset nothing changes.
  sc = load_text(std::string(kBase), "t.yaml", "t");
  EXPECT_EQ(sc.section("network").get_string("routing"), "ecmp");
  EXPECT_TRUE(sc.preset_keys.empty());
  // An unknown preset is refused at its key, with the choices.
  try {
    (void)load_text(std::string(kBase) + "network:\n  preset: quic\n", "t.yaml", "t");
    ADD_FAILURE() << "an unknown preset was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("network.preset"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("roce_dcqcn"), std::string::npos) << e.what();
  }
}

// A model preset's published recipe (workload::Recipe) fills each group of keys the scenario leaves out, whole.
TEST(Recipe, APresetFillsTheGroupsTheScenarioLeavesOut) {
  // Nothing given: NeMo's Llama 3.1 70B recipe (model.cpp) for every group.
  Scenario sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n", "t.yaml", "t");
  const Params& w = sc.section("workload");
  EXPECT_EQ(w.get_int("tp"), 4);
  EXPECT_EQ(w.get_int("pp"), 4);
  EXPECT_EQ(w.get_int("cp"), 2);
  EXPECT_EQ(w.get_int("interleave"), 5);
  EXPECT_EQ(w.get_string("recompute"), "none");
  EXPECT_TRUE(w.get_bool("sequence_parallel"));
  EXPECT_EQ(w.get_string("tokens"), "15T");
  EXPECT_EQ(sc.recipe_keys.count("workload.tp"), 1u);
  EXPECT_EQ(sc.recipe_keys.at("workload.recompute"), "llama3-70b");
  // tp given: the whole layout group is the scenario's (pp and cp at podnet's defaults, not 4 and 2); the
  // memory group, which the scenario leaves out, is still the preset's.
  sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n  tp: 8\n", "t.yaml", "t");
  EXPECT_EQ(sc.section("workload").get_int("tp"), 8);
  EXPECT_EQ(sc.section("workload").get_int("pp"), 8);
  EXPECT_EQ(sc.section("workload").get_int("cp"), 1);
  EXPECT_EQ(sc.recipe_keys.count("workload.pp"), 0u);
  EXPECT_EQ(sc.section("workload").get_string("recompute"), "none");
  // workload.recipe=preset: the preset's layout over the file's, unless the command line gives one of its keys.
  sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n  tp: 8\n  pp: 16\n", "t.yaml", "t",
                 {"workload.recipe=preset"});
  EXPECT_EQ(sc.section("workload").get_int("tp"), 4);
  EXPECT_EQ(sc.section("workload").get_int("pp"), 4);
  sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n  tp: 8\n  pp: 16\n", "t.yaml", "t",
                 {"workload.recipe=preset", "workload.tp=2"});
  EXPECT_EQ(sc.section("workload").get_int("tp"), 2);
  EXPECT_EQ(sc.section("workload").get_int("pp"), 16);
  EXPECT_EQ(sc.section("workload").get_string("recompute"), "none");  // its group given nowhere
  // The file's dp was written for the file's layout: under the preset's layout it is left out (auto), unless the
  // command line gives it.
  sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n  tp: 8\n  dp: 2\n", "t.yaml", "t",
                 {"workload.recipe=preset"});
  EXPECT_EQ(sc.section("workload").get_int("tp"), 4);
  EXPECT_FALSE(sc.section("workload").has("dp"));
  sc = load_text(std::string(kBase) + "workload:\n  model: llama3-70b\n  tp: 8\n  dp: 2\n", "t.yaml", "t",
                 {"workload.recipe=preset", "workload.dp=1"});
  EXPECT_EQ(sc.section("workload").get_int("dp"), 1);
  // A model without a published recipe keeps podnet's defaults and records nothing.
  sc = load_text(std::string(kBase) + "workload:\n  model: mixtral-8x7b\n", "t.yaml", "t");
  EXPECT_TRUE(sc.recipe_keys.empty());
  EXPECT_EQ(sc.section("workload").get_string("recompute"), "full");
}

// The resolved scenario names the recipe's values (as comments: the model sets them), so running it again gives
// the same job, and a model edited into it takes its own recipe, not the old model's.
TEST(Recipe, TheResolvedScenarioHoldsTheRecipesValues) {
  Scenario sc = load_text(std::string(kBase) + "workload:\n  model: nemotron4-15b\n", "t.yaml", "t");
  Scenario again = load_text(sc.resolved_yaml(true), "r.yaml", "r");
  for (const char* k : {"tp", "pp", "microbatch"})
    EXPECT_EQ(again.section("workload").get_int(k), sc.section("workload").get_int(k)) << k;
  EXPECT_EQ(again.section("workload").get_int("tp"), 2);
  EXPECT_EQ(again.section("workload").get_int("microbatch"), 2);
  EXPECT_EQ(again.section("workload").get_string("tokens"), "8T");
  const std::string resolved = sc.resolved_yaml(true);
  EXPECT_NE(resolved.find("  # tp: 2 (nemotron4-15b's recipe: workload.model sets it)\n"), std::string::npos)
      << resolved;
  // The model edited in the file: Llama 3 70B's recipe (TP4 x CP2 x PP4, 15T tokens), not Nemotron's TP2.
  std::string edited = resolved;
  edited.replace(edited.find("model: nemotron4-15b"), std::string("model: nemotron4-15b").size(), "model: llama3-70b");
  const Scenario other = load_text(edited, "e.yaml", "e");
  EXPECT_EQ(other.section("workload").get_int("tp"), 4);
  EXPECT_EQ(other.section("workload").get_int("pp"), 4);
  EXPECT_EQ(other.section("workload").get_string("tokens"), "15T");
}

std::vector<engine::FailureEvent> share_events(const std::string& entry, uint64_t seed = 1) {
  Scenario sc = load_text(std::string(kBase) + "seed: " + std::to_string(seed) + "\nfailures:\n  - " + entry + "\n",
                          "t.yaml", "t");
  return sc.failure_events(sc.build_topology());
}

int64_t links_of_class(const topology::Topology& t, const std::string& cls) {
  int64_t n = 0;
  for (const auto& l : t.links) n += t.link_classes[l.cls] == cls;
  return n;
}

// A share of one tier down from t = 0 (FailureSpec links / switches): the count asked, each a distinct link of
// that class, drawn from the seed, never a NIC link unless nic-leaf is named.
TEST(FailureShare, LinksOfOneClassDrawnFromTheSeed) {
  Scenario sc = load_text(kBase, "t.yaml", "t");
  const topology::Topology t = sc.build_topology();
  const int64_t leaf_spine = links_of_class(t, "leaf-spine");
  ASSERT_GT(leaf_spine, 100);
  auto evs = share_events("{links: leaf-spine, count: 3}");
  ASSERT_EQ(evs.size(), 3u);
  std::set<topology::LinkId> seen;
  for (const auto& e : evs) {
    ASSERT_EQ(e.links.size(), 1u);
    EXPECT_EQ(t.link_classes[t.links[e.links[0]].cls], "leaf-spine");
    EXPECT_EQ(e.at.ps, 0);
    // down at 0 = down before the run: routed around from the start (a drain at 0), nothing stalls
    EXPECT_EQ(e.action, engine::FailureAction::Drain);
    EXPECT_NE(e.what.find("down before the run"), std::string::npos) << e.what;
    seen.insert(e.links[0]);
  }
  EXPECT_EQ(seen.size(), 3u);
  // 1 % of the class: the nearest count; 100 %: every link; the same seed, the same links.
  EXPECT_EQ(static_cast<int64_t>(share_events("{links: leaf-spine, fraction: 1%}").size()),
            std::max<int64_t>(1, std::llround(leaf_spine / 100.0)));
  EXPECT_EQ(static_cast<int64_t>(share_events("{links: leaf-spine, fraction: 100%}").size()), leaf_spine);
  EXPECT_EQ(share_events("{links: leaf-spine, count: 5}", 7)[2].links,
            share_events("{links: leaf-spine, count: 5}", 7)[2].links);
  std::set<topology::LinkId> a, b;
  for (const auto& e : share_events("{links: leaf-spine, count: 20}", 1)) a.insert(e.links[0]);
  for (const auto& e : share_events("{links: leaf-spine, count: 20}", 2)) b.insert(e.links[0]);
  EXPECT_NE(a, b);
  // fabric: switch-to-switch links only.
  for (const auto& e : share_events("{links: fabric, fraction: 50%}")) {
    const auto& l = t.links[e.links[0]];
    EXPECT_EQ(t.nodes[l.a].kind, topology::NodeKind::Switch);
    EXPECT_EQ(t.nodes[l.b].kind, topology::NodeKind::Switch);
  }
  // Switches of a tier: each event takes every link of one spine switch.
  evs = share_events("{switches: spine, count: 2, at: 5ms}");
  ASSERT_EQ(evs.size(), 2u);
  for (const auto& e : evs) {
    EXPECT_EQ(e.at.ps, 5'000'000'000);
    EXPECT_EQ(e.action, engine::FailureAction::Down);  // during the run: a real failure, repaired by rerouting
    EXPECT_NE(e.what.find("spine"), std::string::npos) << e.what;
    EXPECT_GT(e.links.size(), 1u);
  }
}

TEST(FailureShare, BadEntriesNameTheKeyAndWhatIsExpected) {
  auto err = [](const std::string& entry) {
    try {
      share_events(entry);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  std::string e = err("{links: leaf-spin, count: 1}");
  EXPECT_NE(e.find("failures[0].links: 'leaf-spin' is not a link class of this fabric"), std::string::npos) << e;
  EXPECT_NE(e.find("leaf-spine"), std::string::npos) << e;
  e = err("{switches: core, count: 1}");
  EXPECT_NE(e.find("'core' is not a switch tier of this fabric: expected one of: leaf, spine"), std::string::npos) << e;
  e = err("{links: leaf-spine, count: 1, fraction: 1%}");
  EXPECT_NE(e.find("t.yaml:10: failures[0]: expected one of fraction"), std::string::npos) << e;
  e = err("{links: leaf-spine, fraction: 150%}");
  EXPECT_NE(e.find("failures[0].fraction: '150%' is not valid"), std::string::npos) << e;
  e = err("{switches: spine, count: 100000}");
  EXPECT_NE(e.find("100,000 switches asked, but the fabric has"), std::string::npos) << e;
  e = err("{switches: spine, count: 1, action: degrade}");
  EXPECT_NE(e.find("'degrade' is not valid for switches: expected one of: down, drain"), std::string::npos) << e;
}

// --set failures+=ENTRY appends to the scenario's list (what --fail-links writes).
TEST(FailureShare, SetAppendsToTheList) {
  Scenario sc = load_text(std::string(kBase) + "failures:\n  - {at: 0ms, gpu: 3, action: slow, factor: 2}\n", "t.yaml",
                          "t", {"failures+=[{links: leaf-spine, count: 2}]"});
  ASSERT_EQ(sc.failures.size(), 2u);
  EXPECT_EQ(sc.failures[0].target_kind, "gpu");
  EXPECT_EQ(sc.failures[1].target_kind, "links");
  EXPECT_EQ(sc.failure_events(sc.build_topology()).size(), 3u);
  std::string e;
  try {
    load_text(kBase, "t.yaml", "t", {"network+=[1]"});
  } catch (const InputError& x) {
    e = x.what();
  }
  EXPECT_NE(e.find("only the lists failures, faults and jobs take +="), std::string::npos) << e;
}

}  // namespace
}  // namespace podnet::scenario
