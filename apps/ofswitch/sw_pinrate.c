/*
 * apps/ofswitch/sw_pinrate.c: the PACKET_IN token bucket (sw_pinrate.h). Tokens are kept
 * in token-nanoseconds, so refilling is one multiplication (elapsed ns * rate) with no
 * division and no rounding loss, as pinsched's 1000 tokens a packet avoid it.
 */
#include <stdlib.h>

#include "sw_pinrate.h"

#define NS 1000000000ull

void sw_pinrate_init(struct sw_pinrate *b, uint32_t rate, uint32_t burst, uint64_t now_ns)
{
	if (rate && !burst)
		burst = rate / 4 ? rate / 4 : 1;
	b->rate = rate;
	b->burst = burst;
	b->tokens = (uint64_t)burst * NS;
	b->last_ns = now_ns;
}

bool sw_pinrate_take(struct sw_pinrate *b, uint64_t now_ns)
{
	if (!b->rate)
		return true;
	uint64_t cap = (uint64_t)b->burst * NS, dt = now_ns - b->last_ns;
	b->last_ns = now_ns;
	/* A gap long enough to fill the bucket fills it; a shorter one gives dt * rate <= cap
	 * (at most 1e16: no overflow). */
	if (dt >= cap / b->rate + 1 || b->tokens + dt * b->rate >= cap)
		b->tokens = cap;
	else
		b->tokens += dt * b->rate;
	if (b->tokens < NS)
		return false;
	b->tokens -= NS;
	return true;
}

static int num(const char *s, char **end, uint32_t *out)
{
	if (*s < '0' || *s > '9')
		return -1;
	unsigned long v = strtoul(s, end, 10);
	if (v > SW_PINRATE_MAX)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

int sw_pinrate_parse(const char *s, uint32_t *rate, uint32_t *burst)
{
	char *end;
	*burst = 0;
	if (num(s, &end, rate))
		return -1;
	if (*end == ',' && num(end + 1, &end, burst))
		return -1;
	if (*end)
		return -1;
	if (*rate && !*burst)
		*burst = *rate / 4 ? *rate / 4 : 1;
	if (!*rate)
		*burst = 0;
	return 0;
}
