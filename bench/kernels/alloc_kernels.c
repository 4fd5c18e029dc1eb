/*
 * bench/kernels/alloc_kernels.c: get/put loops per allocator, generated from one pair of
 * templates so that every allocator runs exactly the same loop around its own calls.
 */
#include "alloc_kernels.h"

#if RF_HAVE_JEMALLOC /* optional peer (RF_WITH_JEMALLOC) */
#include <jemalloc/jemalloc.h>
#endif
#include <ringflow/mempool.h>
#include <string.h>

/* glibc's own entry points (exported by libc.so.6), reachable even when jemalloc is
 * interposed as malloc. */
void *__libc_malloc(size_t size);
void __libc_free(void *ptr);

/* Writes the header of object number i, optionally zeroing it first. */
static inline void al_touch(void *obj, size_t size, uint64_t i, bool zero)
{
	if (zero)
		memset(obj, 0, size);
	memcpy(obj, &i, sizeof(i));
}

/* Reads the header back (and the zeroed last byte). */
static inline uint64_t al_check(const void *obj, size_t size, bool zero)
{
	uint64_t v;
	memcpy(&v, obj, sizeof(v));
	return v + (zero ? ((const unsigned char *)obj)[size - 1] : 0);
}

#define AL_KERNELS(name, GET, PUT)                                              \
	uint64_t al_##name##_pairs(size_t size, uint64_t n, bool zero)          \
	{                                                                       \
		uint64_t sum = 0;                                               \
		for (uint64_t i = 0; i < n; i++) {                              \
			void *o = GET(size);                                    \
			if (!o)                                                 \
				return UINT64_MAX;                              \
			al_touch(o, size, i, zero);                             \
			sum += al_check(o, size, zero);                         \
			PUT(o, size);                                           \
		}                                                               \
		return sum;                                                     \
	}                                                                       \
	uint64_t al_##name##_bursts(size_t size, uint64_t n, bool zero)         \
	{                                                                       \
		void *objs[AL_BURST];                                           \
		uint64_t sum = 0, k = 0;                                        \
		for (uint64_t b = 0; b < n; b++) {                              \
			for (unsigned j = 0; j < AL_BURST; j++) {               \
				objs[j] = GET(size);                            \
				if (!objs[j]) {                                 \
					while (j--)                             \
						PUT(objs[j], size);             \
					return UINT64_MAX;                      \
				}                                               \
				al_touch(objs[j], size, k++, zero);             \
			}                                                       \
			for (unsigned j = 0; j < AL_BURST; j++) {               \
				sum += al_check(objs[j], size, zero);           \
				PUT(objs[j], size);                             \
			}                                                       \
		}                                                               \
		return sum;                                                     \
	}

#define GLIBC_GET(size) __libc_malloc(size)
#define GLIBC_PUT(o, size) __libc_free(o)
#define JEMALLOC_GET(size) mallocx((size), 0)
#define JEMALLOC_PUT(o, size) sdallocx((o), (size), 0) /* sized free: skips a size lookup */

AL_KERNELS(glibc, GLIBC_GET, GLIBC_PUT)
#if RF_HAVE_JEMALLOC
AL_KERNELS(jemalloc, JEMALLOC_GET, JEMALLOC_PUT)
#endif

uint64_t al_mempool_pairs(struct rf_mempool *mp, uint64_t n, bool zero)
{
	size_t size = mp->elt_size;
	uint64_t sum = 0;
	for (uint64_t i = 0; i < n; i++) {
		void *o;
		if (rf_mempool_get(mp, &o) != 0)
			return UINT64_MAX;
		al_touch(o, size, i, zero);
		sum += al_check(o, size, zero);
		rf_mempool_put(mp, o);
	}
	return sum;
}

uint64_t al_mempool_bursts(struct rf_mempool *mp, uint64_t n, bool zero)
{
	size_t size = mp->elt_size;
	void *objs[AL_BURST];
	uint64_t sum = 0, k = 0;
	for (uint64_t b = 0; b < n; b++) {
		if (rf_mempool_get_bulk(mp, objs, AL_BURST) != 0)
			return UINT64_MAX;
		for (unsigned j = 0; j < AL_BURST; j++)
			al_touch(objs[j], size, k++, zero);
		for (unsigned j = 0; j < AL_BURST; j++)
			sum += al_check(objs[j], size, zero);
		rf_mempool_put_bulk(mp, objs, AL_BURST);
	}
	return sum;
}
