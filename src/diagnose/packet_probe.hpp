// Packet-mode probing: the probes of a mesh (probe.hpp) sent on the packet
// engine (engine/packet/packet_sim.hpp §11) instead of drawn from the
// statistical model, to check that model on small fabrics.
//
// Model. Every probe tuple (s, d, port) of the mesh is one probe path of
// the engine: its forward and return directed links, as the router's ECMP
// hash of the UDP source port chose them for the mesh, so both modes probe
// the same paths. The schedule is the statistical mode's (probe_schedule):
// source NIC number j (in mesh order, of E sources) sends its k-th probe of
// round r (k = 0 .. N-1, N = rate x round) at
//   r x round + (k + j / E) x round / N
// (rounded down to 1 ps) to its tuple k mod m (of m tuples), so every tuple
// gets exactly the statistical mode's probes per round, and the E sources
// are staggered by round / (N E) instead of all sending at once.
// Each probe is one packet of kProbeWireBytes each way, in the control
// class (never paused or dropped by a buffer); the far NIC answers at once.
// The scenario's hidden faults become the engine's silent faults
// (engine/failures.hpp: SilentFault): drop and corrupt lose each packet
// crossing the link direction (or entering the switch) with their
// probability, a flap loses every packet while it is down, a degrade adds
// its latency to every crossing. A probe is lost when it gets no reply; it
// counts in the round it was sent in. RTT percentiles are the smallest RTT
// x with at least q of the tuple's replies at or below x (the statistical
// mode's definition).
// Differences from the statistical mode, by design: a flap loses the
// probes that cross it while it is down (the statistical mode: each probe
// of the round with the share of the round it is down, the same mean); a
// probe waits behind the frames, probes and replies sent ahead of it at
// every hop (queueing the statistical mode leaves out); draws come from the
// engine's stream, not the statistical mode's, so counts differ by chance
// (docs/contributing/validation/diagnose.md: how much they may).
// Cost: one simulated packet per hop each way; refused above
// kMaxPacketProbes probes or kMaxPacketEndpoints NICs (the statistical mode
// is the one for large fabrics).
#pragma once

#include <vector>

#include "diagnose/probe.hpp"
#include "engine/failures.hpp"
#include "engine/options.hpp"
#include "topology/topology.hpp"

namespace podnet::diagnose {

inline constexpr int64_t kMaxPacketProbes = 4'000'000;
inline constexpr int32_t kMaxPacketEndpoints = 1024;

// The hidden faults as the packet engine's silent faults.
std::vector<engine::SilentFault> silent_faults(const std::vector<Fault>& faults);

// Probes `mesh` on the packet engine with `faults` hidden, for o.duration.
// `net`: the scenario's network options (transport, links, PFC, buffer);
// its routing seed is replaced by `seed`, which keys the engine's fault
// draws (the probes follow the mesh's routes). Throws InputError above the
// size limits, naming the statistical mode. Deterministic in seed.
ProbeRun simulate_probes_packet(const topology::Topology& t, const Mesh& mesh, const std::vector<Fault>& faults,
                                const ProbeOptions& o, engine::NetworkOptions net, uint64_t seed);

}  // namespace podnet::diagnose
