# `make bench`: per-event BPF cost next to a floor and Debian's peers, and
# start-up time and locked map memory; then the whole-system overhead
# (bench-overhead), the daemon's user-space cost per period at 100 to 10,000
# containers (bench-scale), its reaction time (bench-reaction), the
# histogram's accuracy (bench-accuracy) and the journal at 10,000 entries
# (bench-journal); last, one table of every figure with
# its budget (scripts/bench/summary.py; docs/performance.md). Included by the main Makefile; uses
# its OUT, CC, CFLAGS, CLANG, BPFTOOL, ARCH, CLANG_SYS_INCLUDES.
# Not part of `make test`: a benchmark is not a test.
#
#   sudo make bench [BENCH_ARGS="--rounds 5 --pipe-loops 100000 ..."]
#   sudo make bench-scale [SCALE_ARGS="--rounds 3 --sizes 100,1000,10000"]
#   sudo make bench-reaction [REACTION_ARGS="--runs 10 --periods 1,0.2"]
#   sudo make bench-overhead [OVERHEAD_ARGS="--rounds 6"]   sudo make bench-accuracy
#   make bench-journal [JOURNAL_ENTRIES=10000]
#   make bench-summary  the table of every figure from the benches' last results
#   make bench-build   the bench's BPF objects, loader and workloads only

BENCH_DIR  := $(OUT)/bench
BENCH_ARGS ?=
SCALE_ARGS ?=
REACTION_ARGS ?=
OVERHEAD_ARGS ?=
JOURNAL_ENTRIES ?= 10000
BENCH_OBJS := $(BENCH_DIR)/floor.bpf.o $(BENCH_DIR)/prims.bpf.o

.PHONY: bench bench-build bench-scale bench-reaction bench-overhead bench-accuracy bench-journal \
	bench-summary

bench-build: $(BENCH_DIR)/koord-bench-load $(BENCH_OBJS) $(BENCH_DIR)/koord-bench-work \
	     $(BENCH_DIR)/koord-bench-accuracy $(BENCH_DIR)/koord-bench-journal

# bench.py first; then the daemon's tables. Each prints its table with the budgets,
# and summary.py all of them again in one.
bench: all bench-build $(BENCH_DIR)/.deps
	scripts/bench/bench.py --out $(BENCH_DIR) $(BENCH_ARGS)
	scripts/bench/overhead.py --out $(BENCH_DIR) $(OVERHEAD_ARGS)
	scripts/bench/scale.py --out $(BENCH_DIR) $(SCALE_ARGS)
	scripts/bench/reaction.py --out $(BENCH_DIR) $(REACTION_ARGS)
	$(BENCH_DIR)/koord-bench-accuracy > $(BENCH_DIR)/accuracy.txt; rc=$$?; \
		cat $(BENCH_DIR)/accuracy.txt; exit $$rc
	$(BENCH_DIR)/koord-bench-journal $(JOURNAL_ENTRIES) > $(BENCH_DIR)/journal.json
	scripts/bench/summary.py $(BENCH_DIR)

# The table of every figure from what the benches wrote last.
bench-summary:
	scripts/bench/summary.py $(BENCH_DIR)

bench-scale: all bench-build
	scripts/bench/scale.py --out $(BENCH_DIR) $(SCALE_ARGS)

bench-reaction: all bench-build
	scripts/bench/reaction.py --out $(BENCH_DIR) $(REACTION_ARGS)

bench-overhead: all bench-build
	scripts/bench/overhead.py --out $(BENCH_DIR) $(OVERHEAD_ARGS)

bench-accuracy: all bench-build
	$(BENCH_DIR)/koord-bench-accuracy > $(BENCH_DIR)/accuracy.txt; rc=$$?; \
		cat $(BENCH_DIR)/accuracy.txt; exit $$rc

bench-journal: $(BENCH_DIR)/koord-bench-journal
	$(BENCH_DIR)/koord-bench-journal $(JOURNAL_ENTRIES) > $(BENCH_DIR)/journal.json
	cat $(BENCH_DIR)/journal.json

# Item 7: the journal's cost per record and lookup (scripts/bench/journal.c).
$(BENCH_DIR)/koord-bench-journal: scripts/bench/journal.c $(TESTLIB_OBJS) $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(TESTLIB_OBJS) $(OUT)/libkoord.a $(LDLIBS) -o $@

# Item 6: the histogram's percentiles against exact ones (scripts/bench/accuracy.c).
$(BENCH_DIR)/koord-bench-accuracy: scripts/bench/accuracy.c $(TESTLIB_OBJS) $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(TESTLIB_OBJS) $(OUT)/libkoord.a $(LDLIBS) -o $@

# The peers and loads (Debian): libbpf-tools, bpftrace, rt-tests (hackbench), perf, strace.
$(BENCH_DIR)/.deps: scripts/bench/deps.sh
	scripts/bench/deps.sh
	@mkdir -p $(@D) && touch $@

$(BENCH_DIR)/%.tmp.o: scripts/bench/%.bpf.c | $(OUT)/.deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ivmlinux/$(ARCH) \
		$(CLANG_SYS_INCLUDES) -c $< -o $@

# `gen object` keeps BTF and drops DWARF, as for the project's koord.bpf.o.
$(BENCH_DIR)/%.bpf.o: $(BENCH_DIR)/%.tmp.o
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(BENCH_DIR)/koord-bench-load: scripts/bench/load.c | $(OUT)/.deps
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $< -lbpf -lelf -lz -o $@

$(BENCH_DIR)/koord-bench-work: scripts/bench/work.c
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) $< -o $@
