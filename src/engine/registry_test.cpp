// The engine and transport registries' traits: what the layers above read instead of names.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "engine/options.hpp"
#include "engine/registry.hpp"
#include "routing/policies.hpp"

namespace podnet::engine {
namespace {

TEST(EngineRegistry, TraitsSayWhatEachEngineCan) {
  const EngineTraits& a = engine_info("analytical").traits;
  const EngineTraits& f = engine_info("flow").traits;
  const EngineTraits& p = engine_info("packet").traits;
  // Only the engines that simulate time under contention run jobs together and inject failures.
  EXPECT_FALSE(a.contention);
  EXPECT_FALSE(a.failures);
  EXPECT_TRUE(f.contention && f.failures && p.contention && p.failures);
  // Packet-level faults and port counters are the packet engine's; link-load steps the flow engine's.
  EXPECT_TRUE(p.packet_faults && p.port_counters);
  EXPECT_FALSE(f.packet_faults || f.port_counters || a.packet_faults);
  EXPECT_TRUE(f.link_series && f.rate_quantum);
  EXPECT_FALSE(p.rate_quantum || a.rate_quantum);
  EXPECT_TRUE(a.many_runs && f.many_runs);
  EXPECT_FALSE(p.many_runs);
  // The memory model's measured figures (scenario/estimate.hpp).
  EXPECT_EQ(p.bytes_per_flow, 896);
  EXPECT_EQ(f.bytes_per_ring_hop, 64);
  EXPECT_EQ(a.bytes_per_gpu, 0);
}

TEST(EngineRegistry, NamesWithATraitReadAsASentence) {
  EXPECT_EQ(engine_names_with(&EngineTraits::failures), "flow or packet");
  EXPECT_EQ(engine_names_with(&EngineTraits::failures, " and "), "flow and packet");
  EXPECT_EQ(engine_names_with(&EngineTraits::packet_faults), "packet");
  EXPECT_EQ(engine_names_with(&EngineTraits::many_runs, " | "), "analytical | flow");
}

TEST(EngineRegistry, AnUnknownEngineListsTheKnownOnes) {
  try {
    (void)engine_info("quantum");
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "unknown engine 'quantum'; expected one of: analytical, flow, packet");
  }
}

TEST(TransportRegistry, EachTransportNamesItsLinkClassAndCongestionControl) {
  EXPECT_EQ(transport_preset("rocev2").nic_links, LinkClass::Ethernet);
  EXPECT_EQ(transport_preset("rocev2").default_cc, "dcqcn_nic");
  EXPECT_EQ(transport_preset("tcp").nic_links, LinkClass::Ethernet);
  EXPECT_EQ(transport_preset("infiniband").nic_links, LinkClass::InfiniBand);
  EXPECT_EQ(transport_preset("infiniband").default_cc, "infiniband");
}

TEST(PolicyRegistry, PerPacketAndLoadAwareTraits) {
  using routing::PerPacket;
  using routing::policy_info;
  EXPECT_EQ(policy_info("spray").per_packet, PerPacket::Spray);
  EXPECT_EQ(policy_info("adaptive").per_packet, PerPacket::LeastLoaded);
  EXPECT_EQ(policy_info("ugal").per_packet, PerPacket::None);
  EXPECT_TRUE(policy_info("adaptive").load_aware && policy_info("ugal").load_aware);
  EXPECT_FALSE(policy_info("ecmp").load_aware || policy_info("valiant").load_aware);
  EXPECT_EQ(policy_info("minimal").kind, routing::PolicyKind::Ecmp);  // ECMP over a dragonfly's minimal paths
  EXPECT_THROW((void)policy_info("hot-potato"), Error);
}

}  // namespace
}  // namespace podnet::engine
