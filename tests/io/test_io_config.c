/*
 * tests/io/test_io_config.c: the config-string parser, the typed getters and the registry,
 * without touching the network: a mock driver with a two-level prefix (as uring:udp:...)
 * and one whose probe fails (absent, with its reason).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <ringflow/io.h>
#include <ringflow/io_driver.h> /* the mock driver */
#include <ringflow/log.h>
#include <ringflow/pktbuf.h>

static int mock_opened;

static int mock_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	uint32_t depth;
	int rc = rf_io_config_get_u32(cfg, "depth", 64, 1, 4096, &depth, err, len);
	if (rc)
		return rc;
	dev->priv = &mock_opened;
	mock_opened++;
	return 0;
}
static unsigned mock_burst(struct rf_io_dev *dev, unsigned q, struct rf_pktbuf **p, unsigned n)
{
	(void)dev, (void)q, (void)p, (void)n;
	return 0;
}
static void mock_close(struct rf_io_dev *dev)
{
	(void)dev;
	mock_opened--;
}
static int absent_probe(char *why, size_t len)
{
	snprintf(why, len, "needs the frobnicator module: modprobe frob");
	return -ENODEV;
}

static const struct rf_io_ops mock_ops = {
	RF_IO_OPS_ABI,
	.name = "mock", .usage = "mock:udp:listen=IP:PORT[,depth=N]", .keys = "listen,depth",
	.transports = "udp,tcp", .max_queues = 4, .open = mock_open, .rx_burst = mock_burst,
	.tx_burst = mock_burst, .close = mock_close,
};
static const struct rf_io_ops absent_ops = {
	RF_IO_OPS_ABI,
	.name = "frob", .keys = "", .probe = absent_probe, .open = mock_open,
	.rx_burst = mock_burst, .tx_burst = mock_burst, .close = mock_close,
};

static void reg(void)
{
	int rc = rf_io_register(&mock_ops);
	cr_assert(rc == 0 || rc == -EEXIST);
	rc = rf_io_register(&absent_ops);
	cr_assert(rc == 0 || rc == -EEXIST);
}

Test(io_config, parses_driver_transport_and_keys)
{
	struct rf_io_config c;
	char err[256];
	cr_assert_eq(rf_io_config_parse("uring:udp:listen=0.0.0.0:9000,sqpoll=1", &c, err, sizeof(err)), 0);
	cr_assert_str_eq(c.driver, "uring");
	cr_assert_str_eq(c.transport, "udp");
	cr_assert_eq(c.nkeys, 2);
	cr_assert_str_eq(rf_io_config_get(&c, "listen"), "0.0.0.0:9000");
	cr_assert_str_eq(rf_io_config_get(&c, "sqpoll"), "1");
	cr_assert_null(rf_io_config_get(&c, "nope"));

	cr_assert_eq(rf_io_config_parse("udp:listen=[::1]:9000", &c, err, sizeof(err)), 0);
	cr_assert_str_eq(c.driver, "udp");
	cr_assert_str_eq(c.transport, "");
	cr_assert_str_eq(rf_io_config_get(&c, "listen"), "[::1]:9000");

	cr_assert_eq(rf_io_config_parse("xdp:dev=veth1,queue=0,mode=skb", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.nkeys, 3);
	cr_assert_eq(rf_io_config_parse("udp", &c, err, sizeof(err)), 0);
	cr_assert_eq(c.nkeys, 0);
	cr_assert_eq(rf_io_config_parse("udp:listen=1.2.3.4:5,", &c, err, sizeof(err)), 0, "trailing comma ok");
}

Test(io_config, rejects_malformed_strings)
{
	struct rf_io_config c;
	char err[256];
	cr_assert_eq(rf_io_config_parse("", &c, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_parse(":x=1", &c, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_parse("udp:=1", &c, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "is not key=value"));
	cr_assert_eq(rf_io_config_parse("udp:a=1,a=2", &c, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "given twice"));
	cr_assert_eq(rf_io_config_parse("uring:U-DP:listen=1", &c, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bad transport"));
	char longkey[100];
	memset(longkey, 'k', sizeof(longkey));
	memcpy(longkey, "udp:", 4);
	longkey[90] = '=';
	longkey[99] = '\0';
	cr_assert_eq(rf_io_config_parse(longkey, &c, err, sizeof(err)), -EINVAL);
}

Test(io_config, typed_getters_check_ranges)
{
	struct rf_io_config c;
	char err[256];
	uint32_t u;
	bool b;
	unsigned e;
	cr_assert_eq(rf_io_config_parse("x:n=17,h=0x10,neg=-1,big=5000,on=yes,off=0,bad=maybe,mode=drv", &c,
					err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_u32(&c, "n", 0, 1, 100, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 17);
	cr_assert_eq(rf_io_config_get_u32(&c, "h", 0, 1, 100, &u, err, sizeof(err)), -EINVAL,
		     "hex is refused: config numbers are decimal");
	cr_assert_str_eq(err, "x: h=0x10: must be a decimal integer in 1..100");
	cr_assert_eq(rf_io_config_get_u32(&c, "absent", 42, 1, 100, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 42);
	cr_assert_eq(rf_io_config_get_u32(&c, "neg", 0, 0, 100, &u, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_get_u32(&c, "big", 0, 1, 4096, &u, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "x: big=5000: must be an integer in 1..4096");
	cr_assert_eq(rf_io_config_get_bool(&c, "on", false, &b, err, sizeof(err)), 0);
	cr_assert(b);
	cr_assert_eq(rf_io_config_get_bool(&c, "off", true, &b, err, sizeof(err)), 0);
	cr_assert_not(b);
	cr_assert_eq(rf_io_config_get_bool(&c, "bad", true, &b, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "bad=maybe"));
	cr_assert_eq(rf_io_config_get_enum(&c, "mode", "skb|drv", 0, &e, err, sizeof(err)), 0);
	cr_assert_eq(e, 1);
	cr_assert_eq(rf_io_config_get_enum(&c, "n", "skb|drv", 0, &e, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "must be one of skb|drv"));
}

Test(io_config, addresses_v4_v6_and_errors)
{
	struct rf_io_config c;
	char err[256];
	struct sockaddr_storage ss;
	socklen_t sl;
	cr_assert_eq(rf_io_config_parse("x:a=10.0.0.2:9000,b=[::1]:53,c=host:1,d=1.2.3.4", &c, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_addr(&c, "a", &ss, &sl, err, sizeof(err)), 0);
	struct sockaddr_in *in = (struct sockaddr_in *)&ss;
	cr_assert_eq(in->sin_family, AF_INET);
	cr_assert_eq(ntohs(in->sin_port), 9000);
	cr_assert_eq(ntohl(in->sin_addr.s_addr), 0x0a000002u);
	cr_assert_eq(rf_io_config_get_addr(&c, "b", &ss, &sl, err, sizeof(err)), 0);
	cr_assert_eq(ss.ss_family, AF_INET6);
	cr_assert_eq(sl, sizeof(struct sockaddr_in6));
	cr_assert_eq(rf_io_config_get_addr(&c, "c", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_get_addr(&c, "d", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_get_addr(&c, "zz", &ss, &sl, err, sizeof(err)), -ENOENT);
}

Test(io_config, registry_two_level_prefix_and_key_checks)
{
	reg();
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfg", 64, 256, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	char err[512];
	struct rf_io_dev *d = rf_io_open("mock:udp:listen=1.2.3.4:5,depth=8", pool, err, sizeof(err));
	cr_assert_not_null(d, "%s", err);
	cr_assert_eq(rf_io_nqueues(d), 1);
	cr_assert_str_eq(rf_io_driver_name(d), "mock");
	rf_io_close(d);
	cr_assert_eq(mock_opened, 0);

	d = rf_io_open_queues("mock:tcp:listen=1.2.3.4:5", pool, 3, err, sizeof(err));
	cr_assert_not_null(d, "%s", err);
	cr_assert_eq(rf_io_nqueues(d), 3);
	rf_io_close(d);

	cr_assert_null(rf_io_open_queues("mock:tcp:listen=1.2.3.4:5", pool, 8, err, sizeof(err)));
	cr_assert(strstr(err, "at most 4"), "%s", err);
	cr_assert_null(rf_io_open("mock:listen=1.2.3.4:5", pool, err, sizeof(err)));
	cr_assert(strstr(err, "needs a transport (one of udp,tcp)"), "%s", err);
	cr_assert_null(rf_io_open("mock:sctp:listen=1.2.3.4:5", pool, err, sizeof(err)));
	cr_assert(strstr(err, "unknown transport 'sctp'"), "%s", err);
	cr_assert_null(rf_io_open("mock:udp:lisen=1", pool, err, sizeof(err)));
	cr_assert_str_eq(err, "mock: unknown key 'lisen'; valid keys: listen, depth, queues, frames");
	cr_assert_null(rf_io_open("mock:udp:depth=0", pool, err, sizeof(err)));
	cr_assert_str_eq(err, "mock: depth=0: must be an integer in 1..4096");
	cr_assert_eq(errno, EINVAL);
	cr_assert_null(rf_io_open("mock:udp:depth=1", NULL, err, sizeof(err)));
	cr_assert(strstr(err, "no buffer pool"));
	rf_pktbuf_pool_free(pool);
}

Test(io_config, absent_driver_named_with_reason)
{
	reg();
	char err[512], d[1024];
	cr_assert_null(rf_io_find("frob"));
	cr_assert_not_null(rf_io_find("mock"));
	cr_assert_eq(rf_io_register(&mock_ops), -EEXIST);
	rf_io_describe(d, sizeof(d));
	cr_assert(strstr(d, "available: udp, tcp"), "%s", d);
	cr_assert(strstr(d, "frob (needs the frobnicator module: modprobe frob)"), "%s", d);
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfg2", 64, 256, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_null(rf_io_open("frob:x=1", pool, err, sizeof(err)));
	cr_assert_str_eq(err, "frob: driver unavailable here: needs the frobnicator module: modprobe frob");
	cr_assert_eq(errno, ENODEV);
	cr_assert_null(rf_io_open("zzz:x=1", pool, err, sizeof(err)));
	cr_assert(strstr(err, "unknown driver 'zzz' in 'zzz:x=1'; available: udp, tcp"), "%s", err);
	cr_assert(strstr(err, "frob (needs"), "%s", err);
	rf_pktbuf_pool_free(pool);
}

/* A frame-mode mock: hands out one buffer per rx call, and reports MAC, MTU, link, xstats. */
static unsigned fmock_rx(struct rf_io_dev *dev, unsigned q, struct rf_pktbuf **p, unsigned n)
{
	if (n == 0)
		return 0;
	p[0] = rf_pktbuf_alloc(dev->pool);
	if (!p[0])
		return 0;
	p[0]->queue = (uint16_t)q;
	return 1;
}
static int fmock_open(struct rf_io_dev *dev, const struct rf_io_config *cfg, char *err, size_t len)
{
	(void)cfg, (void)err, (void)len;
	static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x13};
	memcpy(dev->mac, mac, 6);
	dev->has_mac = true;
	dev->mtu = 1500;
	dev->priv = (void *)(uintptr_t)(dev->frames ? 1 : 2);
	return 0;
}
static unsigned fmock_xstats(struct rf_io_dev *dev, struct rf_io_xstat *xs, unsigned n)
{
	unsigned i = 0;
	i = rf_io_xstat_put(xs, n, i, "tx_copies", 7);
	i = rf_io_xstat_put(xs, n, i, "mode", (uintptr_t)dev->priv);
	return i;
}
static int fmock_link(struct rf_io_dev *dev)
{
	(void)dev;
	return 1;
}
static const struct rf_io_ops fmock_ops = {
	RF_IO_OPS_ABI,
	.name = "fmock", .keys = "dev", .max_queues = 2, .open = fmock_open, .rx_burst = fmock_rx,
	.tx_burst = mock_burst, .close = mock_close, .xstats = fmock_xstats, .link_up = fmock_link,
	.caps = RF_IO_CAP_FRAMES,
};

Test(io_config, frames_key_needs_a_driver_with_frame_mode)
{
	reg();
	int rc = rf_io_register(&fmock_ops);
	cr_assert(rc == 0 || rc == -EEXIST);
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfg3", 64, 256, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	char err[512];
	cr_assert_null(rf_io_open("mock:udp:listen=1.2.3.4:5,frames=1", pool, err, sizeof(err)));
	cr_assert_eq(errno, EOPNOTSUPP);
	cr_assert(strstr(err, "mock: frames=1: this driver has no frame mode"), "%s", err);
	cr_assert(strstr(err, "drivers with frame mode here: ") && strstr(err, "fmock"), "%s", err);
	cr_assert_null(strchr(err, '\n'), "one line: %s", err);
	cr_assert_null(rf_io_open("fmock:dev=x,frames=maybe", pool, err, sizeof(err)));
	cr_assert(strstr(err, "frames=maybe: must be 0 or 1"), "%s", err);
	/* frames=0 on a message driver is fine */
	struct rf_io_dev *m = rf_io_open("mock:udp:listen=1.2.3.4:5,frames=0", pool, err, sizeof(err));
	cr_assert_not_null(m, "%s", err);
	cr_assert_not(rf_io_frame_mode(m));
	cr_assert_eq(rf_io_caps(m) & RF_IO_CAP_FRAMES, 0);
	uint8_t mac[6];
	cr_assert_eq(rf_io_mac(m, mac), -ENOTSUP);
	cr_assert_eq(rf_io_mtu(m), 0);
	cr_assert_eq(rf_io_link_up(m), -ENOTSUP);
	struct rf_io_xstat xs[4];
	cr_assert_eq(rf_io_xstats_get(m, xs, 4), 0);
	rf_io_close(m);

	struct rf_io_dev *f = rf_io_open("fmock:dev=x,frames=1", pool, err, sizeof(err));
	cr_assert_not_null(f, "%s", err);
	cr_assert(rf_io_frame_mode(f));
	cr_assert(rf_io_caps(f) & RF_IO_CAP_FRAMES);
	cr_assert_str_eq(rf_io_spec(f), "fmock:dev=x,frames=1");
	cr_assert_eq(rf_io_pool(f), pool);
	cr_assert_eq(rf_io_mac(f, mac), 0);
	cr_assert_eq(mac[5], 0x13);
	cr_assert_eq(rf_io_mtu(f), 1500);
	cr_assert_eq(rf_io_link_up(f), 1);
	cr_assert_eq(rf_io_xstats_get(f, NULL, 0), 2, "n = 0 sizes the array");
	cr_assert_eq(rf_io_xstats_get(f, xs, 1), 2, "a short array gets the first ones");
	cr_assert_str_eq(xs[0].name, "tx_copies");
	cr_assert_eq(xs[0].value, 7);
	uint64_t v = 0;
	cr_assert_eq(rf_io_xstat_get(f, "mode", &v), 0);
	cr_assert_eq(v, 1, "the driver saw frame mode at open");
	cr_assert_eq(rf_io_xstat_get(f, "nope", &v), -ENOENT);
	rf_io_close(f);
	rf_pktbuf_pool_free(pool);
}

Test(io_config, port_ids_unique_stamped_on_rx_and_reused)
{
	reg();
	int rc = rf_io_register(&fmock_ops);
	cr_assert(rc == 0 || rc == -EEXIST);
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfg4", 64, 256, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	char err[512];
	struct rf_io_dev *d[3];
	for (int i = 0; i < 3; i++) {
		d[i] = rf_io_open_queues("fmock:dev=x,frames=1", pool, 2, err, sizeof(err));
		cr_assert_not_null(d[i], "%s", err);
	}
	cr_assert_neq(rf_io_port_id(d[0]), rf_io_port_id(d[1]));
	cr_assert_neq(rf_io_port_id(d[1]), rf_io_port_id(d[2]));
	cr_assert_neq(rf_io_port_id(d[0]), rf_io_port_id(d[2]));
	for (int i = 0; i < 3; i++) {
		struct rf_pktbuf *b[4];
		cr_assert_eq(rf_io_rx_burst(d[i], 1, b, 4), 1);
		cr_assert_eq(b[0]->port, rf_io_port_id(d[i]), "rx stamps the port id");
		cr_assert_eq(b[0]->queue, 1);
		rf_pktbuf_free(b[0]);
	}
	uint16_t freed = rf_io_port_id(d[1]);
	rf_io_close(d[1]);
	struct rf_io_dev *again = rf_io_open("fmock:dev=x", pool, err, sizeof(err));
	cr_assert_not_null(again, "%s", err);
	cr_assert_eq(rf_io_port_id(again), freed, "the lowest free id is reused");
	rf_io_close(again);
	rf_io_close(d[0]);
	rf_io_close(d[2]);
	cr_assert_eq(rf_pktbuf_pool_avail(pool), 64, "every buffer back");
	rf_pktbuf_pool_free(pool);
}

/* Every built-in driver is in the registry: usable, or absent with a reason. One built without
 * its library (RF_WITH_<X>=OFF, or not found) says so, and opening it returns that line. */
static void check_builtin(const char *name, bool built, const char *why)
{
	char all[2048], err[256], want[128];
	rf_io_describe(all, sizeof(all));
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfgb", 64, 2048, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_not_null(pool);
	if (built) {
		cr_assert(!strstr(all, why), "%s is built in, yet: %s", name, all);
	} else {
		snprintf(want, sizeof(want), "%s (%s)", name, why);
		cr_assert(strstr(all, want), "'%s' not in: %s", want, all);
		cr_assert_null(rf_io_find(name));
		snprintf(want, sizeof(want), "%s:listen=127.0.0.1:9", name);
		cr_assert_null(rf_io_open(want, pool, err, sizeof(err)));
		snprintf(want, sizeof(want), "%s: driver unavailable here: %s", name, why);
		cr_assert_str_eq(err, want);
	}
	rf_pktbuf_pool_free(pool);
}

Test(io_registry, drivers_built_without_their_library_are_absent_with_the_reason)
{
	check_builtin("uring", RF_HAVE_URING, "built without liburing");
	check_builtin("xdp", RF_HAVE_XDP, "built without libxdp");
	check_builtin("dpdk", RF_HAVE_DPDK, "built without DPDK");
	cr_assert_not_null(rf_io_find("udp"));
	cr_assert_not_null(rf_io_find("tcp"));
}

/* The small truths of the error lines: a port past 65535 is out of range (not malformed), a
 * bad transport's example has a driver with transports, the udp example is not the spec again. */
Test(io_config, error_lines_say_what_is_wrong)
{
	struct rf_io_config c;
	char err[256];
	struct sockaddr_storage ss;
	socklen_t sl;
	cr_assert_eq(rf_io_config_parse("udp:listen=127.0.0.1:70000", &c, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_addr(&c, "listen", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "udp: listen=127.0.0.1:70000: port 70000 out of range 0..65535");
	cr_assert_eq(rf_io_config_parse("udp:listen=127.0.0.1:9x", &c, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_addr(&c, "listen", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert(strstr(err, "expected a numeric IPv4:port"), "%s", err);
	cr_assert_eq(rf_io_config_parse("udp:U-DP:listen=1", &c, err, sizeof(err)), -EINVAL);
	cr_assert_null(strstr(err, "udp:udp:"), "%s", err);
	struct rf_pktbuf_pool *pool =
		rf_pktbuf_pool_create("cfgt", 64, 256, 0, RF_MEMPOOL_NO_HUGE | RF_MEMPOOL_QUIET);
	cr_assert_null(rf_io_open("udp:rcvbuf=65536", pool, err, sizeof(err)));
	cr_assert_str_eq(err, "udp: give exactly one of listen=IP:PORT or connect=IP:PORT "
			      "(e.g. udp:listen=0.0.0.0:9000)");
	rf_pktbuf_pool_free(pool);
}

Test(io_config, unbracketed_ipv6_signed_port_and_control_characters_are_refused)
{
	struct rf_io_config c;
	char err[256];
	struct sockaddr_storage ss;
	socklen_t sl;
	cr_assert_eq(rf_io_config_parse("x:a=::1:19500,b=127.0.0.1:+19500,c=[::1]:19500,d=:+19500",
					&c, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_addr(&c, "a", &ss, &sl, err, sizeof(err)), -EINVAL,
		     "::1:19500 is ambiguous without brackets");
	cr_assert(strstr(err, "[IPv6]:port"), "%s", err);
	cr_assert_eq(rf_io_config_get_addr(&c, "b", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_get_addr(&c, "d", &ss, &sl, err, sizeof(err)), -EINVAL);
	cr_assert_eq(rf_io_config_get_addr(&c, "c", &ss, &sl, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_parse("udp:listen=127.0.0.1:9000\n,x=1", &c, err, sizeof(err)),
		     -EINVAL);
	cr_assert_null(strchr(err, '\n'), "a two-line error: %s", err);
	cr_assert(strstr(err, "control character"), "%s", err);
}

/* Config numbers are decimal only: a leading zero does not switch to octal (base 0 read
 * "queues=010" as 8), and anything but digits is one clear line. */
Test(io_config, numbers_are_decimal_only)
{
	struct rf_io_config c;
	char err[256];
	uint32_t u = 0;
	cr_assert_eq(rf_io_config_parse("x:q=010,z=0,big=4294967295,over=4294967296,huge=99999999999999999999999,"
					"plus=+5,sp= 5,oct=0o7,hex=0X1f,neg=-0,empty=,tail=5x,dot=5.0",
					&c, err, sizeof(err)), 0);
	cr_assert_eq(rf_io_config_get_u32(&c, "q", 0, 1, 64, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 10, "010 is ten, not octal eight: got %u", u);
	cr_assert_eq(rf_io_config_get_u32(&c, "z", 7, 0, 64, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 0);
	cr_assert_eq(rf_io_config_get_u32(&c, "big", 0, 0, UINT32_MAX, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, UINT32_MAX);
	cr_assert_eq(rf_io_config_get_u32(&c, "over", 0, 0, UINT32_MAX, &u, err, sizeof(err)), -EINVAL);
	cr_assert_str_eq(err, "x: over=4294967296: must be an integer in 0..4294967295");
	cr_assert_eq(rf_io_config_get_u32(&c, "huge", 0, 0, UINT32_MAX, &u, err, sizeof(err)), -EINVAL);
	static const char *const bad[] = {"plus", "sp", "oct", "hex", "neg", "empty", "tail", "dot"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		u = 12345;
		err[0] = '\0';
		cr_assert_eq(rf_io_config_get_u32(&c, bad[i], 1, 0, 64, &u, err, sizeof(err)), -EINVAL,
			     "%s accepted", bad[i]);
		cr_assert(strstr(err, "must be a decimal integer in 0..64"), "%s: %s", bad[i], err);
		cr_assert(strchr(err, '\n') == NULL, "one line");
		cr_assert_eq(u, 12345, "%s: *out left alone on error", bad[i]);
	}
}

/* A driver built against another struct rf_io_ops is refused at registration with one log
 * line, never called. */
static char refused_line[512];
static int refused_lines;
static void capture_log(enum rf_log_level lvl, const char *line, void *arg)
{
	(void)arg;
	if (lvl == RF_LOG_ERR && strstr(line, "refusing driver")) {
		snprintf(refused_line, sizeof(refused_line), "%s", line);
		refused_lines++;
	}
}

Test(io_registry, ops_table_of_another_layout_is_refused)
{
	static const struct rf_io_ops old_version = {
		.abi_version = RF_IO_OPS_VERSION + 1, .size = sizeof(struct rf_io_ops),
		.name = "abi_old", .keys = "", .open = mock_open, .rx_burst = mock_burst,
		.tx_burst = mock_burst, .close = mock_close,
	};
	static const struct rf_io_ops other_size = {
		.abi_version = RF_IO_OPS_VERSION, .size = sizeof(struct rf_io_ops) - 8,
		.name = "abi_size", .keys = "", .open = mock_open, .rx_burst = mock_burst,
		.tx_burst = mock_burst, .close = mock_close,
	};
	static const struct rf_io_ops no_header = { /* as a pre-1.0 table: both fields 0 */
		.name = "abi_none", .keys = "", .open = mock_open, .rx_burst = mock_burst,
		.tx_burst = mock_burst, .close = mock_close,
	};
	static const struct rf_io_ops good = {
		RF_IO_OPS_ABI, .name = "abi_good", .keys = "", .open = mock_open,
		.rx_burst = mock_burst, .tx_burst = mock_burst, .close = mock_close,
	};
	char want[256];
	rf_log_set_hook(capture_log, NULL);

	cr_assert_eq(rf_io_register(&old_version), -EPROTO);
	snprintf(want, sizeof(want), "io: refusing driver (name unknown): built for struct rf_io_ops "
		 "version %u (%zu bytes), this library has version %u (%zu bytes); rebuild the driver "
		 "against this ringflow's ringflow/io_driver.h", RF_IO_OPS_VERSION + 1,
		 sizeof(struct rf_io_ops), RF_IO_OPS_VERSION, sizeof(struct rf_io_ops));
	cr_assert_str_eq(refused_line, want);

	cr_assert_eq(rf_io_register(&other_size), -EPROTO);
	cr_assert(strstr(refused_line, "refusing driver abi_size: built for struct rf_io_ops version"),
		  "%s", refused_line);
	cr_assert_eq(rf_io_register(&no_header), -EPROTO);
	cr_assert(strstr(refused_line, "version 0 (0 bytes)"), "%s", refused_line);
	cr_assert_eq(refused_lines, 3);
	rf_log_set_hook(NULL, NULL);

	cr_assert_null(rf_io_find("abi_old"));
	cr_assert_null(rf_io_find("abi_size"));
	cr_assert_null(rf_io_find("abi_none"));
	cr_assert_eq(rf_io_register(&good), 0, "the same table with RF_IO_OPS_ABI is taken");
	cr_assert_not_null(rf_io_find("abi_good"));
}
