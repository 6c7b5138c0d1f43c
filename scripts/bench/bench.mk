# `make bench`: per-event BPF cost next to a floor and Debian's peers, and
# start-up time and locked map memory (docs/performance.md). Included by the
# main Makefile; uses its OUT, CC, CFLAGS, CLANG, BPFTOOL, ARCH, CLANG_SYS_INCLUDES.
# Not part of `make test`: a benchmark is not a test.
#
#   sudo make bench [BENCH_ARGS="--rounds 5 --pipe-loops 100000 ..."]
#   make bench-build   the bench's BPF objects and loader only

BENCH_DIR  := $(OUT)/bench
BENCH_ARGS ?=
BENCH_OBJS := $(BENCH_DIR)/floor.bpf.o $(BENCH_DIR)/prims.bpf.o

.PHONY: bench bench-build

bench-build: $(BENCH_DIR)/koord-bench-load $(BENCH_OBJS) $(BENCH_DIR)/koord-bench-accuracy

bench: all bench-build $(BENCH_DIR)/.deps
	scripts/bench/bench.py --out $(BENCH_DIR) $(BENCH_ARGS)
	scripts/bench/overhead.py $(OVERHEAD_ARGS)
	$(BENCH_DIR)/koord-bench-accuracy

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
