#!/usr/bin/env python3
"""Checks podnet's NetBox import set the way NetBox's CSV import would read it.

Runs `podnet design NAME --netbox DIR` (and `--format json` for the bill of
materials) for each example named, then with Python's csv module checks:
- the set is exactly the ten files below, to be imported in name order;
- each header equals the documented column list (src/report/export.hpp) and
  every column is a field of NetBox's import form for that model (FORMS
  below: the `fields` of each form's Meta in netbox/dcim/forms/bulk_import.py,
  netbox/extras/forms/bulk_import.py and netbox/ipam/forms/bulk_import.py,
  netbox-community/netbox v4.6.8) or a
  `cf_<name>` custom field that 00-custom-fields.csv creates for that object
  type; each form's required fields are present and non-empty;
- choice values are NetBox choices (dcim/choices.py): status, cable type,
  interface type, length unit, rack width, custom field type; slugs and
  colours have NetBox's form; integer and decimal custom fields parse;
- references resolve against files imported earlier: rack -> site, device ->
  site, rack, role, manufacturer + device type; interface -> device; each
  cable end -> an interface of that device; IP address -> an interface;
- no duplicates (NetBox's unique constraints): site name and slug, rack per
  site, manufacturer, device type model and slug, role name and slug, device
  name per site, interface name per device, cable label, IP address, and no
  interface on two cables;
- counts equal the bill of materials: cables = bom.cables.total, devices =
  bom.servers + bom.switches.total, interfaces = 2 x cables + switches (each
  switch's Loopback0), loopback addresses = switches.

With EXAMPLE:frontend, the example with a frontend (2 NICs a server, 4 storage nodes): the site's set holds
the frontend's switches (roles frontend-leaf, ...), storage nodes (role storage-node) and cables too.
With EXAMPLE:planes, the example's NICs split into 4 planes of 100G (server.nic_planes): four copies of its
switches, a cable per NIC and plane, each NIC port named once.

Usage: check_netbox.py PODNET OUT_DIR EXAMPLE[:frontend|:planes]...    (standard library only)
"""
import csv
import json
import os
import re
import subprocess
import sys

import cases  # beside this script

# file -> (NetBox import form, its Meta.fields, required fields, podnet's documented header)
FORMS = {
    "00-custom-fields.csv": (
        "extras CustomFieldImportForm",
        "name label group_name type object_types related_object_type required unique description search_weight "
        "filter_logic default choice_set weight validation_minimum validation_maximum validation_regex "
        "validation_schema ui_visible ui_editable is_cloneable owner comments",
        "name type object_types",
        "name,label,type,object_types,description"),
    "01-sites.csv": (
        "dcim SiteImportForm",
        "name slug status region group tenant facility time_zone description physical_address shipping_address "
        "latitude longitude owner comments tags",
        "name slug status",
        "name,slug,status,description"),
    "02-racks.csv": (
        "dcim RackImportForm",
        "site location group name facility_id tenant status role rack_type form_factor serial asset_tag width "
        "u_height desc_units outer_width outer_height outer_depth outer_unit mounting_depth airflow weight "
        "max_weight weight_unit description owner comments tags",
        "site name status width u_height",  # width and u_height: required without a rack_type (RackImportForm.clean)
        "site,name,status,width,u_height"),
    "03-manufacturers.csv": (
        "dcim ManufacturerImportForm",
        "name slug description owner comments tags",
        "name slug",
        "name,slug,description"),
    "04-device-types.csv": (
        "dcim DeviceTypeImportForm",
        "manufacturer default_platform model slug part_number u_height exclude_from_utilization is_full_depth "
        "subdevice_role airflow description weight weight_unit owner comments tags",
        "manufacturer model slug",
        "manufacturer,model,slug,u_height,description"),
    "05-device-roles.csv": (
        "dcim DeviceRoleImportForm",
        "name slug parent color vm_role config_template description owner comments tags",
        "name slug",
        "name,slug,color,description"),
    "06-devices.csv": (
        "dcim DeviceImportForm",
        "name role tenant manufacturer device_type platform serial asset_tag status site location rack position "
        "face latitude longitude parent device_bay airflow virtual_chassis vc_position vc_priority cluster "
        "description config_template owner comments tags",
        "name role manufacturer device_type status site",
        "name,role,manufacturer,device_type,status,site,rack,cf_podnet_rail,cf_podnet_group,cf_podnet_pod"),
    "07-interfaces.csv": (
        "dcim InterfaceImportForm",
        "device name label parent bridge lag type speed duplex enabled mark_connected wwn vdcs mtu mgmt_only "
        "description poe_mode poe_type mode vlan_group untagged_vlan tagged_vlans qinq_svlan vrf rf_role "
        "rf_channel rf_channel_frequency rf_channel_width tx_power owner tags",
        "device name type",
        "device,name,type,speed,description"),
    "08-cables.csv": (
        "dcim CableImportForm",
        "side_a_site side_a_device side_a_power_panel side_a_type side_a_name side_b_site side_b_device "
        "side_b_power_panel side_b_type side_b_name type status profile tenant bundle label color length "
        "length_unit description owner comments tags",
        "side_a_device side_a_type side_a_name side_b_device side_b_type side_b_name",
        "side_a_device,side_a_type,side_a_name,side_b_device,side_b_type,side_b_name,type,status,label,length,"
        "length_unit,cf_podnet_link_class,cf_podnet_rail,cf_podnet_group,cf_podnet_speed_gbps"),
    "09-ip-addresses.csv": (
        "ipam IPAddressImportForm",  # netbox/ipam/forms/bulk_import.py
        "address vrf tenant status role device virtual_machine interface fhrp_group is_primary is_oob dns_name "
        "description owner comments tags",
        "address status",
        "address,status,role,device,interface,is_primary,description"),
}
OBJECT_TYPE = {"06-devices.csv": "dcim.device", "07-interfaces.csv": "dcim.interface", "08-cables.csv": "dcim.cable"}
# Choice values (netbox/dcim/choices.py, extras/choices.py) podnet may write.
STATUS = {"planned"}
IP_STATUS = {"active", "reserved", "deprecated", "dhcp", "slaac"}  # ipam/choices.py IPAddressStatusChoices
IP_ROLES = {"", "loopback", "secondary", "anycast", "vip", "vrrp", "hsrp", "glbp", "carp"}
CABLE_TYPES = {"dac-passive", "aoc", "mmf-om4", "smf-os2"}
INTERFACE_TYPES = {"800gbase-x-osfp", "400gbase-x-osfp", "200gbase-x-qsfp56", "100gbase-x-qsfp28",
                   "25gbase-x-sfp28", "other", "virtual",
                   # InfiniBand generations (InterfaceTypeChoices TYPE_INFINIBAND_EDR .. _XDR), for
                   # network.transport: infiniband
                   "infiniband-edr", "infiniband-hdr", "infiniband-ndr", "infiniband-xdr"}
CF_TYPES = {"text", "integer", "decimal"}
RACK_WIDTHS = {"10", "19", "21", "23"}
SLUG = re.compile(r"^[-a-zA-Z0-9_]+$")
COLOR = re.compile(r"^[0-9a-f]{6}$")


class Checker:
    def __init__(self, name):
        self.name = name
        self.errors = []

    def error(self, where, what):
        if len(self.errors) < 20:
            self.errors.append(f"{self.name}: {where}: {what}")
        elif len(self.errors) == 20:
            self.errors.append(f"{self.name}: ... more errors")

    def unique(self, rows, file, key, label):
        seen = set()
        for line, r in rows:
            k = key(r)
            if k in seen:
                self.error(f"{file}:{line}", f"duplicate {label} {k}")
            seen.add(k)
        return seen


def read(path):
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    return rows[0] if rows else [], rows[1:]


# NAME:VARIANT: the example with these settings.
VARIANTS = {"": [], "frontend": ["--set", "frontend.nics=2", "--set", "frontend.storage_nodes=4"],
            "planes": ["--set", "server.nic_planes=4", "--set", "switch.port_speed=100Gbps"]}


def check(podnet, out, spec):
    name, _, variant = spec.partition(":")
    extra = VARIANTS[variant] + (cases.CASES[name] if name in cases.NETBOX_AT_CASE_SIZE else [])
    c = Checker(spec)
    d = os.path.join(out, spec.replace(":", "-"))
    r = subprocess.run([podnet, "design", name, "--netbox", d] + extra, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        c.error("podnet design --netbox", f"exit {r.returncode}: {r.stderr.strip()}")
        return c.errors
    r = subprocess.run([podnet, "design", name, "--format", "json"] + extra, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    design = json.loads(r.stdout)
    bom = design["bom"]
    # A frontend (frontend: section) joins the site: its switches, storage nodes and cables.
    fe = design.get("frontend")
    switches = bom["switches"]["total"] + (fe["switches"]["total"] if fe else 0)
    cables_total = bom["cables"]["total"] + (fe["cables"]["total"] if fe else 0)
    storage = fe["storage_nodes"] if fe else 0
    files = sorted(os.listdir(d))
    # An InfiniBand fabric (network.transport: infiniband) has no IP plan: the set ends with 08-cables.csv.
    res = subprocess.run([podnet, "resolve", name, "--format", "json"], stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    ib = json.loads(res.stdout)["network"]["transport"] == "infiniband"
    expected = sorted(f for f in FORMS if not (ib and f == "09-ip-addresses.csv"))
    if files != expected:
        c.error(d, f"files {files}, expected {expected}")
        return c.errors

    # Custom fields first: they decide which cf_ columns the later files may carry.
    data = {}
    for file in expected:
        header, rows = read(os.path.join(d, file))
        form, fields, required, documented = FORMS[file]
        if ",".join(header) != documented:
            c.error(f"{file}:1", f"header {','.join(header)!r}, documented {documented!r}")
        recs = []
        for i, values in enumerate(rows, start=2):
            if len(values) != len(header):
                c.error(f"{file}:{i}", f"{len(values)} fields, header has {len(header)}")
                continue
            rec = dict(zip(header, values))
            for k in required.split():
                if not rec.get(k):
                    c.error(f"{file}:{i}", f"required field {k} (of {form}) is empty")
            recs.append((i, rec))
        data[file] = (header, recs)

    custom = {}  # cf name -> (type, object types)
    for i, r in data["00-custom-fields.csv"][1]:
        if r["type"] not in CF_TYPES:
            c.error(f"00-custom-fields.csv:{i}", f"type {r['type']!r} is not a NetBox custom field type")
        if not re.match(r"^[a-z0-9_]+$", r["name"]):
            c.error(f"00-custom-fields.csv:{i}", f"name {r['name']!r}: NetBox allows lower-case, digits and _")
        custom[r["name"]] = (r["type"], set(r["object_types"].split(",")))
    c.unique(data["00-custom-fields.csv"][1], "00-custom-fields.csv", lambda r: r["name"], "custom field")

    for file, (header, recs) in data.items():
        form, fields, _, _ = FORMS[file]
        allowed = set(fields.split())
        for col in header:
            if col.startswith("cf_"):
                cf = custom.get(col[3:])
                if cf is None:
                    c.error(f"{file}:1", f"column {col}: no custom field {col[3:]} in 00-custom-fields.csv")
                elif OBJECT_TYPE.get(file) not in cf[1]:
                    c.error(f"{file}:1", f"column {col}: custom field not assigned to {OBJECT_TYPE.get(file)}")
                else:
                    for i, r in recs:
                        v = r[col]
                        try:
                            if v and cf[0] == "integer":
                                int(v)
                            elif v and cf[0] == "decimal":
                                float(v)
                        except ValueError:
                            c.error(f"{file}:{i}", f"{col} = {v!r} is not {cf[0]}")
            elif col not in allowed:
                c.error(f"{file}:1", f"column {col} is not a field of NetBox's {form}")
        for i, r in recs:
            if file == "09-ip-addresses.csv":
                if r["status"] not in IP_STATUS or r["role"] not in IP_ROLES or r["is_primary"] not in ("true", "false"):
                    c.error(f"{file}:{i}", f"status {r['status']!r} / role {r['role']!r} / is_primary {r['is_primary']!r}")
            elif "status" in r and r["status"] not in STATUS:
                c.error(f"{file}:{i}", f"status {r['status']!r}")
            if "slug" in r and not SLUG.match(r["slug"]):
                c.error(f"{file}:{i}", f"slug {r['slug']!r} is not a NetBox slug")

    sites = c.unique(data["01-sites.csv"][1], "01-sites.csv", lambda r: r["name"], "site")
    c.unique(data["01-sites.csv"][1], "01-sites.csv", lambda r: r["slug"], "site slug")
    racks = c.unique(data["02-racks.csv"][1], "02-racks.csv", lambda r: (r["site"], r["name"]), "rack")
    for i, r in data["02-racks.csv"][1]:
        if r["site"] not in sites:
            c.error(f"02-racks.csv:{i}", f"site {r['site']!r} not in 01-sites.csv")
        if r["width"] not in RACK_WIDTHS or not r["u_height"].isdigit():
            c.error(f"02-racks.csv:{i}", f"width {r['width']!r} / u_height {r['u_height']!r}")
    makers = c.unique(data["03-manufacturers.csv"][1], "03-manufacturers.csv", lambda r: r["name"], "manufacturer")
    c.unique(data["03-manufacturers.csv"][1], "03-manufacturers.csv", lambda r: r["slug"], "manufacturer slug")
    types = c.unique(data["04-device-types.csv"][1], "04-device-types.csv", lambda r: (r["manufacturer"], r["model"]),
                     "device type")
    c.unique(data["04-device-types.csv"][1], "04-device-types.csv", lambda r: r["slug"], "device type slug")
    for i, r in data["04-device-types.csv"][1]:
        if r["manufacturer"] not in makers:
            c.error(f"04-device-types.csv:{i}", f"manufacturer {r['manufacturer']!r} not in 03-manufacturers.csv")
    roles = c.unique(data["05-device-roles.csv"][1], "05-device-roles.csv", lambda r: r["name"], "role")
    c.unique(data["05-device-roles.csv"][1], "05-device-roles.csv", lambda r: r["slug"], "role slug")
    for i, r in data["05-device-roles.csv"][1]:
        if not COLOR.match(r["color"]):
            c.error(f"05-device-roles.csv:{i}", f"color {r['color']!r} is not 6 hex digits")
    devices = c.unique(data["06-devices.csv"][1], "06-devices.csv", lambda r: r["name"], "device")
    for i, r in data["06-devices.csv"][1]:
        if r["site"] not in sites:
            c.error(f"06-devices.csv:{i}", f"site {r['site']!r} not in 01-sites.csv")
        if r["rack"] and (r["site"], r["rack"]) not in racks:
            c.error(f"06-devices.csv:{i}", f"rack {r['rack']!r} not in 02-racks.csv")
        if r["role"] not in roles:
            c.error(f"06-devices.csv:{i}", f"role {r['role']!r} not in 05-device-roles.csv")
        if (r["manufacturer"], r["device_type"]) not in types:
            c.error(f"06-devices.csv:{i}", f"device type {r['manufacturer']}/{r['device_type']} not in 04")
    interfaces = c.unique(data["07-interfaces.csv"][1], "07-interfaces.csv", lambda r: (r["device"], r["name"]),
                          "interface")
    for i, r in data["07-interfaces.csv"][1]:
        if r["device"] not in devices:
            c.error(f"07-interfaces.csv:{i}", f"device {r['device']!r} not in 06-devices.csv")
        if r["type"] not in INTERFACE_TYPES:
            c.error(f"07-interfaces.csv:{i}", f"type {r['type']!r}")
        if r["speed"] and not r["speed"].isdigit():
            c.error(f"07-interfaces.csv:{i}", f"speed {r['speed']!r} is not whole Kb/s")
    cables = data["08-cables.csv"][1]
    c.unique(cables, "08-cables.csv", lambda r: r["label"], "cable label")
    used = {}
    for i, r in cables:
        if r["type"] not in CABLE_TYPES or r["length_unit"] != "m":
            c.error(f"08-cables.csv:{i}", f"type {r['type']!r} / length_unit {r['length_unit']!r}")
        for side in ("a", "b"):
            end = (r[f"side_{side}_device"], r[f"side_{side}_name"])
            if r[f"side_{side}_type"] != "dcim.interface":
                c.error(f"08-cables.csv:{i}", f"side_{side}_type {r[f'side_{side}_type']!r}")
            if end not in interfaces:
                c.error(f"08-cables.csv:{i}", f"side {side.upper()} {end[0]}:{end[1]} not in 07-interfaces.csv")
            if end in used:
                c.error(f"08-cables.csv:{i}", f"interface {end[0]}:{end[1]} already cabled at line {used[end]}")
            used[end] = i

    if ib and any(not r["type"].startswith("infiniband-") for _, r in data["07-interfaces.csv"][1]):
        c.error("07-interfaces.csv", "an InfiniBand set with a non-InfiniBand interface (a loopback?)")
    ips = data["09-ip-addresses.csv"][1] if not ib else []
    c.unique(ips, "09-ip-addresses.csv", lambda r: r["address"].split("/")[0], "IP address")
    for i, r in ips:
        if (r["device"], r["interface"]) not in interfaces:
            c.error(f"09-ip-addresses.csv:{i}", f"{r['device']}:{r['interface']} not in 07-interfaces.csv")
        if not re.match(r"^[0-9a-f.:]+/[0-9]+$", r["address"]):
            c.error(f"09-ip-addresses.csv:{i}", f"address {r['address']!r} is not ADDRESS/LENGTH")
    loopbacks = sum(1 for _, r in ips if r["role"] == "loopback")
    if loopbacks != (0 if ib else switches):
        c.error("counts", f"{loopbacks} loopback addresses, {switches} switches")
    if fe:
        roles = {r["role"] for _, r in data["06-devices.csv"][1]}
        if not {"storage-node", "frontend-leaf"} <= roles:
            c.error("06-devices.csv", f"a site with a frontend has roles {sorted(roles)}: no storage-node or "
                    "frontend-leaf")

    # Interfaces: both ends of every cable, and each switch's virtual Loopback0 (none on InfiniBand).
    want = {"cables": cables_total, "devices": bom["servers"] + switches + storage,
            "interfaces": 2 * cables_total + (0 if ib else switches)}
    got = {"cables": len(cables), "devices": len(devices), "interfaces": len(interfaces)}
    for k in want:
        if got[k] != want[k]:
            c.error("counts", f"{k}: {got[k]} in the import set, {want[k]} from the bill of materials")
    print(f"{name}: {len(sites)} site, {len(racks)} racks, {len(types)} device types, {len(roles)} roles, "
          f"{got['devices']} devices, {got['interfaces']} interfaces, {got['cables']} cables, {len(ips)} IP addresses")
    return c.errors


def main(argv):
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    podnet, out = argv[1:3]
    errors = []
    for spec in argv[3:]:
        errors += check(podnet, out, spec)
    for e in errors:
        print("error: " + e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
