# Stamps the git sha into version.cpp at build time (rewritten only when it changes).
execute_process(COMMAND git rev-parse --short=12 HEAD WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE PODNET_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT PODNET_GIT_SHA)
  set(PODNET_GIT_SHA "unknown")
endif()
configure_file(${SRC}/src/core/version.cpp.in ${OUT}.tmp @ONLY)
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
