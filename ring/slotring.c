/*
 * ring/slotring.c: creating and freeing slot rings (ringflow/slotring.h). The fast path is
 * inline in the header; this file only sizes and zeroes the memory: a zero sequence word
 * means "never filled", which no index of the first lap matches.
 */
#include <ringflow/slotring.h>

#include <stdlib.h>
#include <string.h>

struct rf_slotring *rf_slotring_create(unsigned count)
{
	if (count < 2 || count > (1u << 30) || !rf_is_power_of_2(count)) {
		errno = EINVAL;
		return NULL;
	}
	size_t sz = sizeof(struct rf_slotring) + (size_t)count * sizeof(struct rf_slotring_slot);
	sz = (sz + RF_SLOTRING_ALIGN - 1) & ~(size_t)(RF_SLOTRING_ALIGN - 1);
	struct rf_slotring *r = aligned_alloc(RF_SLOTRING_ALIGN, sz);
	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	memset(r, 0, sz);
	r->size = count;
	r->mask = count - 1;
	return r;
}

void rf_slotring_free(struct rf_slotring *r)
{
	free(r);
}
