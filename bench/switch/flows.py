#!/usr/bin/env python3
"""bench/switch/flows.py CASE DIR SINK_MAC GEN_MAC: one case of the switch benchmark's flows
and traffic (bench/switch/run.sh). Writes DIR/CASE.flows (ovs-ofctl add-flows lines, OpenFlow
port 1 = the generator's side, 2 = the sink's), DIR/CASE.gen (the ringflow-pktgen arguments
that send the case's traffic: --flows N --flows-mode seq|random) and DIR/CASE.cfg (the same
traffic as a trafgen config of 64-byte IPv4/UDP frames, 60 bytes + FCS, to SINK_MAC from
GEN_MAC: for the labelled trafgen row and for a build without ringflow-pktgen).

The traffic is ringflow-pktgen's (docs/pktgen.md): flow f is 10.250.0.1 + f, UDP source port
1024 + f (f < 16384) -> 10.251.0.1:9; only the source varies. Cases (every flow outputs to port
2; nothing else is installed, so a frame no flow takes is dropped and the sink does not count it):
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
"""
import sys

SRC, DST, SPORT, DPORT = 0x0AFA0001, 0x0AFB0001, 1024, 9  # ringflow-pktgen's flow 0
N_EXACT = 1000
N_MASKS, PER_MASK, SLICE = 10, 10000, 5120
WILD_BASE, WILD_FLOWS = 0x0AFA0000, 50000
N_FRAMES = 1000


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


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[0])
    case, out, dmac, smac = sys.argv[1:]
    flows, frames = [], []
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
        step = N_MASKS * SLICE // N_FRAMES  # 51: a frame's /24 stays inside the tiled range
        for j in range(N_FRAMES):
            frames.append(frame(dmac, smac, WILD_BASE + j * step, SPORT, rnd_low=True))
        gen = f"--flows {WILD_FLOWS} --flows-mode random"
    else:
        sys.exit(f"flows.py: unknown case '{case}' (one, exact1k, wild100k)")
    for ext, text in (("flows", flows), ("cfg", frames), ("gen", [gen])):
        with open(f"{out}/{case}.{ext}", "w") as f:
            f.write("\n".join(text) + "\n")


main()
