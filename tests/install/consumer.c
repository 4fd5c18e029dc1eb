/* A program that uses only the installed ringflow: one ring round trip, and the driver
 * registry (which pulls in every driver this build has, so a static link needs their libraries). */
#include <stdint.h>
#include <stdio.h>

#include <ringflow/io.h>
#include <ringflow/ring.h>

int main(void)
{
	struct rf_ring *r = rf_ring_create("consumer", 8, RF_RING_SP_ENQ | RF_RING_SC_DEQ);
	if (!r)
		return 1;
	void *in = (void *)(uintptr_t)42, *out = NULL;
	if (rf_ring_enqueue(r, in) != 0 || rf_ring_dequeue(r, &out) != 0 || out != in)
		return 1;
	rf_ring_free(r);
	char drivers[1024];
	rf_io_describe(drivers, sizeof(drivers));
	printf("installed ringflow works; drivers %s\n", drivers);
	return 0;
}
