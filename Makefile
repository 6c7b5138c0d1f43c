# koord-bpf build. Everything lands in build/; `make V=1` shows the commands.
OUT      := build
ARCH     := x86
CLANG    ?= clang
BPFTOOL  ?= bpftool
CC       ?= gcc
V        ?= 0
Q        := $(if $(filter 1,$(V)),,@)
msg       = $(if $(filter 1,$(V)),,@printf '  %-8s %s\n' "$(1)" "$(2)";)

CFLAGS   ?= -O2 -g
CFLAGS   += -Wall -Wextra -Wno-unused-parameter -Werror -std=gnu11 -D_GNU_SOURCE \
	    -I$(OUT) -Iuser -Ibpf -MMD -MP
LDLIBS   := -lbpf -lelf -lz -ljson-c -lmicrohttpd -lm
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	    -Ivmlinux/$(ARCH) -Ibpf -MMD -MP

# clang -target bpf does not search the multiarch include dir (asm/types.h).
CLANG_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')

BPF_SRCS   := $(wildcard bpf/*.bpf.c)
BPF_OBJS   := $(patsubst bpf/%.bpf.c,$(OUT)/bpf/%.bpf.o,$(BPF_SRCS))
LIB_SRCS   := $(wildcard user/*.c)
LIB_OBJS   := $(patsubst user/%.c,$(OUT)/user/%.o,$(LIB_SRCS))
TOOLS      := $(patsubst tools/%.c,$(OUT)/%,$(wildcard tools/*.c))
UNIT_TESTS := $(patsubst tests/unit/%.c,$(OUT)/tests/%,$(wildcard tests/unit/test_*.c))
BPF_TESTS  := $(patsubst tests/bpf/%.c,$(OUT)/tests/%,$(wildcard tests/bpf/*.c))
TESTLIB_OBJS := $(patsubst tests/lib/%.c,$(OUT)/tests/lib/%.o,$(wildcard tests/lib/*.c))

.PHONY: all deps run demo test unit-test deploy-test bpf-test vmlinux clean
.DELETE_ON_ERROR:
.SECONDARY: $(TESTLIB_OBJS)

all: deps $(TOOLS)

# Install missing build/test dependencies (Debian) the first time they are needed.
deps: $(OUT)/.deps
$(OUT)/.deps: scripts/deps.sh
	$(Q)scripts/deps.sh
	$(Q)mkdir -p $(OUT) && touch $@

$(OUT)/bpf/%.bpf.o: bpf/%.bpf.c | $(OUT)/.deps
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CLANG) $(BPF_CFLAGS) $(CLANG_SYS_INCLUDES) -c $< -o $@

# Link all BPF objects into one, then generate its skeleton.
$(OUT)/koord.bpf.o: $(BPF_OBJS)
	$(call msg,BPFLINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUT)/koord.skel.h: $(OUT)/koord.bpf.o
	$(call msg,SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name koord > $@

$(OUT)/user/%.o: user/%.c $(OUT)/koord.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -c $< -o $@

$(OUT)/libkoord.a: $(LIB_OBJS)
	$(call msg,AR,$@)
	$(Q)$(AR) rcs $@ $^

# koord-top draws with ncurses (wide-character build: UTF-8 cgroup names).
NCURSES_LIBS := $(shell pkg-config --libs ncursesw 2>/dev/null || echo -lncursesw -ltinfo)
$(OUT)/koord-top: LDLIBS += $(NCURSES_LIBS)
# The HTTP client (user/http.c: node agents, the Eviction API, koord-top --from,
# the tools' --kubelet) uses
# libcurl; only what calls it links it.
$(OUT)/koord-bpf $(OUT)/koord-top $(OUT)/koord-interference $(OUT)/tests/test_kubelet $(OUT)/tests/test_nodeslo \
	$(OUT)/tests/test_evict_api \
	$(OUT)/fuzz/fuzz_nodemanager $(OUT)/fuzz/fuzz_nodeslo $(OUT)/fuzz/fuzz_node: \
	LDLIBS += -lcurl

$(OUT)/%: tools/%.c $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libkoord.a $(LDLIBS) -o $@

$(OUT)/tests/%: tests/unit/%.c $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) $< $(OUT)/libkoord.a $(LDLIBS) -lcmocka -o $@

$(OUT)/tests/lib/%.o: tests/lib/%.c $(OUT)/koord.skel.h
	$(call msg,CC,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib -c $< -o $@

$(OUT)/tests/%: tests/bpf/%.c $(TESTLIB_OBJS) $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(TESTLIB_OBJS) $(OUT)/libkoord.a $(LDLIBS) -o $@

# Run koord-interference on the live machine for a few seconds.
run: all
	$(OUT)/koord-interference -d 5

# The main job, end to end on this machine (root): scripts/demo.c.
$(OUT)/koord-demo: scripts/demo.c $(TESTLIB_OBJS) $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)$(CC) $(CFLAGS) -Itests/lib $< $(TESTLIB_OBJS) $(OUT)/libkoord.a $(LDLIBS) -o $@

demo: all $(OUT)/koord-demo
	$(Q)$(OUT)/koord-demo

test: unit-test asan-test fuzz bpf-test vm-test-ci

unit-test: deps $(UNIT_TESTS) deploy-test
	$(Q)tests/run-unit.sh $(UNIT_TESTS)

# deploy/: the manifests and the Dockerfile (the config is checked by the daemon when built),
# their schemas (kubernetes-models from npm, pinned by the lock file), the PodMonitor, the
# alerts and the dashboard (promtool).
deploy-test: deps $(OUT)/schemas/node_modules/.package-lock.json
	$(Q)python3 tests/deploy/test_manifests.py --schemas $(OUT)/schemas/node_modules \
		$(if $(wildcard $(OUT)/koord-bpf),--koord-bpf $(OUT)/koord-bpf) >$(OUT)/deploy-test.log || \
		{ cat $(OUT)/deploy-test.log; exit 1; }
	$(Q)tail -n 1 $(OUT)/deploy-test.log
	$(Q)python3 tests/deploy/test_monitoring.py >$(OUT)/monitoring-test.log || \
		{ cat $(OUT)/monitoring-test.log; exit 1; }
	$(Q)tail -n 1 $(OUT)/monitoring-test.log

# npm runs in the directory: --prefix would move its global config (a machine's cafile) too.
$(OUT)/schemas/node_modules/.package-lock.json: tests/deploy/schemas/package.json \
		tests/deploy/schemas/package-lock.json | deps
	$(call msg,NPM,$(OUT)/schemas)
	$(Q)mkdir -p $(OUT)/schemas && cp $^ $(OUT)/schemas/
	$(Q)cd $(OUT)/schemas && npm ci --no-audit --no-fund --loglevel=error >/dev/null || \
		{ echo "npm ci of tests/deploy/schemas failed: is the npm registry reachable?"; exit 1; }

bpf-test: all $(BPF_TESTS)
	$(Q)tests/bpf/run.sh

# Regenerate vmlinux.h from the running kernel's BTF.
vmlinux:
	$(Q)ver=$$(uname -r | cut -d. -f1,2); \
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > vmlinux/$(ARCH)/vmlinux_$$ver.h && \
	ln -sf vmlinux_$$ver.h vmlinux/$(ARCH)/vmlinux.h

clean:
	rm -rf $(OUT)

-include $(wildcard $(OUT)/*/*.d $(OUT)/*.d $(OUT)/tests/lib/*.d)

# Sanitizer builds and fuzzing (asan-test, fuzz).
include scripts/harden.mk

# Self-tests in qemu VMs on other kernels (docs/vm-test.md).
include scripts/vm.mk

# `sudo make bench`: per-event cost and start-up (docs/performance.md).
-include scripts/bench/bench.mk
