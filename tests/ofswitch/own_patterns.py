#!/usr/bin/env python3
"""tests/ofswitch/own_patterns.py OUTDIR: OpenFlow 1.3 patterns of our own for os-ken's switch
test tool, in its file format, for what the shared pattern subset (../shared/osken-of13) leaves
out: the match fields, set_field targets, actions, meter rates and select hashes that only the
rest of the upstream directory checks, and the multi-table pipeline (the action set, clear,
apply order, indirect groups) that no upstream pattern reaches. conformance.sh writes them
into its bed and runs them as the sets own:action, own:match, own:pipeline, own:group and
own:meter. Written here from the OpenFlow 1.3.5 specification; every expected frame is what
the specification says the switch sends.

Each match field gets three tests per frame kind, as the tool's own files do: a matching frame
forwarded to port 2 (the tester receives it unchanged), the same to the controller (PACKET_IN
unchanged), and a frame that differs in that field only falling to the table miss. Each
action gets a frame before and after."""

import json
import os
import struct
import sys

A = dict(edst='22:22:22:22:22:22', esrc='12:11:11:11:11:11', v4src='192.168.10.10',
         v4dst='192.168.20.20', v6src='10::10', v6dst='20::20', tos=32, ttl=64, flabel=100,
         sport=11111, dport=2222, vid=100, pcp=3, label=100, exp=3, isid=100)
B = dict(edst='ba:bb:bb:bb:bb:bb', esrc='aa:aa:aa:aa:aa:aa', v4src='10.10.10.10',
         v4dst='10.10.20.20', v6src='a0::a0', v6dst='b0::b0', tos=65, ttl=127, flabel=203,
         sport=12345, dport=6789, vid=203, pcp=5, label=203, exp=5, isid=203)
PAYLOAD = r"b'\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f'"
DATA8 = r"b'\x01\x23\x45\x67\x89\xab\xcd\xef'"
ET = dict(ipv4=0x0800, ipv6=0x86DD, arp=0x0806, vlan=0x8100, svlan=0x88A8, mpls=0x8847,
          pbb=0x88E7)
PROTO = dict(tcp=6, udp=17, sctp=132, icmp=1, icmpv6=58, echo6=58, ns=58, na=58)


def crc32c(data):
    crc = 0xFFFFFFFF
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82F63B78 if crc & 1 else 0)
    return crc ^ 0xFFFFFFFF


def sctp_csum(sport, dport):
    """The checksum field of the SCTP packet l4('sctp') builds (common header, one DATA chunk of
    the 8 bytes DATA8), as the tool's parser reads it: the CRC32c (RFC 9260, appendix A) goes
    on the wire least significant byte first, the parser reads the 4 bytes in network order."""
    chunk = struct.pack('!BBHIHHI', 0, 0, 16 + 8, 0, 0, 0, 0) + bytes.fromhex('0123456789abcdef')
    crc = crc32c(struct.pack('!HHII', sport, dport, 0, 0) + chunk)
    return struct.unpack('!I', struct.pack('<I', crc))[0]


def eth(v, et):
    return "ethernet(dst='%s', src='%s', ethertype=%d)" % (v['edst'], v['esrc'], et)


def l3(kind, v, l4):
    if kind == 'ipv4':
        return "ipv4(tos=%d, proto=%d, src='%s', dst='%s', ttl=%d)" % (
            v['tos'], PROTO[l4], v['v4src'], v['v4dst'], v['ttl'])
    return ("ipv6(dst='%s', flow_label=%d, src='%s', nxt=%d, hop_limit=%d, traffic_class=%d)"
            % (v['v6dst'], v['flabel'], v['v6src'], PROTO[l4], v['ttl'], v['tos']))


def l4(kind, v):
    if kind == 'tcp':
        return ["tcp(dst_port=%d, option=bytes(b'\\x00' * 4), src_port=%d)" % (v['dport'], v['sport']),
                PAYLOAD]
    if kind == 'udp':
        return ["udp(dst_port=%d, src_port=%d)" % (v['dport'], v['sport']), PAYLOAD]
    if kind == 'sctp':  # with its checksum given: the tool's own CRC32c is wrong on Python 3
        return ["sctp(chunks=[chunk_data(payload_data=%s)], dst_port=%d, src_port=%d, csum=%d)"
                % (DATA8, v['dport'], v['sport'], sctp_csum(v['sport'], v['dport']))]
    if kind == 'icmp':
        return ["icmp(code=%d,csum=0,data=echo(data=%s),type_=%d)"
                % (v.get('icode', 0), DATA8, v.get('itype', 8))]
    if kind == 'echo6':
        return ["icmpv6(code=%d,data=icmpv6echo(data=%s),type_=%d)"
                % (v.get('icode', 0), DATA8, v.get('itype', 128))]
    if kind == 'ns':  # neighbour solicitation with a source link-layer address option
        return ["icmpv6(code=0,data=nd_neighbor(option=nd_option_sla(hw_src='%s'),dst='%s'),type_=135)"
                % (v.get('sll', v['esrc']), v.get('target', v['v6dst']))]
    if kind == 'na':  # neighbour advertisement with a target link-layer address option
        return ["icmpv6(code=0,data=nd_neighbor(option=nd_option_tla(hw_src='%s'),dst='%s'),type_=136)"
                % (v.get('tll', v['edst']), v.get('target', v['v6dst']))]
    raise ValueError(kind)


def arp(v):
    return ["arp(dst_ip='%s',dst_mac='%s', opcode=%d, src_ip='%s',src_mac='%s')"
            % (v.get('tpa', v['v4dst']), v.get('tha', v['edst']), v.get('op', 1),
               v.get('spa', v['v4src']), v.get('sha', v['esrc'])),
            "bytes(b'\\x00' * (60 - 42))"]


def inner(kind, v):
    """The frame from its network layer on: 'ipv4/tcp', 'ipv6/echo6', 'arp', ..."""
    if kind == 'arp':
        return arp(v)
    n, t = kind.split('/')
    return [l3(n, v, t)] + l4(t, v)


def net_et(kind):
    return ET[kind.split('/')[0]]


def frame(kind, v, tags=()):
    """An Ethernet frame: the tags outside in ('vlan', 'svlan', 'mpls', 'mpls0' a shim that is
    not the bottom of the stack), then the inner part of kind."""
    out = []
    ets = [ET['mpls'] if t == 'mpls0' else ET[t] for t in tags] + [net_et(kind)]
    out.append(eth(v, ets[0]))
    for i, t in enumerate(tags):
        nxt = ets[i + 1]
        if t == 'vlan':
            out.append("vlan(pcp=%d, cfi=0, vid=%d, ethertype=%d)" % (v['pcp'], v['vid'], nxt))
        elif t == 'svlan':
            out.append("svlan(pcp=%d, cfi=0, vid=%d, ethertype=%d)" % (v['pcp'], v['vid'], nxt))
        elif t in ('mpls', 'mpls0'):
            out.append("mpls(bsb=%d, label=%d, exp=%d, ttl=%d)"
                       % (0 if t == 'mpls0' else 1, v['label'], v['exp'], v.get('mttl', v['ttl'])))
    return out + inner(kind, v)


def pbb_frame(kind, v, isid):
    """A PBB frame: backbone Ethernet, I-TAG, then the customer frame."""
    return ["ethernet(dst='%s', src='%s', ethertype=%d)" % (v['edst'], v['esrc'], ET['pbb']),
            "itag(sid=%d)" % isid] + frame(kind, v)


def oxm(field, value, mask=None):
    t = {"field": field, "value": value}
    if mask is not None:
        t["mask"] = mask
    return {"OXMTlv": t}


def insts(*parts):
    """Instructions from ('apply'|'write'|'clear', actions), ('goto', table), ('meter', id)
    and ('metadata', value: all 64 bits written) pairs."""
    kinds = dict(write=3, apply=4, clear=5)
    out = []
    for k, arg in parts:
        if k == 'goto':
            out.append({"OFPInstructionGotoTable": {"table_id": arg}})
        elif k == 'meter':
            out.append({"OFPInstructionMeter": {"meter_id": arg}})
        elif k == 'metadata':
            out.append({"OFPInstructionWriteMetadata": {"metadata": arg,
                                                        "metadata_mask": 0xFFFFFFFFFFFFFFFF}})
        else:
            out.append({"OFPInstructionActions": {"actions": arg, "type": kinds[k]}})
    return out


def flow_mod(fields, actions=None, table=0, insts=None):
    if insts is None:
        insts = [{"OFPInstructionActions": {"actions": actions, "type": 4}}]
    return {"OFPFlowMod": {"table_id": table, "match": {"OFPMatch": {"oxm_fields": fields}},
                           "instructions": insts}}


HEX_FIELDS = ('eth_type', 'vlan_vid', 'metadata', 'tunnel_id')
OUT2 = [{"OFPActionOutput": {"port": 2}}]
OUTCTL = [{"OFPActionOutput": {"max_len": 65535, "port": 0xFFFFFFFD}}]


def flow_text(fields, table=0):
    """A flow's match as text for a description: "table_id:1,eth_type=0x800,ipv4_src=..."."""
    def one(t):
        t = t['OXMTlv']
        v = t['value']
        if isinstance(v, int):
            v = hex(v) if 'mask' in t or t['field'] in HEX_FIELDS else str(v)
        if 'mask' in t:
            m = t['mask']
            v += '/' + (hex(m) if isinstance(m, int) else m)
        return '%s=%s' % (t['field'], v)
    return ','.join((['table_id:%d' % table] if table else []) + [one(t) for t in fields])


def match_tests(kind, fields, hit, miss, pre=(), table=0, miss_kind=None, miss_pre=None):
    """The three tests of one match in a table: hit to port 2, hit to the controller, miss to
    that table's miss. pre: the flows before (earlier tables); the miss may have its own
    (miss_pre, described as miss_kind), when what the earlier tables give the frame decides."""
    pre = list(pre)
    miss_pre = pre if miss_pre is None else list(miss_pre)
    miss_kind = miss_kind or kind + "(not matching)"
    desc = flow_text(fields, table)
    return [
        {"description": "%s-->'%s,actions=output:2'" % (kind, desc),
         "prerequisite": pre + [flow_mod(fields, OUT2, table)],
         "tests": [{"ingress": hit, "egress": hit}]},
        {"description": "%s-->'%s,actions=output:CONTROLLER'" % (kind, desc),
         "prerequisite": pre + [flow_mod(fields, OUTCTL, table)],
         "tests": [{"ingress": hit, "PACKET_IN": hit}]},
        {"description": "%s-->'%s,actions=output:2'" % (miss_kind, desc),
         "prerequisite": miss_pre + [flow_mod(fields, OUT2, table)],
         "tests": [{"ingress": miss, "table-miss": [table]}]},
    ]


def eth_kinds():
    return ['ipv4/tcp', 'ipv6/tcp', 'arp']


def match_set():
    files = {}
    ipv4 = [oxm('eth_type', ET['ipv4'])]
    ipv6 = [oxm('eth_type', ET['ipv6'])]

    def per_kind(name, fields_of, hit_of, miss_of, kinds):
        tests = []
        for k in kinds:
            tests += match_tests(k, fields_of(k), hit_of(k), miss_of(k))
        files[name] = tests

    per_kind('03_ETH_DST', lambda k: [oxm('eth_dst', A['edst'])],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, edst=B['edst'])), eth_kinds())
    per_kind('04_ETH_SRC', lambda k: [oxm('eth_src', A['esrc'])],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, esrc=B['esrc'])), eth_kinds())
    per_kind('05_ETH_TYPE', lambda k: [oxm('eth_type', net_et(k))],
             lambda k: frame(k, A),
             lambda k: frame('ipv6/tcp' if k == 'ipv4/tcp' else 'ipv4/tcp', A), eth_kinds())
    # VID 96..111 present: 100 hits, 203 misses
    per_kind('06_VLAN_VID_Mask', lambda k: [oxm('vlan_vid', 0x1000 | 96, 0x1FF0)],
             lambda k: frame(k, A, ('vlan',)), lambda k: frame(k, dict(A, vid=B['vid']), ('vlan',)),
             eth_kinds())
    per_kind('08_IP_DSCP_IPv4', lambda k: ipv4 + [oxm('ip_dscp', A['tos'] >> 2)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, tos=B['tos'])), ['ipv4/tcp'])
    per_kind('09_IP_ECN_IPv4', lambda k: ipv4 + [oxm('ip_ecn', A['tos'] & 3)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, tos=A['tos'] | 1)), ['ipv4/tcp'])
    per_kind('10_IP_PROTO_IPv4', lambda k: ipv4 + [oxm('ip_proto', 6)],
             lambda k: frame('ipv4/tcp', A), lambda k: frame('ipv4/udp', A), ['ipv4/tcp'])
    per_kind('11_IPV4_SRC', lambda k: ipv4 + [oxm('ipv4_src', A['v4src'])],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, v4src=B['v4src'])),
             ['ipv4/tcp', 'ipv4/udp'])
    per_kind('12_IPV4_DST_Mask', lambda k: ipv4 + [oxm('ipv4_dst', '192.168.20.0', '255.255.255.0')],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, v4dst=B['v4dst'])),
             ['ipv4/tcp', 'ipv4/icmp'])
    for n, l4k, f in (('13_TCP_SRC_IPv4', 'tcp', 'tcp_src'), ('14_TCP_DST_IPv4', 'tcp', 'tcp_dst'),
                      ('15_UDP_SRC_IPv4', 'udp', 'udp_src'), ('16_UDP_DST_IPv4', 'udp', 'udp_dst'),
                      ('17_SCTP_SRC_IPv4', 'sctp', 'sctp_src'),
                      ('18_SCTP_DST_IPv4', 'sctp', 'sctp_dst')):
        key = 'sport' if f.endswith('src') else 'dport'
        per_kind(n, lambda k, l4k=l4k, f=f, key=key:
                 ipv4 + [oxm('ip_proto', PROTO[l4k]), oxm(f, A[key])],
                 lambda k, l4k=l4k: frame('ipv4/' + l4k, A),
                 lambda k, l4k=l4k, key=key: frame('ipv4/' + l4k, dict(A, **{key: B[key]})),
                 ['ipv4/' + l4k])
    per_kind('19_ICMPV4_TYPE', lambda k: ipv4 + [oxm('ip_proto', 1), oxm('icmpv4_type', 8)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, itype=0)), ['ipv4/icmp'])
    per_kind('21_ARP_OP', lambda k: [oxm('eth_type', ET['arp']), oxm('arp_op', 1)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, op=2)), ['arp'])
    per_kind('26_IPV6_SRC_Mask', lambda k: ipv6 + [oxm('ipv6_src', '10::', 'ffff:ffff:ffff:ffff::')],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, v6src=B['v6src'])),
             ['ipv6/tcp', 'ipv6/udp'])
    per_kind('27_IPV6_DST_Mask', lambda k: ipv6 + [oxm('ipv6_dst', '20::', 'ffff:ffff:ffff:ffff::')],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, v6dst=B['v6dst'])),
             ['ipv6/tcp', 'ipv6/echo6'])
    per_kind('28_IPV6_FLABEL_Mask', lambda k: ipv6 + [oxm('ipv6_flabel', 96, 0xFFFF0)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, flabel=B['flabel'])), ['ipv6/tcp'])
    per_kind('30_ICMPV6_CODE', lambda k: ipv6 + [oxm('ip_proto', 58), oxm('icmpv6_code', 0)],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, icode=1)), ['ipv6/echo6'])
    per_kind('32_IPV6_ND_SLL', lambda k: ipv6 + [oxm('ip_proto', 58), oxm('icmpv6_type', 135),
                                                 oxm('ipv6_nd_sll', A['esrc'])],
             lambda k: frame(k, A), lambda k: frame(k, dict(A, sll=B['esrc'])), ['ipv6/ns'])
    per_kind('34_MPLS_LABEL', lambda k: [oxm('eth_type', ET['mpls']), oxm('mpls_label', A['label'])],
             lambda k: frame(k, A, ('mpls',)), lambda k: frame(k, dict(A, label=B['label']), ('mpls',)),
             ['ipv4/tcp', 'ipv6/tcp'])
    per_kind('36_MPLS_BOS', lambda k: [oxm('eth_type', ET['mpls']), oxm('mpls_bos', 1)],
             lambda k: frame(k, A, ('mpls',)), lambda k: frame(k, A, ('mpls0', 'mpls')),
             ['ipv4/tcp', 'ipv6/tcp'])
    per_kind('37_PBB_ISID_Mask', lambda k: [oxm('eth_type', ET['pbb']), oxm('pbb_isid', 96, 0xFFFFF0)],
             lambda k: pbb_frame(k, A, A['isid']), lambda k: pbb_frame(k, A, B['isid']),
             ['ipv4/tcp'])
    # metadata written in table 0, matched exactly in table 1; the miss writes another value
    # fields table 0 gives the frame, matched in table 1: the metadata written exactly, the
    # tunnel id set and matched under a mask; the miss: table 0 gives another value
    for name, f, give, hit, miss, kinds in (
            ('02_METADATA', [oxm('metadata', 0x123456789ABCDEF0)],
             lambda v: ('metadata', v), 0x123456789ABCDEF0, 0x0FEDCBA987654321,
             ['ipv4/tcp', 'ipv6/tcp']),
            ('38_TUNNEL_ID_Mask', [oxm('tunnel_id', 0x3030, 0xFFF0)],
             lambda v: ('apply', [setf('tunnel_id', v)]), 12345, 6666, ['ipv4/tcp', 'arp'])):
        field = f[0]['OXMTlv']['field']
        t0 = lambda v, give=give: [flow_mod([], insts=insts(give(v), ('goto', 1)))]
        files[name] = [x for k in kinds for x in match_tests(
            "%s(%s %#x)" % (k, field, hit), f, frame(k, A), frame(k, A), pre=t0(hit), table=1,
            miss_kind="%s(%s %#x)" % (k, field, miss), miss_pre=t0(miss))]
    return files


def act_test(desc, fields, actions, ingress, egress):
    """One action test; desc is "ACTIONS KIND", e.g. "dec_nw_ttl ipv4/udp"."""
    acts, kind = desc.rsplit(' ', 1)
    m = flow_text(fields)
    return {"description": "%s-->'%sactions=%s,output:2'" % (kind, m + ',' if m else '', acts),
            "prerequisite": [flow_mod(fields, actions + OUT2)],
            "tests": [{"ingress": ingress, "egress": egress}]}


def setf(field, value):
    return {"OFPActionSetField": {"field": {"OXMTlv": {"field": field, "value": value}}}}


def action_set():
    files = {}
    mpls_m = [oxm('eth_type', ET['mpls'])]
    files['11_COPY_TTL_OUT'] = [
        act_test("copy_ttl_out %s" % k, mpls_m, [{"OFPActionCopyTtlOut": {}}],
                 frame(k, dict(A, ttl=32, mttl=64), ('mpls',)),
                 frame(k, dict(A, ttl=32, mttl=32), ('mpls',)))
        for k in ['ipv4/tcp', 'ipv6/tcp']]
    files['15_SET_MPLS_TTL'] = [
        act_test("set_mpls_ttl:10 %s" % k, mpls_m, [{"OFPActionSetMplsTtl": {"mpls_ttl": 10}}],
                 frame(k, A, ('mpls',)), frame(k, dict(A, mttl=10), ('mpls',)))
        for k in ['ipv4/tcp', 'ipv6/tcp', 'arp']]
    # push_vlan on an untagged frame: VID and PCP zero (no outer tag to copy them from)
    zero = dict(A, vid=0, pcp=0)
    files['17_PUSH_VLAN'] = [
        act_test("push_vlan:0x%04x %s" % (et, k), [oxm('eth_type', net_et(k))],
                 [{"OFPActionPushVlan": {"ethertype": et}}],
                 frame(k, A), frame(k, zero, (tag,)))
        for k in eth_kinds() for et, tag in ((0x8100, 'vlan'), (0x88A8, 'svlan'))]
    files['18_POP_VLAN'] = [
        act_test("pop_vlan %s" % k, [oxm('vlan_vid', 0x1000, 0x1000)], [{"OFPActionPopVlan": {}}],
                 frame(k, A, ('vlan',)), frame(k, A))
        for k in eth_kinds()]
    # push_mpls on an MPLS frame copies label, TC and TTL from the old outer shim, BoS 0
    files['19_PUSH_MPLS_multiple'] = [
        act_test("push_mpls:0x8847 twice %s" % k, [oxm('eth_type', net_et(k))],
                 [{"OFPActionPushMpls": {"ethertype": 0x8847}},
                  {"OFPActionPushMpls": {"ethertype": 0x8847}}],
                 frame(k, A), frame(k, dict(A, label=0, exp=0, mttl=A['ttl']), ('mpls0', 'mpls')))
        for k in ['ipv4/tcp', 'ipv6/tcp']]
    files['23_SET_NW_TTL_IPv4'] = [
        act_test("set_nw_ttl:10 %s" % k, [oxm('eth_type', ET['ipv4'])],
                 [{"OFPActionSetNwTtl": {"nw_ttl": 10}}], frame(k, A), frame(k, dict(A, ttl=10)))
        for k in ['ipv4/tcp', 'ipv4/udp', 'ipv4/icmp']]
    files['24_DEC_NW_TTL_IPv4'] = [
        act_test("dec_nw_ttl %s" % k, [oxm('eth_type', ET['ipv4'])], [{"OFPActionDecNwTtl": {}}],
                 frame(k, A), frame(k, dict(A, ttl=A['ttl'] - 1)))
        for k in ['ipv4/tcp', 'ipv4/udp', 'ipv4/icmp']]
    # push_pbb: a backbone header whose addresses are the customer's, an I-TAG with I-SID 0
    files['26_PUSH_PBB'] = [
        act_test("push_pbb:0x88e7 %s" % k, [oxm('eth_type', net_et(k))],
                 [{"OFPActionPushPbb": {"ethertype": 0x88E7}}],
                 frame(k, A), ["ethernet(dst='%s', src='%s', ethertype=%d)" % (A['edst'], A['esrc'], ET['pbb']),
                               "itag()"] + frame(k, A))
        for k in eth_kinds()]
    files['27_POP_PBB'] = [
        act_test("pop_pbb %s" % k, [oxm('eth_type', ET['pbb'])], [{"OFPActionPopPbb": {}}],
                 ["ethernet(dst='%s', src='%s', ethertype=%d)" % (B['edst'], B['esrc'], ET['pbb']),
                  "itag(sid=%d)" % A['isid']] + frame(k, A),
                 frame(k, A))
        for k in eth_kinds()]
    return files


def set_field_set():
    files = {}
    v4 = [oxm('eth_type', ET['ipv4'])]
    v6 = [oxm('eth_type', ET['ipv6'])]

    def one(name, fields, field, value, cases):
        files[name] = [act_test("set_field:%s->%s %s" % (value, field, k), fields, [setf(field, value)],
                                before, after) for k, before, after in cases]

    # the ARP sender address stays: set_field rewrites the Ethernet header only
    one('04_ETH_SRC', [], 'eth_src', B['esrc'],
        [(k, frame(k, A), frame(k, dict(A, esrc=B['esrc'], sha=A['esrc']))) for k in eth_kinds()])
    one('06_VLAN_VID', [oxm('vlan_vid', 0x1000, 0x1000)], 'vlan_vid', 0x1000 | B['vid'],
        [(k, frame(k, A, ('vlan',)), frame(k, dict(A, vid=B['vid']), ('vlan',))) for k in eth_kinds()])
    one('08_IP_DSCP_IPv4', v4, 'ip_dscp', 16,
        [(k, frame(k, A), frame(k, dict(A, tos=(16 << 2) | (A['tos'] & 3)))) for k in ['ipv4/tcp', 'ipv4/icmp']])
    one('09_IP_ECN_IPv4', v4, 'ip_ecn', 3,
        [(k, frame(k, A), frame(k, dict(A, tos=A['tos'] | 3))) for k in ['ipv4/tcp', 'ipv4/udp']])
    one('11_IPV4_SRC', v4, 'ipv4_src', B['v4src'],
        [(k, frame(k, A), frame(k, dict(A, v4src=B['v4src']))) for k in ['ipv4/tcp', 'ipv4/udp', 'ipv4/icmp']])
    for n, l4k, f, key in (('13_TCP_SRC_IPv4', 'tcp', 'tcp_src', 'sport'),
                           ('14_TCP_DST_IPv4', 'tcp', 'tcp_dst', 'dport'),
                           ('15_UDP_SRC_IPv4', 'udp', 'udp_src', 'sport'),
                           ('16_UDP_DST_IPv4', 'udp', 'udp_dst', 'dport'),
                           ('17_SCTP_SRC_IPv4', 'sctp', 'sctp_src', 'sport'),
                           ('18_SCTP_DST_IPv4', 'sctp', 'sctp_dst', 'dport')):
        k = 'ipv4/' + l4k
        one(n, v4 + [oxm('ip_proto', PROTO[l4k])], f, B[key],
            [(k, frame(k, A), frame(k, dict(A, **{key: B[key]})))])
    one('19_ICMPV4_TYPE', v4 + [oxm('ip_proto', 1)], 'icmpv4_type', 0,
        [('ipv4/icmp', frame('ipv4/icmp', A), frame('ipv4/icmp', dict(A, itype=0)))])
    arp_m = [oxm('eth_type', ET['arp'])]
    one('21_ARP_OP', arp_m, 'arp_op', 2, [('arp', frame('arp', A), frame('arp', dict(A, op=2)))])
    one('23_ARP_TPA', arp_m, 'arp_tpa', B['v4dst'],
        [('arp', frame('arp', A), frame('arp', dict(A, tpa=B['v4dst'])))])
    one('25_ARP_THA', arp_m, 'arp_tha', B['edst'],
        [('arp', frame('arp', A), frame('arp', dict(A, tha=B['edst'])))])
    one('27_IPV6_DST', v6, 'ipv6_dst', B['v6dst'],
        [(k, frame(k, A), frame(k, dict(A, v6dst=B['v6dst']))) for k in ['ipv6/tcp', 'ipv6/udp', 'ipv6/echo6']])
    one('29_ICMPV6_TYPE', v6 + [oxm('ip_proto', 58)], 'icmpv6_type', 129,
        [('ipv6/echo6', frame('ipv6/echo6', A), frame('ipv6/echo6', dict(A, itype=129)))])
    nd = v6 + [oxm('ip_proto', 58)]
    one('31_IPV6_ND_TARGET', nd + [oxm('icmpv6_type', 135)], 'ipv6_nd_target', B['v6dst'],
        [('ipv6/ns', frame('ipv6/ns', A), frame('ipv6/ns', dict(A, target=B['v6dst'])))])
    one('33_IPV6_ND_TLL', nd + [oxm('icmpv6_type', 136)], 'ipv6_nd_tll', B['esrc'],
        [('ipv6/na', frame('ipv6/na', A), frame('ipv6/na', dict(A, tll=B['esrc'])))])
    one('35_MPLS_TC', [oxm('eth_type', ET['mpls'])], 'mpls_tc', B['exp'],
        [(k, frame(k, A, ('mpls',)), frame(k, dict(A, exp=B['exp']), ('mpls',))) for k in ['ipv4/tcp', 'ipv6/tcp']])
    one('37_PBB_ISID', [oxm('eth_type', ET['pbb'])], 'pbb_isid', B['isid'],
        [('ipv4/tcp', pbb_frame('ipv4/tcp', A, A['isid']), pbb_frame('ipv4/tcp', A, B['isid']))])
    return files


def group_mod(gid, gtype, buckets):
    """buckets: action lists, or dicts of OFPBucket fields (watch_port, watch_group, weight)."""
    return {"OFPGroupMod": {"group_id": gid, "type": gtype, "buckets": [
        {"OFPBucket": b if isinstance(b, dict) else {"actions": b}} for b in buckets]}}


def pipeline_set():
    """The pipeline the shared patterns hardly reach: the action set (written, replaced,
    cleared, run in the specification's order at the end), apply_actions in list order,
    table-miss in a later table, indirect groups (chained, from the action set), all, select
    with one bucket, fast failover."""
    k = 'ipv4/tcp'
    hit = frame(k, A)
    C = '66:66:66:66:66:66'
    out3 = [{"OFPActionOutput": {"port": 3}}]
    grp = lambda g: [{"OFPActionGroup": {"group_id": g}}]
    t = lambda desc, pre, egress: {"description": "%s-->%s" % (k, desc), "prerequisite": pre,
                                   "tests": [{"ingress": hit, "egress": egress}]}
    files = {}
    files['01_WRITE_ACTIONS'] = [
        t("'actions=write:set_field:eth_dst,output:2,goto_table:1','table_id:1,actions=apply:set_field:eth_src'",
          [flow_mod([], insts=insts(('write', [setf('eth_dst', B['edst'])] + OUT2), ('goto', 1))),
           flow_mod([], table=1, insts=insts(('apply', [setf('eth_src', B['esrc'])])))],
          frame(k, dict(A, edst=B['edst'], esrc=B['esrc']))),
        # the action set runs set-field before output, whatever order they were written in
        t("'actions=write:output:2,set_field:eth_dst'",
          [flow_mod([], insts=insts(('write', OUT2 + [setf('eth_dst', B['edst'])])))],
          frame(k, dict(A, edst=B['edst']))),
        # push-VLAN before set-field: the VID lands in the pushed tag
        t("'actions=write:set_field:vlan_vid=5,push_vlan,output:2'",
          [flow_mod([], insts=insts(('write', [setf('vlan_vid', 0x1000 | 5),
                                               {"OFPActionPushVlan": {"ethertype": 0x8100}}] + OUT2)))],
          frame(k, dict(A, vid=5, pcp=0), ('vlan',))),
        # one set-field per field in the action set: a later table's write replaces it
        t("'actions=write:set_field:eth_dst=C,goto_table:1','table_id:1,actions=write:set_field:eth_dst=B,output:2'",
          [flow_mod([], insts=insts(('write', [setf('eth_dst', C)]), ('goto', 1))),
           flow_mod([], table=1, insts=insts(('write', [setf('eth_dst', B['edst'])] + OUT2)))],
          frame(k, dict(A, edst=B['edst']))),
    ]
    files['02_CLEAR_ACTIONS'] = [
        t("'actions=write:output:3,goto_table:1','table_id:1,actions=clear,write:output:2'",
          [flow_mod([], insts=insts(('write', out3), ('goto', 1))),
           flow_mod([], table=1, insts=insts(('clear', []), ('write', OUT2)))],
          hit),
        t("'actions=write:set_field:eth_dst,goto_table:1','table_id:1,actions=clear,write:output:2'",
          [flow_mod([], insts=insts(('write', [setf('eth_dst', B['edst'])]), ('goto', 1))),
           flow_mod([], table=1, insts=insts(('clear', []), ('write', OUT2)))],
          hit),
    ]
    files['03_APPLY_ORDER'] = [
        # apply_actions runs in list order: the frame leaves before the rewrite
        t("'actions=apply:output:2,set_field:eth_dst'",
          [flow_mod([], insts=insts(('apply', OUT2 + [setf('eth_dst', B['edst'])])))], hit),
        t("'actions=apply:set_field:eth_dst,output:2'",
          [flow_mod([], insts=insts(('apply', [setf('eth_dst', B['edst'])] + OUT2)))],
          frame(k, dict(A, edst=B['edst']))),
    ]
    files['04_TABLE_MISS_LATER'] = [
        {"description": "%s-->'actions=goto_table:1','table_id:1,eth_dst=%s,actions=output:2'" % (k, B['edst']),
         "prerequisite": [flow_mod([], insts=insts(('goto', 1))),
                          flow_mod([oxm('eth_dst', B['edst'])], OUT2, 1)],
         "tests": [{"ingress": hit, "table-miss": [1]}]}]
    files['05_GROUP_INDIRECT'] = [
        t("'group:1=indirect(output:2)','actions=group:1'",
          [group_mod(1, 2, [OUT2]), flow_mod([], grp(1))], hit),
        t("'group:2=indirect(output:2)','group:1=indirect(set_field:eth_dst,group:2)','actions=group:1'",
          [group_mod(2, 2, [OUT2]), group_mod(1, 2, [[setf('eth_dst', B['edst'])] + grp(2)]),
           flow_mod([], grp(1))],
          frame(k, dict(A, edst=B['edst']))),
        # in the action set a group takes precedence over output
        t("'group:1=indirect(output:2)','actions=write:output:3,group:1'",
          [group_mod(1, 2, [OUT2]), flow_mod([], insts=insts(('write', out3 + grp(1))))], hit),
        t("'group:1=all(output:2)','actions=group:1'",
          [group_mod(1, 0, [OUT2]), flow_mod([], grp(1))], hit),
        t("'group:1=all(output:2/output:3)','actions=group:1'",
          [group_mod(1, 0, [OUT2, out3]), flow_mod([], grp(1))], hit),
        t("'group:1=select(weight=1,output:2)','actions=group:1'",
          [group_mod(1, 1, [{"weight": 1, "actions": OUT2}]), flow_mod([], grp(1))], hit),
    ]
    # fast failover: the first live bucket. Every port of the bed is up; a group with no
    # bucket is not live (1.3.5 section 6.5), so a bucket watching one is skipped.
    files['06_GROUP_FF'] = [
        t("'group:1=ff(watch_port=2:output:2/watch_port=3:output:3)','actions=group:1'",
          [group_mod(1, 3, [{"watch_port": 2, "actions": OUT2}, {"watch_port": 3, "actions": out3}]),
           flow_mod([], grp(1))], hit),
        t("'group:5=all()','group:1=ff(watch_group=5:output:3/watch_port=2:output:2)','actions=group:1'",
          [group_mod(5, 0, []),
           group_mod(1, 3, [{"watch_group": 5, "actions": out3}, {"watch_port": 2, "actions": OUT2}]),
           flow_mod([], grp(1))], hit),
    ]
    return files


def group_set():
    rnd_mac = ("ethernet(dst='22:22:22:%02x:%02x:%02x' % (randint(0, 255), randint(0, 255), "
               "randint(0, 255)), src='12:11:11:%02x:%02x:%02x' % (randint(0, 255), randint(0, 255), "
               "randint(0, 255)), ethertype=2048)")
    files = {}
    for name, w in (('01_SELECT_Ether', (1, 1)), ('01_SELECT_Weight_Ether', (1, 2))):
        tot = 2000
        files[name] = [{
            "description": "2Mbps(ethernet(src=random,dst=random)/ipv4/tcp)-->'in_port=1,"
                           "actions=group:select(weight=%d,output:2/weight=%d,output:3)'" % w,
            "prerequisite": [
                group_mod(0, 1, [{"weight": w[0], "actions": OUT2},
                                 {"weight": w[1], "actions": [{"OFPActionOutput": {"port": 3}}]}]),
                flow_mod([oxm('in_port', 1)], [{"OFPActionGroup": {"group_id": 0}}])],
            "tests": [{"ingress": {"packets": {"data": [
                rnd_mac, "ipv4(proto=6, src='192.168.10.10', dst='192.168.20.20')",
                "tcp(dst_port=2222, src_port=11111)", "bytes(b'\\x11' * (1500 - 54))"],
                "pktps": 175, "duration_time": 30}},
                "egress": {"throughput": [
                    {"OFPMatch": {"oxm_fields": [oxm('in_port', 2)]}, "kbps": tot * w[0] // sum(w)},
                    {"OFPMatch": {"oxm_fields": [oxm('in_port', 3)]}, "kbps": tot * w[1] // sum(w)}]}}]}]
    return files


def meter_set():
    files = {}
    pkt = ["ethernet(dst='22:22:22:22:22:22', src='12:11:11:11:11:11', ethertype=2048)",
           "ipv4(proto=6, tos=72)", "tcp()", "bytes(b'\\x11' * (1500 - 54))"]
    for rate in (100,):
        files['01_DROP_01_PKTPS_%d' % rate] = [{
            "description": "%dpktps(ethernet/ipv4/tcp)-->'in_port=1,actions=meter:%dpktps(drop),output:2'"
                           % (2 * rate, rate),
            "prerequisite": [
                {"OFPMeterMod": {"flags": 2, "meter_id": 1, "bands": [{"OFPMeterBandDrop": {"rate": rate}}]}},
                flow_mod([oxm('in_port', 1)], insts=insts(('meter', 1), ('apply', OUT2)))],
            "tests": [{"ingress": {"packets": {"data": pkt, "pktps": 2 * rate, "duration_time": 30}},
                       "egress": {"throughput": [{"OFPMatch": {"oxm_fields": [oxm('in_port', 2)]},
                                                  "pktps": rate}]}}]}]
        files['02_DSCP_REMARK_01_PKTPS_%d' % rate] = [{
            "description": "%dpktps(ethernet/ipv4(dscp=18)/tcp)-->'in_port=1,actions=meter:%dpktps"
                           "(dscp_remark:ip_dscp=20),output:2'" % (2 * rate, rate),
            "prerequisite": [
                {"OFPMeterMod": {"flags": 2, "meter_id": 1, "bands": [
                    {"OFPMeterBandDscpRemark": {"rate": rate, "prec_level": 1}}]}},
                flow_mod([oxm('in_port', 1)], insts=insts(('meter', 1), ('apply', OUT2)))],
            "tests": [{"ingress": {"packets": {"data": pkt, "pktps": 2 * rate, "duration_time": 30}},
                       "egress": {"throughput": [
                           {"OFPMatch": {"oxm_fields": [oxm('in_port', 2), oxm('eth_type', 2048),
                                                        oxm('ip_dscp', 20)]}, "pktps": rate},
                           {"OFPMatch": {"oxm_fields": [oxm('in_port', 2), oxm('eth_type', 2048),
                                                        oxm('ip_dscp', 18)]}, "pktps": rate}]}}]}]
    return files


def write(out, set_name, files, prefix=None):
    d = os.path.join(out, set_name)
    os.makedirs(d, exist_ok=True)
    for name, tests in files.items():
        head = "%s: %s" % (prefix or set_name, name)
        with open(os.path.join(d, name + '.json'), 'w') as f:
            json.dump([head] + tests, f, indent=1)


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: own_patterns.py OUTDIR")
    out = sys.argv[1]
    write(out, 'match', match_set())
    write(out, 'action', action_set())
    write(os.path.join(out, 'action'), '25_SET_FIELD', set_field_set(), 'action: set_field')
    write(out, 'group', group_set())
    write(out, 'pipeline', pipeline_set())
    write(out, 'meter', meter_set())


if __name__ == '__main__':
    main()
