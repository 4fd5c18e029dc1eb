/*
 * apps/openflow/of/of_session.h: the controller side of one switch connection, as a state
 * machine over bytes (no sockets, no threads), part of `ringflow_of`.
 *
 * The one idea: everything the spec and OVS require before and around the app's messages is
 * done here once, so an app only ever sees PACKET_IN, PORT_STATUS, FLOW_REMOVED, replies...
 *   start           -> our HELLO (version bitmap of what we speak)
 *   peer HELLO      -> negotiate; none in common: ERROR HELLO_FAILED, close;
 *                      else FEATURES_REQUEST
 *   FEATURES_REPLY  -> datapath id known, session UP; connect-time setup sent in order:
 *                      FLOW_MOD delete-all (flows survive a reconnect in OVS), 1.3 table-miss
 *                      entry (without it OVS 1.3 sends no PACKET_IN at all), SET_CONFIG
 *                      miss_send_len=NO_BUFFER (whole frames), 1.3 PORT_DESC request, BARRIER
 *   ECHO_REQUEST    -> ECHO_REPLY (same xid and data), any time
 *   malformed       -> the ERROR of_parse names; closed when the fault says so
 *   first message not a HELLO -> ERROR HELLO_FAILED, close
 * Everything else is handed to the app callback, in stream order.
 *
 * Errors: of_session_input returns bytes consumed; replies go to the caller's out buffer (if
 * it fills up, *close is set: a peer that does not read is closed, never buffered without
 * bound). Thread-safety: one session is used by one thread at a time.
 */
#ifndef RINGFLOW_OF_SESSION_H
#define RINGFLOW_OF_SESSION_H

#include "of.h"

enum of_session_state {
	OF_SESSION_HELLO_WAIT,    /* our HELLO sent, waiting for theirs */
	OF_SESSION_FEATURES_WAIT, /* version agreed, FEATURES_REQUEST sent */
	OF_SESSION_UP,            /* datapath id known, setup sent: app traffic flows */
	OF_SESSION_CLOSED,        /* must be closed (after sending what is in out) */
};

struct of_session {
	enum of_session_state state;
	uint32_t versions;   /* bitmap we offer (OF_VERSIONS_SUPPORTED or a subset) */
	struct of_framer framer; /* version 0 until negotiated */
	uint64_t datapath_id;
	uint32_t n_buffers;
	uint8_t n_tables;
	uint32_t next_xid;   /* xids of the messages the session sends */
	uint64_t rx_msgs, errors_sent;
	bool keep_flows; /* set after of_session_start: setup leaves the flow table as it is
			  * (a cluster member must not wipe what the switch's master installed) */
};

/* Bytes the caller's output buffer gets: a cursor it drains to the socket. */
struct of_out {
	uint8_t *p;
	size_t cap, len;
};

/* Called for every message the session does not handle itself: m parsed, raw[0..raw_len)
 * its bytes (m's pointers point into raw, which is the caller's input). The callback may
 * append replies to out with of_session_send(). It returns false to push back (no room for
 * the message downstream): of_session_input then stops before this message, which is
 * offered again on the next call. */
typedef bool (*of_session_cb)(void *arg, struct of_session *s, const struct of_msg *m,
			      const uint8_t *raw, size_t raw_len, struct of_out *out);

/* Initialises a session offering `versions` (0: OF_VERSIONS_SUPPORTED; bits we do not speak
 * are dropped), frames up to max_len bytes (0: 65535) and writes our HELLO to out. Returns 0,
 * -EINVAL (no version left) or -ENOBUFS. */
int of_session_start(struct of_session *s, uint32_t versions, uint32_t max_len,
		     struct of_out *out);

/* Consumes the complete messages at the front of buf[0..n), handling the handshake, echo
 * and faults, calling cb for the rest. Returns the bytes consumed (a partial message at the
 * end is left for the next call); *close becomes true when the connection must be closed
 * once out is sent. */
size_t of_session_input(struct of_session *s, const uint8_t *buf, size_t n, of_session_cb cb,
			void *arg, struct of_out *out, bool *close);

/* Serializes m (its version is set to the session's) into out. Returns 0 or -ENOBUFS/-EINVAL. */
int of_session_send(struct of_session *s, struct of_msg *m, struct of_out *out);

/* Next xid for a message the app sends. */
static inline uint32_t of_session_xid(struct of_session *s)
{
	return s->next_xid++;
}

#endif /* RINGFLOW_OF_SESSION_H */
