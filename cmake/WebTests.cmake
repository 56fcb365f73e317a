# The dashboard's tests (web/test/), registered only when their tools are
# here (scripts/setup.sh installs them all, so CI runs them):
#   web_http    node: load test, path traversal, oversized upload, malformed requests, run limits
#   web_browser node + Debian's Chromium + playwright-core (web/node_modules): every page of
#               `podnet serve` and the --html reports, as a person would see them;
#               screenshots in the build directory (web-test/).
find_program(PODNET_NODE node)
find_program(PODNET_CHROMIUM chromium PATHS /usr/bin NO_DEFAULT_PATH)
if(PODNET_NODE)
  # Under ASan (`make test-sanitize`) freed memory sits in its quarantine (256 MiB), so the RSS bounds of the load
  # test do not apply there; the test is told so and says it skips them (LeakSanitizer checks leaks instead).
  add_test(NAME web_http COMMAND ${PODNET_NODE} ${CMAKE_SOURCE_DIR}/web/test/http.test.mjs $<TARGET_FILE:podnet>
                                 $<$<BOOL:${PODNET_SANITIZE}>:--sanitized>)
  set_tests_properties(web_http PROPERTIES TIMEOUT 180 PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")
  if(PODNET_CHROMIUM AND EXISTS ${CMAKE_SOURCE_DIR}/web/node_modules/playwright-core/package.json
     AND EXISTS ${CMAKE_SOURCE_DIR}/web/node_modules/echarts/dist/echarts.min.js)
    add_test(NAME web_browser COMMAND ${PODNET_NODE} ${CMAKE_SOURCE_DIR}/web/test/browser.test.mjs
                                      $<TARGET_FILE:podnet> ${CMAKE_BINARY_DIR}/web-test)
    set_tests_properties(web_browser PROPERTIES TIMEOUT 600 RUN_SERIAL TRUE
                                                PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")
  else()
    message(STATUS "web_browser test not registered: needs /usr/bin/chromium and web/node_modules (scripts/setup.sh)")
  endif()
endif()
