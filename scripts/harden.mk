# Hardening stages of `make test` (docs/testing.md): the unit tests and the
# end-to-end daemon test under AddressSanitizer + UndefinedBehaviorSanitizer,
# and libFuzzer runs of every parser of outside input. Each builds in its own
# output dir through a sub-make, so the normal build is left alone.

ASAN_OUT     := build/asan
FUZZ_OUT     := build/fuzz
ASAN_FLAGS   := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
FUZZ_FLAGS   := -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer \
		-fno-sanitize-recover=all
FUZZ_SECONDS ?= 20
FUZZ_BINS    := $(patsubst tests/fuzz/%.c,$(OUT)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))

# Set by the sub-makes below; empty in the normal build.
SANITIZE ?=
CFLAGS   += $(SANITIZE)

.PHONY: asan-test asan-build fuzz fuzz-build

# A finding fails: -fno-sanitize-recover aborts, and every report any process
# writes lands in $(ASAN_OUT)/reports/ (checked after the run).
asan-test: deps
	$(Q)rm -rf $(ASAN_OUT)/reports && mkdir -p $(ASAN_OUT)/reports
	$(Q)$(MAKE) --no-print-directory OUT=$(ASAN_OUT) SANITIZE="$(ASAN_FLAGS)" \
		asan-build
	$(Q)tests/run-sanitized.sh $(ASAN_OUT)

asan-build: $(UNIT_TESTS) $(OUT)/koord-bpf $(OUT)/tests/test_enforce

# libFuzzer needs clang; FUZZ_SECONDS per harness.
fuzz: deps
	$(Q)$(MAKE) --no-print-directory OUT=$(FUZZ_OUT) CC=$(CLANG) SANITIZE="$(FUZZ_FLAGS)" \
		fuzz-build
	$(Q)tests/fuzz/run.sh $(FUZZ_OUT) $(FUZZ_SECONDS)

fuzz-build: $(FUZZ_BINS)

$(OUT)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $(OUT)/libkoord.a
	$(call msg,CCLD,$@)
	$(Q)mkdir -p $(@D)
	$(Q)$(CC) $(CFLAGS) -fsanitize=fuzzer $< $(OUT)/libkoord.a $(LDLIBS) -o $@
