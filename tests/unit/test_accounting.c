// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The collector's arithmetic and its reading protocol on plain structs laid
 * out as the BPF maps are (bpf/koord.h): a sample's running stretch under
 * the switch sequence count, the per-epoch max, the clamped waiting
 * integrals, the overflow-free scaling and the slot reuse order.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <time.h>
#include <cmocka.h>
#include "running.h"

#define NR_SLOTS	4
#define HOG_SLOT	1
#define HOG_CGID	4242

/* One CPU as BPF keeps it: its state, and its row of cg_cpu entries. */
struct fake_cpu {
	struct cpu_state cs;
	struct cg_cpu_stats row[NR_SLOTS];
	__u64 clock;		/* the fake clock the reader sees */
	int switch_at_read;	/* switches to make inside the reader's clock read */
	__u64 preempt_ns;	/* the reader loses the CPU this long at its next clock read */
};

/* What sched.bpf.c's switch does to the reader's fields: seq odd, charge, seq even. */
static void fake_switch(struct cpu_state *cs, struct cg_cpu_stats *row, __u64 now)
{
	__atomic_store_n(&cs->seq, cs->seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&row[cs->cur_slot].cpu_ns, row[cs->cur_slot].cpu_ns + now - cs->last_switch,
			 __ATOMIC_RELAXED);
	__atomic_store_n(&cs->last_switch, now, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	__atomic_store_n(&cs->seq, cs->seq + 1, __ATOMIC_RELAXED);
}

/* The reader's clock; the CPU switches right then when asked to. */
static __u64 fake_clock(void *ctx)
{
	struct fake_cpu *f = ctx;
	__u64 now = f->clock;

	if (f->switch_at_read) {
		f->switch_at_read--;
		fake_switch(&f->cs, f->row, now);
	}
	f->clock += 1000 + f->preempt_ns;
	f->preempt_ns = 0;
	return now;
}

static void fake_hog(struct fake_cpu *f)
{
	memset(f, 0, sizeof(*f));
	f->cs.cur_slot = HOG_SLOT;
	f->cs.cur_cgid = HOG_CGID;
	f->cs.last_switch = 1000;
	f->row[HOG_SLOT].cpu_ns = 5000;
	f->clock = 11000;
}

/*
 * A hog that ran since 1000 with 5000 charged before: at any moment t its
 * time is 5000 + t - 1000, whether or not the CPU switched (hog to hog) in
 * between. A switch between reading the state and reading the counters once
 * counted the stretch 1000..11000 twice (25000 at t = 11000).
 */
static void running_stretch_counted_once(void **state)
{
	struct fake_cpu f;
	struct cpu_running r;

	fake_hog(&f);
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, HOG_CGID);
	assert_int_equal(r.slot, HOG_SLOT);
	assert_int_equal(r.cpu_ns, 5000 + 11000 - 1000);

	fake_hog(&f);
	f.switch_at_read = 1;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	/* the switch at 11000 is seen, the read repeated at 12000 */
	assert_int_equal(r.cpu_ns, 5000 + 12000 - 1000);
	assert_int_equal(f.row[HOG_SLOT].cpu_ns, 5000 + 11000 - 1000);
}

/*
 * A reader caught by two switches with a preemption between them (3 ms, as
 * a loaded machine gives) reads again: a time limit alone gave up after the
 * second try and left a hog's whole stretch out of the sample.
 */
static void running_read_survives_a_preempted_reader(void **state)
{
	struct fake_cpu f;
	struct cpu_running r;

	fake_hog(&f);
	f.switch_at_read = 2;
	f.preempt_ns = 3000000;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, HOG_CGID);
	assert_int_equal(r.cpu_ns, 5000 + (f.clock - 1000) - 1000);
}

/*
 * The hog's switch-in emitted no sched_switch: the state still names task A
 * (slot HOG_SLOT), switched in at 1000, while the observe program saw B
 * (slot 2) running, 6000 by its own clock at 9000, and A's own last run
 * 1500 long. B's clock lags (it is brought up to date at ticks): B ran the
 * 6500 after A. Read at 11000: B's part is 8500, A's 1500, as on_switch will
 * charge them when B leaves. Were B's clock more than a tick short of that,
 * a third task ran unseen between them: B gets its own clock's part only,
 * and the gap is neither's. Once a switch came after the observation
 * (another count), it says nothing.
 */
static void running_stretch_split_when_a_switch_was_unseen(void **state)
{
	struct fake_cpu f;
	struct cpu_running r;

	fake_hog(&f);
	f.cs.cur_task = 0xa000;
	f.row[2].cpu_ns = 700;
	f.cs.obs_seq = f.cs.seq;
	f.cs.obs_task = 0xb000;
	f.cs.obs_slot = 2;
	f.cs.obs_cgid = 4343;
	f.cs.obs_at = 9000;
	f.cs.obs_run = 6000;
	f.cs.obs_rec_run = 1500;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, 4343);
	assert_int_equal(r.slot, 2);
	assert_int_equal(r.cpu_ns, 700 + 8500);
	assert_int_equal(r.rec_cgid, HOG_CGID);
	assert_int_equal(r.rec_slot, HOG_SLOT);
	assert_int_equal(r.rec_cpu_ns, 5000 + 1500);

	/* seen 20 ms after A's switch-in: B's clock says 9 ms, A's 1500 ns; 11 ms unaccounted */
	f.clock = 20001000 + 2000;
	f.cs.obs_at = 20001000;
	f.cs.obs_run = 9000000;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cpu_ns, 700 + 9000000 + 2000);
	assert_int_equal(r.rec_cpu_ns, 5000 + 1500);
	f.cs.obs_at = 9000;
	f.cs.obs_run = 6000;

	/* idle was running (no container): A keeps its own run, nothing else is charged */
	f.clock = 11000;
	f.cs.obs_slot = 0;
	f.cs.obs_cgid = 0;
	f.cs.obs_run = 0;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, 0);
	assert_int_equal(r.cpu_ns, 0);
	assert_int_equal(r.rec_cpu_ns, 5000 + 1500);

	/* the observation is of an earlier state: the stretch is the recorded task's */
	f.clock = 11000;
	f.cs.obs_seq = f.cs.seq + 2;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, HOG_CGID);
	assert_int_equal(r.cpu_ns, 5000 + 11000 - 1000);
	assert_int_equal(r.rec_cgid, 0);
}

/* A CPU caught switching at every read gives up, with nothing counted. */
static void running_gives_up_on_a_busy_cpu(void **state)
{
	struct fake_cpu f;
	struct cpu_running r;

	fake_hog(&f);
	f.switch_at_read = 1 << 30;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), -EAGAIN);
	assert_int_equal(r.cgid, 0);
	assert_int_equal(r.cpu_ns, 0);
	/* odd: a switch in progress is waited out, not read; one that never ends is given up */
	fake_hog(&f);
	f.cs.seq = 1;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), -EAGAIN);
	assert_true(f.clock - 11000 > 2000000);
	/* idle: nothing running, nothing added */
	fake_hog(&f);
	f.cs.cur_slot = 0;
	f.cs.cur_cgid = 0;
	assert_int_equal(cpu_running_read(&f.cs, f.row, 0, NR_SLOTS, fake_clock, &f, &r), 0);
	assert_int_equal(r.cgid, 0);
}

static __u64 mono(void *ctx)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

struct race {
	struct fake_cpu f;
	int stop;
	unsigned long switches;
};

static void *switcher(void *arg)
{
	struct race *r = arg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		fake_switch(&r->f.cs, r->f.row, mono(NULL));
		__atomic_store_n(&r->switches, r->switches + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * The same against a CPU switching as fast as another thread can: every
 * reading of the hog's time lies between the clock before and after it,
 * and readings never go backwards.
 */
static void running_read_against_a_switching_cpu(void **state)
{
	static struct race r;
	struct cpu_running run;
	__u64 t0, before, after, last = 0, reads = 0, retried = 0;
	pthread_t th;

	memset(&r, 0, sizeof(r));
	r.f.cs.cur_slot = HOG_SLOT;
	r.f.cs.cur_cgid = HOG_CGID;
	t0 = mono(NULL);
	r.f.cs.last_switch = t0;
	assert_int_equal(pthread_create(&th, NULL, switcher, &r), 0);
	/* 300 ms, and until both sides made many turns however loaded the machine */
	while (mono(NULL) - t0 < 300000000ull || reads < 10000 ||
	       __atomic_load_n(&r.switches, __ATOMIC_RELAXED) < 10000) {
		before = mono(NULL);
		if (cpu_running_read(&r.f.cs, r.f.row, 0, NR_SLOTS, mono, NULL, &run)) {
			retried++;
			continue;
		}
		after = mono(NULL);
		assert_true(run.cpu_ns >= before - t0);
		assert_true(run.cpu_ns <= after - t0);
		assert_true(run.cpu_ns >= last);
		last = run.cpu_ns;
		reads++;
	}
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	print_message("%llu reads against %lu switches (%llu gave up)\n",
		      (unsigned long long)reads, r.switches, (unsigned long long)retried);
	assert_true(reads >= 10000 && r.switches >= 10000);
}

/*
 * A container that waited in epoch 5 (50 ms), not in 6 or 7, and once in 8
 * (1 ms) just before the sampler read epoch 7: epoch 7's max is none. The
 * slot 7 & 1 still held epoch 5's 50 ms, which the old test ("the entry's
 * last epoch is 7 or 8") reported.
 */
static void epoch_max_is_of_its_epoch(void **state)
{
	struct cg_cpu_stats st = {};

	epoch_max_note(&st, 5, 50000000);
	assert_int_equal(epoch_max_of(&st, 5), 50000000);
	epoch_max_note(&st, 8, 1000000);
	assert_int_equal(epoch_max_of(&st, 7), 0);
	assert_int_equal(epoch_max_of(&st, 8), 1000000);
	epoch_max_note(&st, 8, 3000000);
	epoch_max_note(&st, 8, 2000000);
	assert_int_equal(epoch_max_of(&st, 8), 3000000);
	/* epoch 0, the very first, on a fresh entry */
	memset(&st, 0, sizeof(st));
	assert_int_equal(epoch_max_of(&st, 0), 0);
	epoch_max_note(&st, 0, 7);
	assert_int_equal(epoch_max_of(&st, 0), 7);
	assert_int_equal(epoch_max_of(&st, 2), 0);
}

static __u64 ref_muldiv(__u64 a, __u64 b, __u64 c)
{
	return (__u64)((unsigned __int128)a * b / c);
}

/*
 * The throttled share of a wait's parts: d * thr / others overflowed once d
 * and thr both passed 4.3 s (2^32 ns) and wrapped to a small number. In
 * fixed point it is within v / 2^20 + 2 of the exact value (while the part
 * is below ~4.9 h), never above v, and never wraps.
 */
static void part_does_not_overflow(void **state)
{
	static const __u64 wholes[] = { 1, 1000, 4294967295ull, 4294967296ull, 10000000000ull,
					KOORD_FRAC_MAX, KOORD_FRAC_MAX + 1, 1ull << 60, ~0ull >> 1 };
	__u64 whole, v, part, got, want;
	size_t i;

	assert_int_equal(koord_part(3000, 1000, 4000), 750);
	for (i = 0; i < sizeof(wholes) / sizeof(wholes[0]); i++) {
		whole = wholes[i];
		for (v = whole; v; v = v / 3)
			for (part = whole; part; part = part / 7) {
				got = koord_part(v, part, whole);
				want = ref_muldiv(v, part, whole);
				assert_true(got <= v);
				if (part <= KOORD_FRAC_MAX)
					assert_true((got > want ? got - want : want - got) <=
						    (v >> KOORD_FRAC_BITS) + 2);
			}
	}
	/* 5 s of a 10 s wait throttled, 6 s of it BE's: 3 s, where the product wrapped */
	got = koord_part(6000000000ull, 5000000000ull, 10000000000ull);
	assert_true(got <= 3000000000ull && 3000000000ull - got <= 6000);
	assert_true(6000000000ull * 5000000000ull / 10000000000ull < 2000000000ull);
}

/* Multiplexed counters: a count scaled by enabled / running time. */
static void muldiv_scales_counters(void **state)
{
	__u64 got;

	assert_int_equal(koord_muldiv(1000, 3, 2), 1500);
	assert_int_equal(koord_muldiv(77, 1ull << 40, 1ull << 40), 77);
	/* 10^10 cycles over 5 s enabled, 2.5 s running: 2 * 10^10 (the product passes 2^64) */
	got = koord_muldiv(10000000000ull, 5000000000ull, 2500000000ull);
	assert_true(got <= 20000000000ull && 20000000000ull - got <= 20000);
	got = koord_muldiv(123456789012ull, 7000000000ull, 6999999999ull);
	assert_true(got <= ref_muldiv(123456789012ull, 7000000000ull, 6999999999ull) &&
		    ref_muldiv(123456789012ull, 7000000000ull, 6999999999ull) - got <=
			    (123456789012ull >> KOORD_FRAC_BITS) + 2);
}

/* The fixed-point cap is a min, without a branch. */
static void frac_cap_is_min(void **state)
{
	assert_int_equal(koord_frac_cap(0), 0);
	assert_int_equal(koord_frac_cap(12345), 12345);
	assert_int_equal(koord_frac_cap(KOORD_FRAC_MAX - 1), KOORD_FRAC_MAX - 1);
	assert_int_equal(koord_frac_cap(KOORD_FRAC_MAX), KOORD_FRAC_MAX);
	assert_int_equal(koord_frac_cap(KOORD_FRAC_MAX + 1), KOORD_FRAC_MAX);
	assert_int_equal(koord_frac_cap(1ull << 62), KOORD_FRAC_MAX);
}

/*
 * A run's waiting integral read as s + n * t at both ends. A migration adds
 * n and s in two steps without the CPU's lock: read between them, the
 * integral is off by a whole timestamp. It is kept within [0, delta * n_max].
 */
static void run_integral_is_clamped(void **state)
{
	__s64 now = 5000000000000ll, t = now - 700, n = 1, s = -(now - 2000);
	__s64 in = s + n * (now - 3000);	/* one waiter since before the run's start */
	__s64 at_end = s + n * now;		/* 3000 ns later */

	assert_int_equal(run_integral(at_end - in, 3000, 1), 3000);
	/* a second waiter queued at t: n counted, s not yet */
	assert_int_equal(run_integral(s + (n + 1) * now - in, 3000, 2), 6000);
	assert_true(s + (n + 1) * now - in > 1000000000000ll);	/* off by t */
	/* s counted, n not yet: negative */
	assert_int_equal(run_integral(s - t + n * now - in, 3000, 2), 0);
	assert_int_equal(run_integral(0, 3000, 2), 0);
	assert_int_equal(run_integral(2500, 3000, 1), 2500);
}

/* BPF's slot reuse on an entry another thread reads as late events do. */
struct reuse_race {
	struct cg_cpu_stats st;
	int stop;
	__u64 seen_unstamped, reads;
};

static void *late_reader(void *arg)
{
	struct reuse_race *r = arg;
	__u64 b, last = 0;

	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		b = __atomic_load_n(&r->st.born_ns, __ATOMIC_RELAXED);
		if (b < last)
			r->seen_unstamped++;
		last = b;
		__atomic_store_n(&r->reads, r->reads + 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

/*
 * The stamp is written before the entry is cleared and never goes back: an
 * event reading the entry in between cannot take the cleared entry for one
 * it may write. (Clearing the whole entry first left born_ns 0 for a moment.)
 */
static void reuse_stamps_first(void **state)
{
	static struct reuse_race r;
	pthread_t th;
	__u64 now;

	memset(&r, 0, sizeof(r));
	memset(&r.st, 0xff, offsetof(struct cg_cpu_stats, born_ns));
	cg_cpu_stats_reuse(&r.st, 7);
	assert_int_equal(r.st.born_ns, 7);
	assert_int_equal(r.st.cpu_ns, 0);
	assert_int_equal(r.st.own_on_s, 0);
	assert_int_equal(r.st.pmu[PMU_NR - 1], 0);
	assert_int_equal(pthread_create(&th, NULL, late_reader, &r), 0);
	/* until the reader has read a good many times, however late it starts */
	for (now = 8; now < 1000000 || __atomic_load_n(&r.reads, __ATOMIC_RELAXED) < 1000000;
	     now++)
		cg_cpu_stats_reuse(&r.st, now);
	__atomic_store_n(&r.stop, 1, __ATOMIC_RELAXED);
	pthread_join(th, NULL);
	assert_true(r.reads > 0);
	assert_int_equal(r.seen_unstamped, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(running_stretch_counted_once),
		cmocka_unit_test(running_read_survives_a_preempted_reader),
		cmocka_unit_test(running_stretch_split_when_a_switch_was_unseen),
		cmocka_unit_test(running_gives_up_on_a_busy_cpu),
		cmocka_unit_test(running_read_against_a_switching_cpu),
		cmocka_unit_test(epoch_max_is_of_its_epoch),
		cmocka_unit_test(part_does_not_overflow),
		cmocka_unit_test(muldiv_scales_counters),
		cmocka_unit_test(frac_cap_is_min),
		cmocka_unit_test(run_integral_is_clamped),
		cmocka_unit_test(reuse_stamps_first),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
