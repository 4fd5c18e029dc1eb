#!/usr/bin/env bash
# tests/echo/plot_render.sh: the echo plot (bench/echo/report.sh) reads as it should. From a
# fixed results file with nine backends (tests/echo/data/echo-results.jsonl: a real run, saturated
# points included) it draws rtt.svg and checks the SVG's text: every backend's label literally as
# written (no enhanced-text subscripts: "dpdk:af_packet p50"), nine distinct colours, one p50
# (dashed) and one p99 entry per backend with an unsaturated point, the saturated marker, both
# panels and the wrapped title. Then headless Chromium renders it to PNG and the PNG is checked to
# be the SVG's size and not blank. Exit 77 (skip) without gnuplot or chromium.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
command -v gnuplot >/dev/null || { echo "skip: gnuplot not installed (scripts/deps.sh)"; exit 77; }
browser=$(command -v chromium || command -v chromium-browser || true)
[ -n "$browser" ] || { echo "skip: chromium not installed (scripts/deps.sh)"; exit 77; }
work=$(mktemp -d /tmp/rf-plot-test.XXXXXX)
trap 'rm -rf "$work"' EXIT
cp "$here/data/echo-results.jsonl" "$work/results.jsonl"
title="veth between namespaces rfes123 (10.1.2.2) and rfec123 (10.1.2.1), reflector CPU 1, generator CPU 0, idle busy"
bash "$root/bench/echo/report.sh" "$work" "$title" > "$work/report.out"
svg=$work/rtt.svg
[ -s "$svg" ] || { echo "FAIL: no $svg"; exit 1; }
fail() { echo "FAIL: $*"; exit 1; }
# Literal labels (gnuplot writes key text as <text>...label...</text>).
for b in dpdk:af_packet dpdk:af_xdp sockperf tcp udp uring:tcp uring:udp xdp:native xdp:skb; do
  grep -q ">$b<" "$svg" || fail "bottom key: no literal label '$b'"
done
grep -q ">dpdk:af_packet p50<" "$svg" || fail "no literal 'dpdk:af_packet p50'"
grep -q ">dpdk:af_packet p99<" "$svg" || fail "no literal 'dpdk:af_packet p99'"
! grep -q "baseline-shift" "$svg" || fail "enhanced text (sub/superscripts) in the SVG"
grep -q ">saturated (p99, not joined)<" "$svg" || fail "no saturated marker in the key"
grep -q ">received = offered<" "$svg" || fail "no second panel (received vs offered)"
# The title is wrapped: its words are spread over several lines.
n=$(grep -c ">echo RTT and rate vs offered rate: \|>(10.1.2.1), reflector" "$svg" || true)
[ "$n" -ge 2 ] || fail "title not wrapped ($n lines)"
# Nine distinct colours: the stroke colours of the bottom panel's lines, one per backend.
ncol=$(grep -o "stroke='rgb([0-9, ]*)'" "$svg" | sort -u | grep -vc "rgb(  0,   0,   0)\|rgb(160, 160, 164)\|rgb(153, 153, 153)\|rgb(170, 170, 170)\|rgb(255, 255, 255)" || true)
[ "$ncol" -ge 9 ] || fail "only $ncol distinct line colours for 9 backends"
# Render with headless Chromium (fresh profile) and check the PNG.
png=$work/rtt.png
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$work/profile" \
  --window-size=1100,1000 --screenshot="$png" "file://$svg" > "$work/chromium.log" 2>&1 || true
[ -s "$png" ] || { cat "$work/chromium.log"; fail "chromium wrote no PNG"; }
python3 - "$png" <<'PY' || fail "PNG check"
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
assert d[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h = struct.unpack(">II", d[16:24])
assert (w, h) == (1100, 1000), "size %dx%d" % (w, h)
# Not blank: a drawn plot compresses far worse than an empty page.
assert len(d) > 40000, "PNG only %d bytes: blank?" % len(d)
print("png ok: %dx%d, %d bytes" % (w, h, len(d)))
PY
[ -n "${RF_PLOT_KEEP:-}" ] && cp "$png" "$svg" "$RF_PLOT_KEEP"/
echo "plot ok"
