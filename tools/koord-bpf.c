// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * koord-bpf: the node daemon. Every period it reads the collector's
 * monotonic counters, computes the window since the previous period, acts on
 * interference when enforcement is enabled (enforce.c; every cgroup write
 * journaled and undone at stop or at the next start after a crash), and
 * publishes Prometheus /metrics, /api/containers (the JSON of
 * koord-interference over the last window, plus enforcement state) and
 * /healthz over HTTP (libmicrohttpd, one internal polling thread). A body is
 * rendered at the first request of a period and kept, gzip'ed, for the
 * period's other requests (nothing is rendered when nobody asks: at 10,000
 * containers /metrics is ~86 MiB of text, ~4 MiB gzip'ed); a request then
 * only takes a reference.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysinfo.h>
#include <unistd.h>
#include <zlib.h>
#include "batch_node.h"
#include "cli.h"
#include "collector.h"
#include "config.h"
#include "enforce.h"
#include "hierarchies.h"
#include "http.h"
#include "kubelet.h"
#include "node_object.h"
#include "nodeslo.h"
#include "yarn_nm.h"
#include "writer.h"
#include "exporter.h"
#include "log.h"
#include "port_holder.h"
#include "privileges.h"
#include "report.h"
#include "suppress.h"
#include "unresolved.h"

#define DEFAULT_LISTEN	"127.0.0.1:9326"
/* Connections at once, in all and from one address (docs/security.md). */
#define HTTP_CONNECTIONS	64u
#define HTTP_PER_ADDRESS	8u
#define HEALTH_CONNECTIONS	16u
#define HEALTH_PER_ADDRESS	4u
/*
 * Walk the hierarchy at least this often. A container that runs before the
 * walk knows it makes the daemon walk at once (maybe_rescan, and react() on
 * a long wait), so the periodic walk only forgets removed cgroups and learns
 * those that never ran: at 15,000 cgroups a walk is ~0.3 s of CPU, and every
 * 10 s that was ~30 ms per period.
 */
#define RESCAN_S	60.0
/* Walks between periods (react()) at most this often. */
#define REACT_GAP_S	0.1

static volatile sig_atomic_t stop, reload;
static bool urgent;	/* a wait behind a container not known yet: walk now */
static __u64 urgent_id;	/* that container */
static __u64 urgent_wait_ns;	/* the online wait its record reported */
static double react_after;	/* react() walks at most every REACT_GAP_S: not before this */

static void on_signal(int sig)
{
	if (sig == SIGHUP)
		reload = 1;
	else
		stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct options {
	const char *listen;
	double period;
	const char *cgroup_root;
	struct class_rules rules;
	const char *config;
	const char *nodeslo, *nodeslo_token, *nodeslo_ca;	/* the API server's NodeSLO */
	const char *node;	/* the API server's Node object (its token and CA as the NodeSLO's) */
	double nodeslo_interval;
	const char *check_config;
	const char *state_dir;	/* over the config's stateDir */
	bool dry_run;
	bool once;
	unsigned int max_containers;
	enum pmu_source pmu;
};

static void usage(FILE *f)
{
	fprintf(f,
"Usage: koord-bpf [--config FILE] [--nodeslo URL] [--dry-run] [--listen ADDR:PORT]\n"
"                 [--period SECONDS] [--class GLOB=QOS ...] [--cgroup-root PATH]\n"
"                 [--state-dir DIR] [--once] [-v]\n"
"       koord-bpf --check-config FILE\n"
"The node daemon: measures every container's CPU time, run-queue waits, steal\n"
"by class and inflicted waiting with eBPF, aggregates them every period, acts\n"
"on interference when the config enables it (resourceUsedThresholdWithBE.enable),\n"
"and serves the numbers over HTTP:\n"
"  /metrics         Prometheus text format 0.0.4 (docs/metrics.md)\n"
"  /api/containers  JSON: the last period's window, koord-interference's schema\n"
"  /api/batch       JSON: reclaimable batch CPU and memory (Koordinator's usage formula)\n"
"  /healthz         200 \"ok\" once the first period is done, 503 before\n"
"\n"
"      --config FILE       JSON config: a NodeSLO spec plus a koordBPF section\n"
"                          (docs/config.md); SIGHUP and edits reload it\n"
"      --nodeslo URL       the node's NodeSLO from the API server (${VAR}s from\n"
"                          the environment): its Koordinator sections over the\n"
"                          --config file's, read at start and polled, applied\n"
"                          when it changes\n"
"      --nodeslo-interval SECONDS  between polls (default 10; 1 to 3600)\n"
"      --nodeslo-token FILE  bearer token for an https URL (default the service\n"
"                          account's)\n"
"      --nodeslo-ca FILE   CA for an https URL (default the service account's)\n"
"      --node URL          the node's Node object from the API server, polled as\n"
"                          the NodeSLO (its token and CA): the kubelet's reservation\n"
"                          and node.koordinator.sh/reservation, where larger than\n"
"                          koordBPF.reservation\n"
"      --check-config FILE validate FILE and exit (0: valid)\n"
"      --dry-run           decide and log every action, write nothing\n"
"  -l, --listen ADDR:PORT  where to serve: IPv4:PORT or [IPv6]:PORT\n"
"                          (default " DEFAULT_LISTEN ")\n"
"  -p, --period SECONDS    aggregation period (default 1; 0.1 to 3600)\n"
"  -c, --class GLOB=QOS    classify cgroups whose path matches GLOB as QOS\n"
"                          (LSE, LSR, LS, BE, SYSTEM); repeatable, first match wins\n"
"  -r, --cgroup-root PATH  the cgroup hierarchy to watch (default: the one\n"
"                          carrying the cpu controller, from /proc/self/mountinfo)\n"
"      --state-dir DIR     the journal's dir, over the config's stateDir; a\n"
"                          crashed run's journal there is put back even when the\n"
"                          config does not load (default /var/lib/koord-bpf then)\n"
"      --once              one period, print /metrics to stdout and exit\n"
"      --counter-source S  auto (hardware counters where there is a PMU), hardware,\n"
"                          software (a stand-in, not exported) or off\n"
"      --max-containers N  containers measured at once (default 4096)\n"
"  -v, --verbose           debug output, including libbpf's\n"
"      --version           the version, and libbpf's\n"
"  -h, --help              this text\n");
}

static int parse_args(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'f' },
		{ "check-config", required_argument, NULL, 'C' },
		{ "nodeslo", required_argument, NULL, 'S' },
		{ "nodeslo-token", required_argument, NULL, 'T' },
		{ "nodeslo-ca", required_argument, NULL, 'A' },
		{ "nodeslo-interval", required_argument, NULL, 'I' },
		{ "node", required_argument, NULL, 'N' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "listen", required_argument, NULL, 'l' },
		{ "period", required_argument, NULL, 'p' },
		{ "class", required_argument, NULL, 'c' },
		{ "cgroup-root", required_argument, NULL, 'r' },
		{ "state-dir", required_argument, NULL, 'd' },
		{ "once", no_argument, NULL, 'O' },
		{ "max-containers", required_argument, NULL, 'M' },
		{ "counter-source", required_argument, NULL, 'P' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{},
	};
	char err[256];
	int opt;

	/* a letter means the same in the three programs: -f and -n are koord-top's */
	while ((opt = getopt_long(argc, argv, "l:p:c:r:vh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f':
			o->config = optarg;
			break;
		case 'C':
			o->check_config = optarg;
			break;
		case 'S':
			o->nodeslo = optarg;
			break;
		case 'T':
			o->nodeslo_token = optarg;
			break;
		case 'A':
			o->nodeslo_ca = optarg;
			break;
		case 'N':
			o->node = optarg;
			break;
		case 'I':
			if (cli_number("--nodeslo-interval", "seconds", optarg, 1, 3600, false,
				       &o->nodeslo_interval))
				return -EINVAL;
			break;
		case 'n':
			o->dry_run = true;
			break;
		case 'l':
			o->listen = optarg;
			break;
		case 'p':
			if (cli_number("period", "seconds", optarg, 0.1, 3600, false, &o->period))
				return -EINVAL;
			break;
		case 'c':
			if (class_rules_add(&o->rules, optarg, err, sizeof(err))) {
				log_err("%s", err);
				return -EINVAL;
			}
			break;
		case 'r':
			o->cgroup_root = optarg;
			break;
		case 'd':
			if (optarg[0] != '/') {
				log_err("--state-dir %s: not an absolute path", optarg);
				return -EINVAL;
			}
			o->state_dir = optarg;
			break;
		case 'O':
			o->once = true;
			break;
		case 'M':
			if (cli_max_containers(optarg, &o->max_containers))
				return -EINVAL;
			break;
		case 'P':
			if (cli_counter_source(optarg, &o->pmu))
				return -EINVAL;
			break;
		case 'v':
			log_level = LOG_LVL_DEBUG;
			break;
		case 'V':
			cli_version("koord-bpf");
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			return -EINVAL;
		}
	}
	if (optind < argc) {
		log_err("unexpected argument \"%s\"", argv[optind]);
		return -EINVAL;
	}
	return 0;
}

/* "1.2.3.4:9326" or "[::1]:9326" -> a socket address. */
static int parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	char host[INET6_ADDRSTRLEN + 1];
	const char *port, *close = NULL;
	unsigned long p;
	size_t hl;
	char *end;

	memset(ss, 0, sizeof(*ss));
	if (s[0] == '[') {
		close = strchr(s, ']');
		if (!close || close[1] != ':')
			return -EINVAL;
		hl = close - s - 1;
		port = close + 2;
		s++;
	} else {
		port = strrchr(s, ':');
		if (!port || strchr(s, ':') != port)
			return -EINVAL;
		hl = port - s;
		port++;
	}
	if (!hl || hl >= sizeof(host))
		return -EINVAL;
	memcpy(host, s, hl);
	host[hl] = '\0';
	if (!*port || *port < '0' || *port > '9')
		return -EINVAL;
	errno = 0;
	p = strtoul(port, &end, 10);
	if (errno || *end || p < 1 || p > 65535)
		return -EINVAL;
	if (!close && inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		a4->sin_port = htons(p);
		*len = sizeof(*a4);
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1 && close) {
		a6->sin6_family = AF_INET6;
		a6->sin6_port = htons(p);
		*len = sizeof(*a6);
		return 0;
	}
	return -EINVAL;
}

/* EADDRINUSE: say who holds the port (koordlet holds 9316 and 9317 on a Koordinator node). */
static void in_use(const char *addr, const struct sockaddr_storage *ss)
{
	unsigned int port = ntohs(ss->ss_family == AF_INET6 ?
				  ((const struct sockaddr_in6 *)ss)->sin6_port :
				  ((const struct sockaddr_in *)ss)->sin_port);
	char comm[32];
	pid_t pid;

	if (port_holder(port, comm, sizeof(comm), &pid)) {
		log_err("cannot listen on %s: the port is already in use (by no process seen here: "
			"another network namespace?); choose another with --listen", addr);
		return;
	}
	log_err("cannot listen on %s: the port is already in use by %s (pid %d)%s; choose another "
		"with --listen", addr, comm, (int)pid, !strcmp(comm, "koordlet") ?
		", which holds 9316 and 9317 on Koordinator nodes" : "");
}

static int open_listener(const char *addr)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd, one = 1, err;

	if (parse_listen(addr, &ss, &len)) {
		log_err("bad listen address \"%s\": want IPv4:PORT or [IPv6]:PORT, e.g. %s or [::1]:9326",
			addr, DEFAULT_LISTEN);
		return -EINVAL;
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		log_err("cannot listen on %s: %s", addr, strerror(-err));
		return err;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (ss.ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 64)) {
		err = -errno;
		if (err == -EADDRINUSE)
			in_use(addr, &ss);
		else if (err == -EADDRNOTAVAIL)
			log_err("cannot listen on %s: no such address on this host", addr);
		else
			log_err("cannot listen on %s: %s", addr, strerror(-err));
		close(fd);
		return err;
	}
	return fd;
}

/* ---- what the HTTP thread serves ---- */

/*
 * A body is kept gzip'ed only: Prometheus asks for gzip, and /metrics is
 * ~20 times smaller so (at 10,000 containers ~4 MiB instead of ~86 MiB). A
 * request without gzip is served by inflating it as it is sent.
 */
struct body {
	int refs;	/* under shared.lock */
	char *gz;
	size_t gzlen;
	size_t len;	/* uncompressed */
};

enum body_kind { BODY_METRICS, BODY_API, BODY_BATCH, BODY_NR };
static const char *const body_path[BODY_NR] = { "/metrics", "/api/containers", "/api/batch" };

static struct {
	pthread_mutex_t lock;
	struct body *bodies[BODY_NR];	/* rendered for the last period, NULL until asked */
	double done_at;		/* CLOCK_MONOTONIC of the last completed period, 0: none yet */
	double period;
	struct kubelet *kube;	/* set before the HTTP thread starts; NULL: not polled */
} shared = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* Render @kind for the last period (defined with the period below); a reference or NULL. */
static struct body *render_body(enum body_kind kind);

static void body_put(struct body *b)
{
	int last;

	if (!b)
		return;
	pthread_mutex_lock(&shared.lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&shared.lock);
	if (last) {
		free(b->gz);
		free(b);
	}
}

static void body_free_cb(void *cls)
{
	body_put(cls);
}

/* ---- gzip, as a body is rendered ---- */

struct gz_out {
	z_stream z;
	char *p;
	size_t cap;
	int err;
};

#define GZ_CHUNK	(256 * 1024)

static int gz_begin(struct gz_out *g)
{
	memset(g, 0, sizeof(*g));
	/* the fast level: a render at 10,000 containers compresses ~86 MiB */
	if (deflateInit2(&g->z, 1, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	return 0;
}

/* Deflate what is in g->z with @flush, growing the output as it fills. */
static int gz_run(struct gz_out *g, int flush)
{
	size_t cap;
	char *p;
	int r;

	do {
		if (g->z.total_out == g->cap) {
			cap = g->cap ? g->cap * 2 : GZ_CHUNK;
			p = realloc(g->p, cap);
			if (!p)
				return g->err = -ENOMEM;
			g->p = p;
			g->cap = cap;
		}
		g->z.next_out = (Bytef *)g->p + g->z.total_out;
		g->z.avail_out = g->cap - g->z.total_out;
		r = deflate(&g->z, flush);
		if (r == Z_STREAM_END)
			return 0;
		if (r != Z_OK && r != Z_BUF_ERROR)
			return g->err = -EIO;
	} while (g->z.avail_in || g->z.avail_out == 0 || flush == Z_FINISH);
	return 0;
}

/* An exporter_sink: the text into the gzip stream. */
static int gz_write(void *ctx, const char *p, size_t n)
{
	struct gz_out *g = ctx;

	if (g->err)
		return g->err;
	g->z.next_in = (Bytef *)p;
	g->z.avail_in = n;
	return gz_run(g, Z_NO_FLUSH);
}

/* The stream finished as a body (or NULL: out of memory); @err: the render's. */
static struct body *gz_end(struct gz_out *g, int err)
{
	struct body *b = NULL;

	if (!err && !g->err)
		err = gz_run(g, Z_FINISH);
	if (!err && !g->err && (b = malloc(sizeof(*b)))) {
		*b = (struct body){ .refs = 1, .gz = g->p, .gzlen = g->z.total_out,
				    .len = g->z.total_in };
		g->p = NULL;
	}
	deflateEnd(&g->z);
	free(g->p);
	return b;
}

/* @p (@len bytes, freed here) as a body. */
static struct body *body_new(char *p, size_t len)
{
	struct gz_out g;
	struct body *b = NULL;

	if (p && !gz_begin(&g))
		b = gz_end(&g, gz_write(&g, p, len));
	free(p);
	return b;
}

/* A period completed at @done_at (0: stopping): the bodies of the last one are stale. */
static void publish(double done_at)
{
	struct body *old[BODY_NR];
	int k;

	pthread_mutex_lock(&shared.lock);
	memcpy(old, shared.bodies, sizeof(old));
	memset(shared.bodies, 0, sizeof(shared.bodies));
	shared.done_at = done_at;
	pthread_mutex_unlock(&shared.lock);
	for (k = 0; k < BODY_NR; k++)
		body_put(old[k]);
}

/* The current body of @kind with a reference taken, or NULL when not rendered yet. */
static struct body *body_get(enum body_kind kind)
{
	struct body *b;

	pthread_mutex_lock(&shared.lock);
	b = shared.bodies[kind];
	if (b)
		b->refs++;
	pthread_mutex_unlock(&shared.lock);
	return b;
}

/* Keep @b as the period's body of @kind; returns it with a reference for the caller. */
static struct body *body_keep(enum body_kind kind, struct body *b)
{
	struct body **slot = &shared.bodies[kind];

	pthread_mutex_lock(&shared.lock);
	if (!*slot) {
		*slot = b;
		b->refs++;
	}
	pthread_mutex_unlock(&shared.lock);
	return b;
}

static enum MHD_Result reply_text(struct MHD_Connection *conn, unsigned int status,
				  const char *text)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(strlen(text), (void *)text,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result ret;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/plain; charset=utf-8");
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(conn, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Does the request's Accept-Encoding take gzip? ("gzip", not "gzip;q=0") */
static bool accepts_gzip(struct MHD_Connection *conn)
{
	const char *ae = MHD_lookup_connection_value(conn, MHD_HEADER_KIND,
						     MHD_HTTP_HEADER_ACCEPT_ENCODING);
	const char *g;

	if (!ae || !(g = strstr(ae, "gzip")))
		return false;
	g += 4;
	while (*g == ' ')
		g++;
	if (*g != ';')
		return true;
	g++;
	while (*g == ' ')
		g++;
	return !(g[0] == 'q' && g[1] == '=' && strtod(g + 2, NULL) == 0);
}

/* A body sent uncompressed: inflated as it goes out. */
struct plain_reader {
	struct body *b;
	z_stream z;
};

static ssize_t plain_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct plain_reader *pr = cls;
	int r;

	if (pos >= pr->b->len)
		return MHD_CONTENT_READER_END_OF_STREAM;
	pr->z.next_out = (Bytef *)buf;
	pr->z.avail_out = max;
	r = inflate(&pr->z, Z_NO_FLUSH);
	if ((r != Z_OK && r != Z_STREAM_END) || pr->z.avail_out == max)
		return MHD_CONTENT_READER_END_WITH_ERROR;
	return max - pr->z.avail_out;
}

static void plain_free(void *cls)
{
	struct plain_reader *pr = cls;

	inflateEnd(&pr->z);
	body_put(pr->b);
	free(pr);
}

/* The response for @b, which it takes the reference of; NULL on failure (then put). */
static struct MHD_Response *body_response(struct body *b, bool gz)
{
	struct plain_reader *pr;
	struct MHD_Response *r;

	if (gz) {
		r = MHD_create_response_from_buffer_with_free_callback_cls(b->gzlen, b->gz,
									  body_free_cb, b);
		if (!r)
			body_put(b);
		return r;
	}
	pr = calloc(1, sizeof(*pr));
	if (!pr || inflateInit2(&pr->z, 15 + 16) != Z_OK) {
		free(pr);
		body_put(b);
		return NULL;
	}
	pr->b = b;
	pr->z.next_in = (Bytef *)b->gz;
	pr->z.avail_in = b->gzlen;
	r = MHD_create_response_from_callback(b->len, 64 * 1024, plain_read, pr, plain_free);
	if (!r)
		plain_free(pr);
	return r;
}

static enum MHD_Result reply_body(struct MHD_Connection *conn, enum body_kind kind,
				  const char *type)
{
	struct MHD_Response *r;
	enum MHD_Result ret;
	struct body *b;
	bool gz;

	b = body_get(kind);
	if (!b)
		b = render_body(kind);
	if (!b)
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE,
				  "no data yet: the first period has not completed\n");
	gz = accepts_gzip(conn);
	r = body_response(b, gz);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_VARY, MHD_HTTP_HEADER_ACCEPT_ENCODING);
	if (gz)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_ENCODING, "gzip");
	ret = MHD_queue_response(conn, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* Healthy; an unreachable kubelet is said, not fatal: classes then come from the cgroups. */
static enum MHD_Result healthz_ok(struct MHD_Connection *conn)
{
	char why[1024], msg[1200];

	if (!shared.kube || kubelet_status(shared.kube, why, sizeof(why)))
		return reply_text(conn, MHD_HTTP_OK, "ok\n");
	snprintf(msg, sizeof(msg), "ok; kubelet unreachable (%s): classes from the cgroups\n", why);
	return reply_text(conn, MHD_HTTP_OK, msg);
}

/* /healthz: 503 before the first period and when periods stall. */
static enum MHD_Result healthz(struct MHD_Connection *conn)
{
	double done_at, period, age;
	char msg[128];

	pthread_mutex_lock(&shared.lock);
	done_at = shared.done_at;
	period = shared.period;
	pthread_mutex_unlock(&shared.lock);
	if (!done_at)
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "starting\n");
	age = now_s() - done_at;
	if (age > fmax(3 * period, period + 5)) {
		snprintf(msg, sizeof(msg), "stale: the last period completed %.1f s ago\n", age);
		return reply_text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, msg);
	}
	return healthz_ok(conn);
}

/* The health listener (healthListen): /healthz alone. */
static enum MHD_Result on_health(void *cls, struct MHD_Connection *conn, const char *url,
				 const char *method, const char *version,
				 const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (!strcmp(url, "/healthz"))
		return healthz(conn);
	return reply_text(conn, MHD_HTTP_NOT_FOUND, "not found: /healthz\n");
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
				  const char *method, const char *version,
				  const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	if (!strcmp(url, "/metrics"))
		return reply_body(conn, BODY_METRICS, "text/plain; version=0.0.4; charset=utf-8");
	if (!strcmp(url, "/api/containers"))
		return reply_body(conn, BODY_API, "application/json");
	if (!strcmp(url, "/api/batch"))
		return reply_body(conn, BODY_BATCH, "application/json");
	if (!strcmp(url, "/healthz"))
		return healthz(conn);
	if (!strcmp(url, "/"))
		return reply_text(conn, MHD_HTTP_OK,
				  "koord-bpf: /metrics /api/containers /api/batch /healthz\n");
	return reply_text(conn, MHD_HTTP_NOT_FOUND,
			  "not found: /metrics /api/containers /api/batch /healthz\n");
}

static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	char buf[512];
	size_t n;

	vsnprintf(buf, sizeof(buf), fmt, ap);
	n = strlen(buf);
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	log_debug("http: %s", buf);
}

/*
 * Serve @lfd with @handler: at most @limit connections, @per_ip from one
 * address (one client trickling bytes on every socket would shut the others
 * out), idle ones closed after 10 s. MHD owns @lfd once this returns one.
 */
static struct MHD_Daemon *serve(int lfd, MHD_AccessHandlerCallback handler, unsigned int limit,
				unsigned int per_ip)
{
	/* The HTTP thread must not take SIGINT/SIGTERM/SIGHUP: they wake the period loop. */
	struct MHD_Daemon *mhd;
	sigset_t block, old;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_AUTO | MHD_USE_ERROR_LOG,
			       0, NULL, NULL, handler, NULL,
			       MHD_OPTION_EXTERNAL_LOGGER, mhd_log, NULL,
			       MHD_OPTION_LISTEN_SOCKET, lfd,
			       MHD_OPTION_CONNECTION_LIMIT, limit,
			       MHD_OPTION_PER_IP_CONNECTION_LIMIT, per_ip,
			       MHD_OPTION_CONNECTION_TIMEOUT, 10u,
			       MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return mhd;
}

/* ---- the period ---- */

struct daemon {
	struct options *o;
	struct koord_config cfg;	/* the file's, with the command line's overrides */
	struct class_rules rules;	/* command line's first, then the file's */
	struct cpu_hierarchy hier;
	struct hierarchies hs;		/* every controller's mount, for the writer */
	struct journal journal;
	struct writer writer;
	struct enforcer *enf;
	struct collector *col;
	struct container_table table;
	struct sample prev, cur;
	bool prev_checked;		/* maybe_rescan() looked up prev's containers */
	struct exporter exp;
	struct batch_node batch;	/* reclaimable batch capacity */
	struct batch_host bhost;
	struct kubelet *kube;		/* pod labels from the kubelet, NULL: off */
	struct poller *nm;		/* YARN tasks' requests from NodeManager, NULL: off */
	struct poller *slo;		/* the API server's NodeSLO, NULL: not polled */
	unsigned long slo_gen;		/* the poller's answer last looked at */
	struct poller *node;		/* the API server's Node object, NULL: not polled */
	unsigned long node_gen;		/* its answer last looked at */
	struct nodeslo_doc slo_seen;	/* the NodeSLO last read, applied or refused */
	struct nodeslo_doc slo_cur;	/* the NodeSLO of the configuration, text NULL: none */
	struct stat config_st;		/* the --config file when last read */
	struct stat config_seen;	/* ... and at the last period */
	unsigned long long reloads_ok, reloads_err;
	bool reload_failed;		/* the last configuration read was refused */
	unsigned long kube_gen, nm_gen;	/* the answers the table was last given */
	double last_scan, last_work;
	__u64 scans;
	bool classes_published;		/* the collector has the table's classes */
	struct unresolved unresolved;	/* containers the last walk did not find */
	unsigned int set_aside;		/* journal values of a past run that could not be restored */
};

/* Do @a and @b hold the same cgroups with the same classes? */
static bool same_classes(const struct container_table *a, const struct container_table *b)
{
	const struct container *c;
	size_t i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < b->n; i++) {
		c = container_table_get(a, b->v[i].id);
		if (!c || c->ident.qos != b->v[i].ident.qos)
			return false;
	}
	return true;
}

/*
 * A cgroup removed between the walk and the publishing of its class keeps an
 * entry that cgroup_rmdir had nothing to delete for: look again at the ones
 * this walk found new, once published (a later removal is cgroup_rmdir's).
 */
static void forget_removed(struct daemon *d, const struct container_table *old)
{
	char path[PATH_MAX];
	size_t i;

	for (i = 0; i < d->table.n; i++) {
		const struct container *c = &d->table.v[i];

		if (container_table_get(old, c->id))
			continue;
		snprintf(path, sizeof(path), "%s%s", d->hier.root, c->path);
		if (access(path, F_OK) && errno == ENOENT)
			collector_forget_class(d->col, c->id);
	}
}

/*
 * Allow writes below each configured root in every hierarchy; again at each
 * walk, since the kubelet may create its roots after the daemon started.
 */
static void writer_roots(struct daemon *d, bool first)
{
	const char *mounts[HIERARCHY_MOUNTS];
	size_t i, j, n = hierarchies_mounts(&d->hs, mounts);
	char path[PATH_MAX];
	int r;

	for (i = 0; i < n; i++) {
		for (j = 0; j < d->cfg.ncgroup_roots; j++) {
			if (snprintf(path, sizeof(path), "%s%s", mounts[i], d->cfg.cgroup_roots[j]) >=
			    (int)sizeof(path))
				continue;
			r = writer_add_root(&d->writer, path);
			if (r && r != -ENOENT)
				log_msg(first ? LOG_LVL_WARN : LOG_LVL_DEBUG, "not writing below %s: %s",
					path, r == -ELOOP ? "it is reached through a symlink" :
					strerror(-r));
		}
	}
}

/*
 * Walk the hierarchy into a fresh table and publish the classes, unless
 * they are what the collector was last given (one map update per cgroup
 * saved, and the collector's class caches stay valid).
 */
static int rescan(struct daemon *d)
{
	struct container_table t = {}, old;
	double t0 = now_s();
	bool same;
	int err;

	/* before the walk: a root made since (a first YARN job) is writable for what it finds */
	if (d->enf)
		writer_roots(d, false);
	err = container_table_scan(&t, d->hier.root, &d->rules, NULL);
	d->last_scan = now_s();
	if (err) {
		log_warn("cannot read %s: %s", d->hier.root, strerror(-err));
		container_table_free(&t);
		return err;
	}
	if (d->kube)
		kubelet_apply(d->kube, &t);
	if (d->nm)
		nodemanager_apply(d->nm, &t);
	same = d->classes_published && same_classes(&d->table, &t);
	old = d->table;
	d->table = t;
	d->scans++;
	err = same ? 0 : collector_set_classes(d->col, &d->table);
	if (!same && !err)
		forget_removed(d, &old);
	/* cgroups removed since: their entries have nothing to restore */
	if (!same && d->journal.dir && journal_prune(&d->journal) < 0)
		log_warn("journal: cannot drop the entries of removed cgroups");
	container_table_free(&old);
	d->classes_published = !err;
	if (err)
		log_warn("cannot publish classes: %s", strerror(-err));
	log_debug("walked %s: %zu cgroups in %.1f ms%s", d->hier.root, d->table.n,
		  (now_s() - t0) * 1e3, same ? ", classes unchanged" : "");
	return err;
}

/*
 * Is the kubelet's pod list recent enough to evict pods by? Three polls
 * missed, each given its timeout, and it is not: a cgroup alone does not
 * say whose pod it is (docs/enforcement.md#eviction).
 */
static bool pods_fresh(const struct daemon *d)
{
	double age = d->kube ? kubelet_age(d->kube) : -1;

	return age >= 0 && age <= 3 * d->cfg.kubelet.interval_s + d->cfg.kubelet.timeout_s;
}

/*
 * Walk again when containers appear that the last walk did not know, or every
 * RESCAN_S. Past the first period only containers new since the previous
 * sample are looked up (both are sorted): the others were known, or listed
 * unresolved, a period ago.
 */
static void maybe_rescan(struct daemon *d)
{
	bool fresh = unresolved_fresh(&d->unresolved, &d->table, &d->cur,
				      d->prev_checked ? &d->prev : NULL);

	d->prev_checked = true;		/* cur, prev from the next period on */
	if (!fresh && now_s() - d->last_scan < RESCAN_S)
		return;
	rescan(d);
	/* what is still unknown (gone already, too deep) does not trigger the next walk */
	unresolved_reset(&d->unresolved, &d->table, &d->cur);
}

/* @doc as a body: one line of JSON and a newline; @doc is put. NULL on no memory. */
static char *json_body(json_object *doc, size_t *len)
{
	const char *s = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	char *out = NULL;

	if (s) {
		*len = strlen(s) + 1;
		out = malloc(*len);
		if (out) {
			memcpy(out, s, *len - 1);
			out[*len - 1] = '\n';
		}
	}
	json_object_put(doc);
	return out;
}

/*
 * /api/containers. Each container's object is written out and freed as soon
 * as it is made, into the document's empty "containers" array: built whole,
 * the json-c tree of 10,000 containers took ≈ 95 MiB.
 */
static char *api_json(struct daemon *d, const struct window *w, const struct suspects *sus,
		      size_t *len)
{
	static const char slot[] = "\"containers\":[]";
	const int flags = JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE;
	json_object *doc = json_object_new_object();
	json_object *hier = json_object_new_object(), *col = json_object_new_object();
	const struct cg_window **rows;
	size_t i, n = report_rows(w, &rows);
	const char *text, *at;
	char verdict[1024], *out = NULL;
	FILE *f;

	json_object_object_add(doc, "period_s", json_object_new_double(d->cfg.period_s));
	json_object_object_add(doc, "duration_s", json_object_new_double(w->dur_ns / 1e9));
	json_object_object_add(hier, "root", json_object_new_string(d->hier.root));
	json_object_object_add(hier, "version", json_object_new_int(d->hier.version));
	json_object_object_add(doc, "hierarchy", hier);
	json_object_object_add(col, "mode", json_object_new_string(collector_mode(d->col)));
	json_object_object_add(col, "long_waits", json_object_new_uint64(w->counters[CNT_LONG_WAITS]));
	json_object_object_add(col, "events_dropped",
			       json_object_new_uint64(w->counters[CNT_EVENTS_DROPPED] +
						      w->counters[CNT_EVENTS_RB_FULL]));
	json_object_object_add(col, "unaccounted_events",
			       json_object_new_uint64(w->counters[CNT_SLOTS_FULL] +
						      w->counters[CNT_TASK_FULL]));
	json_object_object_add(doc, "collector", col);
	json_object_object_add(doc, "containers", json_object_new_array());
	if (sus) {
		json_object_object_add(doc, "suspects", report_suspects_json(sus, &d->table));
		report_verdict(verdict, sizeof(verdict), sus, &d->table, w->dur_ns);
		json_object_object_add(doc, "verdict", json_object_new_string(verdict));
	}
	if (d->enf)	/* after "containers": its slot is the first match below */
		json_object_object_add(doc, "effects", enforcer_verdicts_json(d->enf));
	/* Quotes inside strings are escaped, so the first match is the key. */
	text = json_object_to_json_string_ext(doc, flags);
	at = text ? strstr(text, slot) : NULL;
	f = at ? open_memstream(&out, len) : NULL;
	if (f) {
		fwrite(text, 1, at - text + sizeof(slot) - 2, f);	/* up to the '[' */
		for (i = 0; i < n; i++) {
			json_object *o = report_container_json(rows[i],
						container_table_get(&d->table, rows[i]->cgid));
			json_object *enf = d->enf ? enforcer_container_json(d->enf, rows[i]->cgid) :
				NULL;

			if (enf)
				json_object_object_add(o, "enforcement", enf);
			if (i)
				fputc(',', f);
			fputs(json_object_to_json_string_ext(o, flags), f);
			json_object_put(o);
		}
		fputs(at + sizeof(slot) - 2, f);	/* "]" and the rest */
		fputc('\n', f);
		if (fclose(f)) {
			free(out);
			out = NULL;
		}
	}
	json_object_put(doc);
	free(rows);
	return out;
}

/* The batch capacity, the node agents' and the enforcement metrics, after the exporter's. */
static int append_metrics(struct daemon *d, const struct exporter_sink *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return -ENOMEM;
	batch_node_metrics(&d->batch, f);
	if (d->kube)
		kubelet_metrics(d->kube, f);
	if (d->nm)
		poller_metrics(d->nm, f);
	if (d->slo)
		poller_metrics(d->slo, f);
	if (d->node)
		poller_metrics(d->node, f);
	fprintf(f, "# HELP koord_bpf_config_last_reload_successful 0 when the last configuration read "
		   "(SIGHUP, an edit of the file, a new NodeSLO) was refused: the one before runs.\n"
		   "# TYPE koord_bpf_config_last_reload_successful gauge\n"
		   "koord_bpf_config_last_reload_successful %d\n"
		   "# HELP koord_bpf_config_reloads_total Configurations read after the start.\n"
		   "# TYPE koord_bpf_config_reloads_total counter\n"
		   "koord_bpf_config_reloads_total{result=\"ok\"} %llu\n"
		   "koord_bpf_config_reloads_total{result=\"error\"} %llu\n",
		!d->reload_failed, d->reloads_ok, d->reloads_err);
	err = d->enf ? enforcer_metrics(d->enf, f) : 0;
	if (fclose(f) || err)
		err = -ENOMEM;
	else if (len)
		err = out->fn(out->ctx, buf, len);
	free(buf);
	return err;
}

/*
 * What the last period measured, for rendering on request. The state lock
 * covers it and the daemon's tables: a period changes them under it, a
 * render reads them under it.
 */
static struct {
	pthread_mutex_t lock;
	struct daemon *d;
	bool ready;			/* a period has completed */
	struct window w;		/* the last period's window */
	struct suspects sus;
	bool ranked;
	struct exporter_info info;
} last = { .lock = PTHREAD_MUTEX_INITIALIZER };

/* /metrics into @out, piece by piece: the whole text is never held. */
static int render_metrics(struct daemon *d, const struct exporter_sink *out)
{
	int err = exporter_render_to(&d->exp, &d->prev, &last.w, &d->table, &last.info, out);

	return err ? err : append_metrics(d, out);
}

/* An exporter_sink: to standard output (--once). */
static int write_stdout(void *ctx, const char *p, size_t n)
{
	return fwrite(p, 1, n, stdout) == n ? 0 : -EIO;
}

static struct body *render_body(enum body_kind kind)
{
	struct body *b;
	struct gz_out g;
	size_t len = 0;
	char *p = NULL;
	int err = 0;

	pthread_mutex_lock(&last.lock);
	b = body_get(kind);	/* another request may have rendered it meanwhile */
	if (!b && last.ready) {
		if (kind == BODY_METRICS) {
			struct exporter_sink sink = { gz_write, &g };

			err = gz_begin(&g);
			if (!err)
				b = gz_end(&g, (err = render_metrics(last.d, &sink)));
		} else if (kind == BODY_API) {
			p = api_json(last.d, &last.w, last.ranked ? &last.sus : NULL, &len);
			b = body_new(p, len);
		} else {
			p = json_body(batch_node_json(&last.d->batch, &last.d->cfg), &len);
			b = body_new(p, len);
		}
		if (!b)
			log_warn("rendering %s: %s", body_path[kind], strerror(err ? -err : ENOMEM));
		else
			b = body_keep(kind, b);
	}
	pthread_mutex_unlock(&last.lock);
	/* a render frees many small blocks (labels, JSON objects): give the pages back */
	malloc_trim(0);
	return b;
}

/* One period: sample, then under the state lock the window, a walk if needed, and the actions. */
static int period(struct daemon *d)
{
	struct suspects sus = {};
	struct window w = {};
	struct sample tmp;
	double t0 = now_s();
	bool ranked;
	int err;

	err = collector_sample(d->col, &d->cur);
	if (err) {
		log_err("cannot read the collector's maps: %s", strerror(-err));
		return err;
	}
	pthread_mutex_lock(&last.lock);
	if ((d->kube && kubelet_generation(d->kube) != d->kube_gen) ||
	    (d->nm && poller_generation(d->nm) != d->nm_gen)) {
		d->kube_gen = d->kube ? kubelet_generation(d->kube) : 0;
		d->nm_gen = d->nm ? poller_generation(d->nm) : 0;
		d->last_scan = 0;	/* a new answer: walk and classify again */
	}
	maybe_rescan(d);
	err = window_compute(&d->prev, &d->cur, &w);
	/* ranked once: the enforcer's culprits and the API's suspects are the same list */
	ranked = !err && !suspects_rank(&w, &d->table, &sus);
	if (!err && d->enf) {
		enforcer_set_pods_fresh(d->enf, pods_fresh(d));
		enforcer_period(d->enf, &w, &d->table, ranked ? &sus : NULL, now_s());
	}
	if (!err)
		err = exporter_update(&d->exp, &w, &d->cur);
	if (!err && d->kube)
		kubelet_unseen_requests(d->kube, &d->table, &d->bhost.unseen_cpu,
					&d->bhost.unseen_mem);
	if (!err)
		err = batch_node_period(&d->batch, &d->cfg, &w, &d->table, &d->bhost, now_s());
	if (err) {
		pthread_mutex_unlock(&last.lock);
		window_free(&w);
		suspects_free(&sus);
		log_err("period: %s", strerror(-err));
		return err;
	}
	tmp = d->prev;
	d->prev = d->cur;
	d->cur = tmp;
	window_free(&last.w);
	suspects_free(&last.sus);
	last.d = d;
	last.w = w;
	last.sus = sus;
	last.ranked = ranked;
	last.info = (struct exporter_info){
		.version = KOORD_BPF_VERSION, .mode = collector_mode(d->col),
		.cgroup_root = d->hier.root, .cgroup_version = d->hier.version,
		.period_s = d->cfg.period_s, .last_period_s = d->last_work, .scans = d->scans,
		.journal_set_aside = d->set_aside,
		.buckets_online_only = d->cfg.metrics.buckets == METRICS_BUCKETS_ONLINE,
	};
	last.ready = true;
	d->last_work = now_s() - t0;
	publish(now_s());	/* under the lock: no body of the last period is kept after this */
	pthread_mutex_unlock(&last.lock);
	log_debug("period: %zu containers, %u read, %zu known, %.1f ms", d->prev.n, d->prev.read,
		  d->table.n, d->last_work * 1e3);
	return 0;
}

/*
 * Records are counted by the collector and drained so the ring never fills.
 * One whose culprit the last walk did not know (a new pod, a new YARN tree)
 * wakes the loop to walk and act at once instead of at the next period.
 */
static int on_event(void *ctx, const struct long_wait_event *ev)
{
	struct daemon *d = ctx;
	__u64 id = ev->culprit_cgid;

	if (d->enf && d->cfg.be.enable && d->cfg.react_on_long_waits && id &&
	    !container_table_get(&d->table, id) && !unresolved_has(&d->unresolved, id)) {
		urgent = true;
		urgent_id = id;
		urgent_wait_ns = ev->wait_ns;
	}
	return 0;
}

/*
 * A walk and the BE wake-up priority between periods. Called only once
 * react_after has passed: a record that comes sooner (a pod's second
 * container, 50 ms after its first) waits for it instead of for the period.
 */
static void react(struct daemon *d)
{
	const struct container *c;
	char name[512];

	urgent = false;
	react_after = now_s() + REACT_GAP_S;
	pthread_mutex_lock(&last.lock);
	rescan(d);
	c = container_table_get(&d->table, urgent_id);
	log_info("an online wait of %.1f ms behind %s, new since the last walk: walked at once",
		 urgent_wait_ns / 1e6,
		 c ? container_label(c, name, sizeof(name)) : "a container the walk does not find");
	enforcer_react(d->enf, &d->table, now_s());
	pthread_mutex_unlock(&last.lock);
	/* still unknown (gone already, too deep): its next records do not walk again */
	if (!c)
		unresolved_add(&d->unresolved, urgent_id);
}

/*
 * Until @deadline (CLOCK_MONOTONIC seconds), a signal, or a record that asks
 * for react() once it may run, draining long-wait records.
 */
static void sleep_until(struct collector *col, double deadline)
{
	double left, now;
	int err;

	while (!stop && (now = now_s()) < deadline) {
		if (urgent && now >= react_after)
			return;
		left = (urgent && react_after < deadline ? react_after : deadline) - now;
		err = collector_poll(col, left > 0.25 ? 250 : (int)(left * 1000) + 1);
		if (err < 0 && err != -EINTR) {
			log_warn("reading long-wait records: %s", strerror(-err));
			usleep(left > 0.25 ? 250000 : left * 1e6 + 1);
		}
	}
}

static int install_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };	/* no SA_RESTART: poll returns EINTR */

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGINT, &sa, NULL) || sigaction(SIGTERM, &sa, NULL) ||
	    sigaction(SIGHUP, &sa, NULL))
		return -errno;
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

/* ---- configuration, journal, writer ---- */

static int rules_append(struct class_rules *dst, const struct class_rules *src)
{
	struct class_rule *v;
	size_t i;

	if (!src->n)
		return 0;
	v = realloc(dst->v, (dst->n + src->n) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	dst->v = v;
	for (i = 0; i < src->n; i++) {
		v[dst->n].glob = strdup(src->v[i].glob);
		if (!v[dst->n].glob)
			return -ENOMEM;
		v[dst->n++].qos = src->v[i].qos;
	}
	return 0;
}

/* "NodeSLO NAME (resourceVersion V)", for messages. */
static const char *slo_name(const struct nodeslo_doc *slo, char *buf, size_t len)
{
	snprintf(buf, len, "NodeSLO %s (resourceVersion %s)", slo->name,
		 *slo->resource_version ? slo->resource_version : "none");
	return buf;
}

/*
 * The config: @slo's when given, else the file's (or the defaults), with
 * the command line's overrides; rules: the line's first.
 */
static int load_config(const struct options *o, const struct nodeslo_doc *slo,
		       struct koord_config *c, struct class_rules *rules)
{
	char err[512], name[400];
	int r;

	memset(rules, 0, sizeof(*rules));
	if (slo) {
		r = config_parse_nodeslo(slo_name(slo, name, sizeof(name)), slo->text, slo->len,
					 o->config, c, err, sizeof(err));
		if (r) {
			log_err("%s", err);
			config_free(c);
			return r;
		}
	} else if (o->config) {
		r = config_load(o->config, c, err, sizeof(err));
		if (r) {
			log_err("%s", err);
			config_free(c);	/* a failed load leaves the defaults, allocated */
			return r;
		}
	} else {
		config_defaults(c);
	}
	if (o->listen) {
		free(c->listen);
		c->listen = strdup(o->listen);
	}
	if (o->period)
		c->period_s = o->period;
	if (o->state_dir) {
		free(c->state_dir);
		c->state_dir = strdup(o->state_dir);
	}
	r = rules_append(rules, &o->rules);
	if (!r)
		r = rules_append(rules, &c->rules);
	if (r || !c->listen || !c->state_dir) {
		log_err("out of memory");
		class_rules_free(rules);
		config_free(c);
		return -ENOMEM;
	}
	return 0;
}

/*
 * Values of the last run that no retry can put back (a path outside changed
 * cgroupRoots, a cpuset naming a CPU now offline): refusing to start would
 * refuse forever. The journal, which now holds just them, is kept aside for
 * a person (each logged by journal_restore), and the daemon starts.
 */
static int set_aside(struct daemon *d, int left)
{
	char from[PATH_MAX], to[PATH_MAX + 32];

	snprintf(from, sizeof(from), "%s/journal", d->cfg.state_dir);
	snprintf(to, sizeof(to), "%s/journal.set-aside.%lld", d->cfg.state_dir,
		 (long long)time(NULL));
	if (rename(from, to)) {
		log_err("%d values in %s could not be restored, nor the file be set aside (%s); "
			"not starting", left, from, strerror(errno));
		return -EIO;
	}
	log_err("%d values of the last run could not be restored (outside cgroupRoots, or "
		"unwritable): set aside in %s; starting without them", left, to);
	d->set_aside = (unsigned int)left;
	return 0;
}

/*
 * A journal left by a run that did not stop cleanly: put its values back
 * first. What cannot be is set aside when the daemon is to start (@start),
 * else kept in the journal for the next start.
 */
static int replay_journal(struct daemon *d, bool start)
{
	struct journal j = {};
	char err[256];
	int r, left;

	r = journal_load(&j, d->cfg.state_dir, err, sizeof(err));
	if (r) {
		log_err("%s/journal: %s; not starting (restore the values by hand or remove the file)",
			d->cfg.state_dir, r == -EBADMSG ? err : strerror(-r));
		journal_close(&j);
		return r;
	}
	if (!j.n) {
		/* none, or an empty one (older runs left one): no file either way */
		left = writer_restore_journal(&d->writer, &j);
		journal_close(&j);
		return left < 0 ? left : 0;
	}
	log_warn("a previous run did not stop cleanly: restoring %zu cgroup values from %s/journal",
		 j.n, d->cfg.state_dir);
	left = writer_restore_journal(&d->writer, &j);
	journal_close(&j);
	if (left < 0)
		return left;
	if (left && !start)
		log_err("%d values of the last run could not be put back: kept in %s/journal for "
			"the next start", left, d->cfg.state_dir);
	else if (left)
		return set_aside(d, left);
	return 0;
}

/* One daemon per state dir: the fd of its lock file, flock'ed, or a -errno (logged). */
static int lock_state_dir(struct daemon *d)
{
	char path[PATH_MAX];
	int fd, r;

	if (mkdir(d->cfg.state_dir, 0700) && errno != EEXIST) {
		r = -errno;
		log_err("cannot create the state dir %s: %s", d->cfg.state_dir, strerror(-r));
		return r;
	}
	snprintf(path, sizeof(path), "%s/lock", d->cfg.state_dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB)) {
		r = -errno;
		log_err("%s: %s", path, r == -EWOULDBLOCK ?
			"another koord-bpf uses this state dir" : strerror(-r));
		if (fd >= 0)
			close(fd);
		return r;
	}
	return fd;
}

/* Ready to write: one daemon per state dir, the old journal replayed, a new one open. */
static int journal_start(struct daemon *d)
{
	int fd, r;

	if (d->o->dry_run || d->journal.dir)
		return 0;
	fd = lock_state_dir(d);
	if (fd < 0)
		return fd;
	/* held until exit: the lock is the fd */
	r = replay_journal(d, true);
	if (!r)
		r = journal_open(&d->journal, d->cfg.state_dir);
	if (r) {
		if (r != -EIO && r != -EBADMSG)
			log_err("cannot open the journal in %s: %s", d->cfg.state_dir, strerror(-r));
		memset(&d->journal, 0, sizeof(d->journal));
		close(fd);
		return r;
	}
	return 0;
}

/*
 * The config does not load, so this run stops; but a journal a crashed run
 * left would keep BE suppressed while the pod crash-loops on the bad edit.
 * Put its values back from --state-dir's journal, or the default's (the
 * config's stateDir is unknown), writing below the cgroup mounts (its
 * cgroupRoots are unknown too); what cannot be stays for the next start.
 */
static void replay_without_config(struct daemon *d)
{
	const char *mounts[HIERARCHY_MOUNTS];
	char path[PATH_MAX];
	size_t n;
	int fd, err;

	config_defaults(&d->cfg);
	if (d->o->state_dir) {
		free(d->cfg.state_dir);
		d->cfg.state_dir = strdup(d->o->state_dir);
	}
	if (!d->cfg.state_dir ||
	    snprintf(path, sizeof(path), "%s/journal", d->cfg.state_dir) >= (int)sizeof(path) ||
	    access(path, F_OK))
		goto out;	/* no crashed run to undo (or no memory to tell) */
	if (d->o->dry_run) {
		log_warn("%s is left from a run that did not stop cleanly; a dry run does not "
			 "restore it", path);
		goto out;
	}
	err = hierarchies_find(&d->hs);
	if (err) {
		log_err("cannot read the cgroup mounts to put back %s: %s", path, strerror(-err));
		goto out;
	}
	writer_init(&d->writer, &d->journal, false);
	n = hierarchies_mounts(&d->hs, mounts);
	for (size_t i = 0; i < n; i++)
		writer_add_root(&d->writer, mounts[i]);
	if (d->o->cgroup_root)
		writer_add_root(&d->writer, d->o->cgroup_root);
	log_warn("not starting without a valid config; putting back what the last run wrote first "
		 "(%s)", path);
	fd = lock_state_dir(d);
	if (fd >= 0) {
		replay_journal(d, false);
		close(fd);
	}
	writer_free(&d->writer);
out:
	config_free(&d->cfg);
}

/* Put back every value written; returns how many could not be. */
static int restore_all(struct daemon *d, const char *why)
{
	unsigned long long others = d->writer.left;
	int left;

	if (d->o->dry_run || !d->journal.dir)
		return 0;
	left = writer_restore_all(&d->writer);
	others = d->writer.left - others;
	if (left)
		log_err("%s: %d cgroup values could not be restored; they stay in %s/journal "
			"for the next start", why, left, d->cfg.state_dir);
	else if (others)
		log_info("%s: every cgroup value written is back to its original, but %llu that "
			 "another writer set since (left as it set them)", why, others);
	else
		log_info("%s: every cgroup value written is back to its original", why);
	return left;
}

/* Would @b write other values than @a (both enforcing)? The fields the actions read. */
static bool writes_differ(const struct koord_config *a, const struct koord_config *b)
{
	/* both from config_defaults()'s memset: padding compares equal */
	return memcmp(&a->be, &b->be, sizeof(a->be)) ||
	       a->be_wakeup_priority != b->be_wakeup_priority || a->wakeup_by != b->wakeup_by ||
	       memcmp(&a->reservation, &b->reservation, sizeof(a->reservation)) ||
	       a->suppress_smoothing_windows != b->suppress_smoothing_windows ||
	       memcmp(&a->throttle, &b->throttle, sizeof(a->throttle));
}

/* The --config file's identity now, to tell an edit (a ConfigMap swaps the file). */
static void config_stat(const struct daemon *d, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	if (d->o->config && stat(d->o->config, st))
		memset(st, 0, sizeof(*st));
}

static bool same_file(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
	       a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/*
 * Was the --config file edited since it was read? Only once it has stayed
 * the same for a period: a file written in place is not read half-written.
 */
static bool config_edited(struct daemon *d)
{
	struct stat st;
	bool settled;

	if (!d->o->config)
		return false;
	config_stat(d, &st);
	settled = same_file(&st, &d->config_seen);
	d->config_seen = st;
	return settled && !same_file(&st, &d->config_st);
}

/*
 * SIGHUP, an edit of the file, or a new NodeSLO (@slo): the file read again
 * with the NodeSLO (@slo, else the one applied), a valid result replaces the
 * config, a bad one changes nothing.
 */
static bool do_reload(struct daemon *d, const struct nodeslo_doc *slo)
{
	struct koord_config nc;
	struct class_rules nr;
	bool was_on = d->cfg.be.enable, rewrite;
	char source[PATH_MAX + 400], name[400];
	size_t i;

	if (!slo && d->slo_cur.text)
		slo = &d->slo_cur;
	if (!slo && !d->o->config) {
		log_info("reload: no --config file; nothing to reload");
		return false;
	}
	config_stat(d, &d->config_st);	/* this version is read: no second reload for it */
	if (slo)
		slo_name(slo, name, sizeof(name));
	if (slo && d->o->config)
		snprintf(source, sizeof(source), "%s over %s", name, d->o->config);
	else
		snprintf(source, sizeof(source), "%s", slo ? name : d->o->config);
	if (load_config(d->o, slo, &nc, &nr)) {
		log_err("reload of %s failed: keeping the previous configuration", source);
		d->reloads_err++;
		d->reload_failed = true;
		return false;
	}
	/* these are bound at start */
	if (strcmp(nc.listen, d->cfg.listen) || strcmp(nc.health_listen, d->cfg.health_listen) ||
	    strcmp(nc.state_dir, d->cfg.state_dir) || nc.ncgroup_roots != d->cfg.ncgroup_roots)
		log_warn("reload: listen, healthListen, stateDir and cgroupRoots take effect at the "
			 "next start");
	if (strcmp(nc.kubelet.url, d->cfg.kubelet.url) || strcmp(nc.yarn.nm_url, d->cfg.yarn.nm_url))
		log_warn("reload: kubelet and yarn take effect at the next start");
	if (nc.react_wait_us != d->cfg.react_wait_us ||
	    (nc.react_on_long_waits && !d->cfg.react_on_long_waits))
		log_warn("reload: reactWaitUs (the records' threshold in the loaded programs) takes "
			 "effect at the next start");
	for (i = 0; i < nc.ncgroup_roots; i++)
		free(nc.cgroup_roots[i]);
	for (i = 0; i < d->cfg.ncgroup_roots; i++)
		nc.cgroup_roots[i] = d->cfg.cgroup_roots[i];
	nc.ncgroup_roots = d->cfg.ncgroup_roots;
	d->cfg.ncgroup_roots = 0;
	free(nc.listen);
	nc.listen = d->cfg.listen;
	d->cfg.listen = NULL;
	free(nc.state_dir);
	nc.state_dir = d->cfg.state_dir;
	d->cfg.state_dir = NULL;
	nc.reservation.node = d->cfg.reservation.node;	/* the Node object's, not the file's */
	rewrite = was_on && (!nc.be.enable || writes_differ(&d->cfg, &nc));
	config_free(&d->cfg);
	d->cfg = nc;
	class_rules_free(&d->rules);
	d->rules = nr;
	/* enabled by the reload: journaled like at a start (the state dir is the running one) */
	if (d->cfg.be.enable && !was_on && journal_start(d)) {
		log_err("reload: cannot journal; enforcement stays off");
		d->cfg.be.enable = false;
	}
	/*
	 * What the writes depend on changed: converge to what the new config
	 * writes from scratch. Everything goes back and a fresh enforcer
	 * starts over; a partial undo (cpu.idle kept after beWakeupPriority
	 * went off, a quota after a switch to cpuset) stayed until the stop.
	 */
	if (rewrite) {
		restore_all(d, d->cfg.be.enable ? "enforcement changed" : "enforcement disabled");
		enforcer_free(d->enf);
		d->enf = NULL;
		if (enforcer_new(&d->cfg, &d->hs, &d->writer, &d->enf))
			log_err("out of memory: enforcement off");
	} else if (d->enf) {
		enforcer_set_config(d->enf, &d->cfg);
	}
	pthread_mutex_lock(&shared.lock);
	shared.period = d->cfg.period_s;
	pthread_mutex_unlock(&shared.lock);
	rescan(d);
	d->reloads_ok++;
	d->reload_failed = false;
	log_info("reloaded %s: enforcement %s", source, d->cfg.be.enable ? "on" : "off");
	return true;
}

/*
 * @doc (taken over) as the NodeSLO last read and, when @applied, as the one
 * of the configuration. 0 or -ENOMEM.
 */
static int slo_keep(struct daemon *d, struct nodeslo_doc *doc, bool applied)
{
	int r = applied ? nodeslo_doc_copy(doc, &d->slo_cur) : 0;

	nodeslo_doc_free(&d->slo_seen);
	d->slo_seen = *doc;
	memset(doc, 0, sizeof(*doc));
	return r;
}

/* A new answer of the NodeSLO poller: applied when its text is not the one last read. */
static void poll_nodeslo(struct daemon *d)
{
	struct nodeslo_doc doc;
	int r;

	if (!d->slo || poller_generation(d->slo) == d->slo_gen)
		return;
	r = nodeslo_take(d->slo, &doc, &d->slo_gen);
	if (r) {
		if (r != -ENOENT)
			log_err("nodeslo: %s", strerror(-r));
		return;
	}
	if (doc.len == d->slo_seen.len && !memcmp(doc.text, d->slo_seen.text, doc.len)) {
		nodeslo_doc_free(&doc);	/* read at start, or refused already */
		return;
	}
	if (slo_keep(d, &doc, do_reload(d, &doc)))
		log_err("nodeslo: out of memory");
}

/*
 * A new answer of the Node object: what it reserves counts from the next
 * period (the suppression and the batch capacity read it each period; no
 * write is undone for it).
 */
static void poll_node(struct daemon *d)
{
	struct node_reservation r;
	struct node_object n;
	char cpus[CPUSET_TEXT_MAX];

	if (!d->node || poller_generation(d->node) == d->node_gen ||
	    node_object_take(d->node, &n, &d->node_gen))
		return;
	node_object_reservation(&n, &r);
	if (!memcmp(&r, &d->cfg.reservation.node, sizeof(r)))
		return;
	d->cfg.reservation.node = r;
	cpuset_format(&r.cpus, cpus, sizeof(cpus));
	log_info("node %s reserves %.3g cores and %.0f MiB for the system (the kubelet's %.3g and "
		 "%.0f MiB; " NODE_RESERVATION_ANNOTATION " %s%.3g and %.0f MiB, CPUs %s): now %.3g "
		 "cores and %.0f MiB with koordBPF.reservation", n.name, r.cpu, r.memory / 1048576,
		 n.kubelet_cpu, n.kubelet_memory / 1048576, n.annotated ? "" : "(none) ",
		 n.annotation.cpu, n.annotation.memory / 1048576, *cpus ? cpus : "none",
		 config_reserved_cores(&d->cfg), config_reserved_memory(&d->cfg) / 1048576);
}

/*
 * --nodeslo at start: one read, before anything is written, so enforcement
 * is the NodeSLO's from the first period. An unreachable API server or a
 * NodeSLO refused leaves the file (or the defaults) until the poller brings
 * a good one.
 */
static int start_nodeslo(struct daemon *d)
{
	struct options *o = d->o;
	struct nodeslo_doc doc;
	char why[1600], name[400], url[1024];
	bool applied;

	if (!o->nodeslo_token)
		o->nodeslo_token = SA_TOKEN;
	if (!o->nodeslo_ca)
		o->nodeslo_ca = SA_CA;
	if (http_expand_url(o->nodeslo, url, sizeof(url), why, sizeof(why))) {
		log_err("--nodeslo %s", why);	/* a mistake of the command line: never right */
		return -EINVAL;
	}
	if (nodeslo_get(o->nodeslo, o->nodeslo_token, o->nodeslo_ca, &doc, why, sizeof(why))) {
		log_warn("nodeslo: %s; starting from %s until it answers", why,
			 o->config ? o->config : "the defaults");
		return 0;
	}
	applied = !load_config(o, &doc, &d->cfg, &d->rules);
	if (applied)
		log_info("configuration: %s%s%s", slo_name(&doc, name, sizeof(name)),
			 o->config ? " over " : "", o->config ? o->config : "");
	else
		log_err("%s refused: starting from %s until a good one comes",
			slo_name(&doc, name, sizeof(name)), o->config ? o->config : "the defaults");
	d->reload_failed = !applied;
	if (slo_keep(d, &doc, applied)) {
		log_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* --check-config: 0 when valid. */
static int check_config(const char *path)
{
	struct koord_config c;
	char err[512];

	if (config_load(path, &c, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	printf("%s: valid; enforcement %s, wake-up priority %s%s, cpuSuppressPolicy %s, eviction %s\n",
	       path, c.be.enable ? "on" : c.ignored ? "off (values not supported, above)" : "off",
	       !c.be_wakeup_priority ? "off" : c.be.enable ? "on" : "on when enforcing",
	       !c.be_wakeup_priority ? "" : c.wakeup_by == WAKEUP_BY_IDLE ? " (cpu.idle)" : " (lowest weight)",
	       c.be.cpu_suppress_policy == SUPPRESS_CFS_QUOTA ? "cfsQuota" : "cpuset",
	       !c.eviction.enable ? "off" : c.eviction.backend == EVICT_HOOK ? "hook" : "kill");
	config_free(&c);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = { .pmu = PMU_SOURCE_AUTO };
	struct collector_opts copts = {};
	struct daemon d = { .o = &o, .last_work = -1 };
	struct MHD_Daemon *mhd = NULL, *health = NULL;
	char jpath[PATH_MAX];
	int err, lfd = -1, hfd = -1;
	double next;

	log_prog = "koord-bpf";
	/* From the start a SIGTERM/SIGINT, even while loading, ends it cleanly with 0. */
	err = install_signals();
	if (!err)
		err = parse_args(argc, argv, &o);
	if (err)
		return 1;
	if (o.check_config)
		return check_config(o.check_config);
	if (o.nodeslo && start_nodeslo(&d))
		return 1;
	if (o.node) {	/* a ${VAR} unset: a mistake of the command line, never right */
		char url[1024], why[512];

		if (http_expand_url(o.node, url, sizeof(url), why, sizeof(why))) {
			log_err("--node %s", why);
			return 1;
		}
	}
	/* a bad file stops everything here, once a crashed run's writes are undone */
	if (!d.slo_cur.text && load_config(&o, NULL, &d.cfg, &d.rules)) {
		replay_without_config(&d);
		return 1;
	}
	config_stat(&d, &d.config_st);
	d.config_seen = d.config_st;
	shared.period = d.cfg.period_s;
	if (!o.once) {
		lfd = open_listener(d.cfg.listen);
		if (lfd < 0) {
			err = lfd;
			goto out;
		}
		if (*d.cfg.health_listen && (hfd = open_listener(d.cfg.health_listen)) < 0) {
			err = hfd;
			goto out;
		}
	}
	err = cpu_hierarchy_find(o.cgroup_root, &d.hier);
	if (err) {
		log_err("%s: %s", o.cgroup_root ? o.cgroup_root : "no cgroup hierarchy carries the cpu controller",
			strerror(-err));
		goto out;
	}
	err = hierarchies_find(&d.hs);
	if (err) {
		log_err("cannot read the cgroup mounts: %s", strerror(-err));
		goto out;
	}
	if (o.cgroup_root) {	/* the hierarchy given wins for the cpu controller */
		snprintf(d.hs.cpu, sizeof(d.hs.cpu), "%s", d.hier.root);
		d.hs.cpu_version = d.hier.version;
	}
	d.bhost = (struct batch_host){ .meminfo = "/proc/meminfo", .memory_root = d.hs.memory,
				       .memory_version = d.hs.memory_version, .cpus = get_nprocs() };
	writer_init(&d.writer, o.dry_run ? NULL : &d.journal, o.dry_run);
	writer_roots(&d, true);
	snprintf(jpath, sizeof(jpath), "%s/journal", d.cfg.state_dir);
	if (!o.once && (d.cfg.be.enable || !access(jpath, F_OK))) {
		err = journal_start(&d);
		if (err)
			goto out;
	} else if (o.dry_run && !access(jpath, F_OK)) {
		log_warn("%s is left from a run that did not stop cleanly; a dry run does not restore it",
			 jpath);
	}
	if (o.dry_run && d.cfg.be.enable)
		log_info("dry run: actions are decided and logged, nothing is written");
	err = container_table_scan(&d.table, d.hier.root, &d.rules, NULL);
	if (err) {
		log_err("cannot read %s: %s", d.hier.root, strerror(-err));
		goto out;
	}
	d.scans = 1;
	d.last_scan = now_s();
	copts = (struct collector_opts){ .hier = &d.hier, .max_containers = o.max_containers,
					 .pmu_source = o.pmu };
	/* bound at start: the threshold is read-only data of the loaded programs */
	if (d.cfg.react_on_long_waits)
		copts.react_wait_ns = (__u64)(d.cfg.react_wait_us * 1000);
	if (stop)
		goto out;
	err = collector_open(&copts, &d.col);
	if (!err) {
		unsigned int slots;
		unsigned long long bytes = collector_map_bytes(d.col, &slots);

		/* what sizes the pod's memory limit (docs/deploy.md) */
		log_info("collector: %u container slots on %u CPUs, maps %.1f MiB", slots - 1,
			 collector_nr_cpus(d.col), bytes / 1048576.0);
		err = privileges_drop();	/* loaded, attached, perf events open, bound */
	}
	if (err || stop)
		goto out;
	err = collector_set_classes(d.col, &d.table);
	d.classes_published = !err;
	if (!err)
		err = collector_watch_events(d.col, on_event, &d);
	if (!err)
		err = collector_sample(d.col, &d.prev);
	if (!err && !o.once)
		err = enforcer_new(&d.cfg, &d.hs, &d.writer, &d.enf);
	if (err) {
		log_err("cannot start watching: %s", strerror(-err));
		goto out;
	}
	next = now_s() + d.cfg.period_s;

	if (o.once) {
		struct exporter_sink out = { write_stdout, NULL };

		sleep_until(d.col, next);
		err = period(&d);
		if (!err)
			err = render_metrics(&d, &out);
		goto out;
	}

	if (*d.cfg.kubelet.url) {
		struct http_opts ko = {
			.url = d.cfg.kubelet.url, .token_file = d.cfg.kubelet.token_file,
			.ca_file = d.cfg.kubelet.ca_file, .insecure = d.cfg.kubelet.insecure,
			.interval_s = d.cfg.kubelet.interval_s, .timeout_s = d.cfg.kubelet.timeout_s,
		};

		err = kubelet_start(&ko, &d.kube);
		if (err)
			goto out;
		shared.kube = d.kube;
	}
	if (o.nodeslo) {	/* after the privileges are dropped, as the other pollers */
		err = nodeslo_start(o.nodeslo, o.nodeslo_token, o.nodeslo_ca,
				    o.nodeslo_interval ? o.nodeslo_interval : NODESLO_INTERVAL_S, &d.slo);
		if (err)
			goto out;
	}
	if (o.node) {
		err = node_object_start(o.node, o.nodeslo_token ? o.nodeslo_token : SA_TOKEN,
					o.nodeslo_ca ? o.nodeslo_ca : SA_CA,
					o.nodeslo_interval ? o.nodeslo_interval : NODESLO_INTERVAL_S,
					&d.node);
		if (err)
			goto out;
	}
	if (*d.cfg.yarn.nm_url) {
		struct http_opts no = { .url = d.cfg.yarn.nm_url, .interval_s = d.cfg.yarn.interval_s,
					.timeout_s = d.cfg.yarn.timeout_s };

		err = nodemanager_start(&no, &d.nm);
		if (err)
			goto out;
	}
	mhd = serve(lfd, on_request, HTTP_CONNECTIONS, HTTP_PER_ADDRESS);
	if (!mhd) {
		log_err("cannot start the HTTP server on %s", d.cfg.listen);
		err = -EIO;
		goto out;
	}
	lfd = -1;	/* MHD closes it */
	if (hfd >= 0) {
		health = serve(hfd, on_health, HEALTH_CONNECTIONS, HEALTH_PER_ADDRESS);
		if (!health) {
			log_err("cannot start the health server on %s", d.cfg.health_listen);
			err = -EIO;
			goto out;
		}
		hfd = -1;
		log_info("serving http://%s/healthz", d.cfg.health_listen);
	}
	log_info("serving http://%s/metrics, /api/containers, /api/batch, /healthz; period %.3g s, %s, %s (cgroup v%d); "
		 "enforcement %s%s", d.cfg.listen, d.cfg.period_s, collector_mode(d.col), d.hier.root,
		 d.hier.version, d.cfg.be.enable ? "on" : "off", o.dry_run ? " (dry run)" : "");

	while (!stop) {
		sleep_until(d.col, next);
		if (stop)
			break;
		if (urgent && now_s() < next) {
			react(&d);
			continue;
		}
		urgent = false;
		if (config_edited(&d))
			reload = 1;
		if (reload || (d.slo && poller_generation(d.slo) != d.slo_gen) ||
		    (d.node && poller_generation(d.node) != d.node_gen)) {
			/* the tables a render reads change: under the state lock */
			pthread_mutex_lock(&last.lock);
			if (reload) {
				reload = 0;
				do_reload(&d, NULL);
			}
			poll_nodeslo(&d);
			poll_node(&d);
			pthread_mutex_unlock(&last.lock);
		}
		next += d.cfg.period_s;
		if (next < now_s())	/* fell behind: skip, do not burst */
			next = now_s() + d.cfg.period_s;
		period(&d);	/* on failure the last good period is still served */
	}
	log_info("stopping");
	err = 0;
out:
	/*
	 * The values go back first: before anything else can fail, and before
	 * waiting for HTTP clients and a poll in flight, within the grace period.
	 */
	if (restore_all(&d, "stopping"))
		err = -EIO;
	if (mhd)
		MHD_stop_daemon(mhd);
	if (health)
		MHD_stop_daemon(health);
	kubelet_stop(d.kube);
	poller_stop(d.nm);
	poller_stop(d.slo);
	poller_stop(d.node);
	nodeslo_doc_free(&d.slo_seen);
	nodeslo_doc_free(&d.slo_cur);
	if (lfd >= 0)
		close(lfd);
	if (hfd >= 0)
		close(hfd);
	publish(0);
	window_free(&last.w);
	suspects_free(&last.sus);
	enforcer_free(d.enf);
	writer_free(&d.writer);
	if (d.journal.dir)
		journal_close(&d.journal);
	collector_close(d.col);
	exporter_free(&d.exp);
	batch_node_free(&d.batch);
	sample_free(&d.prev);
	sample_free(&d.cur);
	unresolved_free(&d.unresolved);
	container_table_free(&d.table);
	class_rules_free(&o.rules);
	class_rules_free(&d.rules);
	config_free(&d.cfg);
	return err ? 1 : 0;
}
