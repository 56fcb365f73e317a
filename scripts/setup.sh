#!/usr/bin/env bash
# Installs the Debian packages podnet needs to build and test. Idempotent and
# quiet when everything is present; run as root (or with sudo available).
# `setup.sh --fuzz` also installs clang and its libFuzzer/sanitizer runtime
# (for `make fuzz`).
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git clang-format
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libsqlite3-dev sqlite3 libopenmpi-dev openmpi-bin
  # the real consumers of podnet's exports, run by ctest (tests/interop/)
  python3 graphviz python3-networkx
)
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-dev); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "podnet setup: installing ${missing[*]}" >&2
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
    echo "podnet setup: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "podnet setup: done" >&2
