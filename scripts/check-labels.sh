#!/bin/sh
# check-labels.sh BUILD_DIR: every ctest test has a label of its kind (cmake/Labels.cmake), so that
# `ctest -L unit` and the other groups cover the suite. Prints the tests without one.
set -eu
build=$1
count() { ctest --test-dir "$build" -N "$@" | sed -n 's/^Total Tests: //p'; }
all=$(count)
labelled=$(count -L '.')
if [ "$all" != "$labelled" ]; then
  echo "check-labels: $((all - labelled)) of $all tests have no label (cmake/Labels.cmake):"
  ctest --test-dir "$build" -N -LE '.' | grep 'Test *#'
  exit 1
fi
echo "check-labels: all $all tests have a label"
