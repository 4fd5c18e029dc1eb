/*
 * apps/openflow/of/of_meter.h: OpenFlow 1.3 meters on the wire (of_meter.c): METER_MOD, the
 * multipart kinds METER (stats), METER_CONFIG and METER_FEATURES, and the METER instruction's
 * numbers (its parse is a hunk of of_instructions_parse; struct of_actions carries meter_id).
 *
 * Same rules as of.h: bytes from the wire are hostile, every length is checked against the
 * bytes received before anything behind it is read, a length that does not add up is
 * BAD_REQUEST/BAD_LEN (the connection goes on). Values (a rate of 0, an unknown band type,
 * both KBPS and PKTPS) parse; the switch judges them and answers METER_MOD_FAILED/... .
 * Wire layouts (OpenFlow 1.3.5 A.3.4.4, A.3.5.12-14):
 *   METER_MOD          header, command (2), flags (2), meter_id (4), bands         >= 16
 *   band               type (2), len (2), rate (4), burst_size (4), then
 *                        drop: pad (4); dscp_remark: prec_level (1), pad (3);
 *                        experimenter: experimenter id (4) [+ data]                >= 16
 *   METER / CONFIG req multipart header (16), meter_id (4), pad (4)                = 24
 *   FEATURES request   multipart header alone                                       = 16
 *   METER stats item   meter_id (4), len (2), pad (6), flow_count (4),
 *                      packet_in_count (8), byte_in_count (8), duration_sec (4),
 *                      duration_nsec (4), per band: packets (8), bytes (8)      40 + 16 n
 *   CONFIG item        len (2), flags (2), meter_id (4), bands                   8 + 16 n
 *   FEATURES reply     max_meter (4), band_types (4), capabilities (4),
 *                      max_bands (1), max_color (1), pad (2)                        = 16
 * Errors: 0 / length on success, -EBADMSG with a struct of_fault, -ENOENT ("not a meter
 * message": hand it to of_xparse / of_parse), -ENOBUFS. Reentrant, no global state.
 */
#ifndef RINGFLOW_OF_METER_H
#define RINGFLOW_OF_METER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "of.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OF13_METER_MOD 29
#define OFPIT_METER 6
#define OFPMP13_METER 9
#define OFPMP13_METER_CONFIG 10
#define OFPMP13_METER_FEATURES 11

enum { OFPMC_ADD = 0, OFPMC_MODIFY = 1, OFPMC_DELETE = 2 };
#define OFPMF_KBPS 0x1
#define OFPMF_PKTPS 0x2
#define OFPMF_BURST 0x4
#define OFPMF_STATS 0x8
#define OFPMBT_DROP 1
#define OFPMBT_DSCP_REMARK 2
#define OFPMBT_EXPERIMENTER 0xffff
#define OFPM_MAX 0xffff0000u
#define OFPM_SLOWPATH 0xfffffffdu
#define OFPM_CONTROLLER 0xfffffffeu
#define OFPM_ALL 0xffffffffu

#define OFPET_METER_MOD_FAILED 12
enum {
	OFPMMFC_UNKNOWN = 0, OFPMMFC_METER_EXISTS = 1, OFPMMFC_INVALID_METER = 2,
	OFPMMFC_UNKNOWN_METER = 3, OFPMMFC_BAD_COMMAND = 4, OFPMMFC_BAD_FLAGS = 5,
	OFPMMFC_BAD_RATE = 6, OFPMMFC_BAD_BURST = 7, OFPMMFC_BAD_BAND = 8,
	OFPMMFC_BAD_BAND_VALUE = 9, OFPMMFC_OUT_OF_METERS = 10, OFPMMFC_OUT_OF_BANDS = 11,
};

#define OF_METER_MAX_BANDS 16 /* bands kept per message; more are counted in nbands_wire */
#define OF_METER_BAND_LEN 16

struct of_meter_band {
	uint16_t type;      /* OFPMBT_* (any value parses) */
	uint8_t prec_level; /* DSCP_REMARK */
	uint32_t rate, burst;
	uint32_t experimenter; /* EXPERIMENTER */
};

/* A meter's configuration: METER_MOD's body (with command) and a METER_CONFIG item. */
struct of_meter_config {
	uint16_t command; /* METER_MOD only: OFPMC_* (any value parses) */
	uint16_t flags;
	uint32_t meter_id;
	uint16_t nbands;      /* in band[] (<= OF_METER_MAX_BANDS) */
	uint16_t nbands_wire; /* on the wire: more than nbands means some were not kept */
	struct of_meter_band band[OF_METER_MAX_BANDS];
};

/* A METER stats item. */
struct of_meter_stats {
	uint32_t meter_id, flow_count;
	uint64_t packet_in_count, byte_in_count;
	uint32_t duration_sec, duration_nsec;
	uint16_t nbands;
	struct { uint64_t packets, bytes; } band[OF_METER_MAX_BANDS];
};

struct of_meter_features {
	uint32_t max_meter, band_types, capabilities;
	uint8_t max_bands, max_color;
};

enum of_mtype {
	OF_M_METER_MOD, OF_M_STATS_REQUEST, OF_M_CONFIG_REQUEST, OF_M_FEATURES_REQUEST,
	OF_M_STATS_REPLY, OF_M_CONFIG_REPLY, OF_M_FEATURES_REPLY,
};

struct of_mmsg {
	enum of_mtype type;
	uint32_t xid;
	uint16_t mp_flags;
	union {
		struct of_meter_config mod;    /* METER_MOD */
		uint32_t meter_id;             /* STATS / CONFIG request (OFPM_ALL: every one) */
		struct of_meter_features features; /* FEATURES reply */
		struct { const uint8_t *raw; uint32_t raw_len; } items; /* STATS / CONFIG reply body,
							   validated: read with of_meter_*_next */
	} u;
};

/* Parses one framed 1.3 message if it is METER_MOD or a meter multipart (request or reply):
 * 0 with *m filled, -EBADMSG with *f filled, -ENOENT when it is none of them. Reads nothing
 * past buf+len. */
int of_mparse(const uint8_t *buf, size_t len, struct of_mmsg *m, struct of_fault *f);

/* Iterate a parsed STATS / CONFIG reply body: *cursor starts at 0; 1 with *out filled, 0 at
 * the end. Bands past OF_METER_MAX_BANDS are skipped. */
int of_meter_stats_next(const struct of_mmsg *m, unsigned *cursor, struct of_meter_stats *out);
int of_meter_config_next(const struct of_mmsg *m, unsigned *cursor, struct of_meter_config *out);

/* Builders, 1.3. Each returns the message length, -ENOBUFS, or -EINVAL (a band count or
 * item too large for one message). */
ssize_t of_build_meter_mod(uint8_t *buf, size_t cap, uint32_t xid, const struct of_meter_config *c);
/* kind: OFPMP13_METER or OFPMP13_METER_CONFIG (meter_id) or OFPMP13_METER_FEATURES. */
ssize_t of_build_meter_request(uint8_t *buf, size_t cap, uint32_t xid, uint16_t kind,
			       uint32_t meter_id);
ssize_t of_build_meter_stats_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				   const struct of_meter_stats *items, unsigned n);
ssize_t of_build_meter_config_reply(uint8_t *buf, size_t cap, uint32_t xid, uint16_t flags,
				    const struct of_meter_config *items, unsigned n);
ssize_t of_build_meter_features_reply(uint8_t *buf, size_t cap, uint32_t xid,
				      const struct of_meter_features *ft);
/* Wire bytes of one STATS / CONFIG item (to fill a reply up to a message's length). */
size_t of_meter_stats_len(const struct of_meter_stats *s);
size_t of_meter_config_len(const struct of_meter_config *c);

#ifdef __cplusplus
}
#endif

#endif
