/*
 * apps/openflow/of/of_group.h: the OpenFlow 1.3 group messages (of_group.c): GROUP_MOD, and
 * the GROUP, GROUP_DESC and GROUP_FEATURES multiparts. Library `ringflow_of`, beside of.h
 * (the same rules: lengths checked against the bytes received, explicit big-endian loads,
 * a malformed message is answered with the ERROR the spec names and the connection goes on).
 *
 * Wire layouts (OpenFlow 1.3.5 section 7.3.4.2 and 7.3.5.9-11):
 *   GROUP_MOD       header, command (2), type (1), pad (1), group_id (4)      = 16, buckets
 *   bucket          len (2), weight (2), watch_port (4), watch_group (4),
 *                   pad (4)                                                   = 16, actions
 *   multipart       header, type (2), flags (2), pad (4)                      = 16, body
 *     GROUP request   group_id (4), pad (4)
 *     GROUP reply     length (2), pad (2), group_id (4), ref_count (4), pad (4),
 *                     packet_count (8), byte_count (8), duration (4 + 4)       = 40,
 *                     per bucket packet_count (8), byte_count (8)
 *     GROUP_DESC      length (2), type (1), pad (1), group_id (4)              = 8, buckets
 *     GROUP_FEATURES  types (4), capabilities (4), max_groups[4], actions[4]   = 40
 */
#ifndef RINGFLOW_OF_GROUP_H
#define RINGFLOW_OF_GROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "of.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OF13_GROUP_MOD 15
#define OFPGC_ADD 0
#define OFPGC_MODIFY 1
#define OFPGC_DELETE 2
#define OFPGT_ALL 0
#define OFPGT_SELECT 1
#define OFPGT_INDIRECT 2
#define OFPGT_FF 3
#define OFPG_MAX 0xffffff00u
#define OFPG_ALL 0xfffffffcu /* OFPG_ANY is in of.h */
#define OFPMP13_GROUP 6
#define OFPMP13_GROUP_DESC 7
#define OFPMP13_GROUP_FEATURES 8
#define OFPGFC_SELECT_WEIGHT 1u
#define OFPGFC_SELECT_LIVENESS 2u
#define OFPGFC_CHAINING 4u
#define OFPGFC_CHAINING_CHECKS 8u
#define OFPAT_GROUP 22
#define OFPBAC_BAD_OUT_GROUP 9
#define OFPET_GROUP_MOD_FAILED 6
#define OFPGMFC_GROUP_EXISTS 0
#define OFPGMFC_INVALID_GROUP 1
#define OFPGMFC_WEIGHT_UNSUPPORTED 2
#define OFPGMFC_OUT_OF_GROUPS 3
#define OFPGMFC_OUT_OF_BUCKETS 4
#define OFPGMFC_CHAINING_UNSUPPORTED 5
#define OFPGMFC_WATCH_UNSUPPORTED 6
#define OFPGMFC_LOOP 7
#define OFPGMFC_UNKNOWN_GROUP 8
#define OFPGMFC_CHAINED_GROUP 9
#define OFPGMFC_BAD_TYPE 10
#define OFPGMFC_BAD_COMMAND 11
#define OFPGMFC_BAD_BUCKET 12
#define OFPGMFC_BAD_WATCH 13
#define OFPGMFC_EPERM 14
#define OFPRR_GROUP_DELETE 3 /* FLOW_REMOVED reason */

#define OF_MAX_BUCKETS 32 /* buckets a GROUP_MOD may carry here (more: OUT_OF_BUCKETS) */

struct of_bucket {
	uint16_t weight;
	uint32_t watch_port, watch_group;
	struct of_actions actions; /* as of_parse keeps an action list (n_skipped: refuse) */
};

struct of_group_mod {
	uint32_t xid;
	uint16_t command;  /* OFPGC_* (others parse; the switch answers BAD_COMMAND) */
	uint8_t type;      /* OFPGT_* (others parse; BAD_TYPE) */
	uint32_t group_id;
	uint16_t nbuckets;
	struct of_bucket buckets[OF_MAX_BUCKETS];
};

/* Parses one framed 1.3 GROUP_MOD (len bytes). 0 with *m filled, or -EBADMSG with *f
 * (BAD_REQUEST/BAD_LEN for a message shorter than 16 bytes; GROUP_MOD_FAILED/BAD_BUCKET for
 * a bucket whose length is under 16, not a multiple of 8 or past the message;
 * OUT_OF_BUCKETS past OF_MAX_BUCKETS; an action list's own fault). -ENOENT when it is not
 * a 1.3 GROUP_MOD. Reads nothing past buf+len. */
int of_group_mod_parse(const uint8_t *buf, size_t len, struct of_group_mod *m,
		       struct of_fault *f);
/* Serializes *m as a 1.3 GROUP_MOD: its length, -ENOBUFS, or -EINVAL (an action list that
 * has no 1.3 form). */
ssize_t of_group_mod_build(const struct of_group_mod *m, uint8_t *buf, size_t cap);

/* A 1.3 multipart request of a group kind: 0 with *mp_type (OFPMP13_GROUP/_DESC/_FEATURES)
 * and *group_id (GROUP only, else OFPG_ALL) set; -EBADMSG with *f (BAD_LEN) when its body
 * has the wrong length; -ENOENT for other messages and kinds. */
int of_group_mp_parse(const uint8_t *buf, size_t len, uint16_t *mp_type, uint32_t *group_id,
		      struct of_fault *f);

/* Replies are written as one multipart header (of_group_mp_begin: 16 bytes at buf) then
 * entries appended behind it (each *_put returns the bytes written, or -ENOBUFS when cap
 * is too small: send what is there with the MORE flag and begin again), then
 * of_group_mp_end with the total length. */
void of_group_mp_begin(uint8_t *buf, uint32_t xid, uint16_t mp_type);
void of_group_mp_end(uint8_t *buf, size_t len, bool more);

struct of_group_stats {
	uint32_t group_id, ref_count;
	uint64_t packet_count, byte_count;
	uint32_t duration_sec, duration_nsec;
	uint16_t nbuckets;
	const uint64_t *bucket_pkts, *bucket_bytes; /* [nbuckets] */
};
ssize_t of_group_stats_put(uint8_t *p, size_t cap, const struct of_group_stats *s);

struct of_group_desc {
	uint8_t type;
	uint32_t group_id;
	uint16_t nbuckets;
	const struct of_bucket *buckets;
};
ssize_t of_group_desc_put(uint8_t *p, size_t cap, const struct of_group_desc *d);

struct of_group_features {
	uint32_t types, capabilities; /* bit t = group type t; OFPGFC_* */
	uint32_t max_groups[4], actions[4]; /* per type; actions: bit a = OFPAT_* a */
};
ssize_t of_group_features_put(uint8_t *p, size_t cap, const struct of_group_features *g);

#ifdef __cplusplus
}
#endif

#endif
