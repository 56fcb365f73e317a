# Exports checked by the programs that consume them (tests/interop/): each
# test runs the podnet binary, then the real consumer (Graphviz's dot,
# NetworkX, a Perfetto-semantics trace check, a NetBox column check, FRR's vtysh, a SONiC schema) on what
# it wrote. Consumers come from Debian packages (scripts/setup.sh); a missing
# one fails the test with the package to install, never skips it.
find_program(PODNET_PYTHON3 NAMES python3 PATHS /usr/bin NO_DEFAULT_PATH)  # Debian's python3 sees python3-networkx
find_program(PODNET_PYTHON3 NAMES python3)
set(PODNET_INTEROP_DIR ${CMAKE_BINARY_DIR}/interop)
file(MAKE_DIRECTORY ${PODNET_INTEROP_DIR})

# interop_test(NAME COMMAND): one ctest running COMMAND through sh, with
# $PODNET, $PY, $SRC and $OUT (a directory of its own) set; Python writes no
# bytecode into the source tree.
function(interop_test name cmd)
  set(out ${PODNET_INTEROP_DIR}/${name})
  add_test(NAME ${name}
           COMMAND sh -c "set -e; rm -rf \"$OUT\"; mkdir -p \"$OUT\"; ${cmd}")
  set_tests_properties(${name} PROPERTIES
    ENVIRONMENT "PODNET=$<TARGET_FILE:podnet>;PY=${PODNET_PYTHON3};SRC=${CMAKE_SOURCE_DIR};OUT=${out};PYTHONDONTWRITEBYTECODE=1"
    TIMEOUT 300)
endfunction()

# Perfetto: the default training run's trace has no overlapping slice on any
# track, read with Perfetto's own time conversion, and carries slice args.
interop_test(interop_perfetto_trace
  "\"$PODNET\" train --trace \"$OUT/trace.json\" >/dev/null; \"$PY\" \"$SRC/tests/interop/check_trace.py\" \"$OUT/trace.json\" --require-args")

# Perfetto, channels of one collective: leafspine-8k's default job has 208 starts where a lane's channels begin
# together and end apart; Perfetto keeps the file's order at equal starts, so the longer must come first (a
# longer one after a shorter one is improperly nested and dropped).
interop_test(interop_perfetto_trace_channels
  "\"$PODNET\" train leafspine-8k --trace \"$OUT/trace.json\" >/dev/null; \"$PY\" \"$SRC/tests/interop/check_trace.py\" \"$OUT/trace.json\" --require-args")

# Perfetto, flow arrows and counters: a small PP2 job on the flow engine with its 8 busiest links as
# counter tracks; every pipeline send's arrow binds inside its slices, the counters are numeric steps.
interop_test(interop_perfetto_trace_flows
  "\"$PODNET\" train leafspine-8k --engine flow --set workload.model=llama3-8b --set workload.tp=8 --set workload.pp=2 --set workload.dp=2 --set workload.global_batch=8 --trace-links 8 --trace \"$OUT/trace.json\" >/dev/null; \"$PY\" \"$SRC/tests/interop/check_trace.py\" \"$OUT/trace.json\" --require-args")

# Graphviz: the DOT export of every built-in example (at the sizes of
# tests/interop/cases.py, which dot lays out in seconds) renders with
# `dot -Tsvg` with nothing on stderr.
interop_test(interop_graphviz_dot "\"$PY\" \"$SRC/tests/interop/check_dot.py\" \"$PODNET\" \"$SRC\" \"$OUT\"")

# NetworkX: every built-in example's GraphML export (at the sizes of
# tests/interop/cases.py) loads with networkx.read_graphml into exactly the
# nodes and links podnet's bill of materials counts.
interop_test(interop_networkx_graphml "\"$PY\" \"$SRC/tests/interop/check_graphml.py\" \"$PODNET\" \"$SRC\" \"$OUT\"")

# NetBox: each built-in example's import set at full size (podnet design
# --netbox DIR), one test per example, checked with Python's csv against NetBox's import-form columns, choices,
# references between files, uniqueness and the bill of materials.
file(GLOB PODNET_INTEROP_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.yaml)
foreach(example ${PODNET_INTEROP_EXAMPLES})
  get_filename_component(name ${example} NAME_WE)
  interop_test(interop_netbox_csv_${name}
    "\"$PY\" \"$SRC/tests/interop/check_netbox.py\" \"$PODNET\" \"$OUT\" ${name}")
endforeach()
# A site with a frontend: the back end's set plus the frontend's switches, storage nodes and cables.
interop_test(interop_netbox_csv_frontend
  "\"$PY\" \"$SRC/tests/interop/check_netbox.py\" \"$PODNET\" \"$OUT\" leafspine-8k:frontend")
# A multi-plane fabric (server.nic_planes): four copies of the switches, a cable per NIC and plane.
interop_test(interop_netbox_csv_planes
  "\"$PY\" \"$SRC/tests/interop/check_netbox.py\" \"$PODNET\" \"$OUT\" leafspine-8k:planes")

# JSON Schema: `podnet list --schema` is a valid draft 2020-12 schema (python3-jsonschema), every
# built-in example validates against it, and broken scenarios fail it as podnet's loader refuses them.
interop_test(interop_scenario_json_schema "\"$PY\" \"$SRC/tests/interop/check_schema.py\" \"$PODNET\" \"$SRC\" \"$OUT\"")
# The result documents' JSON Schema (one per study, from the study registry): every golden run's JSON and
# fresh runs of the other modes validate; broken documents (a declared key renamed) fail.
interop_test(interop_result_json_schema "\"$PY\" \"$SRC/tests/interop/check_result_schema.py\" \"$PODNET\" \"$SRC\" \"$OUT\"")

# Configuration plan: every built-in example's --config-plan at the sizes of tests/interop/cases.py (plus
# aipod-16k with IPv6 and with unnumbered BGP): FRR's `vtysh --dryrun` (Debian's frr) accepts every frr.conf,
# the SONiC config_db fragments validate against tests/interop/sonic_config_db.schema.json (python3-jsonschema),
# and the addresses, sessions and ASNs agree with the cabling plan, the NetBox set and RFC 7938's rules.
interop_test(interop_config_plan "\"$PY\" \"$SRC/tests/interop/check_configplan.py\" \"$PODNET\" \"$SRC\" \"$OUT\"")
set_tests_properties(interop_config_plan PROPERTIES TIMEOUT 900)  # one vtysh per file: 252 files, 93 s on 2 busy cores
# Telemetry (--telemetry DIR): metrics.prom passes Prometheus's `promtool
# check metrics` (Debian's prometheus) and metrics.om parses with the
# Prometheus Python client's OpenMetrics parser (python3-prometheus-client),
# with the same samples. On a packet-engine all-reduce with a hidden NIC PFC
# storm (tests/interop/pfc_storm.yaml) the summary names the storming NIC;
# without the fault it names none.
find_program(PODNET_PROMTOOL NAMES promtool)
if(NOT PODNET_PROMTOOL)
  set(PODNET_PROMTOOL "promtool-not-found-install-prometheus")
endif()
interop_test(interop_telemetry_metrics
  "\"$PODNET\" bench \"$SRC/tests/interop/pfc_storm.yaml\" --gpus 0-127:8 --min 1MiB --max 1MiB --telemetry \"$OUT/storm\" >/dev/null 2>\"$OUT/storm.err\"; \"$PY\" \"$SRC/tests/interop/check_metrics.py\" ${PODNET_PROMTOOL} \"$OUT/storm\" --stderr \"$OUT/storm.err\" --expect-storm gpu-node-001/nic0; \"$PODNET\" bench \"$SRC/tests/interop/pfc_storm.yaml\" --set 'faults=[]' --gpus 0-127:8 --min 1MiB --max 1MiB --telemetry \"$OUT/calm\" >/dev/null 2>\"$OUT/calm.err\"; \"$PY\" \"$SRC/tests/interop/check_metrics.py\" ${PODNET_PROMTOOL} \"$OUT/calm\" --stderr \"$OUT/calm.err\" --expect-no-storm")
