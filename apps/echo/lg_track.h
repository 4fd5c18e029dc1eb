/*
 * apps/echo/lg_track.h: accounting of the replies of one measured window by sequence number.
 *
 * A bitmap with one bit per message the window can send (the schedule's count, plus slack)
 * tells a first reply from a duplicate; the highest sequence number seen so far tells an
 * in-order reply from a reordered one (a reply is "reordered" when a later-sent message's reply
 * came before it). Loss is what is sent and never seen. One thread (the receiver) updates it.
 */
#ifndef RINGFLOW_APPS_ECHO_LG_TRACK_H
#define RINGFLOW_APPS_ECHO_LG_TRACK_H

#include <stdbool.h>
#include <stdint.h>

struct rf_lg_track {
	uint64_t *bits;
	uint64_t capacity;   /* sequence numbers 0 .. capacity-1 are tracked */
	uint64_t received;   /* distinct sequence numbers seen */
	uint64_t duplicates;
	uint64_t reordered;
	uint64_t out_of_range; /* seq >= capacity: never sent by this window */
	uint64_t next_expected; /* 1 + highest seq seen (0 before the first) */
};

/* Allocates a tracker for `capacity` sequence numbers. Returns 0 or -ENOMEM. */
int rf_lg_track_init(struct rf_lg_track *t, uint64_t capacity);

/* Clears all counts and bits (keeps the allocation). */
void rf_lg_track_reset(struct rf_lg_track *t);

/* Accounts one reply. Returns true when it is a first reply (the caller then records its RTT). */
static inline bool rf_lg_track_reply(struct rf_lg_track *t, uint64_t seq)
{
	if (seq >= t->capacity) {
		t->out_of_range++;
		return false;
	}
	uint64_t mask = (uint64_t)1 << (seq % 64);
	uint64_t *w = &t->bits[seq / 64];
	if (*w & mask) {
		t->duplicates++;
		return false;
	}
	*w |= mask;
	t->received++;
	if (seq + 1 < t->next_expected)
		t->reordered++;
	else
		t->next_expected = seq + 1;
	return true;
}

void rf_lg_track_free(struct rf_lg_track *t);

#endif /* RINGFLOW_APPS_ECHO_LG_TRACK_H */
