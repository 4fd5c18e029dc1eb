/*
 * tests/fuzz/fuzz_lg_sink.c: libFuzzer target for what the load generator's code reads off the
 * wire: the stream sink (apps/echo/lg_sink.c: any bytes as a received message, with and without
 * payload checks), the reply parser rf_lg_msg_read (lg_msg.h) at the size the bytes claim, and
 * the checksum. The sink must count, answer or drop every input without reading past it.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <ringflow/pktbuf.h>

#include "lg_msg.h"
#include "lg_sink.h"

static struct rf_pktbuf_pool *pool;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pool)
		pool = rf_pktbuf_pool_create("fz", 64, 2048, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	if (!pool || size > 2048)
		return 0;
	static struct rf_lg_sink s[2] = {{.check = false}, {.check = true}};
	for (int k = 0; k < 2; k++) {
		struct rf_pktbuf *b[1], *out[1];
		b[0] = rf_pktbuf_alloc(pool);
		if (!b[0])
			return 0;
		memcpy(rf_pktbuf_data(b[0]), data, size);
		b[0]->data_len = (uint32_t)size;
		b[0]->flags = 0;
		unsigned n = rf_lg_sink_take(&s[k], b, 1, out);
		if (n > 1)
			__builtin_trap();
		if (n == 1) {
			if (out[0]->data_len != sizeof(struct rf_lg_sink_report))
				__builtin_trap();
			rf_pktbuf_free(out[0]);
		}
	}
	struct rf_lg_hdr h;
	if (size >= RF_LG_HDR_SIZE && size <= RF_LG_MAX_SIZE)
		(void)rf_lg_msg_read(data, (unsigned)size, (unsigned)size, &h);
	(void)rf_lg_csum(data, (unsigned)size);
	if (rf_pktbuf_pool_avail(pool) != 64)
		__builtin_trap(); /* a buffer leaked or was freed twice */
	return 0;
}
