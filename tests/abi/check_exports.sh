#!/usr/bin/env bash
# abi_exports: libringflow.so exports exactly its public API (docs/abi.md). Every dynamic
# symbol it defines must be an rf_* name that a public header (include/ringflow/*.h) declares,
# versioned in the node ringflow.map names; a handful of core calls must be there at all (so a
# library that hid everything fails too).
# usage: check_exports.sh LIBRINGFLOW_SO INCLUDE_DIR SOVERSION
set -euo pipefail
lib=$1 inc=$2 so=$3
node="RINGFLOW_$so"

syms=$(nm -D --defined-only "$lib") || { echo "abi_exports: nm -D failed on $lib" >&2; exit 1; }
# Every rf_* word a public header mentions (declarations, and the odd comment: enough to
# catch an internal function, whose name appears in no public header at all).
declare -A public
for w in $(grep -ohw 'rf_[A-Za-z0-9_]*' "$inc"/ringflow/*.h | sort -u); do public[$w]=1; done
bad=0 n=0
while read -r _addr type name; do
	if [ "$type" = A ]; then
		[ "$name" = "$node" ] && continue
		echo "abi_exports: unexpected version node $name (ringflow.map should name only $node)"
		bad=1; continue
	fi
	base=${name%%@*} ver=${name#*@@}
	n=$((n + 1))
	if [[ $base != rf_* ]]; then
		echo "abi_exports: $lib exports $base, which is not an rf_* name: hide it (declare it" \
		     "in a private header, or static)"
		bad=1
	elif [ -z "${public[$base]:-}" ]; then
		echo "abi_exports: $lib exports $base, which no public header declares: move its" \
		     "declaration out of RF_API_BEGIN/END or into the public header"
		bad=1
	elif [ "$name" = "$base" ] || [ "$ver" != "$node" ]; then
		echo "abi_exports: $base is not versioned $node (got '${name#"$base"}'): is ringflow.map" \
		     "passed to the linker?"
		bad=1
	fi
done <<<"$syms"

for must in rf_ring_create rf_mempool_create rf_pktbuf_pool_create rf_io_open rf_json_parse; do
	grep -q " $must@@$node\$" <<<"$syms" || {
		echo "abi_exports: $must is not exported (versioned $node)"; bad=1; }
done
[ $bad = 0 ] && echo "abi_exports: $n symbols exported, all rf_* names declared in include/ringflow/"
exit $bad
