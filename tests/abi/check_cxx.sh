#!/usr/bin/env bash
# abi_cxx_headers: every public header compiles as C++17, with g++ and with clang++, under
# -Wall -Wextra -Werror (tests/abi/cxx_headers.cpp includes them all; docs/abi.md).
# usage: check_cxx.sh INCLUDE_DIR SOURCE_DIR
set -uo pipefail
inc=$1 src=$2
bad=0
for cxx in g++ clang++; do
	if ! command -v "$cxx" >/dev/null; then
		echo "abi_cxx_headers: $cxx not found: install it (scripts/deps.sh lists build-essential and clang)"
		bad=1; continue
	fi
	if "$cxx" -std=c++17 -Wall -Wextra -Werror -fsyntax-only -DRF_ABI_SYNTAX_ONLY -I"$inc" \
		"$src/cxx_headers.cpp"; then
		echo "abi_cxx_headers: $cxx -std=c++17: every public header compiles"
	else
		echo "abi_cxx_headers: $cxx -std=c++17 -Wall -Wextra -Werror fails on the public headers (above)"
		bad=1
	fi
done
exit $bad
