#!/usr/bin/env bash
# check.sh UDP_COUNTER: runs the example on loopback and checks what it promises: three
# sources send 100 datagrams each, one at a time; each reply is "count=i" for the i-th datagram
# of its source; the service stops by itself after 300 (--exit-after) and its final table
# names each source with count 100. Every wait is bounded.
set -euo pipefail
bin=$1
port=$(python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
out=$(mktemp)
trap 'kill $pid 2>/dev/null || true; rm -f "$out"' EXIT
"$bin" --listen 127.0.0.1:$port --exit-after 300 >"$out" &
pid=$!
for _ in $(seq 100); do grep -q listening "$out" && break; sleep 0.1; done
grep -q listening "$out" || { echo "udp_counter check: the service did not start" >&2; cat "$out"; exit 1; }
python3 - "$port" <<'PY'
import socket, sys
port = int(sys.argv[1])
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(3)]
for s in socks:
    s.bind(("127.0.0.1", 0))
    s.settimeout(5)
for i in range(1, 101):
    for s in socks:
        s.sendto(b"hello", ("127.0.0.1", port))
        try:
            data, _ = s.recvfrom(100)
        except socket.timeout:
            sys.exit("udp_counter check: no reply to datagram %d within 5 s" % i)
        if data != b"count=%d\n" % i:
            sys.exit("udp_counter check: got %r, want count=%d" % (data, i))
print("udp_counter check: 3 sources x 100 replies, each count in order")
PY
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
wait $pid
cat "$out"
[ "$(grep -c '^source 127.0.0.1:[0-9]* count 100$' "$out")" -eq 3 ] ||
  { echo "udp_counter check: the final table is not 3 sources of 100" >&2; exit 1; }
grep -q '^served 300, refused 0, dropped 0$' "$out"
echo "udp_counter check: passed"
