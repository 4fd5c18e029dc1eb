#!/usr/bin/env bash
# check.sh L2BRIDGE RINGFLOW_CTL: runs the example as root on a bed made for this run: a
# namespace BR with the bridge's three ports p0 p1 p2 (packet driver), their veth peers h0 h1
# h2 in a namespace HOSTS. A python script in HOSTS sends and counts raw frames (ethertype
# 0x88b5) at each peer and checks: A->B is flooded to h1 and h2 while B is unknown; after B
# speaks, A->B reaches h1 only; an idle B ages out (the fdb command stops listing it) and A->B
# floods again; the host stack of BR sending on p0 and a frame spoofing a port's MAC never put
# a port MAC in the table; the counters in `ringflow-ctl stats` add up. One poller (--cores 0),
# so a flooded marker frame sent after a batch proves the batch was handled: no sleep decides
# anything. Every wait is bounded; names carry the PID; everything is removed on any exit.
# Exit 77 (skip) when not root or ip/python3 are missing.
set -u
BIN=$1 CTL=$2
[ "$(id -u)" -eq 0 ] || { echo "SKIP: l2bridge check needs root (namespaces, AF_PACKET)"; exit 77; }
for t in ip python3; do command -v $t >/dev/null || { echo "SKIP: no $t"; exit 77; }; done
P=$$
BR=rfbr$P HO=rfbh$P
TMP=$(mktemp -d /tmp/rfl2bridge.XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	ip netns del $BR 2>/dev/null
	ip netns del $HO 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
# Watchdog in its own session: cleans up the same way if this script is SIGKILLed.
setsid bash -c "while kill -0 $P 2>/dev/null; do sleep 1; done
	[ -f $TMP/pid ] && kill -9 \$(cat $TMP/pid) 2>/dev/null
	ip netns del $BR 2>/dev/null; ip netns del $HO 2>/dev/null; rm -rf $TMP" </dev/null >/dev/null 2>&1 &
fail() { echo "l2bridge check: $*" >&2; [ -f "$TMP/out" ] && cat "$TMP/out" >&2; exit 1; }

ip netns add $BR && ip netns add $HO || fail "cannot create the namespaces"
for n in $BR $HO; do # quiet ports: no IPv6 autoconfiguration chatter
	ip netns exec $n sysctl -qw net.ipv6.conf.default.disable_ipv6=1 net.ipv6.conf.all.disable_ipv6=1
	ip -n $n link set lo up
done
for i in 0 1 2; do
	ip link add p$i netns $BR type veth peer name h$i netns $HO || fail "cannot create veth $i"
	ip -n $BR link set p$i up && ip -n $HO link set h$i up || fail "cannot set veth $i up"
done

ip netns exec $BR "$BIN" --port packet:dev=p0 --port packet:dev=p1 --port packet:dev=p2 \
	--cores 0 --age-ms 3000 >"$TMP/out" 2>&1 &
pid=$!
echo $pid >"$TMP/pid"
for _ in $(seq 100); do grep -q "control socket" "$TMP/out" && break; sleep 0.1; done
grep -q "control socket" "$TMP/out" || fail "the bridge did not start"

macs=$(for i in 0 1 2; do ip -n $BR -o link show p$i | grep -o 'link/ether [0-9a-f:]*' | cut -d' ' -f2; done)
# The host stack of BR sends on p0 (ARP requests for an address nobody has).
ip -n $BR addr add 192.0.2.1/24 dev p0
ip netns exec $BR ping -c 2 -i 0.2 -W 1 192.0.2.2 >/dev/null 2>&1

ip netns exec $HO python3 - "$CTL" "$pid" $macs <<'PY' || fail "see above"
import json, socket, subprocess, sys, time
ctl, pid, own = sys.argv[1], sys.argv[2], sys.argv[3:6]
A, B = "02:00:00:00:00:0a", "02:00:00:00:00:0b"
BCAST = "ff:ff:ff:ff:ff:ff"
ETH = 0x88B5
socks = []
for i in range(3):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH))
    s.bind(("h%d" % i, ETH))
    s.settimeout(5)
    socks.append(s)

def die(msg):
    sys.exit("l2bridge check: " + msg)

def mac(m):
    return bytes(int(x, 16) for x in m.split(":"))

def send(port, src, dst, tag, n=1):
    for _ in range(n):
        socks[port].send(mac(dst) + mac(src) + ETH.to_bytes(2, "big") + tag.ljust(46, b"\0"))

def until(port, tag):
    """Frames received on port up to and including the first with tag: {tag: count}."""
    seen = {}
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            f, addr = socks[port].recvfrom(2048)
        except socket.timeout:
            break
        if addr[2] == socket.PACKET_OUTGOING:
            continue  # our own send on this socket's interface
        t = f[14:].rstrip(b"\0")
        seen[t] = seen.get(t, 0) + 1
        if t == tag:
            return seen
    die("h%d: no %r frame within 10 s (got %r)" % (port, tag, seen))

def ask(*args):
    r = subprocess.run([ctl, "--json", "-p", pid] + list(args), capture_output=True, text=True,
                       timeout=10)
    if r.returncode != 0:
        die("ringflow-ctl %s: %s" % (" ".join(args), r.stderr.strip()))
    return json.loads(r.stdout)

def fdb():
    return {e["mac"]: e["port"] for e in ask("fdb")}

N = 20
# 1. B unknown: A->B goes to h1 and h2; a broadcast marker closes the batch on both.
send(0, A, B, b"flood", N)
send(0, A, BCAST, b"mark1")
for p in (1, 2):
    got = until(p, b"mark1")
    if got.get(b"flood") != N:
        die("flooding: h%d got %r, want %d flood frames" % (p, got, N))
print("l2bridge check: %d frames to an unknown MAC flooded to both other ports" % N)

# 2. B speaks from h1 (A is known on port 0: that frame goes to h0 only); then A->B goes to
# h1 only. If an entry aged out meanwhile (a very slow machine), the round is repeated.
for attempt in range(3):
    aged0 = ask("stats", "app/bridge/aged")
    send(1, B, A, b"reply")
    if until(0, b"reply").get(b"reply") != 1:
        die("the reply did not reach h0")
    send(0, A, B, b"uni", N)
    send(0, A, BCAST, b"mark2")
    g1, g2 = until(1, b"mark2"), until(2, b"mark2")
    if ask("stats", "app/bridge/aged") != aged0:
        continue
    if g1.get(b"uni") != N or b"uni" in g2 or b"reply" in g2:
        die("after learning: h1 got %r, h2 got %r; want %d uni frames at h1 only" % (g1, g2, N))
    break
else:
    die("entries kept aging out during the unicast round")
table = fdb()
if table.get(A) != 0 or table.get(B) != 1:
    die("fdb %r: want %s on port 0 and %s on port 1" % (table, A, B))
print("l2bridge check: after learning, %d frames A->B reached h1 only; fdb %r" % (N, table))

# 3. A frame spoofing port 2's MAC is dropped, not learned.
own_before = ask("stats", "app/bridge/own_src")
send(2, own[2], BCAST, b"spoof")
send(2, "02:00:00:00:00:0c", BCAST, b"mark3")
got = until(0, b"mark3")
if b"spoof" in got or ask("stats", "app/bridge/own_src") != own_before + 1:
    die("a frame with the bridge's own source MAC was forwarded or not counted (h0 got %r)" % got)
table = fdb()
if any(m in table for m in own):
    die("the table holds a port's own MAC: %r (ports %r)" % (table, own))

# 4. Aging: nobody sends; B leaves the table (bounded wait), then A->B floods again.
deadline = time.monotonic() + 30
while B in fdb():
    if time.monotonic() > deadline:
        die("B still in the table 30 s after its last frame (aging 3 s)")
    time.sleep(0.5)
if ask("stats", "app/bridge/aged") < 1:
    die("B left the table but aged is 0")
send(0, A, B, b"again")
send(0, A, BCAST, b"mark4")
got = until(2, b"mark4")
if got.get(b"again") != 1:
    die("after aging, A->B was not flooded to h2 (got %r)" % got)
print("l2bridge check: B aged out and A->B floods again")

# 5. The counters add up.
st = ask("stats")
br = st["app"]["bridge"]
ports = [st["ports"]["port%d" % i] for i in range(3)]
if br["rx"] != sum(p["rx_pkts"] for p in ports):
    die("app rx %d != sum of the ports' rx_pkts %r" % (br["rx"], [p["rx_pkts"] for p in ports]))
if br["rx"] != br["forwarded"] + br["flooded"] + br["filtered"] + br["own_src"]:
    die("rx != forwarded + flooded + filtered + own_src: %r" % br)
tx = sum(p["tx_pkts"] for p in ports)
if tx != br["forwarded"] + 2 * br["flooded"] - br["nobuf"] - br["tx_drops"]:
    die("ports' tx_pkts %d != forwarded + 2 * flooded - nobuf - tx_drops: %r" % (tx, br))
print("l2bridge check: counters add up: %r" % br)
PY
kill -TERM $pid
for _ in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
kill -0 $pid 2>/dev/null && fail "the bridge did not stop within 10 s of SIGTERM"
wait $pid || fail "the bridge exited with an error"
pid=
echo "l2bridge check: passed"
