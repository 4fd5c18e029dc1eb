#!/usr/bin/env bash
# check_install.sh BUILD_DIR SRC_DIR CC: `cmake --install` into a scratch prefix, then build
# and run consumer.c against it with pkg-config and with find_package(ringflow).
set -euo pipefail
build=$1 src=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
libdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -n1)
export PKG_CONFIG_PATH="$libdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"

echo "pkg-config: $(pkg-config --modversion ringflow)"
# The shared library carries its own dependencies, so `--libs` (not --static) is enough.
"$cc" -std=c11 -Wall -Werror -o "$work/consumer_pc" "$src/consumer.c" \
  $(pkg-config --cflags ringflow) $(pkg-config --libs ringflow) \
  -Wl,-rpath,"$(pkg-config --variable=libdir ringflow)"
"$work/consumer_pc"

mkdir -p "$work/cm"
cp "$src/consumer.c" "$work/cm/"
cp "$src/consumer_cmake.txt" "$work/cm/CMakeLists.txt"
cmake -S "$work/cm" -B "$work/cm/build" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
cmake --build "$work/cm/build" >>"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
"$work/cm/build/consumer"
echo "install_consumer: both pkg-config and find_package builds run"
