# ctest labels of the tests that are not GoogleTest's (those get theirs where they are discovered, in
# CMakeLists.txt: `unit` and their layer, `cli`, `golden`). One label per kind of test, so a developer runs
# one kind: `ctest -L unit` (every layer's unit tests, seconds), `-L golden`, `-L interop`, `-L web`, `-L docs`,
# `-L fuzz`, `-L lint`, `-L hostile`; `-L slow` marks the tests of ten seconds or more, `-LE slow` skips them.
function(podnet_label label)
  foreach(t ${ARGN})
    if(TEST ${t})
      set_property(TEST ${t} APPEND PROPERTY LABELS ${label})
    endif()
  endforeach()
endfunction()

get_property(podnet_tests DIRECTORY ${CMAKE_SOURCE_DIR} PROPERTY TESTS)
foreach(t ${podnet_tests})
  if(t MATCHES "^interop_")
    podnet_label(interop ${t})
  elseif(t MATCHES "^web_")
    podnet_label(web ${t})
  endif()
endforeach()
podnet_label(lint layering layering_catches_violations format registry_names registry_names_catches_comparisons)
podnet_label(hostile hostile_campaign)
podnet_label(slow docs_recipes docs_help_examples interop_config_plan web_browser hostile_campaign)

# And a test that it stays so.
add_test(NAME every_test_labelled COMMAND sh ${CMAKE_SOURCE_DIR}/scripts/check-labels.sh ${CMAKE_BINARY_DIR})
set_tests_properties(every_test_labelled PROPERTIES LABELS lint)
