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
  # Chakra execution traces (protoc and libprotobuf, at build time)
  libprotobuf-dev protobuf-compiler
  # the real consumers of podnet's exports, run by ctest (tests/interop/)
  python3 graphviz python3-networkx python3-jsonschema python3-yaml frr
  # promtool (telemetry metrics lint) and the OpenMetrics parser of the Prometheus Python client
  prometheus python3-prometheus-client
  # `podnet serve` (cpp-httplib) and its browser tests (headless Chromium)
  libcpp-httplib-dev chromium
  # the documentation site (mkdocs build --strict, ctest docs_site)
  mkdocs mkdocs-material
)
if [ "${1:-}" = "--fuzz" ]; then packages+=(clang libclang-rt-dev); fi
# node and npm (the dashboard's chart library, the browser tests' driver)
# from Debian unless a node is already installed (another vendor's nodejs
# package carries its own npm, which Debian's npm package would conflict with).
command -v node >/dev/null 2>&1 || packages+=(nodejs)
command -v npm >/dev/null 2>&1 || packages+=(npm)

# The dashboard's npm packages (web/package-lock.json: Apache ECharts,
# embedded into podnet at build time; playwright-core, which drives the
# system Chromium in the browser tests; it never downloads a browser).
web_deps() {
  local here
  here="$(cd "$(dirname "$0")/.." && pwd)"
  if [ ! -f "$here/web/node_modules/.package-lock.json" ] || ! cmp -s "$here/web/package-lock.json" "$here/web/.installed-lock.json"; then
    echo "podnet setup: npm ci --prefix web" >&2
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --prefix "$here/web" --no-audit --no-fund --loglevel=error >/dev/null
    cp "$here/web/package-lock.json" "$here/web/.installed-lock.json"
  fi
}

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if [ ${#missing[@]} -eq 0 ]; then
  web_deps
  exit 0
fi

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
web_deps
echo "podnet setup: done" >&2
