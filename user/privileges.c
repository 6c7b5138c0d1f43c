// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <linux/bpf.h>
#include <linux/capability.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "log.h"
#include "privileges.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BIT(cap) (1ULL << (cap))

static __u64 kept = ~0ULL;

__u64 privileges_kept(void)
{
	return kept;
}

/* capget(2)/capset(2) of the calling thread, as 64-bit masks (no libcap). */
static int caps_get(__u64 *eff, __u64 *perm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d))
		return -errno;
	*eff = d[0].effective | (__u64)d[1].effective << 32;
	*perm = d[0].permitted | (__u64)d[1].permitted << 32;
	return 0;
}

static int caps_set(__u64 eff, __u64 perm)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (__u32)eff, .permitted = (__u32)perm },
		{ .effective = eff >> 32, .permitted = perm >> 32 },
	};

	return syscall(SYS_capset, &h, d) ? -errno : 0;
}

/*
 * Does every bpf(2) command need a capability here? Kernels before 6.5
 * refuse all of them, map reads included, without CAP_BPF when
 * kernel.unprivileged_bpf_disabled is set; later ones only the loading
 * ones. Asked with the capabilities about to be kept in effect: an info
 * query on no fd is EBADF when allowed, EPERM when not.
 */
static bool bpf_needs_cap(void)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.info.bpf_fd = (__u32)-1;
	return syscall(SYS_bpf, BPF_OBJ_GET_INFO_BY_FD, &a, sizeof(a)) < 0 && errno == EPERM;
}

/* Empty the bounding set but for @keep (needs CAP_SETPCAP in effect). */
static int bound(__u64 keep)
{
	for (int cap = 0; prctl(PR_CAPBSET_READ, cap, 0, 0, 0) >= 0; cap++)
		if (!(keep & BIT(cap)) && prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
			return -errno;
	return 0;
}

static void log_kept(__u64 keep)
{
	static const struct { int cap; const char *name; } names[] = {
		{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" }, { CAP_KILL, "CAP_KILL" },
		{ CAP_BPF, "CAP_BPF" }, { CAP_SYS_ADMIN, "CAP_SYS_ADMIN" },
	};
	char buf[128] = "";
	size_t n = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (keep & BIT(names[i].cap) && n < sizeof(buf))
			n += snprintf(buf + n, sizeof(buf) - n, " %s", names[i].name);
	log_info("capabilities dropped but for:%s", n ? buf : " none");
}

int privileges_drop(void)
{
	__u64 eff = 0, perm = 0, keep;
	int err;

	err = caps_get(&eff, &perm);
	if (err)
		return err;
	keep = perm & (BIT(CAP_DAC_OVERRIDE) | BIT(CAP_KILL));
	err = caps_set(keep, perm);	/* only the effective set: reversible */
	if (err)
		return err;
	if (bpf_needs_cap())
		keep |= perm & BIT(CAP_BPF) ? BIT(CAP_BPF) : perm & BIT(CAP_SYS_ADMIN);
	err = caps_set(perm, perm);
	if (!err && perm & BIT(CAP_SETPCAP))
		err = bound(keep);
	else if (!err)
		log_warn("no CAP_SETPCAP: the bounding set stays "
			 "(no_new_privs still bars the hook)");
	if (!err && prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL)
		err = -errno;	/* EINVAL: no ambient set before 4.3 */
	if (!err && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		err = -errno;
	if (!err)
		err = caps_set(keep, keep);	/* inheritable: none */
	if (err) {
		log_err("cannot drop capabilities: %s", strerror(-err));
		return err;
	}
	kept = keep;
	log_kept(keep);
	return 0;
}
