// Fabrics and helpers shared by the packet engine's unit tests.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "engine/options.hpp"
#include "engine/packet/packet_sim.hpp"
#include "topology/builders.hpp"
#include "topology/test_util.hpp"

namespace podnet::engine::packet::testing {

// One GPU and one NIC per server, 100 Gb/s NICs and switch ports.
inline topology::Hardware hw100(int radix) {
  topology::Hardware hw = topology::testing::hw_with(1, 1, radix);
  hw.nic_speed = Bandwidth(100e9);
  hw.port_speed = Bandwidth(100e9);
  return hw;
}

// `gpus` hosts under one 128-port leaf (64 down): every pair meets at that leaf.
inline topology::Topology one_leaf(int gpus) {
  return topology::build_with("fat_tree", {{"gpus", std::to_string(gpus)}}, hw100(128));
}

// k-ary fat-tree of 100G single-NIC hosts.
inline topology::Topology kary(int k) { return topology::build_with("fat_tree", {{"k", std::to_string(k)}}, hw100(k)); }

inline NetworkOptions net(const std::string& policy = "ecmp") {
  NetworkOptions o;
  o.routing.policy = policy;
  o.routing.seed = 1;
  return o;
}

// Adds a stream src -> dst of `bytes` on QP `entropy` starting at `start`,
// paying the one-step latency of its route.
inline int32_t add(PacketSim& sim, int32_t src, int32_t dst, Bytes bytes, uint64_t entropy = 0, Time start = Time(),
                   uint64_t tag = 0) {
  std::vector<routing::PathPart> r;
  sim.route(src, dst, entropy, r);
  StreamSpec s;
  s.src = src;
  s.dst = dst;
  s.bytes = bytes;
  s.entropy = entropy;
  s.start = start;
  s.latency = sim.hop_latency(r);
  s.tag = tag;
  return sim.add_stream(s, r);
}

// The first cable (copper or optical) on the route src -> dst, as a directed link: the host's NIC into its
// leaf (-1: none). Routes on a PacketSim of its own.
inline routing::DirLink first_cable(const topology::Topology& topo, const NetworkOptions& n, const PacketOptions& opt,
                                    int32_t src, int32_t dst) {
  PacketSim probe(topo, n, opt);
  std::vector<routing::PathPart> r;
  probe.route(src, dst, 0, r);
  for (const auto& part : r) {
    const auto media = topo.links[routing::link_of(part.link)].media;
    if (media == topology::Media::Copper || media == topology::Media::Optical) return part.link;
  }
  return -1;
}

inline void run(PacketSim& sim) {
  sim.run([](const SimEvent&) {});
}

// Total over ports of one counter.
template <class F>
double total(const PacketSim& sim, F f) {
  double s = 0;
  for (const auto& p : sim.port_stats()) s += static_cast<double>(f(p));
  return s;
}

}  // namespace podnet::engine::packet::testing
