/*
 * tests/fuzz/fuzz_net_frame.c: libFuzzer target for the raw drivers' frame parser
 * (io/net/net.c). Any byte string is a frame; the parser must never read beyond it (ASan)
 * and, when it accepts UDP, the payload it reports must lie inside the frame.
 * Build: cmake -DRF_BUILD_FUZZ=ON -DCMAKE_C_COMPILER=clang; run: build/tests/fuzz/fuzz_net_frame
 */
#include <stdlib.h>
#include <string.h>

#include "io/net/net.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t mac[6] = {2, 0, 0, 0, 0, 2};
	struct rf_net_ctx ctx;
	struct rf_net_rx_info in;
	uint8_t *f = malloc(size ? size : 1); /* exactly size bytes: ASan sees any overrun */

	if (!f)
		return 0;
	memcpy(f, data, size);
	rf_net_init(&ctx, mac, 0x0200000a /* 10.0.0.2 */, 0);
	if (rf_net_rx(&ctx, f, size, &in) == RF_NET_UDP &&
	    (size_t)in.payload_off + in.payload_len > size)
		abort();
	free(f);
	return 0;
}
