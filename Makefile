# prof - build, test, install.  See README.md.
#
#   make            build ./prof
#   make demo       install missing packages, build, profile a workload, show it
#   make check      build everything and run every test (prove, TAP)
#   make install PREFIX=/usr/local
#   make DEVELOPER=1        add -Werror
#   make check SANITIZE=address,undefined
#   make check-sanitize     the same in build-san/ (leaves ./prof and build/ alone)
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

# libiberty's demangler (C++, Rust legacy and v0): a static library, so
# probed by linking a call to it.
ifeq ($(shell printf '\043include <libiberty/demangle.h>\nint main(void){return !cplus_demangle("_Z1fv",0);}\n' | $(CC) -x c - -liberty -o /dev/null 2>/dev/null && echo y),y)
DEP_CFLAGS += -DHAVE_LIBIBERTY=1
DEP_LIBS += -liberty
endif

# The disassembler behind `prof annotate` (src/annotate/disasm.c): capstone,
# opened there when annotate first needs it, so not linked.
ifeq ($(shell $(PKG_CONFIG) --exists capstone && echo y),y)
DEP_CFLAGS += -DHAVE_CAPSTONE=1 $(shell $(PKG_CONFIG) --cflags capstone)
endif

# BPF programs written in C (src/python/bpf/: Python frames read at the
# sample; src/perf/bpf/: the in-kernel off-CPU accountant): clang builds
# them and libbpf loads them; without either, the reader reads every
# chain from the recorder and off-CPU time comes from switch records.
BPF_CLANG ?= clang
ifeq ($(shell $(PKG_CONFIG) --exists libbpf && command -v $(BPF_CLANG) >/dev/null && echo y),y)
HAVE_BPF_PROGS := y
DEP_CFLAGS += -DHAVE_LIBBPF=1 $(shell $(PKG_CONFIG) --cflags libbpf)
DEP_LIBS += $(shell $(PKG_CONFIG) --libs libbpf)
endif

# The interpreter python3 runs, asked once and only when needed: where
# python3 is a version manager's shim (pyenv's is a bash script that runs
# `pyenv exec`), a call through it takes 0.4-1 s here instead of ~0.05,
# for each of the 18 man pages and help texts of a fresh build.
PYTHON = $(eval PYTHON := $(or $(shell python3 -c 'import sys; print(sys.executable)' 2>/dev/null),python3))$(PYTHON)

WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wshadow -Wformat=2 -Wno-format-nonliteral
ifdef DEVELOPER
WARNINGS += -Werror
endif
ifdef SANITIZE
SAN_FLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
endif

ALL_CFLAGS = -std=gnu11 -D_GNU_SOURCE -Iinclude -I$(BUILD)/gen $(WARNINGS) $(CFLAGS) $(SAN_FLAGS) $(DEP_CFLAGS) -MMD -MP
ALL_LDFLAGS = $(LDFLAGS) $(SAN_FLAGS)
LIBS = $(DEP_LIBS) -lpthread -lm

LIB_SRCS := $(sort $(wildcard src/*/*.c))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
UNIT_SRCS := $(sort $(wildcard tests/unit/*.c))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(BUILD)/tests/unit/%.t)

# ./prof for the default build; other build dirs get their own binary so a
# sanitizer build (make check-sanitize) does not replace ./prof.
PROF_BIN := $(if $(filter build,$(BUILD)),prof,$(BUILD)/prof)

all: prof man

# Man pages and --help texts come from one source, docs/man/*.txt
# (scripts/mangen.py): build/man/*.1 and build/gen/help-*.h.
MAN_SRCS := $(sort $(wildcard docs/man/prof*.txt))
MAN_PAGES := $(MAN_SRCS:docs/man/%.txt=$(BUILD)/man/%.1)
HELP_HDRS := $(MAN_SRCS:docs/man/%.txt=$(BUILD)/gen/help-%.h)

$(BUILD)/man/%.1: docs/man/%.txt scripts/mangen.py
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/mangen.py roff $< $@

$(BUILD)/gen/help-%.h: docs/man/%.txt scripts/mangen.py
	@mkdir -p $(dir $@)
	$(PYTHON) scripts/mangen.py help $< $@

man: $(MAN_PAGES)

# The commands print the generated help: build it before compiling them.
$(filter $(BUILD)/src/cmd/%,$(LIB_OBJS)) $(BUILD)/src/prof.o: $(HELP_HDRS)

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# The viewer's CSS, JS and HTML panels are files of src/output that the
# renderers embed with .incbin (OUTPUT_EMBED in output-priv.h).
VIEWER_FILES := $(wildcard src/output/*.js src/output/*.css src/output/*.html)
$(BUILD)/src/output/html.o $(BUILD)/src/output/flamegraph.o: $(VIEWER_FILES)

# The heap sampler that `prof record --heap` preloads: built alone (no
# sanitizer: it runs inside the profiled program) and embedded in
# record/heap.o with .incbin.
HEAP_SO := $(BUILD)/gen/libprofheap.so
$(HEAP_SO): src/record/preload/libprofheap.c src/record/preload/flow.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g -fPIC -shared -Wall -Wextra $(if $(DEVELOPER),-Werror) \
		-o $@ $< -ldl -lm
$(BUILD)/src/record/heap.o: $(HEAP_SO)
$(BUILD)/src/record/heap.o: ALL_CFLAGS += -DPROF_HEAP_SO='"$(HEAP_SO)"'

# The BPF programs in C, each embedded with .incbin in the object that
# loads it: the Python frame reader (python/bpf.o), the in-kernel
# off-CPU accountant (perf/switchacct.o) and the target filter of
# recordings attached per CPU (perf/bpftargets.o).
PYBPF_OBJ := $(BUILD)/gen/pyframes.bpf.o
SWA_OBJ := $(BUILD)/gen/switches.bpf.o
TARGETS_OBJ := $(BUILD)/gen/targets.bpf.o
$(PYBPF_OBJ): src/python/bpf/frames.c src/python/bpf/frames.h src/perf/bpf/targets.h src/perf/bpf/owntime.h
$(SWA_OBJ): src/perf/bpf/switches.c src/perf/bpf/switches.h src/perf/bpf/targets.h src/perf/bpf/owntime.h
$(TARGETS_OBJ): src/perf/bpf/targets.c src/perf/bpf/targets.h src/perf/bpf/owntime.h
$(PYBPF_OBJ) $(SWA_OBJ) $(TARGETS_OBJ):
	@mkdir -p $(dir $@)
	$(BPF_CLANG) -O2 -g -target bpf -I/usr/include/$(shell $(CC) -dumpmachine) -Wall $(if $(DEVELOPER),-Werror) \
		-c -o $@ $<
ifeq ($(HAVE_BPF_PROGS),y)
$(BUILD)/src/python/bpf.o: $(PYBPF_OBJ)
$(BUILD)/src/python/bpf.o: ALL_CFLAGS += -DPROF_PYBPF_OBJ='"$(PYBPF_OBJ)"'
$(BUILD)/src/perf/switchacct.o: $(SWA_OBJ)
$(BUILD)/src/perf/switchacct.o: ALL_CFLAGS += -DPROF_SWA_OBJ='"$(SWA_OBJ)"'
$(BUILD)/src/perf/bpftargets.o: $(TARGETS_OBJ)
$(BUILD)/src/perf/bpftargets.o: ALL_CFLAGS += -DPROF_TARGETS_OBJ='"$(TARGETS_OBJ)"'
endif

$(BUILD)/libprof.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

$(PROF_BIN): $(BUILD)/src/prof.o $(BUILD)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)
ifneq ($(PROF_BIN),prof)
prof: $(PROF_BIN)
.PHONY: prof
endif

$(BUILD)/tests/unit/%.t: $(BUILD)/tests/unit/%.o $(BUILD)/libprof.a
	$(CC) $(ALL_LDFLAGS) -o $@ $^ $(LIBS)

# Workloads (built without frame pointers) and fuzz targets add their rules here.
-include tests/workloads/workloads.mk
-include tests/fuzz/fuzz.mk
-include tests/stat/stat.mk
-include tests/resources/resources.mk
-include tests/eval/eval.mk

# Everything the tests run that is not ./prof or a unit test.  Test
# fragments (tests/*/*.mk) define their binaries; list them here.
CHECK_DEPS = $(WORKLOADS) $(FUZZ_CHECK_DEPS) $(STAT_BINS) $(EVAL_BINS) $(RES_BINS)

deps:
	scripts/install-deps.sh

deps-test:
	scripts/install-deps.sh --test

unit: $(UNIT_BINS)

# prove runs unit binaries directly and the tNNNN-*.sh scripts with bash;
# PROF_BUILD tells tests/lib/test-lib.sh which build dir (and prof) to use.
# Sanitizer builds: every report (leaks included) goes to $(SAN_LOGS) and
# fails the run, even when a test only looked at prof's output.
SAN_LOGS = $(BUILD)/san-logs
ifdef SANITIZE
CHECK_ENV = ASAN_OPTIONS=detect_leaks=1:log_path=$(CURDIR)/$(SAN_LOGS)/asan \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:log_path=$(CURDIR)/$(SAN_LOGS)/ubsan
endif

# check/demo/bench first install what is missing, then re-run make, so
# that pkg-config sees libraries installed a moment ago (fresh machines).
check: deps-test
	$(MAKE) -j$$(nproc) check-run

# Two tests at a time: one at a time the suite took 1,288 s of prove on an
# idle 2-vCPU VM, past make check's 10-minute budget.  Three at a time
# left the CPUs 3% idle instead of 8%, but beside a loaded machine two
# load-sensitive tests failed (t1171 #19, t1305 #3) where two at a time
# passed (docs/measurements/2026-12-05-make-check-jobs.md).
# tests/testrules.yml runs alone first the tests that change machine-wide
# state (a sysctl) or record the whole machine (-a).  PROVE_JOBS=1 runs
# them one by one (tests/README.md).
PROVE_JOBS ?= 2
# The tests call python3 often (t1199 alone 32 times).  Where python3 is a
# version manager's shim (pyenv's is a bash script that runs `pyenv
# exec`), a call costs ~0.9 CPU-s instead of ~0.05; $(CHECK_BIN) puts the
# interpreter the shim picks first in the tests' PATH.
CHECK_BIN = $(BUILD)/check-bin

# Everything the suite runs, built without running it.
check-build: prof man unit $(CHECK_DEPS)

check-run: check-build
	@chmod +x tests/t[0-9]*.sh
	@rm -rf $(SAN_LOGS) $(CHECK_BIN) && mkdir -p $(SAN_LOGS) $(CHECK_BIN)
	@[ -x "$(PYTHON)" ] && ln -s "$(PYTHON)" $(CHECK_BIN)/python3 || true
	@mkdir -p tests/trash && rm -f tests/trash/FAILURES
	PATH=$(CURDIR)/$(CHECK_BIN):$$PATH HARNESS_RULESFILE=tests/testrules.yml \
		PROF_BUILD=$(BUILD) $(CHECK_ENV) prove -e '' -j$(PROVE_JOBS) $(PROVE_FLAGS) \
		$(addprefix ./,$(UNIT_BINS)) $(sort $(wildcard ./tests/t[0-9]*.sh)) || \
		{ st=$$?; echo "What failed (tests/trash/FAILURES; scratch kept in tests/trash/):"; \
		  head -n 60 tests/trash/FAILURES 2>/dev/null; exit $$st; }
	@if [ -n "$$(ls $(SAN_LOGS))" ]; then head -n 60 $(SAN_LOGS)/*; \
		echo "sanitizer reports in $(SAN_LOGS)"; exit 1; fi

# ASan + UBSan (+ LeakSanitizer) build and full check in build-san/.
check-sanitize:
	$(MAKE) BUILD=build-san SANITIZE=address,undefined FUZZ_CHECK_DEPS= check

demo: deps
	$(MAKE) demo-run

demo-run: prof $(WORKLOADS)
	scripts/demo.sh

# Side-by-side benchmarks against perf (ratios; never part of check).
bench: deps-test
	$(MAKE) prof
	scripts/bench/run-all.sh

# Instruction counts of the hot paths under callgrind against
# scripts/bench/icount-baseline.txt (fails on a >3% regression).
bench-icount: prof
	scripts/bench/icount.sh

BASH_COMPDIR = $(PREFIX)/share/bash-completion/completions
ZSH_COMPDIR = $(PREFIX)/share/zsh/site-functions
MAN1DIR = $(PREFIX)/share/man/man1

install: $(PROF_BIN) man
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MAN1DIR) $(DESTDIR)$(BASH_COMPDIR) $(DESTDIR)$(ZSH_COMPDIR)
	install -m 755 $(PROF_BIN) $(DESTDIR)$(PREFIX)/bin/prof
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MAN1DIR)/
	install -m 644 scripts/completion/prof.bash $(DESTDIR)$(BASH_COMPDIR)/prof
	install -m 644 scripts/completion/_prof $(DESTDIR)$(ZSH_COMPDIR)/_prof

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/prof $(DESTDIR)$(BASH_COMPDIR)/prof $(DESTDIR)$(ZSH_COMPDIR)/_prof
	rm -f $(MAN_SRCS:docs/man/%.txt=$(DESTDIR)$(MAN1DIR)/%.1)

clean:
	rm -rf $(BUILD) prof build-san

.PHONY: all deps deps-test unit check check-build check-run check-sanitize demo demo-run install uninstall man clean bench bench-icount
.SUFFIXES:
.SECONDARY:

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
