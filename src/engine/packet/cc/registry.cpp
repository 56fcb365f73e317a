// The registry of congestion-control algorithms (congestion_control.hpp):
// one line per algorithm.
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "engine/packet/cc/congestion_control.hpp"
#include "engine/packet/cc/dcqcn.hpp"
#include "engine/packet/cc/dctcp.hpp"
#include "engine/packet/cc/hpcc.hpp"
#include "engine/packet/cc/line_rate.hpp"
#include "engine/packet/cc/nscc.hpp"
#include "engine/packet/cc/rccc.hpp"
#include "engine/packet/cc/swift.hpp"
#include "engine/packet/cc/timely.hpp"

namespace podnet::engine::packet::cc {

const std::vector<Entry>& registry() {
  static const std::vector<Entry> k = {
      {"dcqcn_paper", "DCQCN, paper / fluid-model parameters (Kmin 5 KB, Kmax 200 KB, Pmax 1 %, 50/55 us timers)",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<Dcqcn>(dcqcn_paper()); }},
      {"dcqcn_nic", "DCQCN, NIC-style parameters of the HPCC repository (1 us alpha, 4 us decrease, 300 us timer)",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<Dcqcn>(dcqcn_nic()); }},
      {"dctcp", "DCTCP (Alizadeh et al. 2010): window per QP, step ECN mark at K (65 x 1.5 KB per 10 Gbps), g = 1/16",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<Dctcp>(DctcpParams{}); }},
      {"nscc",
       "Ultra Ethernet NSCC: a window from queueing delay and ECN together (four quadrants), packet trimming with "
       "selective resends; target delay 0.75 x the fabric's round trip (UEC 1.0; htsim's constants)",
       [](const Context& c) -> std::unique_ptr<CongestionControl> { return std::make_unique<Nscc>(NsccParams{}, c); }},
      {"nscc_median",
       "NSCC for spraying: the median delay and majority mark of the last 8 ACKs decide, not the newest ACK's "
       "(MNSCC, Gerstein et al. 2026); otherwise as nscc",
       [](const Context& c) -> std::unique_ptr<CongestionControl> {
         NsccParams p;
         p.median_of = 8;
         return std::make_unique<Nscc>(p, c);
       }},
      {"rccc",
       "Ultra Ethernet RCCC: the receiver's NIC grants credit at its line rate, round robin over its senders (16 KiB "
       "per pull); 1.5 BDP of speculative credit first; packet trimming with selective resends; no sender window",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<Rccc>(RcccParams{}); }},
      {"nscc_rccc",
       "NSCC and RCCC together (UEC 1.0's sender and receiver congestion control): a packet needs room in NSCC's "
       "window and the receiver's credit",
       [](const Context& c) -> std::unique_ptr<CongestionControl> {
         NsccParams p;
         p.receiver_credits = true;
         return std::make_unique<Nscc>(p, c);
       }},
      {"swift",
       "Swift (Kumar et al. 2020): a window from the round-trip delay against a target that grows with hops and "
       "shrinks with the window; no ECN (htsim's constants: 20 us base target)",
       [](const Context& c) -> std::unique_ptr<CongestionControl> {
         return std::make_unique<Swift>(SwiftParams{}, c);
       }},
      {"swift_median",
       "Swift for spraying: the median round trip of the last 8 ACKs decides, not the newest ACK's (as MNSCC "
       "does for NSCC); otherwise as swift",
       [](const Context& c) -> std::unique_ptr<CongestionControl> {
         SwiftParams p;
         p.median_of = 8;
         return std::make_unique<Swift>(p, c);
       }},
      {"timely",
       "TIMELY (Mittal et al. 2015): a rate from the round trip's gradient, between 50 us and 1 ms; no ECN (the "
       "authors' constants as eRPC carries them; its additive step 1/1,000 of the line rate)",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<Timely>(TimelyParams{}); }},
      {"hpcc",
       "HPCC (Li et al. 2019): switches stamp queue, bytes sent and rate on every packet; the sender sets its rate "
       "and window from the busiest hop's utilization (eta 0.95, 50 Mb/s additive step; the paper's simulations)",
       [](const Context& c) -> std::unique_ptr<CongestionControl> { return std::make_unique<Hpcc>(HpccParams{}, c); }},
      {"infiniband", "InfiniBand: credit-based lossless links, no end-to-end congestion control",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<LineRate>(true); }},
      {"none", "line rate, no congestion control; PFC (or drops without PFC)",
       [](const Context&) -> std::unique_ptr<CongestionControl> { return std::make_unique<LineRate>(false); }},
  };
  return k;
}

std::unique_ptr<CongestionControl> make(std::string_view name, const Context& ctx) {
  for (const Entry& e : registry())
    if (name == e.name) return e.make(ctx);
  std::string names;
  for (const Entry& e : registry()) names += (names.empty() ? "" : ", ") + std::string(e.name);
  throw InputError(fmt::format("unknown congestion control '{}'; expected one of: {}", name, names));
}

}  // namespace podnet::engine::packet::cc
