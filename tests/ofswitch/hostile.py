#!/usr/bin/env python3
"""tests/ofswitch/hostile.py: the two halves of hostile_test.sh (standard library only).

  hostile.py ctl PORT MASKS MODE SECONDS OUT
      An OpenFlow 1.3 controller on 127.0.0.1:PORT (the switch connects to it). It installs
      the table-miss flow (priority 0, output CONTROLLER), the forwarding flow of the test
      stream (priority 100: in_port 1, UDP to 10.99.0.99:9999 -> output 2) and MASKS flows
      of MASKS distinct masks (priority 10, ipv4_src 10.200.0.0/8+k -> drop), waits for a
      BARRIER, writes "ready" to OUT, then
        MODE read: reads for SECONDS, answering ECHO and counting PACKET_INs;
        MODE deaf: never reads again (a controller that stopped), for SECONDS;
      and writes "packet_ins N" to OUT at the end (or on SIGTERM). Bounded by SECONDS + 30.
  hostile.py flood IFACE N EVERY SEED
      N distinct frames out of IFACE (AF_PACKET): random unicast MACs, IPv4 addresses and
      UDP ports; half of them crafted against the MASKS flows' masks (Csikor et al.: ipv4_src
      first differs from 10.200.0.0 at bit j, random after it, j in 0..8+MASKS-1, so a
      megaflow cache would make a megaflow of a new mask /j+1 for each j and new entries for
      each frame; here they miss to the controller or hit a drop flow); every EVERY-th
      frame is one of the test stream instead.
      Prints "sent F stream S".
"""
import random, select, signal, socket, struct, sys, time

OFP = 4


def hdr(t, n, xid=0):
    return struct.pack("!BBHI", OFP, t, 8 + n, xid)


def oxm(field, val, mask=None):
    body = val + (mask or b"")
    return struct.pack("!HBB", 0x8000, field << 1 | (1 if mask else 0), len(body)) + body


def match(*fields):
    body = b"".join(fields)
    m = struct.pack("!HH", 1, 4 + len(body)) + body
    return m + b"\0" * (-len(m) % 8)


def flow_mod(prio, m, out_port=None, max_len=0xffff):
    acts = b""
    if out_port is not None:
        acts = struct.pack("!HHIH6x", 0, 16, out_port, max_len)
    inst = struct.pack("!HH4x", 4, 8 + len(acts)) + acts if acts else b""
    body = struct.pack("!QQBBHHHIIIH2x", 0, 0, 0, 0, 0, 0, prio, 0xffffffff, 0xffffffff,
                       0xffffffff, 0) + m + inst
    return hdr(14, len(body)) + body


STREAM_DST = bytes([10, 99, 0, 99])


def ctl(port, masks, mode, seconds, out):
    deadline = time.time() + seconds + 30
    ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(1)
    with open(out, "a") as f:
        f.write("listening\n")
    ls.settimeout(20)
    s, _ = ls.accept()
    s.settimeout(max(1, deadline - time.time()))
    s.sendall(hdr(0, 0, 1))
    msgs = [flow_mod(0, match(), 0xfffffffd, 128),
            flow_mod(100, match(oxm(0, struct.pack("!I", 1)), oxm(5, struct.pack("!H", 0x0800)),
                                oxm(10, b"\x11"), oxm(12, STREAM_DST),
                                oxm(16, struct.pack("!H", 9999))), 2)]
    for k in range(masks):
        plen = 8 + k
        mk = (0xffffffff << (32 - plen)) & 0xffffffff
        msgs.append(flow_mod(10, match(oxm(5, struct.pack("!H", 0x0800)),
                                       oxm(11, struct.pack("!I", 0x0ac80000 & mk),
                                           struct.pack("!I", mk)))))
    s.sendall(b"".join(msgs) + hdr(20, 0, 77))
    buf = b""
    try:
        pins[0] = 0
        serve(s, buf, mode, seconds, deadline, out)
    finally:
        with open(out, "a") as f:
            f.write("packet_ins %d\n" % pins[0])
        s.close()


pins = [0]


def serve(s, buf, mode, seconds, deadline, out):
    ready, end = False, None
    while True:
        if ready and mode == "deaf":
            time.sleep(max(0, end - time.time()))
            break
        if end and time.time() >= end:
            break
        r, _, _ = select.select([s], [], [], 0.2)
        if not r:
            if time.time() > deadline:
                break
            continue
        d = s.recv(1 << 16)
        if not d:
            break
        buf += d
        while len(buf) >= 8:
            v, t, n, xid = struct.unpack("!BBHI", buf[:8])
            if len(buf) < n:
                break
            msg, buf = buf[:n], buf[n:]
            if t == 2:  # ECHO_REQUEST
                s.sendall(struct.pack("!BBHI", OFP, 3, n, xid) + msg[8:])
            elif t == 10:
                pins[0] += 1
            elif t == 1:
                print("ERROR from the switch: %s" % msg[8:12].hex(), file=sys.stderr)
            elif t == 21 and xid == 77 and not ready:
                ready, end = True, time.time() + seconds
                with open(out, "a") as f:
                    f.write("ready\n")


def mac(rnd):
    b = bytearray(rnd.getrandbits(48).to_bytes(6, "big"))
    b[0] = (b[0] & 0xfc) | 0x02  # unicast, locally administered
    return bytes(b)


def ipv4_udp(src, dst, sport, dport):
    udp = struct.pack("!HHHH", sport, dport, 8 + 18, 0) + b"\0" * 18
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, src, dst)
    c = sum(struct.unpack("!10H", ip))
    c = (c & 0xffff) + (c >> 16)
    c = (c & 0xffff) + (c >> 16)
    ip = ip[:10] + struct.pack("!H", ~c & 0xffff) + ip[12:]
    return ip + udp


def flood(iface, n, every, seed, masks=16):
    rnd = random.Random(seed)
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4 << 20)
    s.bind((iface, 0))
    stream = (b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" +
              ipv4_udp(bytes([10, 99, 0, 1]), STREAM_DST, 5555, 9999))
    sent = st = 0
    deadline = time.time() + 120
    for i in range(n):
        if every and i % every == every - 1:
            fr = stream
            st += 1
        elif i % 2:
            j = rnd.randrange(8 + masks)  # the first bit where it differs from 10.200.0.0
            srcv = (0x0ac80000 ^ (1 << (31 - j))) ^ rnd.getrandbits(31 - j)
            fr = (mac(rnd) + mac(rnd) + b"\x08\x00" +
                  ipv4_udp(struct.pack("!I", srcv), rnd.getrandbits(32).to_bytes(4, "big"),
                           rnd.getrandbits(16), rnd.getrandbits(16)))
        else:
            fr = (mac(rnd) + mac(rnd) + b"\x08\x00" +
                  ipv4_udp(rnd.getrandbits(32).to_bytes(4, "big"),
                           rnd.getrandbits(32).to_bytes(4, "big"),
                           rnd.getrandbits(16), rnd.getrandbits(16)))
        while True:
            try:
                s.send(fr)
                break
            except OSError:  # ENOBUFS: the queue is full, try again shortly
                if time.time() > deadline:
                    print("sent %d stream %d (deadline)" % (sent, st))
                    return
                time.sleep(0.0005)
        sent += 1
        if time.time() > deadline:
            break
    print("sent %d stream %d" % (sent, st))


if __name__ == "__main__":
    a = sys.argv
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # the finally clauses run
    if a[1] == "ctl":
        ctl(int(a[2]), int(a[3]), a[4], float(a[5]), a[6])
    elif a[1] == "flood":
        flood(a[2], int(a[3]), int(a[4]), int(a[5]))
    else:
        sys.exit("usage: see the docstring")
