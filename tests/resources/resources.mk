# tests/resources/resources.mk - workloads of the resource tests (t41xx):
# fdatasync blocking, sleeping, memory touching, user+sys CPU burning,
# two threads switching on every pipe round trip.
# Built -O1 -g without frame pointers: DWARF unwinding, like tests/workloads.
RES_NAMES := fsync_wait sleeper memtouch burn pingpong
RES_BINS := $(RES_NAMES:%=$(BUILD)/tests/resources/%)

$(BUILD)/tests/resources/%: tests/resources/%.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -g -fomit-frame-pointer -Wall -Wextra -o $@ $< -lpthread
