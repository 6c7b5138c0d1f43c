# VM self-test: static binaries for the initramfs and `make vm-test`.
# Included at the end of the main Makefile (`include scripts/vm.mk`); uses its
# OUT, CC, CFLAGS, CLANG, BPFTOOL, ARCH, CLANG_SYS_INCLUDES, TESTLIB_OBJS and
# its rules for $(OUT)/libkoord.a and tests/lib objects. See docs/vm-test.md.
#
#   make vm-test [KERNELS="6.1 5.10 6.12"] [VM_TIMEOUT=600] [VM_VERBOSE=1]
#   make vm-test-ci     the required 6.1 kernel, VM_CI_TESTS (meant for `make test`)
#   VM_TESTS="a b"      only these test programs in the initramfs (default: all)
#   make vm-static      static probe + tests/bpf/test_* (+ VM_TOOLS) only
#   make vm-fetch       download/cache the kernels only
#   make vm-clean       drop static binaries and initramfs (keeps kernel cache)

OUT      ?= build
CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
ARCH     ?= x86
# clang -target bpf does not search the multiarch include dir (asm/types.h).
CLANG_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 \
	| sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
VM_DIR   := $(OUT)/vm
VM_SDIR  := $(OUT)/static

# Static link line. Debian ships libbpf.a, libelf.a, libz.a, libjson-c.a;
# libelf.a needs libzstd.a only where elfutils was built with zstd (not on
# Debian 12), which is detected here. Override to add libraries.
VM_LIBELF_A       := $(shell $(CC) -print-file-name=libelf.a 2>/dev/null)
VM_ZSTD           := $(shell nm -u $(VM_LIBELF_A) 2>/dev/null | grep -q ' ZSTD_' && echo -lzstd)
VM_STATIC_LDFLAGS ?= -static
VM_STATIC_LDLIBS  ?= -lbpf -lelf -lz $(VM_ZSTD) -ljson-c -lm

# Project programs linked statically into /koord/bin of the VM (opt-in; a
# tool needing a library without a Debian .a cannot be linked statically).
VM_TOOLS        ?=
# test_enforce, test_faults, test_react and test_tail drive the daemon, which links libmicrohttpd (gnutls
# has no static library in Debian): they run on the host only; its writer, journal,
# cpu.max and cgroup.kill paths run in the VM through test_evict and test_restore.
VM_HOST_ONLY    := test_enforce test_faults test_react test_tail
VM_STATIC_TESTS := $(patsubst tests/bpf/%.c,$(VM_SDIR)/tests/%,\
		   $(filter-out $(VM_HOST_ONLY:%=tests/bpf/%.c),$(wildcard tests/bpf/test_*.c)))
VM_STATIC_BINS  := $(addprefix $(VM_SDIR)/bin/,$(VM_TOOLS))
VM_CFLAGS        = $(filter-out -MMD -MP,$(CFLAGS))

.PHONY: vm-test vm-test-ci vm-static vm-fetch vm-clean

vm-test: vm-static
	scripts/vm-test.sh --no-build $(if $(KERNELS),--kernels "$(KERNELS)")

# For CI (`make test`, once the collector loads on 6.1 again: docs/vm-test.md):
# the required kernel, Debian 12's own 6.1, with the test
# programs that are reliable under TCG (their timing checks know
# KOORD_TEST_EMULATED; docs/vm-test.md); `make vm-test` runs them all.
VM_CI_TESTS ?= test_runq test_steal test_counters test_evict
vm-test-ci: vm-static
	VM_TESTS="$(VM_CI_TESTS)" scripts/vm-test.sh --no-build --kernels 6.1

vm-static: $(VM_SDIR)/probe $(VM_SDIR)/skew $(VM_STATIC_TESTS) $(VM_STATIC_BINS)

vm-fetch:
	scripts/vm-test.sh --fetch-only $(if $(KERNELS),--kernels "$(KERNELS)")

vm-clean:
	rm -rf $(VM_SDIR) $(VM_DIR)/probe* $(VM_DIR)/skew* $(VM_DIR)/initramfs* $(VM_DIR)/*.log

$(VM_DIR)/.deps: scripts/vm/deps.sh
	scripts/vm/deps.sh
	@mkdir -p $(@D) && touch $@

# The probe: the VM's smoke test, independent of the project's sources.
$(VM_DIR)/probe.tmp.o: scripts/vm/probe.bpf.c | $(VM_DIR)/.deps
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ivmlinux/$(ARCH) \
		$(CLANG_SYS_INCLUDES) -c $< -o $@

# `gen object` drops the DWARF (keeps BTF), as for the project's koord.bpf.o.
$(VM_DIR)/probe.bpf.o: $(VM_DIR)/probe.tmp.o
	$(BPFTOOL) gen object $@ $<

$(VM_DIR)/probe.skel.h: $(VM_DIR)/probe.bpf.o
	$(BPFTOOL) gen skeleton $< name probe_bpf > $@

$(VM_SDIR)/probe: scripts/vm/probe.c $(VM_DIR)/probe.skel.h
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -I$(VM_DIR) $< $(VM_STATIC_LDFLAGS) $(VM_STATIC_LDLIBS) -o $@

# The skew probe: how far a BPF program's clock read and ftrace's record of
# the same tracepoint hit lie apart (large under TCG), with the collector
# (libkoord.a) read between the two (see skew.c).
$(VM_DIR)/skew.tmp.o: scripts/vm/skew.bpf.c | $(VM_DIR)/.deps
	@mkdir -p $(@D)
	$(CLANG) -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -Ivmlinux/$(ARCH) \
		$(CLANG_SYS_INCLUDES) -c $< -o $@

$(VM_DIR)/skew.bpf.o: $(VM_DIR)/skew.tmp.o
	$(BPFTOOL) gen object $@ $<

$(VM_DIR)/skew.skel.h: $(VM_DIR)/skew.bpf.o
	$(BPFTOOL) gen skeleton $< name skew_bpf > $@

$(VM_SDIR)/skew: scripts/vm/skew.c $(VM_DIR)/skew.skel.h $(OUT)/libkoord.a
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -I$(VM_DIR) $< $(OUT)/libkoord.a $(VM_STATIC_LDFLAGS) \
		$(VM_STATIC_LDLIBS) -o $@

# The project's BPF test programs and (opt-in) tools, the same sources and the
# same libkoord.a (hence the same embedded BPF objects) as the host build.
# Like the Makefile's BPF test rule: tests/lib objects (TESTLIB_OBJS, so this
# file must be included after that variable is set) and -Itests/lib.
# Keep them: only named as pattern-rule prerequisites, make would delete them
# as intermediates after each build.
.SECONDARY: $(TESTLIB_OBJS)
$(VM_SDIR)/tests/%: tests/bpf/%.c $(TESTLIB_OBJS) $(OUT)/libkoord.a | $(VM_DIR)/.deps
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) -Itests/lib $< $(TESTLIB_OBJS) $(OUT)/libkoord.a \
		$(VM_STATIC_LDFLAGS) $(VM_STATIC_LDLIBS) -o $@

$(VM_SDIR)/bin/%: tools/%.c $(OUT)/libkoord.a | $(VM_DIR)/.deps
	@mkdir -p $(@D)
	$(CC) $(VM_CFLAGS) $< $(OUT)/libkoord.a $(VM_STATIC_LDFLAGS) $(VM_STATIC_LDLIBS) -o $@
