/* tests/abi/layout_c.c: the C side of the layout comparison (layout.h). */
#include <ringflow/ctl.h>
#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/io_driver.h>
#include <ringflow/json.h>
#include <ringflow/lflist.h>
#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>
#include <ringflow/slotring.h>
#include <ringflow/stats.h>

#include "layout.h"

void rf_abi_layout_c(struct rf_abi_layout *out)
{
	unsigned i = 0;
#define ONE(t) out[i++] = (struct rf_abi_layout){#t, sizeof(struct t), alignof(struct t)};
	RF_ABI_TYPES(ONE)
#undef ONE
}
