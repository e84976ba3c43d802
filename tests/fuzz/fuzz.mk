# fuzz.mk - libFuzzer targets for every parser of outside input.
# Each tests/fuzz/fuzz_<name>.c defines LLVMFuzzerTestOneInput and is seeded
# from tests/fuzz/corpus/<name>/.  The library is rebuilt with clang and
# ASan/UBSan into $(BUILD)/fuzz/obj so sanitizers see all of it.
#   make fuzz                      build every target
#   scripts/fuzz.sh NAME SECONDS   long run of one target
# `make check` runs each target briefly (tests/t9000-fuzz-smoke.sh).

FUZZ_CC ?= clang
FUZZ_SRCS := $(sort $(wildcard tests/fuzz/fuzz_*.c))
FUZZ_BINS := $(FUZZ_SRCS:tests/fuzz/%.c=$(BUILD)/fuzz/%)
# Line tables are all a sanitizer report needs (functions, inlined ones
# too, and lines); full debug info made the library's rebuild (a third of
# a fresh `make check-build`'s CPU time) a fifth longer.
FUZZ_FLAGS = -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(BUILD)/gen -gline-tables-only -O1 -fno-omit-frame-pointer \
	-fsanitize=address,undefined -fno-sanitize-recover=all $(DEP_CFLAGS)
FUZZ_OBJS := $(LIB_SRCS:%.c=$(BUILD)/fuzz/obj/%.o)
$(filter $(BUILD)/fuzz/obj/src/cmd/%,$(FUZZ_OBJS)): $(HELP_HDRS)

$(BUILD)/fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<

$(BUILD)/fuzz/%: tests/fuzz/%.c $(FUZZ_OBJS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)

fuzz: $(FUZZ_BINS)
FUZZ_CHECK_DEPS := $(FUZZ_BINS)
.PHONY: fuzz
