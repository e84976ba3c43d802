# stat.mk - helper programs with known resource behaviour for the
# t40xx-stat-*.sh tests (included from the top Makefile).  STAT_BINS is a
# prerequisite of `make check`.
STAT_PROGS := sleeper alloc burn fsync_io
STAT_BINS := $(STAT_PROGS:%=tests/stat/bin/%)

tests/stat/bin/%: tests/stat/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE $(WARNINGS) -O1 -o $@ $<

stat-bins: $(STAT_BINS)
.PHONY: stat-bins
