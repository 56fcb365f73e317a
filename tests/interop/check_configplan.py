#!/usr/bin/env python3
"""Checks podnet's configuration plan (`podnet design --config-plan DIR`) with its consumers.

For each built-in example at the sizes of cases.py (and the variants below), runs
`podnet design NAME --config-plan DIR --netbox NETBOX --format json` and checks:
- FRR: FRR's own parser, `vtysh --dryrun -f FILE` (Debian's frr package; it reads the
  file as vtysh would without any daemon running) accepts every frr/<switch>.conf, and
  refuses a copy with one bad line (so the check can fail);
- SONiC: every sonic/<switch>.json validates against sonic_config_db.schema.json (derived
  from SONiC's Configuration Database Manual and YANG models) with python3-jsonschema,
  and a fragment with a bad value fails it;
- structure: no address given twice; both ends of every addressed cable of the cabling
  plan (08-cables.csv) in one /31 (/127), with the lower-tier end odd; eBGP sessions
  (SONiC BGP_NEIGHBOR, or FRR's interface neighbors when unnumbered) = switch-to-switch
  cables, each neighbor address the far end's address on that cable and its remote-as the
  far switch's bgp_asn; FRR's and SONiC's neighbor lists equal; ASNs in RFC 6996's private
  4-byte range, one per leaf (tier 1), never the same at both ends of a cable; every
  leaf's routes reach every other leaf when each switch keeps its best (shortest AS path)
  route and refuses a path holding its own ASN (RFC 4271 9.1.2), as bgpd would;
- tenants (variants tenants, frontend): every tenant NIC port in its VRF in FRR and SONiC alike, EVPN on every
  back-end session, no tenant's prefix in another's VRF and none missing (type-5 routes propagated by route
  target), a broken route target makes it fail; SONiC's VRF, VTEP (Loopback0) and VNI -> VLAN -> VRF maps match
  the FRR file; the frontend's switches serve no tenant;
- a site (variant frontend): the frontend's switches join the plan (switches.csv network column), no session
  joins the two networks, and the reachability above holds in each network;
- NetBox: 09-ip-addresses.csv has IPAddressImportForm's columns (netbox/ipam/forms/
  bulk_import.py, v4.6.8), NetBox's status and role choices, and every row's device and
  interface in 06-devices.csv / 07-interfaces.csv; the config plan's ip-addresses.csv is
  the same file; switches = the bill of materials' switches.

Usage: check_configplan.py PODNET SRC OUT [NAME[:VARIANT] ...]   (default: every example, numbered IPv4,
plus aipod-16k:ipv6 and aipod-16k:unnumbered)
"""
import csv
import ipaddress
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cases  # noqa: E402

try:
    import jsonschema
except ImportError:
    print("check_configplan.py: python3-jsonschema is missing (apt-get install python3-jsonschema)", file=sys.stderr)
    sys.exit(1)

VARIANTS = {"": [], "ipv6": ["--set", "addressing.family=ipv6"], "unnumbered": ["--set", "addressing.bgp=unnumbered"],
            "tenants": ["--set", "tenants=[{name: alpha, gpus: 50%}, {name: beta, gpus: 25%}]"],
            # A site: the back end with tenants, and a frontend with storage nodes that stays in the default VRF.
            "frontend": ["--set", "tenants=[{name: alpha, gpus: 50%}, {name: beta, gpus: 25%}]",
                         "--set", "frontend.nics=2", "--set", "frontend.storage_nodes=4"],
            # Tenants isolated on the frontend too: each in its VRF there, the storage nodes in Vrf-storage.
            "frontend-isolated": ["--set", "tenants=[{name: alpha, gpus: 50%}, {name: beta, gpus: 25%}]",
                                  "--set", "frontend.nics=2", "--set", "frontend.storage_nodes=4",
                                  "--set", "frontend.tenants=isolated"],
            # An Ethernet frontend beside an InfiniBand back end: the plan covers the frontend alone.
            "ethernet-frontend": ["--set", "frontend.nics=2", "--set", "frontend.storage_nodes=4"],
            # Four tiers: radix-16 switches, 2 pods of one 64-GPU group, each pod its own zone under the cores.
            "four-tiers": ["--set", "switch.radix=16", "--set", "topology.groups_per_pod=1", "--set",
                           "topology.tiers=4"],
            # A multi-plane fabric: each 400G NIC as 4 ports of 100G, one per copy of the switches.
            "planes": ["--set", "server.nic_planes=4", "--set", "switch.port_speed=100Gbps"]}
IP_FIELDS = set("address vrf tenant status role device virtual_machine interface fhrp_group is_primary is_oob "
                "dns_name description owner comments tags".split())
IP_STATUS = {"active", "reserved", "deprecated", "dhcp", "slaac"}
IP_ROLES = {"", "loopback", "secondary", "anycast", "vip", "vrrp", "hsrp", "glbp", "carp"}
ASN_FIRST, ASN_LAST = 4200000000, 4294967294


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


class Check:
    def __init__(self, name):
        self.name, self.errors = name, []

    def error(self, what):
        if len(self.errors) < 25:
            self.errors.append(f"{self.name}: {what}")


# Examples whose network.transport is infiniband.
INFINIBAND = {"ib-sharp-1k"}


def vtysh_dryrun(path):
    r = subprocess.run(["vtysh", "--dryrun", "-f", path], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.returncode, r.stdout.strip()


def unreachable_leaf_pairs(leaves, peers, asn):
    """(origin, leaf) pairs where the origin leaf's routes never arrive: path-vector propagation of best
    routes (shortest AS path) until nothing changes, a switch refusing a path that holds its own ASN
    (RFC 4271 9.1.2), as bgpd does on these eBGP sessions."""
    lost = []
    for o in leaves:
        best = {o: ()}
        frontier = [o]
        while frontier:
            nxt = []
            for u in sorted(frontier):
                sent = (asn[u],) + best[u]
                for v in sorted(peers.get(u, ())):
                    if v == o or asn[v] in sent:
                        continue
                    if v not in best or len(sent) < len(best[v]):
                        best[v] = sent
                        nxt.append(v)
            frontier = nxt
        lost += [(o, v) for v in leaves if v != o and v not in best]
    return lost


def evpn_view(texts):
    """What each FRR file says about tenants: {switch: {"vrfs": {vrf: vni}, "ports": {prefix: vrf or None},
    "rt": {vrf: (imports, exports)}, "evpn_peers": set of neighbors activated in l2vpn evpn, "all_vni": bool}}."""
    view = {}
    for s, text in texts.items():
        v = {"vrfs": {}, "ports": {}, "rt": {}, "evpn_peers": set(), "all_vni": False}
        for name, vni in re.findall(r"^vrf (\S+)\n vni (\d+)\nexit-vrf$", text, re.M):
            v["vrfs"][name] = int(vni)
        for iface, vrf, addr in re.findall(r"^interface (\S+)(?: vrf (\S+))?\n(?: description .*\n)?"
                                           r" ipv?6? ?address (\S+)\n", text, re.M):
            if iface != "Loopback0":
                v["ports"][str(ipaddress.ip_interface(addr).network)] = vrf or None
        for block in re.findall(r"^router bgp \d+ vrf (\S+)\n(.*?)^exit$", text, re.M | re.S):
            vrf, body = block
            v["rt"][vrf] = (set(re.findall(r"route-target import (\S+)", body)),
                            set(re.findall(r"route-target export (\S+)", body)))
        m = re.search(r"^router bgp \d+\n(.*?)^exit$", text, re.M | re.S)
        if m:
            evpn = re.search(r" address-family l2vpn evpn\n(.*?) exit-address-family", m.group(1), re.S)
            if evpn:
                v["evpn_peers"] = set(re.findall(r"neighbor (\S+) activate", evpn.group(1)))
                v["all_vni"] = "advertise-all-vni" in evpn.group(1)
        view[s] = v
    return view


def tenant_leaks(view, shared=None):
    """EVPN type-5 propagation: a VRF instance exports its connected prefixes with its export route targets; every
    other VRF instance whose import route targets meet them installs them (RFC 7432 route-target filtering).
    Returns (leaks, missing, shared_reach): a prefix of one VRF installed in another VRF (the `shared` VRF's
    exchanges with the others aside), a VRF instance missing a prefix of its own VRF on another switch, and the
    (vrf, switch) instances that installed the shared VRF's prefixes."""
    origin = {}  # (switch, vrf) -> prefixes
    for s, v in view.items():
        for prefix, vrf in v["ports"].items():
            if vrf:
                origin.setdefault((s, vrf), set()).add(prefix)
    leaks, missing, reach = [], [], set()
    for (s, vrf), prefixes in sorted(origin.items()):
        exports = view[s]["rt"].get(vrf, (set(), set()))[1]
        for (s2, vrf2) in sorted(origin):
            if s2 == s:
                continue
            imports = view[s2]["rt"].get(vrf2, (set(), set()))[0]
            installed = bool(exports & imports)
            if installed and vrf == shared:
                reach.add((vrf2, s2))
            if installed and vrf2 != vrf and shared not in (vrf, vrf2):
                leaks.append((vrf, s, vrf2, s2))
            if not installed and vrf2 == vrf:
                missing.append((vrf, s, s2))
    return leaks, missing, reach


def sonic_tenant_view(doc):
    """What a SONiC fragment says about tenants: ({vrf: vni}, {prefix: vrf} of the ports in a VRF, the VTEP's source
    address, {vni: vrf} through VXLAN_TUNNEL_MAP -> VLAN_INTERFACE)."""
    vrfs = {k: int(v.get("vni", "0")) for k, v in doc.get("VRF", {}).items()}
    port_vrf = {k: v["vrf_name"] for k, v in doc.get("INTERFACE", {}).items() if "|" not in k and "vrf_name" in v}
    ports = {}
    for k in doc.get("INTERFACE", {}):
        if "|" in k and k.split("|")[0] in port_vrf:
            ports[str(ipaddress.ip_interface(k.split("|")[1]).network)] = port_vrf[k.split("|")[0]]
    vtep = doc.get("VXLAN_TUNNEL", {}).get("vtep", {}).get("src_ip")
    vlan_vrf = {k: v.get("vrf_name") for k, v in doc.get("VLAN_INTERFACE", {}).items()}
    vni_vrf = {int(v["vni"]): vlan_vrf.get(v["vlan"]) for v in doc.get("VXLAN_TUNNEL_MAP", {}).values()}
    return vrfs, ports, vtep, vni_vrf


def check_sonic_tenants(c, view, sonic):
    """SONiC's data plane of each leaf's EVPN equals its FRR file's: the VRFs and their VNIs, the tenant ports in them,
    the VTEP on Loopback0 with an EVPN NVO, each VNI mapped through a VLAN to its VRF."""
    for s, v in sorted(view.items()):
        vrfs, ports, vtep, vni_vrf = sonic_tenant_view(sonic[s])
        if vrfs != v["vrfs"]:
            c.error(f"sonic/{s}.json: VRF {vrfs}, FRR says {v['vrfs']}")
        frr_ports = {p: vrf for p, vrf in v["ports"].items() if vrf}
        if ports != frr_ports:
            c.error(f"sonic/{s}.json: {len(ports)} ports in VRFs, FRR {len(frr_ports)}; "
                    f"e.g. {sorted(set(ports.items()) ^ set(frr_ports.items()))[:2]}")
        if not vrfs:
            if vtep or vni_vrf:
                c.error(f"sonic/{s}.json: a VTEP or VNI map without tenants")
            continue
        lo = [k.split("|")[1].split("/")[0] for k in sonic[s]["LOOPBACK_INTERFACE"] if "|" in k]
        if vtep is None or [vtep] != lo or "nvo" not in sonic[s].get("VXLAN_EVPN_NVO", {}):
            c.error(f"sonic/{s}.json: VTEP {vtep} with NVO {sonic[s].get('VXLAN_EVPN_NVO')}, expected Loopback0 {lo}")
        if vni_vrf != {vni: vrf for vrf, vni in vrfs.items()}:
            c.error(f"sonic/{s}.json: VNI -> VLAN -> VRF {vni_vrf}, expected {vrfs}")
        if sonic[s]["DEVICE_METADATA"]["localhost"].get("docker_routing_config_mode") != "split-unified":
            c.error(f"sonic/{s}.json: EVPN lives in the FRR file, but docker_routing_config_mode is not split-unified")


def check_tenants(c, podnet_doc, texts, want_sessions, unnumbered, sonic, network, isolated=False):
    """The tenants' EVPN-VXLAN: every tenant NIC port in its tenant's VRF, VNIs as the design says, every eBGP
    session activated for EVPN at both ends, no prefix leaking between VRFs and none missing; and a leaf whose
    export route target names another tenant's makes the check fail."""
    tenants = {t["vrf"]: t for t in podnet_doc.get("tenants", [])}
    if not tenants:
        c.error("the tenants variant's design document lists no tenants")
        return
    view = evpn_view(texts)
    check_sonic_tenants(c, view, sonic)
    # Isolated on the frontend: the storage nodes' VRF, its route target on the tenants' ASN base, VNI 10000.
    storage = "Vrf-storage" if isolated else None
    storage_rt = next(iter(tenants.values()))["route_target"].split(":")[0] + ":10000"
    for s, v in view.items():
        if network[s] != "backend" and not isolated and (v["vrfs"] or v["evpn_peers"]):
            c.error(f"frr/{s}.conf: a frontend switch serves tenants or runs EVPN; the frontend stays in the default VRF")
        for vrf, vni in v["vrfs"].items():
            if vrf == storage and network[s] == "frontend":
                if vni != 10000 or v["rt"].get(vrf) != ({storage_rt} | {t["route_target"] for t in tenants.values()},
                                                          {storage_rt}):
                    c.error(f"frr/{s}.conf: vrf {vrf} vni {vni} route targets {v['rt'].get(vrf)}: expected VNI 10000, "
                            f"exporting {storage_rt} and importing it and every tenant's")
                continue
            if vrf not in tenants or tenants[vrf]["vni"] != vni:
                c.error(f"frr/{s}.conf: vrf {vrf} vni {vni} is not a tenant of the design")
            rt = tenants.get(vrf, {}).get("route_target")
            want_rt = ({rt, storage_rt}, {rt}) if isolated and network[s] == "frontend" else ({rt}, {rt})
            if v["rt"].get(vrf) != want_rt:
                c.error(f"frr/{s}.conf: router bgp vrf {vrf} route targets {v['rt'].get(vrf)}, expected {want_rt}")
        if v["vrfs"] and not v["all_vni"]:
            c.error(f"frr/{s}.conf: serves tenants but does not advertise its VNIs (advertise-all-vni)")
    for (s, who), _ in want_sessions.items():
        if (network[s] == "backend" or isolated) and who not in view[s]["evpn_peers"]:
            c.error(f"frr/{s}.conf: neighbor {who} is not activated in l2vpn evpn")
            break
    in_vrf = sum(1 for v in view.values() for vrf in v["ports"].values() if vrf)
    want = sum(t["servers"] for t in tenants.values()) * podnet_doc["bom"]["nics"] // podnet_doc["bom"]["servers"]
    if isolated:  # and on the frontend: the tenants' servers' frontend NICs, and the storage nodes'
        fe = podnet_doc["frontend"]
        want += sum(t["servers"] for t in tenants.values()) * fe["nics_per_server"]
        want += fe["storage_nodes"] * fe["nics_per_storage_node"]
    if in_vrf != want:
        c.error(f"{in_vrf} NIC ports in tenant VRFs, the tenants' servers have {want} NICs")
    leaks, missing, reach = tenant_leaks(view, storage)
    if leaks or missing:
        c.error(f"EVPN: {len(leaks)} leaks between tenants (e.g. {leaks[:2]}), {len(missing)} VRF pairs missing "
                f"routes (e.g. {missing[:2]})")
    if isolated:  # every frontend tenant VRF instance reaches the storage
        lacking = [(vrf, s) for s, v in view.items() for vrf in v["vrfs"]
                   if network[s] == "frontend" and vrf != storage and (vrf, s) not in reach]
        if lacking:
            c.error(f"{len(lacking)} frontend tenant VRF instances do not install the storage's routes: {lacking[:2]}")
        # The reach check can fail: a frontend leaf whose tenant VRFs stop importing the storage's route target.
        s_fe = next(s for s, v in sorted(view.items()) if network[s] == "frontend" and set(v["vrfs"]) - {storage})
        cut = dict(texts)
        cut[s_fe] = texts[s_fe].replace(f"  route-target import {storage_rt}\n", "")
        _, _, cut_reach = tenant_leaks(evpn_view(cut), storage)
        if all((vrf, s_fe) in cut_reach for vrf in view[s_fe]["vrfs"] if vrf != storage):
            c.error(f"frr/{s_fe}.conf without the storage's import still reaches it: the reach check cannot fail")
    # A broken route target: one leaf exports its first tenant's routes with another tenant's target.
    s = next((s for s, v in sorted(view.items()) if v["vrfs"]), None)
    if s is None or len(tenants) < 2:
        c.error("no leaf serves a tenant, or fewer than two tenants: the isolation check cannot fail")
        return
    first = sorted(view[s]["vrfs"])[0]
    other = next(t["route_target"] for vrf, t in sorted(tenants.items()) if vrf != first)
    broken = dict(texts)
    broken[s] = texts[s].replace(f"route-target export {tenants[first]['route_target']}",
                                 f"route-target export {other}")
    bad_leaks, _, _ = tenant_leaks(evpn_view(broken), storage)
    if not bad_leaks:
        c.error(f"frr/{s}.conf exporting {first} with {other}: no leak found: the isolation check cannot fail")
    # A SONiC fragment whose tenant port sits in another VRF than the FRR file's fails the comparison.
    bad = json.loads(json.dumps(sonic[s]))
    port = next(k for k, v in sorted(bad["INTERFACE"].items()) if v.get("vrf_name") == first)
    bad["INTERFACE"][port]["vrf_name"] = next(vrf for vrf in sorted(tenants) if vrf != first)
    probe = Check("probe")
    check_sonic_tenants(probe, {s: view[s]}, {s: bad})
    if not probe.errors:
        c.error(f"sonic/{s}.json with {port} in another VRF passed: the SONiC tenant check cannot fail")
    print(f"tenants: {len(tenants)} VRFs over EVPN on {sum(1 for v in view.values() if v['vrfs'])} leaves, "
          f"{in_vrf} NIC ports in them, no leak; a broken route target leaks {len(bad_leaks)} VRF pairs")


def check(podnet, src, out, spec, schema):
    name, _, variant = spec.partition(":")
    c = Check(spec)
    d = os.path.join(out, spec.replace(":", "-"))
    plan, netbox = os.path.join(d, "plan"), os.path.join(d, "netbox")
    args = [podnet, "design", name] + cases.CASES[name] + VARIANTS[variant]
    r = subprocess.run(args + ["--config-plan", plan, "--netbox", netbox, "--format", "json"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if name in INFINIBAND and variant != "ethernet-frontend":
        # An InfiniBand fabric has no eBGP or SONiC plan (a subnet manager configures it): refused, nothing written.
        if r.returncode != 2 or "subnet manager" not in r.stderr or os.path.exists(os.path.join(plan, "frr")):
            c.error(f"InfiniBand: expected --config-plan refused (exit 2, 'subnet manager'), got exit {r.returncode}: "
                    f"{r.stderr.strip()[:300]}")
        else:
            print(f"{spec}: InfiniBand: --config-plan refused as expected (a subnet manager configures the fabric)")
        return c.errors
    if r.returncode != 0:
        c.error(f"podnet exit {r.returncode}: {r.stderr.strip()}")
        return c.errors
    design_doc = json.loads(r.stdout)
    bom = design_doc["bom"]
    switches = {row["switch"]: row for row in read_csv(os.path.join(plan, "switches.csv"))}
    network = {s: row["network"] for s, row in switches.items()}
    want_switches = {"backend": bom["switches"]["total"]} if bom["switches"]["total"] and name not in INFINIBAND else {}
    if "frontend" in design_doc:
        want_switches["frontend"] = design_doc["frontend"]["switches"]["total"]
    got_switches = {n: sum(1 for x in network.values() if x == n) for n in set(network.values())}
    if got_switches != want_switches:
        c.error(f"switches.csv has {got_switches} switches per network, the bills of materials {want_switches}")
    frr_files = sorted(os.listdir(os.path.join(plan, "frr")))
    sonic_files = sorted(os.listdir(os.path.join(plan, "sonic")))
    if frr_files != sorted(s + ".conf" for s in switches) or sonic_files != sorted(s + ".json" for s in switches):
        c.error("frr/ and sonic/ do not hold one file per switch of switches.csv")

    # FRR's parser on every file.
    for f in frr_files:
        rc, msg = vtysh_dryrun(os.path.join(plan, "frr", f))
        if rc != 0:
            c.error(f"vtysh --dryrun -f frr/{f}: exit {rc}: {msg[:300]}")

    # SONiC fragments against the schema.
    validator = jsonschema.Draft202012Validator(schema)
    sonic = {}
    for f in sonic_files:
        with open(os.path.join(plan, "sonic", f), encoding="utf-8") as fh:
            doc = json.load(fh)
        for e in validator.iter_errors(doc):
            c.error(f"sonic/{f}: {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
            break
        sonic[f[:-5]] = doc
    unnumbered = variant == "unnumbered"

    # Addresses: ip-addresses.csv is the NetBox set's 09 file; unique; on known interfaces. With an InfiniBand
    # back end the NetBox set has no IP file (a subnet manager addresses the fabric): the plan's own, for the
    # frontend, is checked against the set's devices and interfaces.
    ip_file = os.path.join(plan if name in INFINIBAND else netbox,
                           "ip-addresses.csv" if name in INFINIBAND else "09-ip-addresses.csv")
    if name not in INFINIBAND:
        with open(os.path.join(plan, "ip-addresses.csv"), encoding="utf-8") as a, open(ip_file, encoding="utf-8") as b:
            if a.read() != b.read():
                c.error("ip-addresses.csv differs from the NetBox set's 09-ip-addresses.csv")
    ips = read_csv(ip_file)
    with open(ip_file, encoding="utf-8") as fh:
        header = fh.readline().strip().split(",")
    if not set(header) <= IP_FIELDS:
        c.error(f"09-ip-addresses.csv columns {sorted(set(header) - IP_FIELDS)} are not IPAddressImportForm fields")
    devices = {r["name"] for r in read_csv(os.path.join(netbox, "06-devices.csv"))}
    interfaces = {(r["device"], r["name"]) for r in read_csv(os.path.join(netbox, "07-interfaces.csv"))}
    addr_of, seen = {}, {}
    for i, r in enumerate(ips, start=2):
        if not r["address"] or r["status"] not in IP_STATUS or r["role"] not in IP_ROLES:
            c.error(f"09-ip-addresses.csv:{i}: address {r['address']!r} status {r['status']!r} role {r['role']!r}")
        # (An InfiniBand site's NetBox set has no IP plan, so no Loopback0 interfaces: the device must exist.)
        loopback_only = name in INFINIBAND and r["interface"] == "Loopback0"
        if r["device"] not in devices or (not loopback_only and (r["device"], r["interface"]) not in interfaces):
            c.error(f"09-ip-addresses.csv:{i}: {r['device']}:{r['interface']} is not an interface of the set")
        ip = ipaddress.ip_interface(r["address"])
        if ip.ip in seen:
            c.error(f"09-ip-addresses.csv:{i}: {ip.ip} given twice (line {seen[ip.ip]})")
        seen[ip.ip] = i
        addr_of[(r["device"], r["interface"])] = ip
    for s, doc in sonic.items():
        lo = [k.split("|")[1] for k in doc["LOOPBACK_INTERFACE"] if "|" in k]
        if len(lo) != 1 or addr_of.get((s, "Loopback0")) != ipaddress.ip_interface(lo[0]):
            c.error(f"sonic/{s}.json: loopback {lo} is not NetBox's {addr_of.get((s, 'Loopback0'))}")
        for port, attrs in doc["PORT"].items():
            keyed = [k.split("|")[1] for k in doc["INTERFACE"] if k.startswith(port + "|")]
            want = addr_of.get((s, attrs["alias"]))
            if (keyed and ipaddress.ip_interface(keyed[0]) != want) or (not keyed and want is not None):
                c.error(f"sonic/{s}.json: {port} ({attrs['alias']}) has {keyed}, NetBox {want}")

    # Cables: both ends of every addressed cable in one /31 (/127); sessions per switch-to-switch cable.
    cables = read_csv(os.path.join(netbox, "08-cables.csv"))
    asn = {s: int(doc["DEVICE_METADATA"]["localhost"]["bgp_asn"]) for s, doc in sonic.items()}
    want_sessions = {}  # (switch, peer address or local port) -> (peer, peer asn)
    switch_cables = 0
    for i, r in enumerate(cables, start=2):
        a, b = (r["side_a_device"], r["side_a_name"]), (r["side_b_device"], r["side_b_name"])
        sw_a, sw_b = a[0] in switches, b[0] in switches
        if not (sw_a or sw_b):
            if a in addr_of or b in addr_of:
                c.error(f"08-cables.csv:{i}: a cable without a switch end has addresses")
            continue
        both = sw_a and sw_b
        switch_cables += both
        if both and asn[a[0]] == asn[b[0]]:
            c.error(f"08-cables.csv:{i}: {a[0]} and {b[0]} share AS {asn[a[0]]}")
        if both and unnumbered:
            if a in addr_of or b in addr_of:
                c.error(f"08-cables.csv:{i}: unnumbered switch-to-switch cable has addresses")
            for x, y in ((a, b), (b, a)):
                port = next(p for p, v in sonic[x[0]]["PORT"].items() if v["alias"] == x[1])
                want_sessions[(x[0], port)] = (y[0], asn[y[0]])
            continue
        ea, eb = addr_of.get(a), addr_of.get(b)
        if ea is None or eb is None:
            c.error(f"08-cables.csv:{i}: {a} or {b} has no address")
            continue
        plen = 127 if ea.version == 6 else 31
        if ea.network != eb.network or ea.network.prefixlen != plen or ea.ip == eb.ip:
            c.error(f"08-cables.csv:{i}: {ea} and {eb} are not the two ends of one /{plen}")
        if int(ea.ip) % 2 != 1:
            c.error(f"08-cables.csv:{i}: side A (lower tier) {ea} is not the odd address")
        if both:
            want_sessions[(a[0], str(eb.ip))] = (b[0], asn[b[0]])
            want_sessions[(b[0], str(ea.ip))] = (a[0], asn[a[0]])
    if len(want_sessions) != 2 * switch_cables:
        c.error(f"{len(want_sessions)} session ends for {switch_cables} switch-to-switch cables")

    # What the configurations say: FRR neighbors and SONiC BGP_NEIGHBOR.
    frr_sessions, sonic_sessions, texts = {}, {}, {}
    nb = re.compile(r"^ neighbor (\S+) (interface )?remote-as (\S+)$", re.M)
    for s in switches:
        with open(os.path.join(plan, "frr", s + ".conf"), encoding="utf-8") as fh:
            text = texts[s] = fh.read()
        m = re.search(r"^router bgp (\d+)$", text, re.M)
        if not m or int(m.group(1)) != asn[s]:
            c.error(f"frr/{s}.conf: router bgp is not SONiC's bgp_asn {asn[s]}")
        for who, iface, ras in nb.findall(text):
            frr_sessions[(s, who)] = ras
        for addr, v in sonic[s].get("BGP_NEIGHBOR", {}).items():
            sonic_sessions[(s, addr)] = v
    if set(frr_sessions) != set(want_sessions):
        c.error(f"FRR neighbors differ from the cables: {len(frr_sessions)} vs {len(want_sessions)}; "
                f"e.g. {sorted(set(frr_sessions) ^ set(want_sessions))[:3]}")
    for k, (peer, peer_asn) in want_sessions.items():
        ras = frr_sessions.get(k)
        if ras is not None and ras != ("external" if unnumbered else str(peer_asn)):
            c.error(f"frr/{k[0]}.conf: neighbor {k[1]} remote-as {ras}, {peer} is AS {peer_asn}")
        if not unnumbered:
            v = sonic_sessions.get(k)
            if v is None or v["asn"] != str(peer_asn) or v["name"] != peer:
                c.error(f"sonic/{k[0]}.json: BGP_NEIGHBOR {k[1]} = {v}, expected {peer} AS {peer_asn}")
    if not unnumbered and len(sonic_sessions) != len(want_sessions):
        c.error(f"{len(sonic_sessions)} SONiC BGP_NEIGHBOR entries, {len(want_sessions)} session ends")

    # ASNs: private 4-byte range; one per leaf.
    for s, a in asn.items():
        if not ASN_FIRST <= a <= ASN_LAST:
            c.error(f"{s}: AS {a} outside {ASN_FIRST}-{ASN_LAST}")
    leaves = [s for s, row in switches.items() if row["tier"] == "1"]
    if len({asn[s] for s in leaves}) != len(leaves):
        c.error("two tier-1 switches share an ASN")
    if {asn[s] for s in switches if network[s] == "backend"} & {asn[s] for s in switches if network[s] != "backend"}:
        c.error("the back end and the frontend share an ASN")

    # Reachability under eBGP: every leaf's routes reach every other leaf of its network (of its plane, in a
    # multi-plane fabric: switches named "p<plane>-...") over the configured sessions; no session joins the
    # back end and the frontend, or two planes.
    def plane(s):
        m = re.match(r"p(\d+)-", s)
        return int(m.group(1)) if m else -1
    peers = {}
    for (s, _), (peer, _) in want_sessions.items():
        peers.setdefault(s, set()).add(peer)
        if network[s] != network[peer]:
            c.error(f"a session joins {s} ({network[s]}) and {peer} ({network[peer]})")
        if plane(s) != plane(peer):
            c.error(f"a session joins {s} and {peer}, of two planes")
    if variant == "planes" and len({plane(s) for s in leaves}) != 4:
        c.error(f"expected leaves in 4 planes, found planes {sorted({plane(s) for s in leaves})}")
    lost = []
    for net, pl in sorted({(network[s], plane(s)) for s in leaves}):
        lost += unreachable_leaf_pairs([s for s in leaves if network[s] == net and plane(s) == pl], peers, asn)
    if lost:
        c.error(f"{len(lost)} leaf pairs unreachable under BGP's AS-path loop check, e.g. {lost[:3]}")

    if variant in ("tenants", "frontend", "frontend-isolated"):
        check_tenants(c, design_doc, texts, want_sessions, unnumbered, sonic, network, variant == "frontend-isolated")

    # The checks can fail: a bad FRR line and a bad SONiC value are refused.
    if frr_files:
        bad = os.path.join(d, "bad.conf")
        shutil.copy(os.path.join(plan, "frr", frr_files[0]), bad)
        with open(bad, "a", encoding="utf-8") as fh:
            fh.write("router bgp %d\n maximum-paths 100000\nexit\n" % asn[frr_files[0][:-5]])
        if vtysh_dryrun(bad)[0] == 0:
            c.error("vtysh --dryrun accepted maximum-paths 100000: the FRR check cannot fail")
        doc = json.loads(json.dumps(sonic[sonic_files[0][:-5]]))
        doc["DEVICE_METADATA"]["localhost"]["type"] = "Leaf"
        if validator.is_valid(doc):
            c.error("the SONiC schema accepted type 'Leaf': the check cannot fail")
    print(f"{spec}: {len(switches)} switches, {len(set(asn.values()))} ASNs, {switch_cables} switch-to-switch cables = "
          f"{len(want_sessions) // 2} eBGP sessions, {len(ips)} addresses; {len(frr_files)} FRR configs accepted by "
          f"vtysh --dryrun, {len(sonic_files)} SONiC fragments valid")
    return c.errors


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, src, out = argv[1:4]
    if shutil.which("vtysh") is None:
        print("check_configplan.py: FRR's vtysh is missing (apt-get install frr)", file=sys.stderr)
        return 1
    with open(os.path.join(src, "tests", "interop", "sonic_config_db.schema.json"), encoding="utf-8") as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    specs = argv[4:] or cases.examples(src) + ["aipod-16k:ipv6", "aipod-16k:unnumbered", "leafspine-8k:tenants",
                                                "leafspine-8k:frontend", "leafspine-8k:frontend-isolated",
                                                "ib-sharp-1k:ethernet-frontend", "clos-128k:four-tiers",
                                                "leafspine-8k:planes"]
    missing = [s for s in specs if s.partition(":")[0] not in cases.CASES]
    if missing:
        print(f"check_configplan.py: no test size in cases.py for {missing}", file=sys.stderr)
        return 1
    errors = []
    for s in specs:
        errors += check(podnet, src, out, s, schema)
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
