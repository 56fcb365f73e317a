#!/usr/bin/env python3
"""Checks podnet's telemetry metrics with real Prometheus parsers.

check_metrics.py PROMTOOL DIR [--expect-storm NIC | --expect-no-storm] [--stderr FILE]

- DIR/metrics.prom: `promtool check metrics` (Prometheus's own linter, from
  Debian's prometheus package) must accept it with no finding;
- DIR/metrics.om: the OpenMetrics parser of the Prometheus Python client
  (python3-prometheus-client, prometheus_client.openmetrics.parser) must
  parse it, and it must end with `# EOF`;
- both carry the same samples; the NIC and switch families operators scrape
  are there; every counter sample ends in _total;
- with --stderr, podnet's summary names (or does not name) a PFC storm source.
"""
import subprocess
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families


def fail(msg):
    print("check_metrics: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    args = sys.argv[1:]
    promtool, d = args[0], args[1]
    prom = open(d + "/metrics.prom").read()
    om = open(d + "/metrics.om").read()
    r = subprocess.run([promtool, "check", "metrics"], input=prom, capture_output=True, text=True)
    if r.returncode != 0 or r.stdout.strip() or r.stderr.strip():
        fail("promtool check metrics: rc %d\n%s%s" % (r.returncode, r.stdout, r.stderr))
    if not om.endswith("# EOF\n"):
        fail("metrics.om does not end with # EOF")
    om_samples = {}
    for fam in text_string_to_metric_families(om):
        for s in fam.samples:
            if fam.type == "counter" and not s.name.endswith("_total"):
                fail("counter sample %s has no _total" % s.name)
            om_samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    prom_samples = {}
    for line in prom.splitlines():
        if not line or line.startswith("#"):
            continue
        name_labels, value = line.rsplit(" ", 1)
        prom_samples[name_labels] = float(value)
    if len(prom_samples) != len(om_samples):
        fail("metrics.prom has %d samples, metrics.om %d" % (len(prom_samples), len(om_samples)))
    names = {k[0] for k in om_samples}
    for want in ["node_network_transmit_bytes_total", "node_network_receive_bytes_total",
                 "node_ethtool_received_prio3_pause", "sonic_interface_transmit_bytes_total",
                 "sonic_interface_pfc_rx_packets_total", "sonic_queue_watermark_bytes",
                 "podnet_port_queue_depth_bytes", "podnet_port_drops_total"]:
        if want not in names:
            fail("no %s sample" % want)
    if "--stderr" in args:
        err = open(args[args.index("--stderr") + 1]).read()
        if "--expect-storm" in args:
            nic = args[args.index("--expect-storm") + 1]
            if ("PFC storm: %s " % nic) not in err:
                fail("no PFC storm of %s reported:\n%s" % (nic, err))
        if "--expect-no-storm" in args and "PFC storm" in err:
            fail("a PFC storm reported where there is none:\n%s" % err)
    print("check_metrics: %d samples, promtool and the OpenMetrics parser agree" % len(om_samples))


if __name__ == "__main__":
    main()
