/*
 * tests/openflow/test_ofc_rest.c: ringflow-controller's REST API and web page end to end on
 * loopback. The binary runs with --app learning,topology,hosts --rest on free ports; this
 * test emulates a linear chain of N_SW OpenFlow 1.3 switches (switch i port 2 is wired to
 * switch i+1 port 1; port 3 has a host) that answer the handshake and PORT_DESC and carry
 * the controller's LLDP PACKET_OUTs over the "wires" as PACKET_INs. Then every endpoint is
 * fetched with a raw HTTP/1.0 client and checked (valid JSON, the switches, the 2*(N_SW-1)
 * link directions, the host), and the page is loaded in headless Chromium, whose DOM must
 * show every switch's dpid (skipped with a reason if chromium is absent). Bounded: every
 * wait has a deadline; only 127.0.0.1 is used.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "json_check.h"
#include "of.h"
#include "of_eth.h"
#include "free_port.h"

#define MAX_SW 512
#define N_PORTS 3

/* Switches in the chain: 3, or RF_OFCWEB_CHAIN (up to MAX_SW) for a discovery figure. */
static unsigned N_SW = 3;

struct emu_sw {
	int fd;
	uint64_t dpid;
	uint8_t rx[1 << 16];
	size_t rx_len;
	bool ported, host_sent;
};

static struct emu_sw sw[MAX_SW];
static pid_t ofc_pid = -1;
static uint16_t of_port_no, rest_port;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void send_all(int fd, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
		cr_assert_gt(k, 0, "send to the controller: %s", strerror(errno));
		p += k;
		n -= (size_t)k;
	}
}

static void send_msg(struct emu_sw *s, struct of_msg *m)
{
	uint8_t buf[4096];
	m->version = OF_VERSION_1_3;
	ssize_t n = of_serialize(m, buf, sizeof(buf));
	cr_assert_gt(n, 0);
	send_all(s->fd, buf, (size_t)n);
}

static void send_packet_in(struct emu_sw *s, uint32_t in_port, const uint8_t *f, size_t len)
{
	struct of_msg m = {.type = OF_PACKET_IN};
	m.u.packet_in.buffer_id = OFP_NO_BUFFER;
	m.u.packet_in.total_len = (uint16_t)len;
	m.u.packet_in.match.fields = OF_MATCH_IN_PORT;
	m.u.packet_in.match.in_port = in_port;
	m.u.packet_in.data = f;
	m.u.packet_in.data_len = (uint16_t)len;
	send_msg(s, &m);
}

/* The wire: where a frame sent out of (switch i, port p) arrives; false: nowhere. */
static bool wire(unsigned i, uint32_t p, unsigned *j, uint32_t *q)
{
	if (p == 2 && i + 1 < N_SW)
		return *j = i + 1, *q = 1, true;
	if (p == 1 && i > 0)
		return *j = i - 1, *q = 2, true;
	return false;
}

static void handle(unsigned i, const uint8_t *msg, size_t len)
{
	struct emu_sw *s = &sw[i];
	struct of_msg m, r = {0};
	struct of_fault f;
	if (of_parse(msg, len, &m, &f) != 0)
		return;
	r.xid = m.xid;
	switch (m.type) {
	case OF_HELLO: {
		uint8_t b[64];
		ssize_t n = of_build_hello(b, sizeof(b), OF_VERSION_1_3, m.xid,
					   1u << OF_VERSION_1_3);
		send_all(s->fd, b, (size_t)n);
		break;
	}
	case OF_FEATURES_REQUEST:
		r.type = OF_FEATURES_REPLY;
		r.u.features.datapath_id = s->dpid;
		r.u.features.n_tables = 1;
		send_msg(s, &r);
		break;
	case OF_ECHO_REQUEST:
		r.type = OF_ECHO_REPLY;
		r.u.echo = m.u.echo;
		send_msg(s, &r);
		break;
	case OF_BARRIER_REQUEST:
		r.type = OF_BARRIER_REPLY;
		send_msg(s, &r);
		break;
	case OF_MULTIPART_REQUEST:
		if (m.u.mp_request.mp_type == OF_MP_PORT_DESC) {
			struct of_port p[N_PORTS];
			memset(p, 0, sizeof(p));
			for (unsigned k = 0; k < N_PORTS; k++) {
				p[k].port_no = k + 1;
				uint8_t hw[6] = {2, 0, 0, 0, (uint8_t)s->dpid, (uint8_t)(k + 1)};
				memcpy(p[k].hw_addr, hw, 6);
				snprintf(p[k].name, sizeof(p[k].name), "s%u-eth%u", i + 1, k + 1);
			}
			r.type = OF_MULTIPART_REPLY;
			r.u.mp_reply.mp_type = OF_MP_PORT_DESC;
			r.u.mp_reply.body.n = N_PORTS;
			r.u.mp_reply.body.items = p;
			send_msg(s, &r);
			s->ported = true;
		} else if (m.u.mp_request.mp_type == OF_MP_FLOW) { /* two flows, in two parts */
			struct of_flow_stats fs[2];
			memset(fs, 0, sizeof(fs));
			for (unsigned k = 0; k < 2; k++) {
				fs[k].priority = (uint16_t)(100 - k * 100);
				fs[k].idle_timeout = k ? 0 : 60;
				fs[k].packet_count = 10 + k;
				fs[k].byte_count = 1000 + k;
				fs[k].actions.n = 1;
				fs[k].actions.a[0].port = k ? OFPP_CONTROLLER : 3;
			}
			fs[0].match.fields = OF_MATCH_IN_PORT | OF_MATCH_ETH_DST;
			fs[0].match.in_port = 1;
			uint8_t dst[6] = {0x02, 0xaa, 0, 0, 0, 1};
			memcpy(fs[0].match.eth_dst, dst, 6);
			r.type = OF_MULTIPART_REPLY;
			r.u.mp_reply.mp_type = OF_MP_FLOW;
			for (unsigned k = 0; k < 2; k++) {
				r.u.mp_reply.flags = k ? 0 : OFPMPF_MORE;
				r.u.mp_reply.body.n = 1;
				r.u.mp_reply.body.items = &fs[k];
				send_msg(s, &r);
			}
		}
		break;
	case OF_PACKET_OUT: {
		const struct of_packet_out *po = &m.u.packet_out;
		unsigned j;
		uint32_t q;
		struct of_eth e;
		if (po->actions.n == 1 && of_eth_parse(po->data, po->data_len, &e) == 0 &&
		    e.type == OF_ETH_TYPE_LLDP && wire(i, po->actions.a[0].port, &j, &q))
			send_packet_in(&sw[j], q, po->data, po->data_len);
		break;
	}
	default:
		break;
	}
}

/* Services the switches for `secs` seconds. */
static void pump(double secs)
{
	double end = now_s() + secs;
	do {
		struct pollfd pf[MAX_SW];
		for (unsigned i = 0; i < N_SW; i++)
			pf[i] = (struct pollfd){.fd = sw[i].fd, .events = POLLIN};
		poll(pf, N_SW, 2);
		for (unsigned i = 0; i < N_SW; i++) {
			struct emu_sw *s = &sw[i];
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t k = recv(s->fd, s->rx + s->rx_len, sizeof(s->rx) - s->rx_len,
						 MSG_DONTWAIT);
				cr_assert_gt(k, 0, "the controller closed switch %u", i + 1);
				s->rx_len += (size_t)k;
			}
			size_t off = 0;
			while (s->rx_len - off >= 8 && s->rx_len - off >= of_get16(s->rx + off + 2)) {
				size_t len = of_get16(s->rx + off + 2);
				cr_assert_geq(len, 8);
				handle(i, s->rx + off, len);
				off += len;
			}
			memmove(s->rx, s->rx + off, s->rx_len - off);
			s->rx_len -= off;
			if (s->ported && !s->host_sent && i == 0) { /* host 10.0.0.1 on port 3 */
				uint8_t f[60] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
						 0x02, 0xaa, 0, 0, 0, 1, 0x08, 0x06,
						 0, 1, 8, 0, 6, 4, 0, 1, 0x02, 0xaa, 0, 0, 0, 1,
						 10, 0, 0, 1};
				send_packet_in(s, 3, f, sizeof(f));
				s->host_sent = true;
			}
		}
	} while (now_s() < end);
}

/* GET path; returns the body (malloc'd) and the status in *status. */
static char *http_get(const char *path, int *status)
{
	int fd = connect_to(rest_port);
	cr_assert_geq(fd, 0, "connect to the REST port: %s", strerror(errno));
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);
	send_all(fd, (const uint8_t *)req, (size_t)n);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap);
	/* the switches are served meanwhile: /api/flows asks one of them */
	for (double end = now_s() + 5;;) {
		cr_assert_lt(now_s(), end, "no complete HTTP response to %s within 5 s", path);
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
		ssize_t k = recv(fd, buf + len, cap - len - 1, MSG_DONTWAIT);
		if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			pump(0);
			continue;
		}
		cr_assert_geq(k, 0, "REST read: %s", strerror(errno));
		if (k == 0)
			break;
		len += (size_t)k;
	}
	close(fd);
	buf[len] = '\0';
	cr_assert_eq(sscanf(buf, "HTTP/1.%*d %d", status), 1, "not HTTP: %s", buf);
	char *body = strstr(buf, "\r\n\r\n");
	cr_assert(body);
	char *out = strdup(body + 4);
	free(buf);
	return out;
}

static char *get_json(const char *path)
{
	int st;
	char *s = http_get(path, &st);
	cr_assert_eq(st, 200, "%s: %d %s", path, st, s);
	cr_assert(json_valid(s), "%s: not valid JSON: %s", path, s);
	return s;
}

static void start(void)
{
	of_port_no = free_port();
	rest_port = free_port();
	char listen_at[32], rest_at[32];
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%u", of_port_no);
	snprintf(rest_at, sizeof(rest_at), "127.0.0.1:%u", rest_port);
	const char *chain = getenv("RF_OFCWEB_CHAIN");
	if (chain && atoi(chain) >= 2 && atoi(chain) <= MAX_SW)
		N_SW = (unsigned)atoi(chain);
	ofc_pid = fork();
	cr_assert_geq(ofc_pid, 0);
	if (ofc_pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		/* RF_CTL_BIN: another build of the binary (e.g. build-tsan's) */
		const char *bin = getenv("RF_CTL_BIN") ? getenv("RF_CTL_BIN") : RF_CONTROLLER_BIN;
		execl(bin, bin, "--listen", listen_at, "--rest", rest_at,
		      "--cores", "0", "--idle", "adaptive", "--max-macs", "4096", "--app",
		      "learning,topology,hosts", (char *)NULL);
		_exit(127);
	}
	for (unsigned i = 0; i < N_SW; i++) {
		sw[i] = (struct emu_sw){.fd = -1, .dpid = i + 1};
		for (int t = 0; t < 100 && sw[i].fd < 0; t++)
			if ((sw[i].fd = connect_to(of_port_no)) < 0)
				usleep(50000);
		cr_assert_geq(sw[i].fd, 0, "the controller is not listening");
	}
	/* Discovery: every link direction within 10 s (LLDP goes out every second). */
	char *links = NULL;
	for (double end = now_s() + 10 + N_SW / 10; now_s() < end;) {
		pump(0.2);
		free(links);
		links = get_json("/api/links");
		if (count_of(links, "\"src\"") == 2 * (N_SW - 1))
			break;
	}
	cr_assert_eq(count_of(links, "\"src\""), 2 * (N_SW - 1), "links: %s", links);
	free(links);
	if (chain) { /* the figure: first switch up to the last new link, by the controller */
		int st;
		char *s = http_get("/api/stats", &st);
		const char *d = strstr(s, "\"discovery\"");
		fprintf(stderr, "chain of %u emulated switches: %.120s\n", N_SW, d ? d : s);
		free(s);
	}
}

static void stop(void)
{
	for (unsigned i = 0; i < N_SW; i++)
		if (sw[i].fd >= 0)
			close(sw[i].fd);
	if (ofc_pid > 0) {
		kill(ofc_pid, SIGTERM);
		int st = 0;
		waitpid(ofc_pid, &st, 0);
		ofc_pid = -1;
		cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "controller exit status %d", st);
	}
}

Test(ofc_rest, every_endpoint_serves_the_emulated_chain, .timeout = 60)
{
	start();
	char *s = get_json("/api/links");
	for (unsigned i = 0; i + 1 < N_SW; i++) {
		char want[160];
		snprintf(want, sizeof(want), "{\"src\":{\"dpid\":\"%016x\",\"port\":2},"
			 "\"dst\":{\"dpid\":\"%016x\",\"port\":1}", i + 1, i + 2);
		cr_assert(strstr(s, want), "%s missing in %s", want, s);
	}
	free(s);
	s = get_json("/api/switches");
	cr_assert_eq(count_of(s, "\"ports\":3"), N_SW, "%s", s);
	free(s);
	s = get_json("/api/switches/0000000000000002/ports");
	cr_assert(strstr(s, "\"port_no\":3,\"name\":\"s2-eth3\",\"hw_addr\":\"02:00:00:00:02:03\""),
		  "%s", s);
	free(s);
	pump(0.3);
	s = get_json("/api/hosts");
	cr_assert(strstr(s, "{\"mac\":\"02:aa:00:00:00:01\",\"dpid\":\"0000000000000001\","
			    "\"port\":3,\"ipv4\":\"10.0.0.1\""), "%s", s);
	cr_assert_eq(count_of(s, "\"mac\""), 1, "the flooded copies on link ports are no hosts: %s",
		     s);
	free(s);
	s = get_json("/api/flows/1");
	cr_assert(strstr(s, "\"flows\":[{\"table_id\":0,\"priority\":100,\"idle_timeout\":60,"
			    "\"hard_timeout\":0,\"cookie\":0,\"packet_count\":10,\"byte_count\":1000,"
			    "\"duration_s\":0,\"match\":{\"fields\":5,\"in_port\":1,"
			    "\"eth_dst\":\"02:aa:00:00:00:01\",\"other_fields\":0},\"output\":[3],"
			    "\"other_actions\":0},{\"table_id\":0,\"priority\":0,"), "%s", s);
	cr_assert(strstr(s, "\"output\":[4294967293]"), "both reply parts: %s", s);
	free(s);
	s = get_json("/api/stats");
	cr_assert(strstr(s, "\"PACKET_IN\":"), "%s", s);
	cr_assert(!strstr(s, "\"first_switch_up_to_last_new_link_ms\":null"), "%s", s);
	cr_assert_lt(count_of(s, "\"count\":0}"), 16, "no PACKET_IN latency recorded: %s", s);
	free(s);
	int st;
	free(http_get("/api/nope", &st));
	cr_assert_eq(st, 404);
	free(http_get("/api/switches/zz/ports", &st));
	cr_assert_eq(st, 400);
	const char *docs = getenv("RF_OFCWEB_DOCS"); /* a dir: save each response there */
	static const char *const dump[] = {"/api/switches", "/api/switches/1/ports",
					   "/api/links", "/api/hosts", "/api/flows/1",
					   "/api/stats"};
	for (unsigned i = 0; docs && i < sizeof(dump) / sizeof(dump[0]); i++) {
		char path[256];
		snprintf(path, sizeof(path), "%s/rest_%u.json", docs, i);
		FILE *f = fopen(path, "w");
		s = get_json(dump[i]);
		if (f) {
			fprintf(f, "GET %s\n%s", dump[i], s);
			fclose(f);
		}
		free(s);
	}
	s = http_get("/", &st);
	cr_assert_eq(st, 200);
	cr_assert(strstr(s, "<svg"));
	free(s);
	stop();
}

/* True once the controller has closed fd (EOF or reset), reading and dropping what comes
 * first; false if it has not within secs (the switches are served meanwhile). */
static bool closed_by_controller(int fd, double secs)
{
	for (double end = now_s() + secs; now_s() < end;) {
		uint8_t junk[4096];
		ssize_t k = recv(fd, junk, sizeof(junk), MSG_DONTWAIT);
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return true;
		if (k < 0)
			pump(0.01);
	}
	return false;
}

/* Switch 1 restarts faster than TCP notices: a new connection with its datapath id arrives
 * while the old one is open. The new one takes over, the old one is closed, and closing it
 * must not take the switch, its ports or its links with it. */
Test(ofc_rest, same_dpid_reconnecting_takes_over_and_keeps_the_switch, .timeout = 60)
{
	start();
	int old_fd = sw[0].fd;
	sw[0] = (struct emu_sw){.fd = -1, .dpid = 1};
	sw[0].fd = connect_to(of_port_no);
	cr_assert_geq(sw[0].fd, 0);
	for (double end = now_s() + 5; !sw[0].ported && now_s() < end;)
		pump(0.05);
	cr_assert(sw[0].ported, "the new connection got no PORT_DESC request");
	cr_assert(closed_by_controller(old_fd, 5), "the old connection of dpid 1 was left open");
	close(old_fd);
	pump(0.2); /* the old connection's close has been handled by now */
	char *s = get_json("/api/switches");
	cr_assert_eq(count_of(s, "\"ports\":3"), N_SW, "a switch went with the old connection: %s",
		     s);
	free(s);
	s = get_json("/api/switches/0000000000000001/ports");
	cr_assert_eq(count_of(s, "\"port_no\""), N_PORTS, "%s", s);
	free(s);
	char *links = NULL;
	for (double end = now_s() + 5; now_s() < end;) { /* the next LLDP round */
		pump(0.2);
		free(links);
		links = get_json("/api/links");
		if (count_of(links, "\"src\"") == 2 * (N_SW - 1))
			break;
	}
	cr_assert_eq(count_of(links, "\"src\""), 2 * (N_SW - 1), "links: %s", links);
	free(links);
	stop();
}

static const char *find_chromium(void)
{
	static const char *c[] = {"/usr/bin/chromium", "/usr/bin/chromium-browser"};
	for (unsigned i = 0; i < 2; i++)
		if (access(c[i], X_OK) == 0)
			return c[i];
	return NULL;
}

/* Runs headless chromium with `what` (--dump-dom or --screenshot=...) on url, stdout to
 * out, servicing the switches meanwhile. Returns false if it had to be killed (60 s). */
static bool run_chromium(const char *chromium, const char *udd, const char *what,
			 const char *url, const char *out)
{
	pid_t pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int nul = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(nul, 2);
		execl(chromium, chromium, "--headless", "--no-sandbox", "--disable-gpu",
		      "--disable-background-networking", "--disable-component-update",
		      "--disable-sync", "--no-first-run", "--disable-dev-shm-usage", udd,
		      "--window-size=1100,620", "--virtual-time-budget=3000", what, url,
		      (char *)NULL);
		_exit(127);
	}
	int st = 0;
	pid_t done = 0;
	for (double end = now_s() + 60; !done && now_s() < end;) {
		pump(0.1); /* the switches keep answering while the page loads */
		done = waitpid(pid, &st, WNOHANG);
	}
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
	}
	return done != 0;
}

Test(ofc_rest, web_page_in_headless_chromium_shows_the_switches, .timeout = 120)
{
	const char *chromium = find_chromium();
	if (!chromium)
		cr_skip_test("chromium is not installed (scripts/deps.sh installs Debian chromium)");
	start();
	char dir[64], out[96], url[64], udd[96];
	snprintf(dir, sizeof(dir), "/tmp/rf_ctlweb_%d", (int)getpid());
	cr_assert_eq(mkdir(dir, 0700), 0, "mkdir %s: %s", dir, strerror(errno));
	snprintf(out, sizeof(out), "%s/dom.html", dir);
	snprintf(udd, sizeof(udd), "--user-data-dir=%s/profile", dir);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u/", rest_port);
	bool done = run_chromium(chromium, udd, "--dump-dom", url, out);
	const char *docs = getenv("RF_OFCWEB_DOCS"); /* a dir: also save a screenshot there */
	if (docs) {
		char shot[256];
		snprintf(shot, sizeof(shot), "--screenshot=%s/openflow_web.png", docs);
		run_chromium(chromium, udd, shot, url, "/dev/null");
	}
	FILE *f = fopen(out, "r");
	char *dom = calloc(1, 1 << 20);
	size_t n = f ? fread(dom, 1, (1 << 20) - 1, f) : 0;
	if (f)
		fclose(f);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	cr_assert_eq(system(cmd), 0);
	stop();
	cr_assert(done, "chromium did not finish within 60 s");
	cr_assert_gt(n, 0, "chromium dumped no DOM");
	for (unsigned i = 0; i < N_SW; i++) {
		char dpid[20];
		snprintf(dpid, sizeof(dpid), "%016x", i + 1);
		cr_assert_geq(count_of(dom, dpid), 2, "dpid %s not drawn and listed in the DOM", dpid);
	}
	cr_assert(strstr(dom, "<circle"), "no SVG drawn");
	free(dom);
}
