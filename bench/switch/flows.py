#!/usr/bin/env python3
"""bench/switch/flows.py CASE DIR SINK_MAC GEN_MAC: one case of the switch benchmark's flows
and traffic (bench/switch/run.sh). Writes DIR/CASE.flows (ovs-ofctl add-flows lines, OpenFlow
port 1 = the generator's side, 2 = the sink's) and DIR/CASE.cfg (a trafgen config of 64-byte
IPv4/UDP frames, 60 bytes + FCS, to SINK_MAC from GEN_MAC).

Cases (every flow outputs to port 2; nothing else is installed, so a frame no flow takes is
dropped and the sink does not count it):
  one       1 flow: in_port=1. Traffic: one frame, 10.0.0.1:1024 -> 10.0.0.2:2048.
  exact1k   1000 flows, each one exact 5-tuple (in_port, udp, nw_src, nw_dst 10.1.x.y,
            tp_src, tp_dst). Traffic: 1000 frames, one per flow, sent in turn.
  wild100k  100000 flows over 10 masks: mask k (0..9) is nw_dst/(32-k) under (10+k).0.0.0/8,
            priority 100+k, 10000 flows each (nw_dst = (10+k)<<24 | i<<k). Traffic: 1000
            frames spread over the 10 masks and 1000 of the flows, with a random nw_src low
            16 bits per frame (trafgen drnd): every frame a new microflow, so an exact-match
            cache keyed on the whole header cannot hold the traffic and the classifier works.
"""
import sys

N_EXACT = 1000
N_MASKS, PER_MASK = 10, 10000
N_FRAMES = 1000


def ip(a):
    return ".".join(str(a >> s & 255) for s in (24, 16, 8, 0))


def hexmac(m):
    return ", ".join("0x" + b for b in m.split(":"))


def frame(dmac, smac, src, dst, rnd_src=False):
    """One trafgen packet: Ethernet, IPv4 (checksum by trafgen), UDP 1024 -> 2048, 18 bytes."""
    s = [str(src >> 24 & 255), str(src >> 16 & 255)]
    s += ["drnd()", "drnd()"] if rnd_src else [str(src >> 8 & 255), str(src & 255)]
    d = [str(dst >> sh & 255) for sh in (24, 16, 8, 0)]
    return ("{ %s, %s, c16(0x0800), 0x45, 0x00, c16(46), c16(0), c16(0x4000), 64, 17, "
            "csumip(14, 33), %s, %s, c16(1024), c16(2048), c16(26), c16(0), fill(0x00, 18) }"
            % (hexmac(dmac), hexmac(smac), ", ".join(s), ", ".join(d)))


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__.splitlines()[0])
    case, out, dmac, smac = sys.argv[1:]
    src = 10 << 24 | 1  # 10.0.0.1
    flows, frames = [], []
    if case == "one":
        flows.append("priority=100,in_port=1,actions=output:2")
        frames.append(frame(dmac, smac, src, 10 << 24 | 2))
    elif case == "exact1k":
        for i in range(N_EXACT):
            dst = 10 << 24 | 1 << 16 | (i // 250) << 8 | (i % 250 + 1)
            flows.append(f"priority=100,in_port=1,udp,nw_src={ip(src)},nw_dst={ip(dst)},"
                         "tp_src=1024,tp_dst=2048,actions=output:2")
            frames.append(frame(dmac, smac, src, dst))
    elif case == "wild100k":
        for k in range(N_MASKS):
            for i in range(PER_MASK):
                dst = (10 + k) << 24 | i << k
                flows.append(f"priority={100 + k},udp,nw_dst={ip(dst)}/{32 - k},actions=output:2")
        for j in range(N_FRAMES):
            k, i = j % N_MASKS, (j * 7919) % PER_MASK
            dst = (10 + k) << 24 | i << k | (j & ((1 << k) - 1))
            frames.append(frame(dmac, smac, src, dst, rnd_src=True))
    else:
        sys.exit(f"flows.py: unknown case '{case}' (one, exact1k, wild100k)")
    with open(f"{out}/{case}.flows", "w") as f:
        f.write("\n".join(flows) + "\n")
    with open(f"{out}/{case}.cfg", "w") as f:
        f.write("\n".join(frames) + "\n")


main()
