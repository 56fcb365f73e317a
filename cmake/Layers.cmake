# One library per layer, in the order of docs/contributing/architecture.md; a layer links only layers above it
# (ranks and rule: scripts/check-layers.sh, run by ctest as `layering`).
podnet_layer(core fmt::fmt MPI::MPI_CXX)
target_sources(podnet_core PRIVATE ${CMAKE_BINARY_DIR}/generated/version.cpp)
add_dependencies(podnet_core podnet_version_stamp)
podnet_layer(topology podnet_core)
podnet_layer(routing podnet_topology)
podnet_layer(plan podnet_core)
podnet_layer(engine podnet_routing podnet_plan)
podnet_layer(collective podnet_topology podnet_plan)
podnet_layer(workload podnet_collective podnet_engine)
# Chakra execution traces (workload/chakra.hpp): podnet's own schema of the
# format, compiled by protoc at build time (libprotobuf-dev, protobuf-compiler;
# CMake's FindProtobuf) into generated/src/workload/chakra_et.pb.{h,cc}, which
# the code includes as "workload/chakra_et.pb.h".
find_package(Protobuf REQUIRED)
protobuf_generate(TARGET podnet_workload LANGUAGE cpp PROTOS ${CMAKE_SOURCE_DIR}/src/workload/chakra_et.proto
                  PROTOC_OUT_DIR ${CMAKE_BINARY_DIR}/generated)
target_include_directories(podnet_workload PUBLIC ${CMAKE_BINARY_DIR}/generated ${CMAKE_BINARY_DIR}/generated/src)
target_link_libraries(podnet_workload PUBLIC protobuf::libprotobuf)
podnet_layer(cluster podnet_workload)
podnet_layer(reliability podnet_engine)
podnet_layer(diagnose podnet_routing podnet_workload)
podnet_layer(telemetry podnet_engine)
podnet_layer(scenario podnet_collective podnet_reliability podnet_cluster podnet_diagnose yaml-cpp)

# Built-in example scenarios compiled into the binary.
file(GLOB PODNET_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.yaml)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/examples.cpp
  COMMAND ${CMAKE_COMMAND} -DOUT=${CMAKE_BINARY_DIR}/generated/examples.cpp
          -DEXAMPLES_DIR=${CMAKE_SOURCE_DIR}/examples -P ${CMAKE_SOURCE_DIR}/cmake/EmbedExamples.cmake
  DEPENDS ${PODNET_EXAMPLES} ${CMAKE_SOURCE_DIR}/cmake/EmbedExamples.cmake
  COMMENT "Embedding examples/*.yaml")
target_sources(podnet_scenario PRIVATE ${CMAKE_BINARY_DIR}/generated/examples.cpp)

# Studies run on a resolved scenario (scenario::Setup) and return typed
# results; report renders them (docs/contributing/architecture.md order: scenario -> study -> report -> cli).
podnet_layer(study podnet_scenario podnet_telemetry yaml-cpp SQLite::SQLite3 Threads::Threads MPI::MPI_CXX)
podnet_layer(report podnet_study nlohmann_json::nlohmann_json)

# The dashboard's assets (web/*.html|js|css and Apache ECharts from
# web/node_modules) embedded at build time (report/web_assets.hpp); the
# objects that use them are linked only into what calls the HTML reporter.
file(GLOB PODNET_WEB CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/web/*.html ${CMAKE_SOURCE_DIR}/web/*.js
     ${CMAKE_SOURCE_DIR}/web/*.css ${CMAKE_SOURCE_DIR}/web/node_modules/echarts/dist/echarts.min.js)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/web_assets.cpp
  COMMAND ${CMAKE_COMMAND} -DOUT=${CMAKE_BINARY_DIR}/generated/web_assets.cpp -DWEB_DIR=${CMAKE_SOURCE_DIR}/web
          -P ${CMAKE_SOURCE_DIR}/cmake/EmbedWeb.cmake
  DEPENDS ${PODNET_WEB} ${CMAKE_SOURCE_DIR}/cmake/EmbedWeb.cmake
  COMMENT "Embedding the dashboard assets (web/)")
target_sources(podnet_report PRIVATE ${CMAKE_BINARY_DIR}/generated/web_assets.cpp)

# `podnet serve`: cpp-httplib from Debian (libcpp-httplib-dev), built with
# OpenSSL, zlib and brotli, whose flags pkg-config gives.
find_package(PkgConfig REQUIRED)
pkg_check_modules(HTTPLIB REQUIRED IMPORTED_TARGET cpp-httplib)
podnet_layer(cli podnet_study podnet_report CLI11::CLI11 PkgConfig::HTTPLIB)
add_executable(podnet src/cli/main.cpp)
target_link_libraries(podnet PRIVATE podnet_cli)
set_target_properties(podnet PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR})
if(TARGET cli_test)
  add_dependencies(cli_test podnet)
  target_compile_definitions(cli_test PRIVATE PODNET_BINARY="$<TARGET_FILE:podnet>")
  # Golden runs are one test per tests/golden/<name>/ (listed when cli_test is
  # discovered): a new or changed `args` file relinks it, so ctest lists it.
  file(GLOB PODNET_GOLDEN_ARGS CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/golden/*/args)
  set_property(TARGET cli_test APPEND PROPERTY LINK_DEPENDS ${PODNET_GOLDEN_ARGS})
endif()

if(PODNET_TESTS)
  # The layering rule, checked on the code (includes) and on this file (links).
  add_test(NAME layering COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/check-layers.sh ${CMAKE_SOURCE_DIR})
  # The code as .clang-format writes it.
  add_test(NAME format COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/check-format.sh ${CMAKE_SOURCE_DIR})
  # The check itself, on a tree that breaks the rule: it must fail and name
  # each offending file and line.
  add_test(NAME layering_catches_violations
           COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/check-layers.sh ${CMAKE_SOURCE_DIR}/tests/layering/bad)
  set_tests_properties(layering_catches_violations PROPERTIES
    PASS_REGULAR_EXPRESSION "src/core/units.hpp:4: layer core .rank 0. includes .engine/backend.hpp.*src/engine/backend.hpp:3: layer engine .rank 4. includes .collective/collective.hpp.*src/telemetry/recorder.hpp:3: layer telemetry includes .engine/packet/packet_sim.hpp., an engine's internals.*src/topology/topology.hpp:3: layer topology includes .core/units.hpp. but does not link podnet_core.*layering: FAILED")
  # No layer above a registry compares an engine, transport, family or policy name: it asks the traits
  # (scripts/check-names.py; the names come from the scenario schema). And the check on code that does.
  add_test(NAME registry_names
           COMMAND sh -c "$<TARGET_FILE:podnet> list --schema > registry-names.json && python3 ${CMAKE_SOURCE_DIR}/scripts/check-names.py ${CMAKE_SOURCE_DIR} registry-names.json")
  add_test(NAME registry_names_catches_comparisons
           COMMAND sh -c "$<TARGET_FILE:podnet> list --schema > registry-names-bad.json && python3 ${CMAKE_SOURCE_DIR}/scripts/check-names.py ${CMAKE_SOURCE_DIR}/tests/names/bad registry-names-bad.json")
  set_tests_properties(registry_names_catches_comparisons PROPERTIES
    PASS_REGULAR_EXPRESSION "src/study/special_case.cpp:2: compares the name .packet.*src/study/special_case.cpp:3: compares the name .infiniband.*FAILED .2 comparisons")
endif()

if(PODNET_BENCH)
  add_subdirectory(bench)
endif()
