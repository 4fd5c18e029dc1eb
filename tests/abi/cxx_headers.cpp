/*
 * tests/abi/cxx_headers.cpp: every public header compiles as C++17 (check_cxx.sh runs g++
 * and clang++ with -Wall -Wextra -Werror over this file), and, built into test_abi_cxx_layout
 * beside layout_c.c, the structs with atomic members have the same size and alignment in C++
 * as in C. A C++ app links the C library, so one layout must serve both.
 */
#include <ringflow/common.h>
#include <ringflow/ctl.h>
#include <ringflow/hash.h>
#include <ringflow/io.h>
#include <ringflow/io_driver.h>
#include <ringflow/json.h>
#include <ringflow/lflist.h>
#include <ringflow/log.h>
#include <ringflow/mempool.h>
#include <ringflow/pktbuf.h>
#include <ringflow/qsbr.h>
#include <ringflow/ring.h>
#include <ringflow/runtime.h>
#include <ringflow/slotring.h>
#include <ringflow/stats.h>

#include <cstdio>
#include <cstring>

#include "layout.h"

/* An out-of-tree driver written in C++17 (no designated initializers: RF_IO_OPS_ABI is for C
 * and C++20) sets the two ABI members by name. */
[[maybe_unused]] static struct rf_io_ops cxx_driver_ops()
{
	struct rf_io_ops o{};
	o.abi_version = RF_IO_OPS_VERSION;
	o.size = sizeof(o);
	o.name = "cxx";
	return o;
}

#ifndef RF_ABI_SYNTAX_ONLY
int main()
{
	struct rf_abi_layout c[RF_ABI_NTYPES], cxx[RF_ABI_NTYPES];
	unsigned i = 0;
#define ONE(t) cxx[i++] = rf_abi_layout{#t, sizeof(struct t), alignof(struct t)};
	RF_ABI_TYPES(ONE)
#undef ONE
	rf_abi_layout_c(c);
	int bad = 0;
	for (i = 0; i < RF_ABI_NTYPES; i++) {
		if (std::strcmp(c[i].name, cxx[i].name) != 0 || c[i].size != cxx[i].size ||
		    c[i].align != cxx[i].align) {
			std::printf("abi_cxx_layout: struct %s: C %zu bytes align %zu, C++ %zu bytes "
				    "align %zu\n", c[i].name, c[i].size, c[i].align, cxx[i].size,
				    cxx[i].align);
			bad = 1;
		}
	}
	if (!bad)
		std::printf("abi_cxx_layout: %u structs, same size and alignment in C and C++\n",
			    (unsigned)RF_ABI_NTYPES);
	return bad;
}
#endif
