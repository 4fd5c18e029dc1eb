#!/usr/bin/env bash
# check_core_deps.sh LIB: a library built with every optional part off needs only libc and
# liburcu (and the dynamic loader). Lists anything else and fails.
set -euo pipefail
needed=$(readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
echo "$1 needs: $(echo $needed)"
other=$(grep -v -E '^(libc|libpthread|libm|libdl|liburcu[-a-z]*)\.so|^ld-linux' <<<"$needed" || true)
[ -z "$other" ] || { echo "core_deps: needs more than libc + liburcu: $other" >&2; exit 1; }
