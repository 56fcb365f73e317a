// The Recorder's counters as a metrics text file an operator's Prometheus
// scrapes (e.g. through node_exporter's textfile collector), named and
// labelled as the exporters of real NICs and switches name them, so the same
// dashboards and alerts read simulated and measured fabrics.
//
// Every network port (an end of a Copper/Optical link) is one interface,
// labelled {node="<node>", device="<port>"}: its transmit side is the
// directed link leaving it, its receive side the one entering it. `node`
// stands for the instance label a scrape of each host adds (one file holds
// the whole fabric). A switch port's device is its SONiC name, Ethernet<8p>
// as the config plan writes it (topology/address_plan.hpp); its alias, the
// Ethernet1/<p+1> that podnet's tables and CSV files print, is in
// sonic_interface_info{alias=...}, as the SONiC exporter gives it.
// - NIC ports (not a switch): Prometheus node_exporter's netdev names
//   (prometheus/node_exporter, collector/netdev_common.go:
//   node_network_{receive,transmit}_{bytes,packets,drop}_total), and the
//   ethtool collector's names for the mlx5 driver's statistics (Linux,
//   Documentation/networking/device_drivers/ethernet/mellanox/mlx5/
//   counters.rst: rx_prio3_pause, tx_prio3_pause, rx_prio3_pause_duration,
//   np_cnp_sent, rp_cnp_handled; priority 3 is the RoCE lossless class) as
//   that collector writes them (collector/ethtool_linux.go,
//   buildEthtoolFQName): rx and tx spelt received and transmitted, no
//   suffix, untyped, in the driver's units (the pause duration in
//   microseconds): node_ethtool_received_prio3_pause,
//   node_ethtool_transmitted_prio3_pause,
//   node_ethtool_received_prio3_pause_duration, node_ethtool_np_cnp_sent,
//   node_ethtool_rp_cnp_handled.
// - Switch ports: the SONiC exporter's names (vinted/sonic-exporter,
//   internal/collector/interface_collector.go and queue_collector.go:
//   sonic_interface_{receive,transmit}_{bytes,packets}_total,
//   sonic_interface_{receive,transmit}_errs_total{type="pause"|"discard"},
//   sonic_interface_info{alias},
//   sonic_queue_{packets,bytes,dropped_packets}_total{queue="3"}), and the
//   PFC and ECN counters of the SAI under them, which that exporter does not
//   export (SAI_PORT_STAT_PFC_3_RX_PKTS, _TX_PKTS, _RX_PAUSE_DURATION_US,
//   SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS), named its way:
//   sonic_interface_pfc_{rx,tx}_packets_total{priority="3"},
//   sonic_interface_pfc_rx_pause_duration_seconds_total and
//   sonic_queue_wred_ecn_marked_packets_total.
// - What no exporter has, for every port, named podnet_*: drops by cause,
//   queue depth max / mean / p99 (gauges), retransmissions and out-of-order
//   arrivals; per run: the time observed. Flow engine runs: bytes and mean
//   utilization per port (podnet_link_*).
// Base units (bytes, seconds) but the ethtool statistics', counters end in _total, floats in a fixed
// format, lines in a fixed order (families as listed, ports by link id), so
// the file is diff-stable.
//
// Two flavours of the same content: Prometheus's text format 0.0.4 (what
// node_exporter's textfile collector reads and `promtool check metrics`
// lints: a counter's TYPE line names the _total sample) and OpenMetrics 1.0
// (a counter family is named without _total, # UNIT lines, ending `# EOF`).
#pragma once

#include <ostream>

#include "telemetry/recorder.hpp"

namespace podnet::telemetry {

//
// Only the ports that carried something are written (an interface whose link
// moved a packet, a byte, a PAUSE frame or a drop either way; on the flow
// engine, a byte either way) unless `all_ports`: an 8-GPU incast on
// leafspine-8k wrote 745,474 samples, 745,392 of them zero (every port of
// the fabric), 66 MB per file. A port left out reads as absent, which
// Prometheus treats as no series, not as zero.
enum class Flavour { Prometheus, OpenMetrics };

struct PortCoverage {
  int64_t ports = 0;    // network interfaces (both ends of every copper or optical link)
  int64_t written = 0;  // of them, those written
};
// Which interfaces write_metrics writes.
PortCoverage port_coverage(const Recorder& r, bool all_ports);

void write_metrics(const Recorder& r, Flavour flavour, std::ostream& out, bool all_ports = false);

}  // namespace podnet::telemetry
