#include "engine/network_params.hpp"

#include <string>

#include <fmt/format.h>

#include "core/error.hpp"

#include "engine/network_presets.hpp"
#include "engine/packet/packet_options.hpp"
#include "engine/registry.hpp"
#include "routing/policies.hpp"

namespace podnet::engine {

std::vector<ParamSpec> network_params() {
  std::vector<std::string> engine_names, policy_names, transport_names;
  for (const auto& e : engines()) engine_names.push_back(e.name);
  for (const auto& p : routing::policies()) policy_names.push_back(p.name);
  for (const auto& t : transport_presets()) transport_names.push_back(t.name);
  std::vector<std::string> preset_names = {"none"};
  for (const auto& p : network_presets()) preset_names.push_back(p.name);
  std::vector<std::string> cc_names = {"auto"};
  for (const auto& c : packet::cc_presets()) cc_names.push_back(c.name);
  return {
      {"engine", ParamType::String, "flow", "simulation fidelity", -1e300, 1e300, engine_names},
      {"preset", ParamType::String, "none",
       "a deployment's transport, congestion control, flow control and routing in one word (roce_dcqcn, uec, "
       "uec_rccc, mrc, spectrum_x, infiniband_ar; see `podnet list`); it fills the network keys the scenario leaves "
       "out",
       -1e300, 1e300, preset_names},
      {"routing", ParamType::String, "ecmp", "routing policy (see `podnet list`)", -1e300, 1e300, policy_names},
      {"per_switch_seed", ParamType::Bool, "true",
       "ECMP: every switch hashes with its own seed (false shows hash polarization)"},
      {"pxn", ParamType::Bool, "true", "NCCL PXN: cross rails over NVLink inside the source server"},
      {"transport", ParamType::String, "rocev2", "endpoint transport preset: header overhead and stack latency", -1e300,
       1e300, transport_names},
      {"stack_latency",
       ParamType::Time,
       "",
       "override the transport's one-way endpoint latency",
       -1e300,
       1e300,
       {},
       true},
      {"mtu", ParamType::Int, "", "override the transport's payload bytes per packet", 256, 65536, {}, true},
      {"flow_quantum", ParamType::Time, "0s",
       "flow engine: round each completion up to a multiple of this (0 = exact); flows finishing within one "
       "quantum share one re-solve, each late by less than a quantum: speeds up many concurrent flows of "
       "spread-out rates (large ECMP all-to-alls)"},
      {"threads", ParamType::Int, "0",
       "threads one run may use; results are the same to the bit for every count. Analytical engine: 0 = the "
       "machine's cores, at most 8 and while the threads past the first take 1.5 GB or less (one at 1,048,576 GPUs; "
       "more when given); routes and drains are worked out on every thread. Flow "
       "engine: 0 = 2 on a machine with two cores or more, and more than 2 counts as 2; the second re-sorts the "
       "solver's link lists after large re-solves. Packet engine: one thread; with network.partitioned, its "
       "partitions on this many (0 = the machine's cores; under mpirun, per rank: 0 = the cores over the ranks "
       "on the machine)",
       0, 64},
      {"partitioned", ParamType::Bool, "false",
       "packet engine: cut the fabric into partitions (its pods, else its leaf groups, and the switches above "
       "them) run side by side on network.threads threads (1 to 64), in windows of the shortest cut link's "
       "latency; servers stay with their leaves, so one leaf group of rail-optimized servers stays whole. The same "
       "results on every thread count. Under mpirun (`mpirun -n 4 podnet bench ...`), the partitions spread over "
       "the ranks too, with the same results; every rank holds the whole fabric, and rank 0 writes. "
       "Against the sequential engine each run is another draw, as another seed would be (events at one instant "
       "run in another order, ECN draws are per port): within 0.2 % at line rate, up to 5 % apart under DCQCN. "
       "Not yet with load-aware routing (ugal; minimal and valiant run), PFC storms, probes, link retry, or "
       "per-packet routing with failures; across ranks, not yet with failures"},
      {"cc", ParamType::String, "auto",
       "packet engine: congestion control (auto = infiniband with the infiniband transport, else dcqcn_nic; "
       "see `podnet list`)",
       -1e300, 1e300, cc_names},
      {"pfc", ParamType::Bool, "true",
       "packet engine: lossless data class with PFC; false = lossy, drops past the buffer's dynamic threshold "
       "(ignored with cc = infiniband: credits)"},
      {"link_credits", ParamType::Bool, "false",
       "packet engine: credit-based flow control on every link (Ultra Ethernet's CBFC): a port sends only while "
       "the next switch has buffer for it; lossless without PAUSE frames, never drops; PFC off"},
      {"link_retry", ParamType::Bool, "false",
       "packet engine: link-level retry (Ultra Ethernet's LLR): a packet a faulty link drops or corrupts is resent "
       "by that link, in order, one link round trip later; the transport never sees the loss"},
      {"reorder_nack", ParamType::Int, "64",
       "packet engine, per-packet routing on a lossy class: the receiver NACKs a hole once this many packets have "
       "arrived beyond it (routing mrc: reports each hole, and the sender rests its path); 0: never (trims and "
       "the retransmission timeout find every loss). Spraying over paths of unequal queues reorders more than "
       "this, and each such NACK resends a packet that was not lost",
       0, 1e9},
      {"delivery",
       ParamType::String,
       "auto",
       "packet engine: how a QP delivers (Ultra Ethernet's modes). ordered: in order only, go-back-N on a hole, "
       "one path per QP even under routing reps or mrc (UET's ROD, RoCE's RC); unordered: a reorder buffer and "
       "each lost or trimmed packet resent alone (UET's RUD); unreliable: no ACK and no resend, a lost packet is "
       "gone and counted (UET's UUD). auto: unordered under a congestion control that trims (nscc, rccc, "
       "nscc_rccc; the uec, uec_rccc and mrc presets), else ordered, with the NIC's reorder buffer under per-packet "
       "routing (spray, adaptive: 'reordered by the NIC')",
       -1e300,
       1e300,
       {"auto", "ordered", "unordered", "unreliable"}},
      {"switch_buffer",
       ParamType::Bytes,
       "",
       "packet engine: shared buffer of every switch (default: 40 us at each port's rate, 500 KB per 100G port)",
       1,
       1e15,
       {},
       true},
      {"ecn_kmin",
       ParamType::Bytes,
       "",
       "packet engine: ECN marking starts above this queue depth at every switch port (default: the congestion "
       "control's own band, `podnet list` gives it; dcqcn_nic 100 KB at a 25G port, scaled with the port's rate)",
       0,
       1e12,
       {},
       true},
      {"ecn_kmax",
       ParamType::Bytes,
       "",
       "packet engine: above this queue depth every packet is marked; between ecn_kmin and ecn_kmax the "
       "probability rises linearly to ecn_pmax (RED). Default: the congestion control's own",
       0,
       1e12,
       {},
       true},
      {"ecn_pmax",
       ParamType::Real,
       "",
       "packet engine: the marking probability at ecn_kmax (0 to 1; default: the congestion control's own)",
       0,
       1,
       {},
       true},
      {"rto",
       ParamType::Time,
       "",
       "packet engine: go-back-N retransmission timeout (default: 1 ms + 2 x the largest queue's drain time; the "
       "RDMA ACK timeout on a torus); at least 1us, and at least the fabric's unloaded round trip: a shorter timeout "
       "fires before an ACK can come back",
       1e-9,
       1e4,
       {},
       true},
      {"local_repair", ParamType::Time, "1ms",
       "failures: time for a switch to drop a dead uplink from its ECMP/adaptive group (DLB, fast reroute)"},
      {"convergence", ParamType::Time, "2s", "failures: routing convergence for a dead downlink or NIC link"},
      {"collective_timeout", ParamType::Time, "30s",
       "failures: a collective stalled longer than this stops the job (NCCL/IB retry budget)"},
  };
}

NetworkOptions network_options_from(const Params& p, uint64_t seed) {
  NetworkOptions o;
  o.routing.policy = p.get_string("routing");
  o.routing.seed = seed;
  o.routing.per_switch_seed = p.get_bool("per_switch_seed");
  o.routing.pxn = p.get_bool("pxn");
  o.transport = transport_preset(p.get_string("transport"));
  if (p.has("stack_latency")) o.transport.stack_latency = p.get_time("stack_latency");
  if (p.has("mtu")) {
    o.transport.mtu = static_cast<int32_t>(p.get_int("mtu"));
    const int32_t m = o.transport.mtu;
    if (o.transport.rdma_mtu && m > 4096)
      throw ParamError("network.mtu",
                       fmt::format("network.mtu = {} on transport {}: an RDMA packet carries at most 4,096 bytes of "
                                   "payload, the largest path MTU; expected at most 4096 (a 9,000-byte jumbo frame "
                                   "still carries 4,096 B per RDMA packet), or network.transport=tcp for jumbo "
                                   "payloads",
                                   thousands(m), o.transport.name));
  }
  o.flow.quantum = p.get_time("flow_quantum");
  o.flow.threads = static_cast<int32_t>(p.get_int("threads"));
  o.packet.cc = p.get_string("cc");
  o.packet.pfc = p.get_bool("pfc");
  o.packet.link_credits = p.get_bool("link_credits");
  o.packet.link_retry = p.get_bool("link_retry");
  o.packet.reorder_nack = static_cast<int32_t>(p.get_int("reorder_nack"));
  o.packet.partitioned = p.get_bool("partitioned");
  o.packet.delivery = p.get_string("delivery");
  if (p.has("switch_buffer")) o.packet.switch_buffer = static_cast<Bytes>(p.get_real("switch_buffer"));
  if (p.has("ecn_kmin")) o.packet.ecn_kmin = static_cast<Bytes>(p.get_real("ecn_kmin"));
  if (p.has("ecn_kmax")) o.packet.ecn_kmax = static_cast<Bytes>(p.get_real("ecn_kmax"));
  if (p.has("ecn_pmax")) o.packet.ecn_pmax = p.get_real("ecn_pmax");
  if (p.has("rto")) {
    o.packet.rto = p.get_time("rto");
    // Under a microsecond every packet times out before its ACK is back: a storm of resends, not a study.
    if (o.packet.rto < Time::from_seconds(1e-6))
      throw ParamError("network.rto", fmt::format("network.rto = {} is shorter than an ACK takes to cross a fabric; "
                                                  "expected at least 1us (leave it out for the default: 1 ms + "
                                                  "2 x the largest queue's drain time)",
                                                  p.text("rto")));
  }
  o.faults.failures.local_repair = p.get_time("local_repair");
  o.faults.failures.convergence = p.get_time("convergence");
  o.faults.failures.collective_timeout = p.get_time("collective_timeout");
  return o;
}

}  // namespace podnet::engine
