#!/usr/bin/env bash
# check_install.sh BUILD_DIR SRC_DIR CC: `cmake --install` into a scratch prefix, then build
# and run consumer.c against the installed copy four ways: pkg-config shared and static,
# find_package(ringflow) shared (ringflow::ringflow) and static (ringflow::ringflow_static).
# Then the guide's example, examples/udp_counter, built both ways and run (its check.sh).
# Also: `pkg-config --cflags` is the include directory and nothing else, and the CMake package
# exports no internal target and lists the include directory once.
set -euo pipefail
build=$1 src=$2 cc=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "install_consumer: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
pcdir=$(ls -d "$work"/prefix/lib*/pkgconfig | head -n1)
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
libdir=$(pkg-config --variable=libdir ringflow)
echo "pkg-config: $(pkg-config --modversion ringflow)"

cflags=$(pkg-config --cflags ringflow | xargs)
[ "$cflags" = "-I$(pkg-config --variable=includedir ringflow)" ] ||
  fail "pkg-config --cflags ringflow gives '$cflags', not only the include directory"
targets=$(cat "$work"/prefix/lib*/cmake/ringflow/ringflowTargets*.cmake)
grep -q "ringflow_flags\|Werror" <<<"$targets" && fail "an internal target or -Werror is exported"
n=$(grep -c 'INTERFACE_INCLUDE_DIRECTORIES "\${_IMPORT_PREFIX}/include"$' <<<"$targets" || true)
[ "$n" -eq 2 ] || fail "expected the include directory once per target (2), found $n lines"

needs_so() { readelf -d "$1" | grep -q 'NEEDED.*libringflow\.so'; }

# pkg-config, shared: the library carries its own dependencies.
"$cc" -std=c11 -Wall -Werror -o "$work/pc_shared" "$src/consumer.c" \
  $(pkg-config --cflags ringflow) $(pkg-config --libs ringflow) -Wl,-rpath,"$libdir"
needs_so "$work/pc_shared" || fail "pkg-config shared consumer does not use libringflow.so"
"$work/pc_shared"

# pkg-config, static: --static adds Libs.private (the dependencies); -l:libringflow.a picks
# the archive over the shared library of the same name.
"$cc" -std=c11 -Wall -Werror -o "$work/pc_static" "$src/consumer.c" \
  $(pkg-config --cflags ringflow) \
  $(pkg-config --static --libs ringflow | sed 's/-lringflow\b/-l:libringflow.a/')
needs_so "$work/pc_static" && fail "pkg-config static consumer still needs libringflow.so"
"$work/pc_static"

# find_package, shared and static.
mkdir -p "$work/cm"
cp "$src/consumer.c" "$work/cm/"
cp "$src/consumer_cmake.txt" "$work/cm/CMakeLists.txt"
for mode in OFF ON; do
  b="$work/cm/build-$mode"
  cmake -S "$work/cm" -B "$b" -DCMAKE_C_COMPILER="$cc" -DRF_STATIC=$mode \
    -DCMAKE_PREFIX_PATH="$work/prefix" >"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
  cmake --build "$b" >>"$work/cm.log" 2>&1 || { cat "$work/cm.log"; exit 1; }
  if [ $mode = ON ]; then
    needs_so "$b/consumer" && fail "find_package static consumer still needs libringflow.so"
  else
    needs_so "$b/consumer" || fail "find_package shared consumer does not use libringflow.so"
  fi
  "$b/consumer"
done

# The guide's example (docs/writing-an-app.md), built as the guide says both ways, then run.
ex="$src/../../examples/udp_counter"
"$cc" -std=c11 -O2 -Wall -Wextra -Werror -o "$work/udp_counter_pc" "$ex/udp_counter.c" \
  $(pkg-config --cflags --libs ringflow) -Wl,-rpath,"$libdir"
bash "$ex/check.sh" "$work/udp_counter_pc"
cmake -S "$ex" -B "$work/ex" -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$work/prefix" \
  >"$work/ex.log" 2>&1 && cmake --build "$work/ex" >>"$work/ex.log" 2>&1 || { cat "$work/ex.log"; exit 1; }
bash "$ex/check.sh" "$work/ex/udp_counter"
echo "install_consumer: pkg-config and find_package, shared and static, all build and run; so does examples/udp_counter"
