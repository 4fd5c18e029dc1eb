#!/usr/bin/env bash
# check_l2bridge.sh BUILD_DIR SRC_DIR CC: `cmake --install` into a scratch prefix, build
# examples/l2bridge against the installed copy with find_package (as its CMakeLists.txt says,
# warnings as errors), then run its check.sh (root: a netns bed of its own; 77 = skip) with the
# installed ringflow-ctl.
set -euo pipefail
build=$1 src=$2 cc=$3
[ "$(id -u)" -eq 0 ] || { echo "SKIP: the l2bridge check needs root"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ex="$src/../../examples/l2bridge"
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
cmake -S "$ex" -B "$work/ex" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$work/prefix" \
  -DCMAKE_C_FLAGS="-Wall -Wextra -Werror" >"$work/ex.log" 2>&1 &&
  cmake --build "$work/ex" >>"$work/ex.log" 2>&1 || { cat "$work/ex.log"; exit 1; }
bash "$ex/check.sh" "$work/ex/l2bridge" "$work/prefix/bin/ringflow-ctl"
