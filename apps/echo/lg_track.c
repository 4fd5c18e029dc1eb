/*
 * apps/echo/lg_track.c: allocation of the reply tracker (the fast path is inline in lg_track.h).
 */
#include "lg_track.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int rf_lg_track_init(struct rf_lg_track *t, uint64_t capacity)
{
	memset(t, 0, sizeof(*t));
	size_t words = (size_t)((capacity + 63) / 64);
	t->bits = calloc(words ? words : 1, sizeof(uint64_t));
	if (!t->bits)
		return -ENOMEM;
	t->capacity = capacity;
	return 0;
}

void rf_lg_track_reset(struct rf_lg_track *t)
{
	memset(t->bits, 0, (size_t)((t->capacity + 63) / 64) * sizeof(uint64_t));
	t->received = t->duplicates = t->reordered = t->out_of_range = 0;
	t->next_expected = 0;
}

void rf_lg_track_free(struct rf_lg_track *t)
{
	free(t->bits);
	t->bits = NULL;
	t->capacity = 0;
}
