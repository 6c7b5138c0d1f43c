/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Classification of cgroup paths: kubelet layouts, YARN, rules, hostile input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "classify.h"

#define UID	"6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9e"
#define UID_	"6f5b3b1e_2f4c_4c1e_9a7e_0d3c2b1a0f9e"	/* systemd's spelling */
#define STATIC_UID "3a1c5e0b9d8f7a6b5c4d3e2f1a0b9c8d"	/* static pod: md5 hex */
#define CID	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define YARN	"container_e01_1700000000000_0001_01_000002"
#define YARN_NOEPOCH "container_1700000000000_0001_01_000002"

/*
 * A macro so a failure points at the table row. Classes are compared by
 * name so the message is readable.
 */
#define CHECK(path, q, k, uid, cid) do {					\
	struct cg_identity id_;							\
	classify_path((path), &id_);						\
	assert_string_equal(qos_name(id_.qos), qos_name(q));			\
	assert_int_equal(id_.kind, (k));					\
	assert_string_equal(id_.pod_uid, (uid));				\
	assert_string_equal(id_.container_id, (cid));				\
} while (0)

static void test_cgroupfs(void **state)
{
	CHECK("/", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/kubepods", KC_SYSTEM, CG_QOS_ROOT, "", "");
	CHECK("/kubepods/burstable", KC_LS, CG_QOS_ROOT, "", "");
	CHECK("/kubepods/besteffort", KC_BE, CG_QOS_ROOT, "", "");
	/* guaranteed pods sit directly under the root */
	CHECK("/kubepods/pod" UID, KC_LSR, CG_POD, UID, "");
	CHECK("/kubepods/pod" UID "/" CID, KC_LSR, CG_CONTAINER, UID, CID);
	CHECK("/kubepods/burstable/pod" UID, KC_LS, CG_POD, UID, "");
	CHECK("/kubepods/burstable/pod" UID "/" CID, KC_LS, CG_CONTAINER, UID, CID);
	CHECK("/kubepods/besteffort/pod" UID, KC_BE, CG_POD, UID, "");
	CHECK("/kubepods/besteffort/pod" UID "/" CID, KC_BE, CG_CONTAINER, UID, CID);
	/* CRI-O keeps its prefix under cgroupfs too */
	CHECK("/kubepods/burstable/pod" UID "/crio-" CID, KC_LS, CG_CONTAINER, UID, CID);
	/* trailing slash and doubled slashes are the same path */
	CHECK("//kubepods//besteffort/pod" UID "/" CID "/", KC_BE, CG_CONTAINER, UID, CID);
}

static void test_systemd(void **state)
{
	CHECK("/kubepods.slice", KC_SYSTEM, CG_QOS_ROOT, "", "");
	CHECK("/kubepods.slice/kubepods-burstable.slice", KC_LS, CG_QOS_ROOT, "", "");
	CHECK("/kubepods.slice/kubepods-besteffort.slice", KC_BE, CG_QOS_ROOT, "", "");
	CHECK("/kubepods.slice/kubepods-pod" UID_ ".slice", KC_LSR, CG_POD, UID, "");
	CHECK("/kubepods.slice/kubepods-pod" UID_ ".slice/cri-containerd-" CID ".scope",
	      KC_LSR, CG_CONTAINER, UID, CID);
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice",
	      KC_LS, CG_POD, UID, "");
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
	      "/docker-" CID ".scope", KC_LS, CG_CONTAINER, UID, CID);
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice",
	      KC_BE, CG_POD, UID, "");
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice"
	      "/crio-" CID ".scope", KC_BE, CG_CONTAINER, UID, CID);
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_ ".slice"
	      "/pouch-" CID ".scope", KC_BE, CG_CONTAINER, UID, CID);
}

static void test_prefix_and_nesting(void **state)
{
	/* the kubepods root below some prefix */
	CHECK("/kubelet.slice/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	      UID_ ".slice/cri-containerd-" CID ".scope", KC_LS, CG_CONTAINER, UID, CID);
	CHECK("/custom/root/kubepods/besteffort/pod" UID "/" CID, KC_BE, CG_CONTAINER, UID, CID);
	/* systemd with kubelet --cgroup-root=/kubelet.slice names slices after all ancestors */
	CHECK("/kubelet.slice/kubelet-kubepods.slice", KC_SYSTEM, CG_QOS_ROOT, "", "");
	CHECK("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice"
	      "/kubelet-kubepods-besteffort-pod" UID_ ".slice/cri-containerd-" CID ".scope",
	      KC_BE, CG_CONTAINER, UID, CID);
	CHECK("/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-pod" UID_ ".slice",
	      KC_LSR, CG_POD, UID, "");
	/* only the first kubepods component is the root */
	CHECK("/kubepods/besteffort/x/kubepods/burstable", KC_BE, CG_OTHER, "", "");
	/* dirs below a container are the container */
	CHECK("/kubepods/burstable/pod" UID "/" CID "/init.scope/sub", KC_LS, CG_CONTAINER, UID, CID);
	CHECK("/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" CID ".scope/x",
	      KC_LSR, CG_CONTAINER, UID, CID);
	/* static pods' UIDs are 32 bare hex digits */
	CHECK("/kubepods/burstable/pod" STATIC_UID "/" CID, KC_LS, CG_CONTAINER, STATIC_UID, CID);
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" STATIC_UID
	      ".slice", KC_LS, CG_POD, STATIC_UID, "");
}

static void test_yarn(void **state)
{
	CHECK("/kubepods/besteffort/hadoop-yarn", KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/hadoop-yarn/" YARN, KC_BE, CG_YARN, "", YARN);
	CHECK("/kubepods/besteffort/hadoop-yarn/" YARN_NOEPOCH, KC_BE, CG_YARN, "", YARN_NOEPOCH);
	CHECK("/kubepods.slice/kubepods-besteffort.slice/hadoop-yarn/" YARN,
	      KC_BE, CG_YARN, "", YARN);
	/* outside kubepods, still BE */
	CHECK("/hadoop-yarn", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/" YARN, KC_BE, CG_YARN, "", YARN);
	/* even below burstable (misconfigured NodeManager): a YARN task is offline */
	CHECK("/kubepods/burstable/hadoop-yarn/" YARN, KC_BE, CG_YARN, "", YARN);
	/* NodeManager inside a pod's container: the pod stays known */
	CHECK("/kubepods/besteffort/pod" UID "/" CID "/" YARN, KC_BE, CG_YARN, UID, YARN);
	/* below a YARN container is that container */
	CHECK("/hadoop-yarn/" YARN "/" YARN_NOEPOCH "/x", KC_BE, CG_YARN, "", YARN);

	/* names that are not Hadoop ContainerIds */
	CHECK("/hadoop-yarn/container_", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_abc", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_1_2_3", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_1_2_3_4_5", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_e_1_2_3_4", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_e01_1_2_3_", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_1__2_3_4", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/hadoop-yarn/container_1_2_3_4x", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/hadoop-yarn/Container_1_2_3_4", KC_BE, CG_OTHER, "", "");
}

static void test_not_pods(void **state)
{
	/* pod-looking names without a valid UID: off the layout, class inherited */
	CHECK("/kubepods/burstable/podfoo", KC_LS, CG_OTHER, "", "");
	CHECK("/kubepods/burstable/pod", KC_LS, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/pod" UID "x", KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/pod6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9", KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/pod6f5b3b1e-2f4c-4c1e-9a7e-0d3c2b1a0f9g", KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods/besteffort/pod6f5b3b1e2-f4c-4c1e-9a7e-0d3c2b1a0f9e", KC_BE, CG_OTHER, "", "");
	/* separators belong to the driver */
	CHECK("/kubepods/besteffort/pod" UID_, KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID ".slice",
	      KC_BE, CG_OTHER, "", "");
	/* systemd pod slices must carry their parent's prefix */
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-burstable-pod" UID_ ".slice",
	      KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_,
	      KC_BE, CG_OTHER, "", "");
	CHECK("/kubepods.slice/pod" UID_ ".slice", KC_SYSTEM, CG_OTHER, "", "");
	/* kubelet's own dirs directly under the root */
	CHECK("/kubepods/kubelet", KC_SYSTEM, CG_OTHER, "", "");
	/* and nothing below an unknown dir becomes a pod */
	CHECK("/kubepods/besteffort/x/pod" UID, KC_BE, CG_OTHER, "", "");
	/* cgroupfs QoS names do not apply under systemd and vice versa */
	CHECK("/kubepods.slice/besteffort", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/kubepods/kubepods-besteffort.slice", KC_SYSTEM, CG_OTHER, "", "");
	/* near-misses of the root */
	CHECK("/kubepodsX/besteffort/pod" UID, KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/kubepods-besteffort.slice", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/system.slice/docker-" CID ".scope", KC_SYSTEM, CG_OTHER, "", "");
}

static void test_not_containers(void **state)
{
	/* a non-container dir in a pod keeps the pod's uid and class */
	CHECK("/kubepods/burstable/pod" UID "/not-an-id", KC_LS, CG_OTHER, UID, "");
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
	      "/docker-" CID, KC_LS, CG_OTHER, UID, "");
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
	      "/rkt-" CID ".scope", KC_LS, CG_OTHER, UID, "");
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
	      "/docker-.scope", KC_LS, CG_OTHER, UID, "");
	CHECK("/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice"
	      "/crio-conmon-" CID ".scope", KC_LS, CG_OTHER, UID, "");
	/* a bare id is cgroupfs only */
	CHECK("/kubepods.slice/kubepods-pod" UID_ ".slice/" CID, KC_LSR, CG_OTHER, UID, "");
}

static void test_odd_input(void **state)
{
	static const char *const odd[] = {
		"/kubepods/besteffort/pod" UID "/ab cd",
		"/kubepods/besteffort/pod" UID "/abc\ndef",
		"/kubepods/besteffort/pod" UID "/ab%cd",
		"/kubepods/besteffort/pod" UID "/\xc3\xa9t\xc3\xa9",	/* "été" */
		"/kubepods/besteffort/pod" UID "/\xff\xfe",
	};
	struct cg_identity id;
	size_t i;

	for (i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
		CHECK(odd[i], KC_BE, CG_OTHER, UID, "");

	CHECK("", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("////", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("kubepods/burstable", KC_LS, CG_QOS_ROOT, "", "");	/* no leading '/' */
	CHECK("/kube pods/burstable", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/kubepods\n/burstable", KC_SYSTEM, CG_OTHER, "", "");
	CHECK("/%s%n%x/kubepods/besteffort", KC_BE, CG_QOS_ROOT, "", "");

	classify_path(NULL, &id);
	assert_int_equal(id.qos, KC_SYSTEM);
	assert_int_equal(id.kind, CG_OTHER);
}

/* Names far beyond every buffer: no overflow, and no truncated identity. */
static void test_overlong(void **state)
{
	size_t big = 100000;
	char *path = malloc(big + 256);
	struct cg_identity id;
	char *p;

	assert_non_null(path);

	/* a 200-digit container id does not fit container_id: not a container */
	p = path + sprintf(path, "/kubepods/besteffort/pod" UID "/");
	memset(p, 'a', 200);
	p[200] = '\0';
	CHECK(path, KC_BE, CG_OTHER, UID, "");

	/* a 200-char YARN name: not a YARN container (its id would be cut) */
	p = path + sprintf(path, "/hadoop-yarn/container_1_2_3_");
	memset(p, '7', 200);
	p[200] = '\0';
	CHECK(path, KC_SYSTEM, CG_OTHER, "", "");

	/* a pod component of 100 kB */
	p = path + sprintf(path, "/kubepods/burstable/pod");
	memset(p, 'f', big);
	p[big] = '\0';
	CHECK(path, KC_LS, CG_OTHER, "", "");

	/* a deep path of one-letter dirs */
	for (p = path; p < path + big; p += 2)
		memcpy(p, "/a", 2);
	*p = '\0';
	classify_path(path, &id);
	assert_int_equal(id.qos, KC_SYSTEM);
	free(path);
}

static void test_qos_names(void **state)
{
	assert_int_equal(qos_from_name("LSE"), KC_LSE);
	assert_int_equal(qos_from_name("lsr"), KC_LSR);
	assert_int_equal(qos_from_name("Ls"), KC_LS);
	assert_int_equal(qos_from_name("be"), KC_BE);
	assert_int_equal(qos_from_name("System"), KC_SYSTEM);
	assert_int_equal(qos_from_name("FOO"), -1);
	assert_int_equal(qos_from_name(""), -1);
	assert_int_equal(qos_from_name("BE "), -1);
	/* internal classes are not assignable */
	assert_int_equal(qos_from_name("IDLE"), -1);
	assert_int_equal(qos_from_name("UNCLASSIFIED"), -1);
	assert_int_equal(qos_from_name(NULL), -1);

	assert_string_equal(qos_name(KC_UNCLASSIFIED), "UNCLASSIFIED");
	assert_string_equal(qos_name(KC_LSE), "LSE");
	assert_string_equal(qos_name(KC_LSR), "LSR");
	assert_string_equal(qos_name(KC_LS), "LS");
	assert_string_equal(qos_name(KC_BE), "BE");
	assert_string_equal(qos_name(KC_SYSTEM), "SYSTEM");
	assert_string_equal(qos_name(KC_IDLE), "IDLE");
	assert_string_equal(qos_name(KC_NR), "?");
	assert_string_equal(qos_name((enum koord_class)-1), "?");
}

static void test_rules(void **state)
{
	struct class_rules rules = { 0 };
	struct cg_identity id;
	char err[256] = "";

	assert_int_equal(class_rules_add(&rules, "/system.slice/*=LS", err, sizeof(err)), 0);
	assert_int_equal(class_rules_add(&rules, "*/pod" UID "/*=lse", err, sizeof(err)), 0);
	/* shadowed by the rule above for the same container */
	assert_int_equal(class_rules_add(&rules, "/kubepods/*=SYSTEM", err, sizeof(err)), 0);
	/* the glob may hold '=': split where a QoS name follows */
	assert_int_equal(class_rules_add(&rules, "/odd=dir/*=BE", err, sizeof(err)), 0);
	assert_int_equal(class_rules_add(&rules, "/a==BE", err, sizeof(err)), 0);
	assert_int_equal(rules.n, 5);
	assert_string_equal(rules.v[3].glob, "/odd=dir/*");
	assert_string_equal(rules.v[4].glob, "/a=");
	assert_string_equal(err, "");

	/* '*' crosses '/' */
	classify(&rules, "/system.slice/a/b/c", &id);
	assert_int_equal(id.qos, KC_LS);
	assert_int_equal(id.kind, CG_OTHER);

	/* first match wins; identity still comes from the layout */
	classify(&rules, "/kubepods/besteffort/pod" UID "/" CID, &id);
	assert_int_equal(id.qos, KC_LSE);
	assert_int_equal(id.kind, CG_CONTAINER);
	assert_string_equal(id.pod_uid, UID);
	assert_string_equal(id.container_id, CID);

	classify(&rules, "/kubepods/besteffort", &id);
	assert_int_equal(id.qos, KC_SYSTEM);
	assert_int_equal(id.kind, CG_QOS_ROOT);

	classify(&rules, "/odd=dir/x", &id);
	assert_int_equal(id.qos, KC_BE);

	/* no match: the default */
	classify(&rules, "/hadoop-yarn/" YARN, &id);
	assert_int_equal(id.qos, KC_BE);
	assert_int_equal(id.kind, CG_YARN);
	classify(&rules, "/user.slice", &id);
	assert_int_equal(id.qos, KC_SYSTEM);

	/* no rules at all */
	classify(NULL, "/kubepods/burstable", &id);
	assert_int_equal(id.qos, KC_LS);

	class_rules_free(&rules);
	assert_null(rules.v);
	assert_int_equal(rules.n, 0);
	class_rules_free(&rules);	/* twice is harmless */
}

#define BAD_RULE(spec, msg) do {						\
	char err_[256] = "";							\
	assert_int_equal(class_rules_add(&rules, (spec), err_, sizeof(err_)), -EINVAL); \
	assert_string_equal(err_, (msg));					\
	assert_int_equal(rules.n, 0);						\
} while (0)

static void test_bad_rules(void **state)
{
	struct class_rules rules = { 0 };
	char tiny[16];

	BAD_RULE("x", "bad --class rule \"x\": missing '=' (want GLOB=QOS)");
	BAD_RULE("", "bad --class rule \"\": missing '=' (want GLOB=QOS)");
	BAD_RULE("x=FOO", "bad --class rule \"x=FOO\": unknown QoS \"FOO\" "
		 "(want LSE, LSR, LS, BE or SYSTEM)");
	BAD_RULE("x=", "bad --class rule \"x=\": unknown QoS \"\" "
		 "(want LSE, LSR, LS, BE or SYSTEM)");
	BAD_RULE("a=b=FOO", "bad --class rule \"a=b=FOO\": unknown QoS \"FOO\" "
		 "(want LSE, LSR, LS, BE or SYSTEM)");
	BAD_RULE("x=IDLE", "bad --class rule \"x=IDLE\": unknown QoS \"IDLE\" "
		 "(want LSE, LSR, LS, BE or SYSTEM)");
	BAD_RULE("=BE", "bad --class rule \"=BE\": empty glob");

	/* the message is cut to the buffer, and no buffer is fine too */
	assert_int_equal(class_rules_add(&rules, "x", tiny, sizeof(tiny)), -EINVAL);
	assert_string_equal(tiny, "bad --class rul");
	assert_int_equal(class_rules_add(&rules, "x", NULL, 0), -EINVAL);
	assert_int_equal(rules.n, 0);
	class_rules_free(&rules);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroupfs),
		cmocka_unit_test(test_systemd),
		cmocka_unit_test(test_prefix_and_nesting),
		cmocka_unit_test(test_yarn),
		cmocka_unit_test(test_not_pods),
		cmocka_unit_test(test_not_containers),
		cmocka_unit_test(test_odd_input),
		cmocka_unit_test(test_overlong),
		cmocka_unit_test(test_qos_names),
		cmocka_unit_test(test_rules),
		cmocka_unit_test(test_bad_rules),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
