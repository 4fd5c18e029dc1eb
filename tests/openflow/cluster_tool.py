#!/usr/bin/env python3
"""tests/openflow/cluster_tool.py: the helpers of cluster_test.sh (standard library only).

  cluster_tool.py view URL...          each member's /api/cluster, summarised as one line:
                                       "node status dpid=role/switch_says/gen ..." (2 s each)
  cluster_tool.py masters N URL...     exits 0 and prints "dpid:node:gen ..." when every member
                                       agrees on the master keys, there is a key for each of the
                                       bed's N switches, and every switch has exactly one member
                                       it calls master that the switch confirms
  cluster_tool.py settled N URL...     as masters, and besides every member's role on every
                                       switch (slaves too) is the one the switch confirmed, with
                                       the master key's generation, and every member is connected
                                       to every switch: no ROLE_REQUEST is still due
  cluster_tool.py stale HOST PORT GEN  a fake old master: HELLO (1.3), then ROLE_REQUEST MASTER
                                       with generation GEN on a switch's --listen; exits 0 when
                                       the switch answers ROLE_REQUEST_FAILED/STALE (5 s bound)
  cluster_tool.py proxy LPORT:RPORT... TCP forwarders on 127.0.0.1 (one etcd member each), until
                                       killed: the test cuts one controller from etcd by killing it
  cluster_tool.py failover FROM_NS FROM_IF TO_NS TO_IF PID PING_IP SECS
                                       bench/cluster/run.sh's round: probe frames from FROM_IF to
                                       TO_IF (each to a new unknown MAC, so every switch floods it
                                       only on its master's PACKET_OUT), kill -9 PID, then time
                                       the first probe sent after the kill that arrives and the
                                       first reply of a ping to PING_IP started at the kill; one
                                       JSON line (SECS bound)
  cluster_tool.py etcdput URL COUNT CONNS SECS PREFIX
                                       COUNT puts of 64-byte values under PREFIX through etcd's
                                       JSON gateway at URL, over CONNS keep-alive connections in
                                       parallel (SECS bound); one JSON line
"""
import base64
import ctypes
import http.client
import json
import os
import select
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.parse
import urllib.request


def get(url):
    with urllib.request.urlopen(url + "/api/cluster", timeout=2) as r:
        return json.load(r)


def view(urls):
    for u in urls:
        try:
            j = get(u)
        except Exception as e:  # noqa: BLE001 - one line per member, whatever went wrong
            print(f"{u} unreachable: {e}")
            continue
        sw = " ".join(f"{s['dpid'][-4:]}={s['role']}/{s['switch_says']}/{s['generation']}"
                      for s in j.get("switches", []))
        print(f"{j.get('node')} {j.get('status')} masters={len(j.get('masters', []))} {sw}")


def masters(want, urls):
    views = [get(u) for u in urls]
    keys = [sorted((m["dpid"], m["node"], m["generation"]) for m in v["masters"]) for v in views]
    if any(k != keys[0] for k in keys) or not keys[0]:
        print("members disagree or no masters:", keys)
        return 1
    if len(keys[0]) != int(want):
        # a switch still connecting, or its election not done yet: not agreement on the bed
        print(f"master keys for {len(keys[0])} switches, the bed has {want}: {keys[0]}")
        return 1
    for dpid, node, gen in keys[0]:
        claim = [v["node"] for v in views for s in v["switches"]
                 if s["dpid"] == dpid and s["role"] == "master"]
        said = [v["node"] for v in views for s in v["switches"]
                if s["dpid"] == dpid and s["switch_says"] == "master" and s["generation"] == gen]
        if claim != [node] or said != [node]:
            print(f"switch {dpid}: key says {node}, members acting master {claim}, "
                  f"confirmed by the switch {said}")
            return 1
    print(" ".join(f"{d}:{n}:{g}" for d, n, g in keys[0]))
    return 0


def settled(want, urls):
    views = [get(u) for u in urls]
    gens = {m["dpid"]: m["generation"] for m in views[0]["masters"]}
    for v in views:
        conn = {s["dpid"] for s in v["switches"] if s["connected"]}
        if conn != set(gens):
            # a switch still reconnecting to a member (its backoff after the member's restart)
            # gets that member's ROLE_REQUEST when it does
            print(f"{v['node']} is connected to {sorted(conn)}, not to every switch {sorted(gens)}")
            return 1
        for s in v["switches"]:
            g = gens.get(s["dpid"])
            if (s["role"] != s["switch_says"] or s["generation"] != g
                    or s["switch_generation"] != g):
                print(f"{v['node']} on {s['dpid']}: {s['role']} generation {s['generation']}, "
                      f"the switch says {s['switch_says']} generation {s['switch_generation']}, "
                      f"the key's generation {g}")
                return 1
    return masters(want, urls)


def recv_msg(s):
    h = b""
    while len(h) < 8:
        c = s.recv(8 - len(h))
        if not c:
            raise EOFError
        h += c
    n = struct.unpack("!H", h[2:4])[0]
    body = b""
    while len(body) < n - 8:
        c = s.recv(n - 8 - len(body))
        if not c:
            raise EOFError
        body += c
    return h, body


def stale(host, port, gen):
    s = socket.create_connection((host, int(port)), timeout=5)
    s.settimeout(5)
    s.sendall(struct.pack("!BBHI", 4, 0, 8, 1))  # HELLO 1.3
    s.sendall(struct.pack("!BBHIIIQ", 4, 24, 24, 7, 2, 0, int(gen)))  # ROLE_REQUEST MASTER
    for _ in range(50):
        h, body = recv_msg(s)
        if h[1] == 1 and struct.unpack("!I", h[4:8])[0] == 7:  # ERROR to our request
            t, c = struct.unpack("!HH", body[:4])
            print(f"switch answered ERROR type {t} code {c}")
            return 0 if (t, c) == (11, 0) else 1
        if h[1] == 25:
            print("switch accepted the stale generation (ROLE_REPLY)")
            return 1
        if h[1] == 2:  # ECHO_REQUEST: answer it
            s.sendall(h[:1] + b"\x03" + h[2:] + body)
    return 1


def pipe(a, b):
    try:
        while True:
            d = a.recv(65536)
            if not d:
                break
            b.sendall(d)
    except OSError:
        pass
    for x in (a, b):
        try:
            x.close()
        except OSError:
            pass


def serve(lport, rport):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", lport))
    ls.listen(64)
    while True:
        c, _ = ls.accept()
        try:
            r = socket.create_connection(("127.0.0.1", rport), timeout=2)
        except OSError:
            c.close()
            continue
        r.settimeout(None)
        threading.Thread(target=pipe, args=(c, r), daemon=True).start()
        threading.Thread(target=pipe, args=(r, c), daemon=True).start()


def proxy(pairs):
    for p in pairs:
        lp, rp = (int(x) for x in p.split(":"))
        threading.Thread(target=serve, args=(lp, rp), daemon=True).start()
    threading.Event().wait()


PROBE_TYPE = 0x88B5  # IEEE 802 local experimental ethertype
CLONE_NEWNET = 0x40000000


def enter_ns(name):
    """This thread (and the processes it starts) into network namespace name."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + name, os.O_RDONLY)
    try:
        if libc.setns(fd, CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns " + name)
    finally:
        os.close(fd)


def probe_frame(tag, seq):
    # dst: a MAC nobody has (locally administered, unicast), new for every probe
    dst = bytes([0x0A]) + struct.pack("!BI", tag, seq)
    src = bytes([0x0E, 0, 0, 0, tag, 1])
    return dst + src + struct.pack("!HQQ", PROBE_TYPE, seq, time.time_ns()) + bytes(30)


def failover(from_ns, from_if, to_ns, to_if, pid, ping_ip, secs):
    secs = float(secs)
    tag = os.getpid() & 0xFF
    enter_ns(to_ns)
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(PROBE_TYPE))
    rx.bind((to_if, PROBE_TYPE))
    rx.setblocking(False)
    enter_ns(from_ns)
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((from_if, 0))
    seq = 0
    first_rx = {}

    def pump(until, stop=None):
        nonlocal seq
        nxt = time.monotonic()
        while time.monotonic() < until and not (stop and stop()):
            now = time.monotonic()
            if now >= nxt:
                seq += 1
                tx.send(probe_frame(tag, seq))
                nxt = now + 0.01
            r, _, _ = select.select([rx], [], [], max(0.0, min(nxt, until) - time.monotonic()))
            while r:
                try:
                    f = rx.recv(2048)
                except BlockingIOError:
                    break
                if len(f) >= 30 and f[6:12] == bytes([0x0E, 0, 0, 0, tag, 1]):
                    s = struct.unpack("!Q", f[14:22])[0]
                    first_rx.setdefault(s, time.time_ns())

    # control: the path works before the kill (a few probes flooded through)
    pump(time.monotonic() + 0.5)
    before = len(first_rx)
    last_before = seq
    t0 = time.time_ns()
    os.kill(int(pid), 9)
    ping = subprocess.Popen(["ping", "-n", "-D", "-c", "1", "-i", "0.05", "-w", str(int(secs)), ping_ip],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    pump(time.monotonic() + secs,
         stop=lambda: ping.poll() is not None and any(s > last_before for s in first_rx))
    try:
        out, _ = ping.communicate(timeout=secs + 2)
    except subprocess.TimeoutExpired:
        ping.kill()
        out, _ = ping.communicate()
    ping_ms = None
    for line in out.splitlines():
        if "bytes from" in line and line.startswith("["):
            ping_ms = (float(line[1:line.index("]")]) * 1e9 - t0) / 1e6
            break
    after = sorted(s for s in first_rx if s > last_before)
    pin_ms = (first_rx[after[0]] - t0) / 1e6 if after else None
    print(json.dumps({"kill_ns": t0, "probes_before": before, "sent_before": last_before,
                      "packet_in_ms": pin_ms, "ping_ms": ping_ms, "sent_after": seq - last_before,
                      "received_after": len(after)}))
    return 0 if before and pin_ms is not None and ping_ms is not None else 1


def etcdput(url, count, conns, secs, prefix):
    count, conns, secs = int(count), int(conns), float(secs)
    u = urllib.parse.urlsplit(url)
    val = base64.b64encode(bytes(64)).decode()
    lock = threading.Lock()
    state = {"next": 0, "done": 0, "errors": 0}
    end = time.monotonic() + secs

    def worker():
        c = http.client.HTTPConnection(u.hostname, u.port, timeout=5)
        while time.monotonic() < end:
            with lock:
                i = state["next"]
                if i >= count:
                    break
                state["next"] += 1
            key = base64.b64encode(f"{prefix}/{i:08d}".encode()).decode()
            try:
                c.request("POST", "/v3/kv/put", json.dumps({"key": key, "value": val}))
                r = c.getresponse()
                ok = r.status == 200 and "header" in json.loads(r.read())
            except (OSError, ValueError, http.client.HTTPException):
                ok = False
                c.close()
            with lock:
                state["done" if ok else "errors"] += 1
        c.close()

    t0 = time.monotonic()
    ts = [threading.Thread(target=worker) for _ in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    dt = time.monotonic() - t0
    print(json.dumps({"puts": state["done"], "errors": state["errors"], "conns": conns,
                      "seconds": round(dt, 3), "per_s": round(state["done"] / dt, 1) if dt else 0}))
    return 0 if state["done"] and not state["errors"] else 1


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "view":
        view(args)
        return 0
    guarded = {"masters": (lambda: masters(args[0], args[1:]), "cannot read /api/cluster"),
               "settled": (lambda: settled(args[0], args[1:]), "cannot read /api/cluster"),
               "stale": (lambda: stale(*args), "no answer from the switch")}
    if cmd in guarded:
        fn, what = guarded[cmd]
        try:
            return fn()
        except Exception as e:  # noqa: BLE001 - one line, whatever went wrong
            print(f"{what}: {e}")
            return 1
    if cmd == "proxy":
        proxy(args)
    if cmd == "failover":
        return failover(*args)
    if cmd == "etcdput":
        return etcdput(*args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
