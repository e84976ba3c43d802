# prof - build, test, install.  See README.md.
#
#   make            build ./prof
#   make demo       install missing packages, build, profile a workload, show it
#   make check      build everything and run every test (prove, TAP)
#   make install PREFIX=/usr/local
#   make DEVELOPER=1        add -Werror
#   make check SANITIZE=address,undefined
#
# Every src/<subsystem>/*.c goes into build/libprof.a; src/prof.c is main().
# Dependencies are found here once (pkg-config) and exposed as HAVE_* macros.

PREFIX ?= /usr/local
CC ?= cc
CFLAGS ?= -O2 -g
PKG_CONFIG ?= pkg-config
BUILD ?= build

PKGS := libdw libelf libunwind-generic zlib
DEP_CFLAGS := $(shell $(PKG_CONFIG) --cflags $(PKGS) 2>/dev/null)
DEP_LIBS := $(shell $(PKG_CONFIG) --libs $(PKGS) 2>/dev/null)
ifeq ($(shell $(PKG_CONFIG) --exists libzstd && echo y),y)
DEP_CFLAGS += -DHAVE_ZSTD=1 $(shell $(PKG_CONFIG) --cflags libzstd)
DEP_LIBS += $(shell $(PKG_CONFIG) --libs libzstd)
endif

WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wshadow -Wformat=2 -Wno-format-nonliteral
ifdef DEVELOPER
WARNINGS += -Werror
endif
ifdef SANITIZE
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -Iinclude $(WARNINGS) $(CFLAGS) $(SAN_FLAGS) $(DEP_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)
LIBS = $(DEP_LIBS) -lpthread -lm

LIB_SRCS := $(sort $(wildcard src/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.t)

all: prof

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libprof.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

prof: $(BUILD)/src/prof.o $(BUILD)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/tests/unit/%.t: $(BUILD)/tests/unit/%.o $(BUILD)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Workloads (built without frame pointers) and fuzz targets add their rules here.
-include tests/workloads/workloads.mk
-include tests/fuzz/fuzz.mk
-include tests/stat/stat.mk
-include tests/resources/resources.mk

deps:
	scripts/install-deps.sh

unit: $(UNIT_BINS)

# prove runs unit binaries directly and the tNNNN-*.sh scripts with bash.
check: deps prof unit $(WORKLOADS) $(FUZZ_CHECK_DEPS) $(STAT_BINS) $(RES_BINS)
	@chmod +x tests/t[0-9]*.sh
	prove -e '' $(PROVE_FLAGS) $(addprefix ./,$(UNIT_BINS)) $(sort $(wildcard ./tests/t[0-9]*.sh))

demo: deps prof $(WORKLOADS)
	scripts/demo.sh

# Side-by-side benchmarks against perf (ratios; never part of check).
bench: deps prof
	scripts/bench/run-all.sh

install: prof
	install -d $(DESTDIR)$(PREFIX)/bin
	install -m 755 prof $(DESTDIR)$(PREFIX)/bin/prof

clean:
	rm -rf $(BUILD) prof

.PHONY: all deps unit check demo install clean bench
.SUFFIXES:
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
