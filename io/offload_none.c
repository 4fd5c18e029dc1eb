/*
 * io/offload_none.c: ringflow/offload.h in a build without libxdp: no port has a fast path,
 * every call says so (-ENOTSUP), and rf_offload_supported gives the one-line reason.
 */
#include <errno.h>
#include <stdio.h>

#include <ringflow/offload.h>

int rf_offload_supported(struct rf_io_dev *port, char *why, size_t len)
{
	(void)port;
	if (why && len)
		snprintf(why, len, "offload: this ringflow was built without libxdp (no XDP fast "
			 "path; install libxdp-dev and rebuild); running without offload");
	return -ENOTSUP;
}

int rf_offload_add(struct rf_io_dev *in, const struct rf_offload_match *m,
		   const struct rf_offload_action *acts, unsigned n)
{
	(void)in, (void)m, (void)acts, (void)n;
	return -ENOTSUP;
}

int rf_offload_replace(struct rf_io_dev *in, const struct rf_offload_match *m,
		       const struct rf_offload_action *acts, unsigned n)
{
	(void)in, (void)m, (void)acts, (void)n;
	return -ENOTSUP;
}

int rf_offload_del(struct rf_io_dev *in, const struct rf_offload_match *m)
{
	(void)in, (void)m;
	return -ENOTSUP;
}

int rf_offload_flush(struct rf_io_dev *in)
{
	(void)in;
	return -ENOTSUP;
}

int rf_offload_stats(struct rf_io_dev *in, const struct rf_offload_match *m, uint64_t *hits,
		     uint64_t *bytes)
{
	(void)in, (void)m, (void)hits, (void)bytes;
	return -ENOTSUP;
}

int rf_offload_totals(struct rf_io_dev *in, struct rf_offload_totals *t)
{
	(void)in, (void)t;
	return -ENOTSUP;
}

int rf_offload_cache_counts(struct rf_io_dev *in, uint64_t *hits, uint64_t *walks)
{
	(void)in, (void)hits, (void)walks;
	return -ENOTSUP;
}

int rf_offload_port_state(struct rf_io_dev *port, bool up)
{
	(void)port, (void)up;
	return -ENOTSUP;
}

int rf_offload_link_sync(struct rf_io_dev *port)
{
	(void)port;
	return -ENOTSUP;
}
