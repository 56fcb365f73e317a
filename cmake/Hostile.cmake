# The hostile-input campaign (tests/hostile/campaign.py): the command line,
# the dashboard server and killed-and-resumed sweeps fed bad and malicious
# input. ctest runs its small size (under a minute); `make hostile` the full one.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME hostile_campaign
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_SOURCE_DIR}/tests/hostile/campaign.py $<TARGET_FILE:podnet> --size small)
  set_tests_properties(hostile_campaign PROPERTIES TIMEOUT 300 RUN_SERIAL TRUE
                                                   PASS_REGULAR_EXPRESSION "[1-9][0-9]* passed, 0 failed")
endif()
