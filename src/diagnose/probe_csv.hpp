// Probe results as CSV: what `podnet diagnose --probes-out` writes and what
// `podnet diagnose --probes FILE` reads (a simulated run, or the user's own
// prober's results converted to these columns).
//
//   # lines starting with '#' are comments
//   src,dst,sport,sent,lost,rtt_p50_us,rtt_p99_us,path,return_path
//   gpu-node-0000/nic0,gpu-node-0001/nic0,49825,2500,1,4.9,4.9,gpu-node-0000/nic0:gpu0_eth>su000-leaf-r0:Ethernet1/65>...,...
//
// Columns (by name, any order; required: src, dst, sent, lost):
//   src, dst      the probing and the probed endpoint: NIC names as in the
//                 cabling plan (a torus: GPU names);
//   sport         the UDP source port of the request (optional, 0..65535);
//   sent, lost    probes sent and probes without a reply (0 <= lost <= sent);
//   rtt_p50_us, rtt_p99_us   round-trip percentiles in microseconds (optional,
//                 empty when every probe was lost);
//   path          traceroute-style: the egress interface of every hop as
//                 DEVICE:PORT joined by '>' (the source NIC first, the last
//                 switch's port toward dst last); optional;
//   return_path   the same for the reply, dst to src; optional.
// A row without paths is spread over every shortest path between its
// endpoints (the ECMP DAG of the scenario's fabric, each link weighted by the
// share of the pair's flows that cross it): localization is then coarser
// (links every path shares cannot be told apart), which it reports.
// Errors name the file, line and column, and say what was expected.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "diagnose/localize.hpp"
#include "diagnose/probe.hpp"

namespace podnet::routing {
class Router;
}

namespace podnet::diagnose {

void write_probe_csv(std::ostream& out, const topology::Topology& t, const Mesh& mesh, const ProbeRun& run);

struct ProbeTable {
  Incidence incidence;
  std::vector<int64_t> sent, lost;
  std::vector<double> rtt_p50_s;  // -1 where the row has none
  int64_t rows = 0;
  int64_t rows_without_path = 0;
};

// `router` must use the spray policy (paths of rows without a path column are
// its fractions). InputError "SOURCE:LINE: column: ..." for a bad row.
ProbeTable read_probe_csv(const std::string& text, const std::string& source, const topology::Topology& t,
                          routing::Router& spray_router);

}  // namespace podnet::diagnose
