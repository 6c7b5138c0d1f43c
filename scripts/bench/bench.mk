# `make bench`: per-event BPF cost next to a floor and Debian's peers, and
# start-up time and locked map memory (docs/performance.md). Included by the
# main Makefile; uses its OUT, CC, CFLAGS, CLANG, BPFTOOL, ARCH, CLANG_SYS_INCLUDES.
# Not part of `make test`: a benchmark is not a test.
#
#   sudo make bench [BENCH_ARGS="--rounds 5 --pipe-loops 200000 ..."]
#   make bench-build   the floor program and its loader only

BENCH_DIR  := $(OUT)/bench
BENCH_ARGS ?=

.PHONY: bench bench-build

bench-build: $(BENCH_DIR)/koord-bench-floor

bench: all bench-build $(BENCH_DIR)/.deps
	scripts/bench/bench.py --out $(BENCH_DIR) $(BENCH_ARGS)

# The peers and loads (Debian): libbpf-tools, bpftrace, rt-tests (hackbench), perf.
$(BENCH_DIR)/.deps: scripts/bench/deps.sh
	scripts/bench/deps.sh
	@mkdir -p $(@D) && touch $@

$(BENCH_DIR)/floor.tmp.o: scripts/bench/floor.bpf.c | $(OUT)/.deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ivmlinux/$(ARCH) \
		$(CLANG_SYS_INCLUDES) -c $< -o $@

$(BENCH_DIR)/floor.bpf.o: $(BENCH_DIR)/floor.tmp.o
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $<

$(BENCH_DIR)/floor.skel.h: $(BENCH_DIR)/floor.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name floor > $@

$(BENCH_DIR)/koord-bench-floor: scripts/bench/floor.c $(BENCH_DIR)/floor.skel.h
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(filter-out -MMD -MP,$(CFLAGS)) -I$(BENCH_DIR) $< -lbpf -lelf -lz -o $@
