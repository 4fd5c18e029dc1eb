#!/usr/bin/env bash
# abi_check: libringflow.so has the ABI recorded in abi/ringflow.abi (docs/abi.md). abidw
# (libabigail) dumps the library just built; abidiff compares it with the stored dump, and any
# change but an added function or variable fails, with the report and what to do.
#   check_abi.sh LIBRINGFLOW_SO STORED_DUMP INCLUDE_DIR WORKDIR   the check (ctest abi_check)
#   check_abi.sh --write LIBRINGFLOW_SO STORED_DUMP INCLUDE_DIR   regenerate (make abi-dump)
set -uo pipefail
write=0
if [ "${1:-}" = --write ]; then write=1; shift; fi
lib=$1 dump=$2 inc=$3 work=${4:-}

for t in abidw abidiff; do
	command -v $t >/dev/null || {
		echo "abi_check: $t not found: install abigail-tools (scripts/deps.sh lists it)"
		exit 1; }
done
# Only types reachable from the public headers, no paths of this machine, so the dump is the
# same wherever the same sources are built.
dw() { abidw --headers-dir "$inc/ringflow" --drop-private-types --drop-undefined-syms \
	--no-corpus-path --no-comp-dir-path --short-locs --no-show-locs --out-file "$2" "$1"; }

if [ $write = 1 ]; then
	mkdir -p "$(dirname "$dump")"
	dw "$lib" "$dump" || { echo "abi-dump: abidw failed on $lib"; exit 1; }
	echo "abi-dump: wrote $dump from $lib; commit it with the change and say in the message what changed"
	exit 0
fi

mkdir -p "$work"
new=$work/ringflow.abi
dw "$lib" "$new" || { echo "abi_check: abidw failed on $lib (built with -g? see docs/abi.md)"; exit 1; }
abidiff --no-added-syms "$dump" "$new" > "$work/abidiff.txt"
rc=$?
if [ $rc = 0 ]; then
	echo "abi_check: $lib has the ABI of $dump"
	exit 0
fi
cat "$work/abidiff.txt"
what="changed"
[ $((rc & 8)) != 0 ] && what="changed incompatibly"
[ $((rc & 3)) != 0 ] && what="could not be compared (abidiff error $rc)"
echo "abi_check: the ABI of $lib $what against $dump (abidiff exit $rc, report above)."
echo "abi_check: if that is deliberate: a break (removed/changed function, changed struct layout)" \
     "bumps the major version in CMakeLists.txt and the node in ringflow.map; then run" \
     "'make abi-dump' and commit abi/ringflow.abi with the change (docs/abi.md)."
exit 1
