# tests/resources/resources.mk - workloads of the resource tests (t41xx):
# fdatasync blocking, sleeping, memory touching, user+sys CPU burning,
# two threads switching on every pipe round trip, one thread blocking at
# three known sites, waiting in D state for a vfork child, waiting then
# exec'ing another program; and slowdisk, a disk with a set latency.
# Built -O1 -g without frame pointers: DWARF unwinding, like tests/workloads.
RES_NAMES := fsync_wait sleeper memtouch burn pingpong sites vfork_wait exec_after
RES_BINS := $(RES_NAMES:%=$(BUILD)/tests/resources/%)

$(BUILD)/tests/resources/%: tests/resources/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -lpthread

# slowdisk: the disk with a set latency of the I/O-wait tests
# (tests/lib/slowdisk.sh).  Needs libfuse3; without it those tests skip.
ifeq ($(shell $(PKG_CONFIG) --exists fuse3 && echo y),y)
RES_BINS += $(BUILD)/tests/resources/slowdisk
$(BUILD)/tests/resources/slowdisk: tests/resources/slowdisk.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -Wall -Wextra -Wno-unused-parameter $(shell $(PKG_CONFIG) --cflags fuse3) \
		-o $@ $< $(shell $(PKG_CONFIG) --libs fuse3)
endif
