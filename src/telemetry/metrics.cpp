#include "telemetry/metrics.hpp"

#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "routing/route.hpp"
#include "topology/address_plan.hpp"

namespace podnet::telemetry {

namespace {

using topology::NodeKind;

// Counter: the sample ends in _total. Untyped: named and typed as an exporter leaves a value it knows nothing
// about (node_exporter's ethtool statistics): the driver's own name, no suffix.
enum class Kind { Counter, Gauge, Untyped };

struct Family {
  std::string name;  // without _total
  Kind kind = Kind::Counter;
  std::string unit;  // "bytes", "seconds" or ""
  std::string help;
  std::vector<std::pair<std::string, double>> samples;  // labels ({...}), value
};

std::string escape(const std::string& v) {
  std::string o;
  for (char c : v) {
    if (c == '\\' || c == '"') o += '\\';
    if (c == '\n') {
      o += "\\n";
      continue;
    }
    o += c;
  }
  return o;
}

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (v == std::floor(v) && std::fabs(v) < 9.007199254740992e15) return fmt::format("{}", static_cast<int64_t>(v));
  return fmt::format("{}", v);
}

void write_family(const Family& f, Flavour flavour, std::ostream& out) {
  if (f.samples.empty()) return;
  const bool om = flavour == Flavour::OpenMetrics;
  const std::string sample = f.kind == Kind::Counter ? f.name + "_total" : f.name;
  const std::string declared = om ? f.name : sample;
  const char* type = f.kind == Kind::Counter ? "counter" : f.kind == Kind::Gauge ? "gauge" : om ? "unknown" : "untyped";
  out << "# HELP " << declared << " " << f.help << "\n";
  out << "# TYPE " << declared << " " << type << "\n";
  if (om && !f.unit.empty()) out << "# UNIT " << declared << " " << f.unit << "\n";
  for (const auto& [labels, v] : f.samples) out << sample << labels << " " << number(v) << "\n";
}

bool network(const topology::Topology& t, routing::DirLink d) {
  const auto m = t.links[routing::link_of(d)].media;
  return m == topology::Media::Copper || m == topology::Media::Optical;
}

bool carried(const PortCounters& c) {
  return c.tx_packets || c.rx_packets || c.tx_bytes > 0 || c.rx_bytes > 0 || c.pause_tx || c.pause_rx ||
         c.paused_s > 0 || c.drops_buffer || c.drops_link || c.ecn_marks || c.cnp_packets;
}

// The interface whose transmit side is `d` carried something (its link, either way).
bool active(const Recorder& r, routing::DirLink d) {
  const auto& P = r.ports();
  const auto& LB = r.link_bytes();
  for (routing::DirLink x : {d, d ^ 1}) {
    if (x < static_cast<int32_t>(P.size()) && carried(P[x])) return true;
    if (x < static_cast<int32_t>(LB.size()) && LB[x] > 0) return true;
  }
  return false;
}

}  // namespace

PortCoverage port_coverage(const Recorder& r, bool all_ports) {
  const topology::Topology& t = r.topology();
  PortCoverage c;
  for (routing::DirLink d = 0; d < routing::dir_link_count(t); ++d) {
    if (!network(t, d)) continue;
    ++c.ports;
    if (all_ports || active(r, d)) ++c.written;
  }
  return c;
}

void write_metrics(const Recorder& r, Flavour flavour, std::ostream& out, bool all_ports) {
  const topology::Topology& t = r.topology();
  auto fam = [](std::string name, bool counter, std::string unit, std::string help) {
    return Family{std::move(name), counter ? Kind::Counter : Kind::Gauge, std::move(unit), std::move(help), {}};
  };
  // node_exporter's ethtool collector: the driver's statistic with rx / tx spelt received / transmitted, untyped,
  // in the driver's units (collector/ethtool_linux.go, buildEthtoolFQName).
  auto ethtool = [](std::string name, std::string help) {
    return Family{"node_ethtool_" + std::move(name), Kind::Untyped, "", std::move(help), {}};
  };
  // NIC ports (node_exporter).
  Family nic_txb = fam("node_network_transmit_bytes", true, "bytes", "Network device statistic transmit_bytes.");
  Family nic_rxb = fam("node_network_receive_bytes", true, "bytes", "Network device statistic receive_bytes.");
  Family nic_txp = fam("node_network_transmit_packets", true, "", "Network device statistic transmit_packets.");
  Family nic_rxp = fam("node_network_receive_packets", true, "", "Network device statistic receive_packets.");
  Family nic_txd = fam("node_network_transmit_drop", true, "", "Network device statistic transmit_drop.");
  Family nic_rx_pause = ethtool("received_prio3_pause", "Network interface rx_prio3_pause (mlx5).");
  Family nic_tx_pause = ethtool("transmitted_prio3_pause", "Network interface tx_prio3_pause (mlx5).");
  Family nic_pause_dur =
      ethtool("received_prio3_pause_duration", "Network interface rx_prio3_pause_duration (mlx5, microseconds).");
  Family nic_cnp_sent = ethtool("np_cnp_sent", "Network interface np_cnp_sent (mlx5).");
  Family nic_cnp_handled = ethtool("rp_cnp_handled", "Network interface rp_cnp_handled (mlx5).");
  // Switch ports (SONiC exporter, SAI counters).
  Family sw_txb = fam("sonic_interface_transmit_bytes", true, "bytes", "Number of bytes transmitted on an interface.");
  Family sw_rxb = fam("sonic_interface_receive_bytes", true, "bytes", "Number of bytes received on an interface.");
  Family sw_txp = fam("sonic_interface_transmit_packets", true, "", "Number of packets transmitted on an interface.");
  Family sw_rxp = fam("sonic_interface_receive_packets", true, "", "Number of packets received on an interface.");
  Family sw_txe = fam("sonic_interface_transmit_errs", true, "", "Number of transmit errs on an interface.");
  Family sw_rxe = fam("sonic_interface_receive_errs", true, "", "Number of receive errs on an interface.");
  Family sw_pfc_rx =
      fam("sonic_interface_pfc_rx_packets", true, "", "PFC frames received (SAI_PORT_STAT_PFC_n_RX_PKTS).");
  Family sw_pfc_tx = fam("sonic_interface_pfc_tx_packets", true, "", "PFC frames sent (SAI_PORT_STAT_PFC_n_TX_PKTS).");
  Family sw_pfc_dur = fam("sonic_interface_pfc_rx_pause_duration_seconds", true, "seconds",
                          "Time paused by received PFC frames (SAI_PORT_STAT_PFC_n_RX_PAUSE_DURATION_US).");
  Family sw_qp = fam("sonic_queue_packets", true, "", "Number of packets in a queue.");
  Family sw_qb = fam("sonic_queue_bytes", true, "bytes", "Number of bytes in a queue.");
  Family sw_qd = fam("sonic_queue_dropped_packets", true, "", "Number of dropped packets in a queue.");
  Family sw_ecn = fam("sonic_queue_wred_ecn_marked_packets", true, "",
                      "Packets ECN-marked by WRED (SAI_QUEUE_STAT_WRED_ECN_MARKED_PACKETS).");
  Family sw_wm = fam("sonic_queue_watermark_bytes", false, "bytes", "Peak bytes held by a queue.");
  // The exporter labels a port by its SONiC name (Ethernet0, Ethernet8, ...: the config plan's); its alias, the
  // name podnet's tables and CSV files give it (Ethernet1/1), is in sonic_interface_info.
  Family sw_info = fam("sonic_interface_info", false, "", "Interface information (the alias: podnet's port name).");
  // Every port (podnet).
  Family drops = fam("podnet_port_drops", true, "", "Data packets dropped at a port, by cause.");
  Family depth = fam("podnet_port_queue_depth_bytes", false, "bytes",
                     "Data bytes queued at a port's egress: max, time-weighted mean and p99 over the run.");
  Family paused = fam("podnet_port_paused_seconds", true, "seconds", "Time the port's data class was paused.");
  Family retx = fam("podnet_port_retransmitted_packets", true, "", "Data packets sent again (go-back-N) on the port.");
  Family ooo = fam("podnet_port_out_of_order_packets", true, "",
                   "Data packets that arrived over the port's link at their destination beyond a hole.");
  Family ecn_all = fam("podnet_port_ecn_marked_packets", true, "", "Data packets ECN-marked at the port's queue.");
  // Flow engine.
  Family link_b = fam("podnet_link_transmit_bytes", true, "bytes", "Payload bytes carried (flow engine).");
  Family link_u = fam("podnet_link_utilization_ratio", false, "ratio",
                      "Mean payload utilization over the observed time (flow engine).");
  Family runs = fam("podnet_telemetry_runs", true, "", "Engine runs the counters add up.");
  Family observed = fam("podnet_telemetry_observed_seconds", true, "seconds", "Simulated time the counters cover.");

  const int32_t D = routing::dir_link_count(t);
  // The port a directed link leaves by: its node and port number (into n and port), and its labels.
  auto iface = [&](routing::DirLink d, topology::NodeId& n, int32_t& port) {
    const auto& l = t.links[routing::link_of(d)];
    const bool fwd = (d & 1) == 0;
    n = fwd ? l.a : l.b;
    port = fwd ? l.port_a : l.port_b;
    // A NIC's node is its server, as the `instance` of that host's node_exporter; its device the interface.
    return fmt::format("node=\"{}\",device=\"{}\"", escape(t.device_name(n)),
                       escape(t.nodes[n].kind == NodeKind::Switch ? topology::device_port_name(port)
                                                                  : t.port_name(n, port)));
  };
  auto net = [&](routing::DirLink d) { return network(t, d) && (all_ports || active(r, d)); };
  const auto& P = r.ports();
  if (!P.empty()) {
    for (routing::DirLink d = 0; d < D && d < static_cast<int32_t>(P.size()); ++d) {
      if (!net(d)) continue;
      topology::NodeId n;
      int32_t port = 0;
      const std::string L = iface(d, n, port);
      const std::string l = "{" + L + "}";
      const PortCounters& tx = P[d];
      const PortCounters& rx = P[d ^ 1];
      const bool sw = t.nodes[n].kind == NodeKind::Switch;
      if (!sw) {
        nic_txb.samples.push_back({l, tx.tx_bytes});
        nic_rxb.samples.push_back({l, rx.rx_bytes});
        nic_txp.samples.push_back({l, static_cast<double>(tx.tx_packets)});
        nic_rxp.samples.push_back({l, static_cast<double>(rx.rx_packets)});
        nic_txd.samples.push_back({l, static_cast<double>(tx.drops_buffer + tx.drops_link)});
        nic_rx_pause.samples.push_back({l, static_cast<double>(tx.pause_rx)});
        nic_tx_pause.samples.push_back({l, static_cast<double>(rx.pause_tx)});
        nic_pause_dur.samples.push_back({l, std::round(tx.paused_s * 1e6)});  // the driver counts microseconds
        nic_cnp_sent.samples.push_back({l, static_cast<double>(tx.cnp_packets)});
        nic_cnp_handled.samples.push_back({l, static_cast<double>(rx.cnp_packets)});
      } else {
        const std::string q = "{" + L + ",queue=\"3\"}";
        sw_info.samples.push_back({"{" + L + ",alias=\"" + escape(t.port_name(n, port)) + "\"}", 1.0});
        const std::string pr = "{" + L + ",priority=\"3\"}";
        sw_txb.samples.push_back({l, tx.tx_bytes});
        sw_rxb.samples.push_back({l, rx.rx_bytes});
        sw_txp.samples.push_back({l, static_cast<double>(tx.tx_packets)});
        sw_rxp.samples.push_back({l, static_cast<double>(rx.rx_packets)});
        sw_txe.samples.push_back(
            {"{" + L + ",type=\"discard\"}", static_cast<double>(tx.drops_buffer + tx.drops_link)});
        sw_txe.samples.push_back({"{" + L + ",type=\"pause\"}", static_cast<double>(rx.pause_tx)});
        sw_rxe.samples.push_back({"{" + L + ",type=\"pause\"}", static_cast<double>(tx.pause_rx)});
        sw_pfc_rx.samples.push_back({pr, static_cast<double>(tx.pause_rx)});
        sw_pfc_tx.samples.push_back({pr, static_cast<double>(rx.pause_tx)});
        sw_pfc_dur.samples.push_back({pr, tx.paused_s});
        sw_qp.samples.push_back({q, static_cast<double>(tx.data_packets)});
        sw_qb.samples.push_back({q, tx.payload_bytes});
        sw_qd.samples.push_back({q, static_cast<double>(tx.drops_buffer)});
        sw_ecn.samples.push_back({q, static_cast<double>(tx.ecn_marks)});
        sw_wm.samples.push_back({q, static_cast<double>(tx.queue_max_bytes)});
      }
      drops.samples.push_back({"{" + L + ",cause=\"buffer\"}", static_cast<double>(tx.drops_buffer)});
      drops.samples.push_back({"{" + L + ",cause=\"link_down\"}", static_cast<double>(tx.drops_link)});
      const double mean = r.observed_s() > 0 ? tx.queue_byte_s / r.observed_s() : 0;
      depth.samples.push_back({"{" + L + ",stat=\"max\"}", static_cast<double>(tx.queue_max_bytes)});
      depth.samples.push_back({"{" + L + ",stat=\"mean\"}", mean});
      depth.samples.push_back({"{" + L + ",stat=\"p99\"}", static_cast<double>(tx.queue_p99_bytes)});
      paused.samples.push_back({l, tx.paused_s});
      retx.samples.push_back({l, static_cast<double>(tx.retransmits)});
      ooo.samples.push_back({l, static_cast<double>(rx.out_of_order)});
      ecn_all.samples.push_back({l, static_cast<double>(tx.ecn_marks)});
    }
  }
  const auto& LB = r.link_bytes();
  for (routing::DirLink d = 0; d < static_cast<int32_t>(LB.size()); ++d) {
    if (!net(d)) continue;
    topology::NodeId n;
    int32_t port = 0;
    const std::string l = "{" + iface(d, n, port) + "}";
    link_b.samples.push_back({l, std::round(LB[d])});  // a byte counter: whole bytes (the flow engine is fluid)
    const double cap = r.link_capacity_bps()[d];
    link_u.samples.push_back({l, cap > 0 && r.observed_s() > 0 ? LB[d] * 8 / (cap * r.observed_s()) : 0.0});
  }
  runs.samples.push_back({"", static_cast<double>(r.runs())});
  observed.samples.push_back({"", r.observed_s()});

  for (const Family* f :
       {&nic_txb,       &nic_rxb,      &nic_txp,         &nic_rxp,   &nic_txd,    &nic_rx_pause, &nic_tx_pause,
        &nic_pause_dur, &nic_cnp_sent, &nic_cnp_handled, &sw_txb,    &sw_rxb,     &sw_txp,       &sw_rxp,
        &sw_txe,        &sw_rxe,       &sw_pfc_rx,       &sw_pfc_tx, &sw_pfc_dur, &sw_qp,        &sw_qb,
        &sw_qd,         &sw_ecn,       &sw_wm,           &sw_info,   &drops,      &depth,        &paused,
        &retx,          &ooo,          &ecn_all,         &link_b,    &link_u,     &runs,         &observed})
    write_family(*f, flavour, out);
  if (flavour == Flavour::OpenMetrics) out << "# EOF\n";
}

}  // namespace podnet::telemetry
