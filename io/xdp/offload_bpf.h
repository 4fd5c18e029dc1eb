/*
 * io/xdp/offload_bpf.h: the layout of the offload table's maps, shared by the XDP program
 * (redirect_port.bpf.c) and the driver side (offload.c). Plain fixed-width types only, so
 * both compilers (clang -target bpf and the host's) lay the structs out the same way.
 *
 * An entry's key is the frame's parsed headers with every field its mask does not name set
 * to zero, plus the mask itself (`fields`) and the receiving ifindex; the program tries the
 * masks in use one by one (at most RF_OFL_MASKS), as a megaflow cache does.
 */
#ifndef RINGFLOW_IO_XDP_OFFLOAD_BPF_H
#define RINGFLOW_IO_XDP_OFFLOAD_BPF_H

#define RF_OFL_ENTRIES 1024 /* = RF_OFFLOAD_MAX_ENTRIES */
#define RF_OFL_MASKS 8      /* = RF_OFFLOAD_MAX_MASKS */
#define RF_OFL_ACTS 8       /* = RF_OFFLOAD_MAX_ACTIONS */
#define RF_OFL_PORTS 64
/* The microflow cache's slots per CPU: at most RF_OFL_CACHE_SLOTS (2048 sets of two ways), and
 * fewer on a host with many possible CPUs, so that one port's cache stays within
 * RF_OFL_CACHE_BYTES in all (the driver sizes the map before loading; see rf_ofl_genv). */
#define RF_OFL_CACHE_SLOTS 4096
#define RF_OFL_CACHE_MIN_SLOTS 256
#define RF_OFL_CACHE_BYTES (16u << 20)

/* Field bits: as RF_OFFLOAD_F_* in ringflow/offload.h. */
#define RF_OFL_F_ETH_DST 0x001
#define RF_OFL_F_ETH_SRC 0x002
#define RF_OFL_F_VLAN 0x004
#define RF_OFL_F_ETH_TYPE 0x008
#define RF_OFL_F_IP4_SRC 0x010
#define RF_OFL_F_IP4_DST 0x020
#define RF_OFL_F_IP6_SRC 0x040
#define RF_OFL_F_IP6_DST 0x080
#define RF_OFL_F_IP_PROTO 0x100
#define RF_OFL_F_L4_SRC 0x200
#define RF_OFL_F_L4_DST 0x400
#define RF_OFL_F_UNTAGGED 0x800 /* no value: the frame has no tag */
#define RF_OFL_F_CTAG 0x1000    /* no value: its tag is 802.1Q */
#define RF_OFL_F_WHOLE 0x2000   /* no value: every header a strict parser reads is there */
/* In rf_ofl_masks only: the slot is in use (a mask of no fields matches every frame). */
#define RF_OFL_MASK_USED 0x80000000u

/* Action types: as RF_OFFLOAD_* in ringflow/offload.h. */
#define RF_OFL_A_OUTPUT 1
#define RF_OFL_A_DROP 2
#define RF_OFL_A_SET_ETH_SRC 3
#define RF_OFL_A_SET_ETH_DST 4
#define RF_OFL_A_PUSH_VLAN 5
#define RF_OFL_A_POP_VLAN 6
#define RF_OFL_A_DEC_TTL 7

struct rf_ofl_key {
	__u32 fields;     /* the mask: RF_OFL_F_* bits this entry matches on */
	__u32 in_ifindex;
	__u8 eth_dst[6], eth_src[6];
	__u16 vlan;       /* VID, host order (untagged: not matchable) */
	__u16 eth_type;   /* network order; the inner type of a tagged frame */
	__u8 ip_proto, pad[3];
	__u8 ip_src[16], ip_dst[16]; /* IPv4: first 4 bytes, network order */
	__u16 l4_src, l4_dst;        /* network order (TCP, UDP) */
};

struct rf_ofl_act {
	__u8 type;        /* RF_OFL_A_* */
	__u8 pad;
	__u16 tci;        /* PUSH_VLAN: network order */
	__u32 ifindex;    /* OUTPUT */
	__u8 mac[6];      /* SET_ETH_* */
	__u8 pad2[2];
};

struct rf_ofl_val {
	__u32 slot;       /* index of this entry's counters in rf_ofl_stats */
	__u32 n;          /* actions; the last one is OUTPUT or DROP */
	struct rf_ofl_act a[RF_OFL_ACTS];
};

/* rf_ofl_pw's one value: the port-wide fast path. While `on`, every frame of the port takes
 * entry v (the port's port-wide entry, which names no field, sits in the first mask slot in
 * use and has no DEC_TTL: the first mask with a matching entry wins, and it matches every
 * frame), so the program runs v without parsing the frame or hashing a key. With `whole`,
 * the entry names WHOLE alone and matches every whole frame: the program parses the frame to
 * know that, and still hashes no key. */
struct rf_ofl_pw {
	__u32 on, whole;
	struct rf_ofl_val v;
};

/* One slot of rf_ofl_cache, the per-CPU microflow cache in front of the table: the answer
 * the mask walk gave for a frame's whole key (every parsed field, `fields` = the frame's
 * present bits, plus RF_OFL_CACHE_CUT for a cut IP header), a copy of the entry's value, and
 * the table generation (rf_ofl_gen) it was found under. A slot answers only while its
 * generation is the current one: the driver bumps rf_ofl_gen after every change of an entry
 * (a mask alone changes no answer), so no cached answer outlives a change. gen 0: empty (the
 * count starts at 1). */
#define RF_OFL_CACHE_CUT 0x40000000u
struct rf_ofl_cached {
	__u64 gen;
	struct rf_ofl_key key;
	struct rf_ofl_val v;
};

/* rf_ofl_gen's one value: the table's generation (moved on by the driver after every change of
 * an entry) and the cache's set mask (sets - 1, a power of two minus one, written by the driver
 * before the first entry). */
struct rf_ofl_genv {
	__u64 gen;
	__u32 set_mask;
	__u32 pad;
};

/* rf_ofl_masks' one value: RF_OFL_MASK_USED | RF_OFL_F_* bits per slot; 0 = slot unused. */
struct rf_ofl_masks {
	__u32 m[RF_OFL_MASKS];
};

struct rf_ofl_ctr {
	__u64 hits, bytes;
};

/* rf_ofl_misc (per-CPU array) indices: matched frames the program left to userspace, and
 * how the frames that reached the table lookup were answered. */
#define RF_OFL_MISC_PORT_DOWN 0 /* the output port is not in rf_ofl_ports (down, removed) */
#define RF_OFL_MISC_TTL 1       /* TTL / hop limit would expire */
#define RF_OFL_MISC_CACHE_HIT 2 /* answered from the microflow cache */
#define RF_OFL_MISC_WALK 3      /* walked the masks (an entry found or not) */
#define RF_OFL_MISC_N 4

#endif /* RINGFLOW_IO_XDP_OFFLOAD_BPF_H */
