#!/usr/bin/env bash
# Installs the Debian packages procmesh needs that are missing.
#   scripts/deps.sh build   libraries and tools to build and run
#   scripts/deps.sh test    + what the tests start (redis, nginx, node)
#   scripts/deps.sh bench   + wrk and the peers' runtime
# As root it runs apt-get; otherwise it prints the exact command and fails.
set -euo pipefail
what=${1:-build}
pkgs=(build-essential cmake pkg-config libmicrohttpd-dev libjansson-dev libcglm-dev
      uuid-dev libcriterion-dev libmeshoptimizer-dev libxxhash-dev libcurl4-openssl-dev
      libhiredis-dev zlib1g-dev libbrotli-dev libpng-dev curl ca-certificates)
# npm brings the pinned three.js that the playground page (at /) embeds.
# Node.js may come from elsewhere (NodeSource ships npm inside nodejs, and
# Debian's npm conflicts with it): only ask for what is absent.
command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
command -v npm >/dev/null 2>&1 || pkgs+=(npm)
if [ "$what" != build ]; then
  # chromium: the playground test (tests/browser) and tools/render.sh.
  pkgs+=(redis-server nginx-light procps python3-yaml chromium)
  # make fuzz: libFuzzer comes with clang's runtime libraries.
  pkgs+=(clang-14 libclang-rt-14-dev)
fi
# libpugixml-dev: libOpenDRIVE (bench/opendrive.sh) parses its .xodr with pugixml.
[ "$what" = bench ] && pkgs+=(wrk hyperfine nginx-light sumo libnginx-mod-http-brotli-static valgrind libpugixml-dev)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "procmesh: missing packages. Run as root:" >&2
  echo "  apt-get update && $cmd" >&2
  exit 1
fi
echo "procmesh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
$cmd
