# One library per layer, in DESIGN.md order; a layer links only layers above it.
podnet_layer(core fmt::fmt)
target_sources(podnet_core PRIVATE ${CMAKE_BINARY_DIR}/generated/version.cpp)
add_dependencies(podnet_core podnet_version_stamp)
podnet_layer(topology podnet_core)
podnet_layer(routing podnet_topology)
podnet_layer(plan podnet_core)
podnet_layer(engine podnet_routing podnet_plan)
podnet_layer(collective podnet_topology podnet_plan)
podnet_layer(workload podnet_collective podnet_engine)
podnet_layer(cluster podnet_workload)
podnet_layer(reliability podnet_engine)
podnet_layer(report podnet_topology nlohmann_json::nlohmann_json)
podnet_layer(scenario podnet_collective podnet_reliability podnet_report podnet_cluster yaml-cpp)

# Built-in example scenarios compiled into the binary.
file(GLOB PODNET_EXAMPLES CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/examples/*.yaml)
add_custom_command(
  OUTPUT ${CMAKE_BINARY_DIR}/generated/examples.cpp
  COMMAND ${CMAKE_COMMAND} -DOUT=${CMAKE_BINARY_DIR}/generated/examples.cpp
          -DEXAMPLES_DIR=${CMAKE_SOURCE_DIR}/examples -P ${CMAKE_SOURCE_DIR}/cmake/EmbedExamples.cmake
  DEPENDS ${PODNET_EXAMPLES} ${CMAKE_SOURCE_DIR}/cmake/EmbedExamples.cmake
  COMMENT "Embedding examples/*.yaml")
target_sources(podnet_scenario PRIVATE ${CMAKE_BINARY_DIR}/generated/examples.cpp)

podnet_layer(study podnet_scenario)
podnet_layer(cli podnet_study CLI11::CLI11)
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

if(PODNET_BENCH)
  add_subdirectory(bench)
endif()
