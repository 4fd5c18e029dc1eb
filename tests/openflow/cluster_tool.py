#!/usr/bin/env python3
"""tests/openflow/cluster_tool.py: the helpers of cluster_test.sh (standard library only).

  cluster_tool.py view URL...          each member's /api/cluster, summarised as one line:
                                       "node status dpid=role/switch_says/gen ..." (2 s each)
  cluster_tool.py masters URL...       exits 0 and prints "dpid:node:gen ..." when every member
                                       agrees on the master keys and every switch has exactly
                                       one member it calls master that the switch confirms
  cluster_tool.py stale HOST PORT GEN  a fake old master: HELLO (1.3), then ROLE_REQUEST MASTER
                                       with generation GEN on a switch's --listen; exits 0 when
                                       the switch answers ROLE_REQUEST_FAILED/STALE (5 s bound)
  cluster_tool.py proxy LPORT:RPORT... TCP forwarders on 127.0.0.1 (one etcd member each), until
                                       killed: the test cuts one controller from etcd by killing it
"""
import json
import socket
import struct
import sys
import threading
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


def masters(urls):
    views = [get(u) for u in urls]
    keys = [sorted((m["dpid"], m["node"], m["generation"]) for m in v["masters"]) for v in views]
    if any(k != keys[0] for k in keys) or not keys[0]:
        print("members disagree or no masters:", keys)
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


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "view":
        view(args)
        return 0
    if cmd == "masters":
        try:
            return masters(args)
        except Exception as e:  # noqa: BLE001
            print(f"cannot read /api/cluster: {e}")
            return 1
    if cmd == "stale":
        try:
            return stale(*args)
        except Exception as e:  # noqa: BLE001
            print(f"no answer from the switch: {e}")
            return 1
    if cmd == "proxy":
        proxy(args)
    return 2


if __name__ == "__main__":
    sys.exit(main())
