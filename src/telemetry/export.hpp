// The Recorder written out: a short text summary for the console, and
// `--telemetry DIR` (CSV time series and tables, the metrics files of
// metrics.hpp). Every file is diff-stable: fixed float formats, rows in
// (run, time, link / QP) order, no wall times.
//
// DIR/ports.csv            one row per directed link that carried anything: the counters of recorder.hpp
// DIR/queue_depth.csv      run,time_s,link,port,bytes: every port's queue at each sample (packet engine with
//                          a sample interval; a port's rows run while its queue is non-empty, and one row after)
// DIR/qps.csv              one row per QP: endpoints, bytes, start, finish, FCT, retransmissions,
//                          out-of-order arrivals, CNPs, final rate (packet engine)
// DIR/qp_rates.csv         run,time_s,qp,rate_bps,delivered_bytes at each sample (packet engine)
// DIR/link_utilization.csv run,time_s,link,port,utilization: each change of a link's load (flow engine)
// DIR/metrics.prom         Prometheus text format 0.0.4 (metrics.hpp)
// DIR/metrics.om           OpenMetrics 1.0, the same content
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "telemetry/recorder.hpp"

namespace podnet::telemetry {

// The worst ports: those with any PAUSE time, drop, trim or ECN mark, by
// time paused, then drops, then ECN marks, then link id.
std::vector<int32_t> worst_ports(const Recorder& r, size_t count);

// Totals and the worst ports in a few lines; nothing when the counters are
// all zero (Recorder::any_events) and no series was recorded.
void write_summary(const Recorder& r, std::ostream& out, size_t worst = 5);
// Every port's counters summed (drops, trims, ECN marks, CNPs, PAUSE frames, time paused, retransmissions,
// out-of-order arrivals, data packets).
PortCounters port_totals(const Recorder& r);

// Writes the files above into `dir` (created if missing); returns their
// names. InputError naming the path when it cannot be written. The metrics
// files hold the ports that carried something, or every port with
// `all_ports` (metrics.hpp).
std::vector<std::string> write_dir(const Recorder& r, const std::string& dir, bool all_ports = false);

}  // namespace podnet::telemetry
