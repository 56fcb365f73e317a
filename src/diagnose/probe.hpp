// Black-box probing of a fabric: RDMA-ping-style probes between NIC pairs,
// and the silent faults they are meant to find.
//
// What is modelled (statistical mode). A probe is a request from NIC s to NIC
// d and its reply d -> s, each one RoCEv2 UD packet (as RDMA pingers such as
// R-Pingmesh send; Liu et al., SIGCOMM 2024). Requests of one (s, d) pair use
// `ports` UDP source ports; each port is one ECMP flow key, routed by the
// scenario's own router (routing/router.hpp, Router::route_endpoints): the
// reply takes the reverse pair's route with the same port. A probe tuple
// i = (s, d, port) therefore crosses a fixed set of directed network links
// (forward and return) and of switches; traceroute-style path data is that
// set.
//   Loss. A probe is lost when its request or its reply is:
//     P_i = 1 - (1 - b)^h_i * prod_{links l of i} (1 - p_l) * prod_{switch
//           crossings x of i} (1 - p_x)
//   with h_i the directed links crossed, b the background loss per link
//   crossing (`background`, default 0), p_l a link direction's silent drop or
//   corruption probability and p_x a faulty switch's (every packet through
//   it). A flapping link loses every probe that crosses it while it is down:
//   in a round [t0, t1) its p is the share of the round it is down (the
//   router is assumed not to converge within one flap, the worst case).
//   The lost count of tuple i in a round is Binomial(n_i, P_i), drawn with
//   our own geometric-gap sampler (exact; O(n P) draws).
//   RTT. Propagation of every link crossed, one switch latency per switch
//   crossed, serialization of the probe on every link, plus the added
//   one-way latency of a degraded link on the path. No queueing: an idle
//   fabric's RTT, so p50 = p99 unless a flap or a degrade starts during the
//   run; queueing needs the packet engine.
//   Rate. Each NIC sends `rate` probes/s in all, spread evenly over its
//   tuples; every probe is answered. The wire size of one probe packet is
//   kProbeWireBytes (64 B payload + RoCEv2 UD headers: Ethernet 14 + IPv4 20
//   + UDP 8 + BTH 12 + DETH 8 + ICRC 4 + FCS 4, + preamble and inter-frame
//   gap 20 = 154 B), so a NIC's probe load is about 2 x rate x 154 B/s each
//   way (its requests and its replies to others'; exact per NIC below).
//
// Meshes (who probes whom):
//   full-mesh  every ordered pair of endpoints (NICs; a torus's GPUs), capped
//              at kMaxTuples tuples: for small fabrics and for validation;
//   rail       each endpoint probes `targets` endpoints on its own rail in
//              other servers (all rails alike on a fabric without rails),
//              drawn by the seed; what a rail-optimized fabric can route
//              without crossing rails;
//   leaf-mesh  Pingmesh's ToR-level mesh (Guo et al., SIGCOMM 2015): every
//              ordered pair of attachment switches (leaves) that are routable
//              one to the other, each pair probed between one NIC under each,
//              rotating through the leaves' NICs.
// Determinism: tuples in (source endpoint, target, port) order; the draws of
// round r come from the stream ("probe", r) of the seed; no pointer or
// unordered-container order is involved.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "routing/route.hpp"
#include "topology/topology.hpp"

namespace podnet::routing {
class Router;
}

namespace podnet::diagnose {

inline constexpr int64_t kProbeWireBytes = 154;
inline constexpr int64_t kMaxTuples = int64_t{1} << 23;  // 8.4M tuples, ~0.5 GB of paths

// A silent fault hidden in the fabric (scenario `faults:`).
enum class FaultKind : uint8_t { Drop, Corrupt, Degrade, Flap };
const char* fault_kind_name(FaultKind k);

struct Fault {
  FaultKind kind = FaultKind::Drop;
  // What it affects: directed links (a link fault; both directions of a link
  // when the entry says so), or one switch (every packet through it).
  std::vector<routing::DirLink> dirs;
  topology::NodeId device = topology::kNone;
  double probability = 0;  // drop / corrupt: per packet crossing
  Time latency;            // degrade: one-way latency added
  Time start;              // when it begins (flap: first down at start)
  Time period, down;       // flap: down for `down` every `period`
  std::string what;        // as written ("link su000-leaf-r0:Ethernet1/65 tx")
};

// The share of [t0, t1) a fault is active (1 or 0 except for a flap).
double active_share(const Fault& f, Time t0, Time t1);

struct ProbeOptions {
  std::string mesh = "rail";  // full-mesh | rail | leaf-mesh
  int targets = 4;            // rail: targets per endpoint
  int ports = 8;              // UDP source ports per pair
  double rate = 1000;         // probes per second sent by each endpoint
  Time duration = Time::from_seconds(300);
  Time round = Time::from_seconds(10);  // results are cut (and localized) per round
  double background = 0;                // loss per link crossing on healthy links
};

// A probe tuple: the endpoints (node ids), the UDP source port and the
// directed network links it crosses, forward then return.
struct Tuple {
  topology::NodeId src = topology::kNone, dst = topology::kNone;
  uint16_t sport = 0;
  int32_t path_begin = 0, return_begin = 0, path_end = 0;  // into Mesh::links
};

struct Mesh {
  std::string kind;
  std::vector<Tuple> tuples;
  std::vector<routing::DirLink> links;  // every tuple's links, concatenated
  int32_t endpoints = 0;                // endpoints that send probes
  std::vector<char> covered;            // by directed link: crossed by some tuple
  int64_t covered_dirs = 0;             // directed network links crossed by some tuple
  int64_t network_dirs = 0;             // directed network links in the fabric
  int64_t unroutable = 0;               // pairs skipped: no route (e.g. across rail planes)
};

// The probe endpoints of a fabric: its NICs with a network link, or a
// torus's GPUs.
std::vector<topology::NodeId> probe_endpoints(const topology::Topology& t);
// True for a link whose one end at least is a network node (switch; torus GPU).
bool is_network_link(const topology::Topology& t, topology::LinkId l);

// Builds the mesh and routes every tuple with `router` (the scenario's).
// Throws InputError for an unknown mesh or one over kMaxTuples.
Mesh build_mesh(const topology::Topology& t, routing::Router& router, const ProbeOptions& o, uint64_t seed);

// What one tuple saw in one window.
struct TupleResult {
  int64_t sent = 0, lost = 0;
  Time rtt_p50, rtt_p99;
};

struct ProbeRun {
  Time round;
  int rounds = 0;
  std::vector<int64_t> sent_per_round;  // [tuple]: probes per round (constant rate)
  struct Loss {
    int32_t tuple = 0, lost = 0;
  };
  std::vector<std::vector<Loss>> lost_by_round;  // [round]: the tuples that lost probes, in tuple order
  std::vector<TupleResult> total;                // over the whole run
  double probe_bytes_per_s_per_nic = 0;          // mean both ways: (requests + replies) x wire size
  double probe_bytes_per_s_per_nic_max = 0;      // the busiest NIC's tx
  double capacity_share_max = 0;                 // busiest NIC's probe tx / its link capacity
};

// The schedule every mode shares: rounds, probes per tuple per round
// (sent_per_round) and the probe load per NIC; `total` and `lost_by_round`
// sized and empty. Throws InputError for a bad rate, duration or round.
ProbeRun probe_schedule(const topology::Topology& t, const Mesh& mesh, const ProbeOptions& o);

// Simulates the probes of `mesh` for o.duration with `faults` hidden
// (statistical mode). Deterministic in seed.
ProbeRun simulate_probes(const topology::Topology& t, const Mesh& mesh, const std::vector<Fault>& faults,
                         const ProbeOptions& o, uint64_t seed);

// The node entered by a directed link if it is a switch, else kNone.
topology::NodeId switch_entered(const topology::Topology& t, routing::DirLink d);

}  // namespace podnet::diagnose
