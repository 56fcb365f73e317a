#!/bin/sh
# check-format.sh [SOURCE_DIR]: every C++ file under src/, fuzz/ and bench/
# is as clang-format (.clang-format at the root) writes it. Run by ctest
# (test `format`); exits 1 naming each file that differs. Fix with
#   clang-format -i FILE...      or      git clang-format main
set -eu
root="${1:-$(cd "$(dirname "$0")/.." && pwd)}"
cd "$root"
command -v clang-format >/dev/null 2>&1 || { echo "check-format: clang-format not found (scripts/setup.sh installs it)" >&2; exit 2; }
bad=0
for f in $(find src fuzz bench -name '*.cpp' -o -name '*.hpp' | sort); do
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check-format: $f differs from clang-format's output" >&2
    bad=1
  fi
done
[ $bad -eq 0 ] && echo "check-format: every file formatted"
exit $bad
