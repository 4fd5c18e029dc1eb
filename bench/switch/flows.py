#!/usr/bin/env python3
"""bench/switch/flows.py CASE DIR SINK_MAC GEN_MAC: one case of the switch benchmark's flows
and traffic (bench/switch/run.sh). Writes DIR/CASE.flows (ovs-ofctl add-flows lines, OpenFlow
port 1 = the generator's side, 2 = the sink's), DIR/CASE.gen (the ringflow-pktgen arguments
that send the case's traffic: --flows N --flows-mode seq|random), DIR/CASE.cfg (the same
traffic as a trafgen config of 64-byte IPv4/UDP frames, 60 bytes + FCS, to SINK_MAC from
GEN_MAC: for the labelled trafgen row and for a build without ringflow-pktgen) and, for a
case with groups, DIR/CASE.groups (ovs-ofctl add-groups lines, added before the flows).

The traffic is ringflow-pktgen's (docs/pktgen.md): flow f is 10.250.0.1 + f, UDP source port
1024 + f (f < 16384) -> 10.251.0.1:9, TTL 64; only the source varies. Cases (every flow the
traffic takes outputs to port 2; a frame no flow takes is dropped and the sink does not count it):
  one       1 flow: in_port=1. Traffic: 1 flow.
  exact1k   1000 flows, each one exact 5-tuple (in_port, udp, nw_src, nw_dst, tp_src, tp_dst)
            of pktgen's flows 0..999. Traffic: those 1000 flows in turn (--flows 1000 seq).
  wild100k  100000 flows over 10 masks: mask k (0..9) is nw_src/(32-k), priority 100+k, 10000
            flows each. The traffic's sources 10.250.0.0 + [0, 51200) are cut into 10 slices of
            5120 addresses; slice k is tiled by 5120 >> k of mask k's prefixes, the rest of mask
            k's 10000 lie in (20+k).0.0.0/8, where no frame goes. Traffic: 50000 flows picked at
            random per frame (--flows 50000 random; trafgen: 1000 frames with a random low byte
            of nw_src): far more microflows than an exact-match cache holds, so the classifier
            works, and every frame hits exactly one flow.
  pipe3     a 3-table pipeline, ACL -> L2 -> L3-style, 575 flows; each table ends in a
            priority-0 drop flow (the table-miss entry: its n_packets says what fell through).
            Table 0, ACL (301): 240 drop flows on the 5-tuple with wildcards, six shapes of 40
            (priorities 400..350): udp src 10.250.i/24 tp_dst 53; tcp src 10.250/16 tp_dst 22+i;
            udp src 172.16.i/24 dst 10.251/16; udp dst 10.251.(i+1)/24 tp_dst 5000+i; ip src
            192.168.i/24; udp src 10.250.0/20 tp_src 30000+i: the traffic shares prefixes with
            some but takes none. Then 60 allow flows (priority 200) -> goto_table:1: udp src
            10.250.k/24 dst 10.251/16 tp_dst 9, k < 40 (the traffic takes k = 0..3), and tcp ones
            to port 80. Table 1, L2 (65): eth_dst exact -> write_metadata (a segment id, mask
            0xffff), goto_table:2; SINK_MAC gets segment 1, 63 other MACs 2..64. Table 2, L3-style
            (209): routes of segment 1 (metadata=1/0xffff), nw_dst prefixes /8 /16 /20 /24 /28
            /32, priority 100 + length (longest prefix wins) -> set_field eth_src (the route's
            own MAC), set_field eth_dst, dec_ttl, output:2; 10.251.0.1 lies in a /8, /16, /20
            and /24 route, and the /24 must take it. Traffic: exact1k's (--flows 1000 seq).
  l2l3      pipe3 without its ACL: table 0 is one flow (priority 0) -> goto_table:1, tables 1
            and 2 are pipe3's (L2, then the routes). Traffic: wild100k's (--flows 50000 random):
            no table looks at the source, so every microflow is one megaflow of the whole
            pipeline (the router shape: the switch's outcome cache answers them all from one
            entry, docs/switch.md "A megaflow over the whole pipeline").
  select    one flow, in_port=1 -> group:1; group 1 type=select, 4 buckets of weights 40, 30,
            20, 10, each set_field eth_src 02:00:00:00:0b:0B (B = bucket 1..4), output:2 (all
            reach the sink; the group's bucket counters tell them apart). Traffic: exact1k's
            (--flows 1000 seq): 1000 microflows for the select hash to spread.
"""
import sys

SRC, DST, SPORT, DPORT = 0x0AFA0001, 0x0AFB0001, 1024, 9  # ringflow-pktgen's flow 0
N_EXACT = 1000
N_MASKS, PER_MASK, SLICE = 10, 10000, 5120
WILD_BASE, WILD_FLOWS = 0x0AFA0000, 50000
N_FRAMES = 1000
ROUTER = "02:00:00:00:0a:01"  # pipe3: the L3 table's source MAC base
SELECT_WEIGHTS = (40, 30, 20, 10)


def ip(a):
    return ".".join(str(a >> s & 255) for s in (24, 16, 8, 0))


def hexmac(m):
    return ", ".join("0x" + b for b in m.split(":"))


def frame(dmac, smac, src, sport, rnd_low=False):
    """One trafgen packet: Ethernet, IPv4 (checksum by trafgen) SRC -> 10.251.0.1, UDP
    SPORT -> 9, 18 bytes of payload; rnd_low: a random last byte of the source per frame."""
    s = [str(src >> sh & 255) for sh in (24, 16, 8)] + ["drnd()" if rnd_low else str(src & 255)]
    d = [str(DST >> sh & 255) for sh in (24, 16, 8, 0)]
    return ("{ %s, %s, c16(0x0800), 0x45, 0x00, c16(46), c16(0), c16(0x4000), 64, 17, "
            "csumip(14, 33), %s, %s, c16(%d), c16(%d), c16(26), c16(0), fill(0x00, 18) }"
            % (hexmac(dmac), hexmac(smac), ", ".join(s), ", ".join(d), sport, DPORT))


def wild_traffic(dmac, smac):
    """wild100k's traffic (l2l3's too): trafgen frames and ringflow-pktgen arguments."""
    step = N_MASKS * SLICE // N_FRAMES  # 51: a frame's /24 stays inside the tiled range
    frames = [frame(dmac, smac, WILD_BASE + j * step, SPORT, rnd_low=True)
              for j in range(N_FRAMES)]
    return frames, f"--flows {WILD_FLOWS} --flows-mode random"


def pipe3(dmac):
    """The pipe3 case's flows (see the docstring): ACL (table 0), L2 (1), L3-style (2)."""
    n = 40
    shapes = [(400, "udp,nw_src=10.250.{i}.0/24,tp_dst=53"),
              (390, "tcp,nw_src=10.250.0.0/16,tp_dst={p22}"),
              (380, "udp,nw_src=172.16.{i}.0/24,nw_dst=10.251.0.0/16"),
              (370, "udp,nw_dst=10.251.{i1}.0/24,tp_dst={p5000}"),
              (360, "ip,nw_src=192.168.{i}.0/24"),
              (350, "udp,nw_src=10.250.0.0/20,tp_src={p30000}")]
    flows = [f"priority={prio}," + m.format(i=i, i1=i + 1, p22=22 + i, p5000=5000 + i,
                                              p30000=30000 + i) + ",actions=drop"
             for prio, m in shapes for i in range(n)]
    flows += [f"priority=200,udp,nw_src=10.250.{k}.0/24,nw_dst=10.251.0.0/16,tp_dst=9,"
              "actions=goto_table:1" for k in range(n)]
    flows += [f"priority=200,tcp,nw_src=10.250.{k}.0/24,nw_dst=10.251.0.0/16,tp_dst=80,"
              "actions=goto_table:1" for k in range(20)]
    flows.append("priority=0,actions=drop")
    # L2: the sink's MAC is segment 1's router port; 63 other stations, segments 2..64
    flows.append(f"table=1,priority=100,dl_dst={dmac},"
                 "actions=write_metadata:0x1/0xffff,goto_table:2")
    flows += [f"table=1,priority=100,dl_dst=02:00:00:00:01:{s:02x},"
              f"actions=write_metadata:{s:#x}/0xffff,goto_table:2" for s in range(2, 65)]
    flows.append("table=1,priority=0,actions=drop")
    # L3: (prefix, length) routes; 10.251.0.1 is in 10/8, 10.251/16, 10.251.0/20, 10.251.0/24
    routes = [(10 + j << 24, 8) for j in range(8)]
    routes += [(10 << 24 | (251 if j == 0 else 100 + j) << 16, 16) for j in range(40)]
    routes += [(0x0AFB0000 + (j << 12), 20) for j in range(40)]
    routes += [(0x0AFB0000 + (j << 8), 24) for j in range(60)]
    routes += [(0x0AFB0000 + (j << 4), 28) for j in range(1, 31)]
    routes += [(0x0AFB0000 + 100 + j, 32) for j in range(30)]
    for r, (a, length) in enumerate(routes):
        nh = dmac if (a, length) == (0x0AFB0000, 24) else f"02:00:00:00:fe:{r & 255:02x}"
        src = f"{ROUTER[:-2]}{r & 255:02x}"
        flows.append(f"table=2,priority={100 + length},ip,metadata=0x1/0xffff,"
                     f"nw_dst={ip(a)}/{length},actions=set_field:{src}->eth_src,"
                     f"set_field:{nh}->eth_dst,dec_ttl,output:2")
    flows.append("table=2,priority=0,actions=drop")
    return flows


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[0])
    case, out, dmac, smac = sys.argv[1:]
    flows, frames, groups = [], [], []
    if case == "one":
        flows.append("priority=100,in_port=1,actions=output:2")
        frames.append(frame(dmac, smac, SRC, SPORT))
        gen = "--flows 1"
    elif case == "exact1k":
        for f in range(N_EXACT):
            flows.append(f"priority=100,in_port=1,udp,nw_src={ip(SRC + f)},nw_dst={ip(DST)},"
                         f"tp_src={SPORT + f},tp_dst={DPORT},actions=output:2")
            frames.append(frame(dmac, smac, SRC + f, SPORT + f))
        gen = f"--flows {N_EXACT} --flows-mode seq"
    elif case == "wild100k":
        for k in range(N_MASKS):
            inside = SLICE >> k
            for i in range(PER_MASK):
                if i < inside:
                    a = WILD_BASE + k * SLICE + (i << k)
                else:
                    a = (20 + k) << 24 | (i - inside) << k
                flows.append(f"priority={100 + k},udp,nw_src={ip(a)}/{32 - k},actions=output:2")
        frames, gen = wild_traffic(dmac, smac)
    elif case == "pipe3":
        flows = pipe3(dmac)
        frames = [frame(dmac, smac, SRC + f, SPORT + f) for f in range(N_EXACT)]
        gen = f"--flows {N_EXACT} --flows-mode seq"
    elif case == "l2l3":
        flows = ["priority=0,actions=goto_table:1"]
        flows += [f for f in pipe3(dmac) if f.startswith("table=")]
        frames, gen = wild_traffic(dmac, smac)
    elif case == "select":
        groups.append("group_id=1,type=select," + ",".join(
            f"bucket=weight:{w},actions=set_field:02:00:00:00:0b:{b + 1:02x}->eth_src,output:2"
            for b, w in enumerate(SELECT_WEIGHTS)))
        flows.append("priority=100,in_port=1,actions=group:1")
        frames = [frame(dmac, smac, SRC + f, SPORT + f) for f in range(N_EXACT)]
        gen = f"--flows {N_EXACT} --flows-mode seq"
    else:
        sys.exit(f"flows.py: unknown case '{case}' (one, exact1k, wild100k, pipe3, l2l3, select)")
    files = [("flows", flows), ("cfg", frames), ("gen", [gen])]
    if groups:
        files.append(("groups", groups))
    for ext, text in files:
        with open(f"{out}/{case}.{ext}", "w") as f:
            f.write("\n".join(text) + "\n")


main()
