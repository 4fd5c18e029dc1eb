#!/usr/bin/env python3
"""tests/ofswitch/actions_frames.py: the frames of actions_test.sh, on raw AF_PACKET sockets.

  actions_frames.py send IFACE TAG       send every case's input frames (3 each) on IFACE
  actions_frames.py recv IFACE OUT SECS TAG  write each frame carrying TAG, as hex, to OUT
                                         (touches OUT.ready once the socket is open; stops
                                         after SECS or when every expected frame is in)
  actions_frames.py check OUT TAG        every case's frames arrived byte-exact, checksums
                                         valid (recomputed from scratch); one line per case
  actions_frames.py po TAG               the PACKET_OUT case's frame as hex (ovs-ofctl
                                         packet-out sends it COPIES times)

The expected frames are built from scratch with the rewritten fields (fresh checksums), not
derived from the input by the switch's incremental updates, so the two are independent.
A VLAN tag the kernel strips into the packet auxdata is put back before comparing.
"""
import os
import select
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
SOL_PACKET = 263
PACKET_AUXDATA = 8
TP_STATUS_VLAN_VALID = 0x10
TP_STATUS_VLAN_TPID_VALID = 0x40
COPIES = 3

H1_MAC = bytes.fromhex("020000000a01")
H2_MAC = bytes.fromhex("020000000b02")
NEW_SRC_MAC = bytes.fromhex("02000000aa01")


def csum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return (~s) & 0xFFFF


def ipv4(src, dst, proto, ttl, l4, tos=0, ident=0x1234):
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, tos, 20 + len(l4), ident, 0, ttl, proto, 0,
                      socket.inet_aton(src), socket.inet_aton(dst))
    return hdr[:10] + struct.pack("!H", csum(hdr)) + hdr[12:] + l4


def pseudo(src, dst, proto, n):
    return socket.inet_aton(src) + socket.inet_aton(dst) + struct.pack("!BBH", 0, proto, n)


def udp(src, dst, sport, dport, payload):
    n = 8 + len(payload)
    seg = struct.pack("!HHHH", sport, dport, n, 0) + payload
    c = csum(pseudo(src, dst, 17, n) + seg) or 0xFFFF
    return seg[:6] + struct.pack("!H", c) + seg[8:]


def tcp(src, dst, sport, dport, payload):
    seg = struct.pack("!HHIIBBHHH", sport, dport, 1000, 0, 0x50, 0x02, 64240, 0, 0) + payload
    c = csum(pseudo(src, dst, 6, len(seg)) + seg)
    return seg[:16] + struct.pack("!H", c) + seg[18:]


def eth(dst, src, etype, body, vlan=None):
    tag = b"" if vlan is None else struct.pack("!HH", 0x8100, vlan)
    return dst + src + tag + struct.pack("!H", etype) + body


def cases(tag):
    """(name, input frame, [expected frames on H2, in order]) per case. The addresses are
    the ones actions_test.sh gives (IP1, IP2 from the environment)."""
    ip1, ip2 = os.environ["IP1"], os.environ["IP2"]
    new_dst, new_src = os.environ["IP_NEW_DST"], os.environ["IP_NEW_SRC"]
    out = []

    def pl(name):
        return ("%s:%s:" % (tag, name)).encode().ljust(40, b".")

    # 1. mod_dl_src + mod_nw_dst + mod_tp_dst on TCP
    p = pl("tcp-rewrite")
    fin = eth(H2_MAC, H1_MAC, 0x0800, ipv4(ip1, ip2, 6, 64, tcp(ip1, ip2, 40001, 7000, p)))
    exp = eth(H2_MAC, NEW_SRC_MAC, 0x0800,
              ipv4(ip1, new_dst, 6, 64, tcp(ip1, new_dst, 40001, 8080, p)))
    out.append(("mod_dl_src,mod_nw_dst,mod_tp_dst (TCP)", fin, [exp]))
    # 2. mod_nw_src + mod_tp_src + dec_ttl on UDP
    p = pl("udp-rewrite")
    fin = eth(H2_MAC, H1_MAC, 0x0800, ipv4(ip1, ip2, 17, 64, udp(ip1, ip2, 40002, 7001, p)))
    exp = eth(H2_MAC, H1_MAC, 0x0800,
              ipv4(new_src, ip2, 17, 63, udp(new_src, ip2, 5353, 7001, p)))
    out.append(("mod_nw_src,mod_tp_src,dec_ttl (UDP)", fin, [exp]))
    # 3. push_vlan + set vlan_vid 100
    p = pl("push-vlan")
    body = ipv4(ip1, ip2, 17, 64, udp(ip1, ip2, 40003, 7002, p))
    fin = eth(H2_MAC, H1_MAC, 0x0800, body)
    exp = eth(H2_MAC, H1_MAC, 0x0800, body, vlan=100)
    out.append(("push_vlan,set_field vlan_vid", fin, [exp]))
    # 4. pop_vlan of a frame tagged 10
    p = pl("pop-vlan")
    body = ipv4(ip1, ip2, 17, 64, udp(ip1, ip2, 40004, 7003, p))
    fin = eth(H2_MAC, H1_MAC, 0x0800, body, vlan=10)
    exp = eth(H2_MAC, H1_MAC, 0x0800, body)
    out.append(("pop_vlan", fin, [exp]))
    # 5. output, rewrite, output: the first copy leaves before the rewrite
    p = pl("two-outputs")
    fin = eth(H2_MAC, H1_MAC, 0x0800, ipv4(ip1, ip2, 17, 64, udp(ip1, ip2, 40005, 7004, p)))
    exp2 = eth(H2_MAC, H1_MAC, 0x0800,
               ipv4(ip1, new_dst, 17, 64, udp(ip1, new_dst, 40005, 7004, p)))
    out.append(("output,mod_nw_dst,output (order, copy)", fin, [fin, exp2]))
    return out


def po_case(tag):
    """A PACKET_OUT (sent by ovs-ofctl, not by H1) with mod_dl_dst, mod_nw_dst, dec_ttl,
    output:2."""
    ip1, ip2, new_dst = os.environ["IP1"], os.environ["IP2"], os.environ["IP_NEW_DST"]
    p = ("%s:packet-out:" % tag).encode().ljust(40, b".")
    fin = eth(H2_MAC, H1_MAC, 0x0800, ipv4(ip1, ip2, 17, 64, udp(ip1, ip2, 40006, 7005, p)))
    exp = eth(NEW_SRC_MAC, H1_MAC, 0x0800,
              ipv4(ip1, new_dst, 17, 63, udp(ip1, new_dst, 40006, 7005, p)))
    return ("PACKET_OUT mod_dl_dst,mod_nw_dst,dec_ttl,output", None, [exp]), fin


def all_cases(tag):
    return cases(tag) + [po_case(tag)[0]]


def send(iface, tag):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.bind((iface, 0))
    for _ in range(COPIES):
        for _, fin, _ in cases(tag):
            s.send(fin)
            time.sleep(0.01)
    s.close()


def recv(iface, out, secs, tag):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    s.bind((iface, 0))
    want = COPIES * sum(len(e) for _, _, e in all_cases(tag))
    open(out + ".ready", "w").close()
    got = []
    end = time.monotonic() + secs
    anc = socket.CMSG_SPACE(struct.calcsize("IIIHHHH"))
    while len(got) < want and time.monotonic() < end:
        r, _, _ = select.select([s], [], [], max(0.0, end - time.monotonic()))
        if not r:
            break
        data, ancdata, _, addr = s.recvmsg(65535, anc)
        if addr[2] == socket.PACKET_OUTGOING or tag.encode() not in data:
            continue
        for lvl, typ, cd in ancdata:
            if lvl == SOL_PACKET and typ == PACKET_AUXDATA:
                st, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", cd[:20])
                if st & TP_STATUS_VLAN_VALID:
                    tpid = tpid if st & TP_STATUS_VLAN_TPID_VALID else 0x8100
                    data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
        got.append(data.hex())
    with open(out, "w") as f:
        f.write("\n".join(got) + ("\n" if got else ""))


def l3_ok(frame):
    """The IPv4 header and UDP/TCP checksums of frame, recomputed from scratch."""
    off = 12
    while struct.unpack("!H", frame[off:off + 2])[0] in (0x8100, 0x88A8):
        off += 4
    ip = frame[off + 2:]
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack("!H", ip[2:4])[0]
    if csum(ip[:ihl]) != 0:
        return "IPv4 header checksum"
    proto, seg = ip[9], ip[ihl:tot]
    ps = ip[12:20] + struct.pack("!BBH", 0, proto, len(seg))
    if proto in (6, 17) and csum(ps + seg) != 0:
        return "L4 checksum"
    return None


def check(out, tag):
    got = [bytes.fromhex(x) for x in open(out).read().split()]
    bad = 0
    for name, _, exps in all_cases(tag):
        mine = [g for g in got if any(e[-40:] == g[-40:] for e in exps)]
        want = exps * COPIES
        if sorted(mine) != sorted(want) or (len(exps) > 1 and mine[:2] != exps):
            bad += 1
            print("FAIL: %s: %d frame(s), want %d byte-exact" % (name, len(mine), len(want)))
            for g in mine[:2]:
                print("  got  " + g.hex())
            for e in exps:
                print("  want " + e.hex())
            continue
        errs = [l3_ok(g) for g in mine if l3_ok(g)]
        if errs:
            bad += 1
            print("FAIL: %s: %s wrong" % (name, errs[0]))
            continue
        print("ok: %s: %d frame(s) byte-exact, checksums valid" % (name, len(mine)))
    return 1 if bad else 0


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "send":
        send(sys.argv[2], sys.argv[3])
    elif cmd == "recv":
        recv(sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5])
    elif cmd == "po":
        print(po_case(sys.argv[2])[1].hex())
    elif cmd == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        sys.exit("usage: actions_frames.py send|recv|check ...")
