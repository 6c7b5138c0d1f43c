/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kubelet client against a stand-in kubelet on loopback
 * (data/kubelet_server.py: HTTPS with a certificate openssl makes here,
 * recorded PodLists, malformed and huge answers).
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "evict_policy.h"
#include "kubelet.h"
#include "report.h"
#include "yarn_nm.h"

static struct {
	char dir[256], cert[300], other[300], token[300], bad_token[300];
	pid_t server;
	int port;
} env;

static const char *data_dir(void)
{
	static char path[512];
	const char *slash = strrchr(__FILE__, '/');

	snprintf(path, sizeof(path), "%.*s/data", slash ? (int)(slash - __FILE__) : 1,
		 slash ? __FILE__ : ".");
	return path;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static int write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(text, f);
	return fclose(f);
}

/* A self-signed certificate for 127.0.0.1 as @name.crt / @name.key in the temp dir. */
static int make_cert(const char *name)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cd %s && openssl req -x509 -newkey rsa:2048 -nodes -days 1 "
		 "-subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -keyout %s.key "
		 "-out %s.crt >/dev/null 2>&1", env.dir, name, name);
	return system(cmd);
}

static int setup(void **state)
{
	const char *tmp = getenv("TMPDIR");
	char port_file[300], key[300], buf[16] = "";
	int i;
	FILE *f;

	snprintf(env.dir, sizeof(env.dir), "%s/koord-kubelet-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(env.dir) || make_cert("kubelet") || make_cert("other"))
		return -1;
	snprintf(env.cert, sizeof(env.cert), "%s/kubelet.crt", env.dir);
	snprintf(env.other, sizeof(env.other), "%s/other.crt", env.dir);
	snprintf(key, sizeof(key), "%s/kubelet.key", env.dir);
	snprintf(env.token, sizeof(env.token), "%s/token", env.dir);
	snprintf(env.bad_token, sizeof(env.bad_token), "%s/bad-token", env.dir);
	snprintf(port_file, sizeof(port_file), "%s/port", env.dir);
	if (write_text(env.token, "s3cret-token\n") || write_text(env.bad_token, "wrong"))
		return -1;
	env.server = fork();
	if (env.server < 0)
		return -1;
	if (!env.server) {
		char script[600];

		snprintf(script, sizeof(script), "%s/kubelet_server.py", data_dir());
		execlp("python3", "python3", script, env.cert, key, "s3cret-token", data_dir(),
		       port_file, (char *)NULL);
		_exit(127);
	}
	for (i = 0; i < 100 && !(f = fopen(port_file, "r")); i++)
		usleep(50000);
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	env.port = atoi(buf);
	return env.port > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	if (env.server > 0) {
		kill(env.server, SIGTERM);
		waitpid(env.server, NULL, 0);
	}
	nftw(env.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

static struct http_opts opts(const char *ca, const char *token)
{
	return (struct http_opts){ .token_file = token, .ca_file = ca, .interval_s = 1,
				      .timeout_s = 1 };
}

static int get(const struct http_opts *o, const char *path, char **body, size_t *len,
	       char *err)
{
	char url[256];

	snprintf(url, sizeof(url), "https://127.0.0.1:%d%s", env.port, path);
	*body = NULL;
	err[0] = '\0';
	return http_get(o, url, body, len, err, 512);
}

static void test_fetch(void **state)
{
	struct http_opts o = opts(env.cert, env.token);
	struct pod_list l;
	char err[512], *body;
	size_t len;

	/* the CA and the token: the recorded list */
	assert_int_equal(get(&o, "/pods", &body, &len, err), 0);
	assert_int_equal(pods_parse(body, len, &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 8);
	pods_free(&l);
	free(body);

	/* a wrong token: 401 */
	o.token_file = env.bad_token;
	assert_int_equal(get(&o, "/pods", &body, &len, err), -EIO);
	assert_non_null(strstr(err, "HTTP status 401"));
	/* no token file at all: said before any request */
	o.token_file = "/nonexistent/token";
	assert_int_equal(get(&o, "/pods", &body, &len, err), -ENOENT);
	assert_non_null(strstr(err, "/nonexistent/token"));

	/* a certificate the CA file does not vouch for: refused, unless told to skip */
	o = opts(env.other, env.token);
	assert_int_equal(get(&o, "/pods", &body, &len, err), -EIO);
	assert_true(strstr(err, "certificate") || strstr(err, "SSL"));
	o.insecure = true;
	assert_int_equal(get(&o, "/pods", &body, &len, err), 0);
	free(body);

	/* more than KUBELET_BODY_MAX: refused, nothing kept */
	o = opts(env.cert, env.token);
	assert_int_equal(get(&o, "/huge", &body, &len, err), -EFBIG);
	assert_null(body);
	assert_non_null(strstr(err, "larger than 64 MiB"));
	/* ... also without a Content-Length (chunked), cut off while it streams */
	o.timeout_s = 20;
	assert_int_equal(get(&o, "/huge-chunked", &body, &len, err), -EFBIG);
	assert_null(body);
	o.timeout_s = 1;
	/* a list cut short: fetched, then refused by the parser */
	assert_int_equal(get(&o, "/malformed", &body, &len, err), 0);
	assert_int_equal(pods_parse(body, len, &l, err, sizeof(err)), -EINVAL);
	free(body);
	/* too slow, a 500, nothing listening */
	assert_int_equal(get(&o, "/slow", &body, &len, err), -EIO);
	assert_int_equal(get(&o, "/error", &body, &len, err), -EIO);
	assert_non_null(strstr(err, "HTTP status 500"));
	assert_int_equal(http_get(&o, "https://127.0.0.1:1/pods", &body, &len, err, 512), -EIO);
}

static void test_expand(void **state)
{
	char out[64], err[256];

	setenv("KOORD_TEST_IP", "10.0.0.7", 1);
	assert_int_equal(http_expand_url("https://${KOORD_TEST_IP}:10250/pods", out, sizeof(out),
					    err, sizeof(err)), 0);
	assert_string_equal(out, "https://10.0.0.7:10250/pods");
	assert_int_equal(http_expand_url("http://${KOORD_TEST_UNSET}/pods", out, sizeof(out),
					    err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "${KOORD_TEST_UNSET} is not set"));
	assert_int_equal(http_expand_url("http://x/$HOME/{a}", out, sizeof(out), err,
					    sizeof(err)), 0);
	assert_string_equal(out, "http://x/$HOME/{a}");
	assert_int_equal(http_expand_url("https://${KOORD_TEST_IP}/012345678901234567890123456789"
					    "0123456789012345678901234567890123456789", out,
					    sizeof(out), err, sizeof(err)), -EINVAL);
}

static void put(struct container_table *t, const char *path)
{
	struct container *c = &t->v[t->n++];

	c->path = (char *)path;
	classify_path(path, &c->ident);
}

/* The poller: the list arrives, the labels override the cgroup classes; an unreachable kubelet is down. */
static void test_poller(void **state)
{
	struct container cs[6];
	struct container_table t = { .v = cs };
	char url[128], why[256], *buf = NULL;
	struct http_opts o = opts(env.cert, env.token);
	struct kubelet *k, *down;
	size_t len = 0;
	FILE *f;
	int i;

	put(&t, "/kubepods/burstable/pod11111111-0000-0000-0000-000000000002/c");	/* LSE label */
	put(&t, "/kubepods/burstable/pod11111111-0000-0000-0000-000000000004/c");	/* "lse" */
	put(&t, "/kubepods/pod11111111-0000-0000-0000-000000000001/c");		/* no label */
	put(&t, "/kubepods/burstable/pod99999999-0000-0000-0000-000000000000/c");	/* not listed */
	put(&t, "/kubepods/besteffort/pod11111111-0000-0000-0000-000000000003/c");	/* opted out */
	put(&t, "/kubepods/besteffort/pod11111111-0000-0000-0000-000000000008/c");	/* "LS" */
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/pods", env.port);
	o.url = url;
	assert_int_equal(kubelet_start(&o, &k), 0);
	for (i = 0; i < 100 && !kubelet_generation(k); i++)
		usleep(50000);
	assert_true(kubelet_generation(k) > 0);
	assert_true(kubelet_status(k, why, sizeof(why)));
	assert_int_equal(kubelet_apply(k, &t), 2);
	assert_int_equal(cs[0].ident.qos, KC_LSE);
	assert_string_equal(cs[0].ident.namespace, "default");
	assert_string_equal(cs[0].ident.pod_name, "cache");
	assert_string_equal(cs[3].ident.pod_name, "");
	assert_int_equal(cs[0].ident.prio, PRIO_PROD);	/* none set: LSE is prod */
	assert_int_equal(cs[2].ident.prio, PRIO_PROD);	/* spec.priority 9500 */
	assert_int_equal(cs[3].ident.prio, PRIO_NONE);
	/* spec.priority for the eviction order; no labels: every eviction allowed */
	assert_int_equal(cs[2].ident.priority, 9500);
	assert_int_equal(cs[2].ident.evict_denied, 0);
	assert_int_equal(cs[4].ident.evict_denied, (1u << EVICT_REASON_NR) - 1);
	assert_int_equal(cs[4].ident.priority, 5500);
	assert_int_equal(cs[4].ident.prio, PRIO_BATCH);
	assert_int_equal(cs[1].ident.qos, KC_UNCLASSIFIED);
	assert_int_equal(cs[2].ident.qos, KC_LSR);
	assert_int_equal(cs[3].ident.qos, KC_LS);
	/* a BestEffort pod's own "LS" label: ignored, it stays BE (and is counted) */
	assert_int_equal(cs[5].ident.qos, KC_BE);
	assert_string_equal(cs[5].ident.pod_name, "self-promoted");
	assert_int_equal(kubelet_apply(k, &t), 0);	/* nothing left to change */
	f = open_memstream(&buf, &len);
	kubelet_metrics(k, f);
	fclose(f);
	assert_non_null(strstr(buf, "\nkoord_bpf_kubelet_up 1\n"));
	assert_non_null(strstr(buf, "\nkoord_bpf_kubelet_pods 8\n"));
	assert_non_null(strstr(buf, "\nkoord_bpf_kubelet_qos_labels_ignored 1\n"));
	free(buf);

	/* high-priority pods without a pod cgroup count at request: only "cache" asks for any */
	{
		struct container pod[1];
		struct container_table pt = { .v = pod };
		double cpu, mem;

		kubelet_unseen_requests(k, &pt, &cpu, &mem);
		assert_float_equal(cpu, 3.1, 1e-12);
		assert_float_equal(mem, 1073741824.0, 0);
		put(&pt, "/kubepods/burstable/pod11111111-0000-0000-0000-000000000002");
		kubelet_unseen_requests(k, &pt, &cpu, &mem);
		assert_float_equal(cpu, 0, 0);
		assert_float_equal(mem, 0, 0);
	}
	kubelet_stop(k);

	o.url = "https://127.0.0.1:1/pods";
	assert_int_equal(kubelet_start(&o, &down), 0);
	for (i = 0; i < 100 && !strstr((kubelet_status(down, why, sizeof(why)), why), "127.0.0.1:1");
	     i++)
		usleep(50000);
	assert_false(kubelet_status(down, why, sizeof(why)));
	assert_non_null(strstr(why, "https://127.0.0.1:1/pods"));
	kubelet_stop(down);
}

/* Polls of @k by result, from its metrics. */
static void polls(struct kubelet *k, unsigned long long *ok, unsigned long long *bad)
{
	char *buf = NULL, *at;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	kubelet_metrics(k, f);
	fclose(f);
	at = strstr(buf, "koord_bpf_kubelet_polls_total{result=\"ok\"} ");
	assert_non_null(at);
	*ok = strtoull(strchr(at, ' ') + 1, NULL, 10);
	at = strstr(buf, "koord_bpf_kubelet_polls_total{result=\"error\"} ");
	assert_non_null(at);
	*bad = strtoull(strchr(at, ' ') + 1, NULL, 10);
	free(buf);
}

/*
 * A reload frees the config the poller was started from: the poller keeps
 * its own token and CA paths. Its copy once pointed into the freed config
 * (a use after free under ASan; here the freed strings are also scribbled
 * over, so the next poll fails without ASan too).
 */
static void test_poller_owns_its_options(void **state)
{
	char url[128], *token = strdup(env.token), *ca = strdup(env.cert);
	struct http_opts o = opts(ca, token);
	unsigned long long ok0, bad0, ok, bad;
	unsigned long gen;
	struct kubelet *k;
	int i;

	assert_non_null(token);
	assert_non_null(ca);
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/pods", env.port);
	o.url = url;
	o.interval_s = 0.1;
	assert_int_equal(kubelet_start(&o, &k), 0);
	for (i = 0; i < 100 && !kubelet_generation(k); i++)
		usleep(50000);
	assert_true(kubelet_generation(k) > 0);
	memset(token, 'x', strlen(token));
	memset(ca, 'x', strlen(ca));
	free(token);
	free(ca);
	polls(k, &ok0, &bad0);
	gen = kubelet_generation(k);
	for (i = 0; i < 100; i++) {
		polls(k, &ok, &bad);
		if (ok + bad >= ok0 + bad0 + 3)
			break;
		usleep(50000);
	}
	/*
	 * The same answer again: not parsed again, and no new generation (each
	 * one made the daemon walk and classify every cgroup again).
	 */
	assert_int_equal(kubelet_generation(k), gen);
	kubelet_stop(k);
	assert_true(ok + bad >= ok0 + bad0 + 3);
	assert_int_equal(bad, bad0);

	/* an answer that differs is a new generation each time */
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/pods-changing", env.port);
	o.token_file = env.token;
	o.ca_file = env.cert;
	assert_int_equal(kubelet_start(&o, &k), 0);
	for (i = 0; i < 100 && kubelet_generation(k) < 3; i++)
		usleep(50000);
	assert_true(kubelet_generation(k) >= 3);
	kubelet_stop(k);
}

static void test_nm_parse(void **state)
{
	static const char *const bad[] = {
		"", "[]", "{}", "{\"containers\": []}", "{\"containers\": {\"container\": {}}}",
		"{\"containers\": {\"container\": [", "null", "{\"containers\": null} x",
	};
	static const char none[] = "{\"containers\": null}", empty[] = "{\"containers\": {}}\n";
	static const char typed[] = "{\"containers\": {\"container\": [{\"id\": \"c_1\", "
		"\"totalVCoresNeeded\": \"2\", \"totalMemoryNeededMB\": -5}, 7]}}";
	struct nm_list l;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		assert_int_equal(nm_parse(bad[i], strlen(bad[i]), &l, err, sizeof(err)), -EINVAL);
		assert_true(err[0]);
	}
	/* none running */
	assert_int_equal(nm_parse(none, strlen(none), &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 0);
	assert_int_equal(nm_parse(empty, strlen(empty), &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 0);
	/* wrong types are not trusted */
	assert_int_equal(nm_parse(typed, strlen(typed), &l, err, sizeof(err)), 0);
	assert_int_equal(l.n, 1);
	assert_int_equal(l.v[0].vcores, 0);
	assert_int_equal(l.v[0].memory_mb, 0);
	nm_free(&l);
}

/* NodeManager's recorded answer, polled over loopback, given to the YARN containers and their JSON. */
static void test_nodemanager(void **state)
{
	struct container cs[3];
	struct container_table t = { .v = cs };
	struct http_opts o = opts(env.cert, NULL);
	struct cg_window cw = {};
	struct poller *nm;
	char url[128];
	json_object *j, *y;
	int i;

	put(&t, "/hadoop-yarn/container_e02_1700000000000_0042_03_000007");
	put(&t, "/hadoop-yarn/container_e02_1700000000000_0042_03_000007/sub");
	put(&t, "/hadoop-yarn/container_1700000000000_0009_01_000001");	/* not listed */
	snprintf(url, sizeof(url), "https://127.0.0.1:%d/ws/v1/node/containers", env.port);
	o.url = url;
	assert_int_equal(nodemanager_start(&o, &nm), 0);
	for (i = 0; i < 100 && !poller_generation(nm); i++)
		usleep(50000);
	assert_int_equal(nodemanager_apply(nm, &t), 2);
	assert_int_equal(cs[0].ident.yarn_vcores, 2);
	assert_int_equal(cs[0].ident.yarn_memory_mb, 4096);
	assert_int_equal(cs[1].ident.yarn_vcores, 2);	/* below the task: the task's */
	assert_int_equal(cs[2].ident.yarn_vcores, 0);
	j = report_container_json(&cw, &cs[0]);
	assert_true(json_object_object_get_ex(j, "yarn", &y));
	assert_int_equal(json_object_get_int(json_object_object_get(y, "vcores")), 2);
	assert_int_equal(json_object_get_int(json_object_object_get(y, "memory_mb")), 4096);
	json_object_put(j);
	j = report_container_json(&cw, &cs[2]);
	assert_true(json_object_object_get_ex(j, "yarn", &y));
	assert_true(json_object_object_get_ex(y, "vcores", NULL));
	assert_null(json_object_object_get(y, "vcores"));
	json_object_put(j);
	poller_stop(nm);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fetch),
		cmocka_unit_test(test_expand),
		cmocka_unit_test(test_poller),
		cmocka_unit_test(test_poller_owns_its_options),
		cmocka_unit_test(test_nm_parse),
		cmocka_unit_test(test_nodemanager),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
