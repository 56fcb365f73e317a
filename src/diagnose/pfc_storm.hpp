// PFC-storm detection from port telemetry: which NIC is flooding its switch
// with PAUSE frames, and the tree of ports its pause has spread to.
//
// A NIC stuck in a PAUSE loop (a hung receive pipeline; Guo et al., "RDMA
// over Commodity Ethernet at Scale", SIGCOMM 2016, §4.3: the NIC PFC storm)
// pauses the switch port facing it for as long as it lasts. That port's
// queue fills, the switch runs out of buffer for the ingress ports feeding
// it and pauses them in turn, and the pause spreads upstream hop by hop: a
// tree of paused ports rooted at the NIC. Switches' PFC watchdogs (SONiC
// pfcwd: a queue paused, and not transmitting, for longer than a detection
// time) see one port at a time; the counters of every port show the tree.
//
// Input per directed link: PAUSE frames its egress port received and the
// time it was paused (telemetry/recorder.hpp, PortCounters), over runs of
// total length T. Rule:
// - a port is paused when paused >= tree_share x T (default 1 %);
// - a storm's source is a port entering an endpoint (a NIC or GPU, which
//   forwards nothing, so its PAUSE cannot be back-pressure from further
//   downstream) paused for >= source_share x T (default 10 %): the endpoint
//   is the storming NIC. A switch pausing its neighbours is congestion (an
//   incast), and is a source of nothing here;
// - the paused tree: from the source port (S -> N), breadth first upstream,
//   every paused port (X -> A) entering the sending node A of a port in the
//   tree (A's buffer backed up behind its paused egress), with its depth in
//   hops from the source.
// Assumptions: the telemetry covers the storm (a storm much shorter than
// T is diluted below source_share); one lossless priority.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "topology/topology.hpp"

namespace podnet::diagnose {

struct PortPause {
  uint64_t pause_rx = 0;  // PAUSE frames received by the link's egress port
  double paused_s = 0;    // time that port was paused
};

struct StormOptions {
  double source_share = 0.10;
  double tree_share = 0.01;
};

struct PausedPort {
  int32_t link = 0;   // routing::DirLink
  int32_t depth = 0;  // 0: the source port
  double paused_s = 0;
};

struct PfcStorm {
  topology::NodeId nic = topology::kNone;  // the storming endpoint
  int32_t port = 0;                        // the paused port facing it (routing::DirLink)
  uint64_t pause_frames = 0;
  double paused_s = 0;
  double share = 0;              // paused_s / T
  std::vector<PausedPort> tree;  // breadth-first, source first
};

// `ports` indexed by routing::DirLink; `observed_s` = T. Storms by source
// port id (deterministic).
std::vector<PfcStorm> find_pfc_storms(const topology::Topology& t, const std::vector<PortPause>& ports,
                                      double observed_s, const StormOptions& o = {});

}  // namespace podnet::diagnose
