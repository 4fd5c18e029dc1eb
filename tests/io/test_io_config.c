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
	.name = "mock", .usage = "mock:udp:listen=IP:PORT[,depth=N]", .keys = "listen,depth",
	.transports = "udp,tcp", .max_queues = 4, .open = mock_open, .rx_burst = mock_burst,
	.tx_burst = mock_burst, .close = mock_close,
};
static const struct rf_io_ops absent_ops = {
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
	cr_assert_eq(rf_io_config_get_u32(&c, "h", 0, 1, 100, &u, err, sizeof(err)), 0);
	cr_assert_eq(u, 16);
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
	cr_assert_str_eq(err, "mock: unknown key 'lisen'; valid keys: listen, depth, queues");
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
	cr_assert(strstr(d, "absent: frob (needs the frobnicator module: modprobe frob)"), "%s", d);
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
