#!/usr/bin/env bash
# Builds core/ and api/ with another compiler and flags and checks that the
# README examples (tests/fuzz/readme.golden) come out byte for byte as the
# BUILD_DIR's golden_dump writes them. A manual check beside the two-build
# test of `make test` (docs/determinism.md):
#   tests/fuzz/other_flags.sh build clang-14 -O2
#   tests/fuzz/other_flags.sh build gcc -O3 -march=native
set -euo pipefail
build=$(cd "$1" && pwd) cc=$2
shift 2
src=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$src"
mkdir -p "$tmp/want" "$tmp/got"
version=$(sed -n 's/^CMAKE_PROJECT_VERSION:STATIC=//p' "$build/CMakeCache.txt")   # in the key
"$build/golden_dump" . tests/fuzz/readme.golden "$tmp/want"
objs=()
for f in core/*/*.c api/*.c "$build/openapi_blob.c" tests/fuzz/golden_dump.c tests/fuzz/pipeline.c \
         tests/fuzz/golden_list.c; do
  o=$tmp/$(echo "$f" | tr / _).o
  nice "$cc" -std=c11 -D_POSIX_C_SOURCE=200809L -DPM_VERSION="\"$version\"" -Icore -Iapi/include \
    -Itests/fuzz -ffp-contract=off -fno-fast-math "$@" -c "$f" -o "$o"
  objs+=("$o")
done
"$cc" "$@" "${objs[@]}" -ljansson -lxxhash -lmeshoptimizer -lstdc++ -lm -o "$tmp/dump"
"$tmp/dump" . tests/fuzz/readme.golden "$tmp/got"
n=0
for f in "$tmp"/want/*; do
  cmp -s "$f" "$tmp/got/$(basename "$f")" || { echo "differs: $(basename "$f")"; n=$((n + 1)); }
done
echo "$cc $*: $n of $(ls "$tmp/want" | wc -l) outputs differ"
[ "$n" -eq 0 ]
