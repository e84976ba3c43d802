# workloads.mk - test workloads with known truth (see tests/workloads/README.md).
# Included by the top Makefile.  Every workload is built WITHOUT frame
# pointers (-fomit-frame-pointer, explicitly, whatever CFLAGS says) so the
# profiler has to unwind with DWARF CFI.  bin/stripped is strip --strip-all'ed;
# libwl.so / libwl_dl.so are -fPIC -shared, found through an $ORIGIN rpath.

WL_DIR := tests/workloads
WL_BIN := $(WL_DIR)/bin
WL_CFLAGS := -std=gnu11 -D_GNU_SOURCE -O2 -g -fomit-frame-pointer -Wall -Wextra -Wno-unused-parameter \
	$(if $(DEVELOPER),-Werror)
WL_DEPS := $(WL_DIR)/wl.h $(WL_DIR)/workloads.mk

WL_SIMPLE := split recursion inline forkexec heap stripped-debug
WL_THREADED := threads service phases
WORKLOADS := $(addprefix $(WL_BIN)/,$(WL_SIMPLE) $(WL_THREADED) stripped heap-static \
	libwl.so libwl_dl.so shlib demo)

$(WL_BIN)/split $(WL_BIN)/recursion $(WL_BIN)/inline $(WL_BIN)/forkexec $(WL_BIN)/heap: $(WL_BIN)/%: $(WL_DIR)/%.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -o $@ $<

$(addprefix $(WL_BIN)/,$(WL_THREADED)): $(WL_BIN)/%: $(WL_DIR)/%.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -pthread -o $@ $<

# stripped_exported_spin stays in .dynsym; everything else loses its name.
$(WL_BIN)/stripped-debug: $(WL_DIR)/stripped.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -Wl,--export-dynamic-symbol=stripped_exported_spin -o $@ $<

# a static binary: nothing to preload into, no shared allocator to probe
$(WL_BIN)/heap-static: $(WL_DIR)/heap.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -static -o $@ $<

$(WL_BIN)/stripped: $(WL_BIN)/stripped-debug
	strip --strip-all -o $@ $<

$(WL_BIN)/libwl.so: $(WL_DIR)/libwl.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -fPIC -shared -Wl,-soname,libwl.so -o $@ $<

$(WL_BIN)/libwl_dl.so: $(WL_DIR)/libwl.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -DWL_DLOPEN -fPIC -shared -Wl,-soname,libwl_dl.so -o $@ $<

# '$$ORIGIN' reaches the linker as $ORIGIN: libwl.so is found next to shlib.
$(WL_BIN)/shlib: $(WL_DIR)/shlib.c $(WL_BIN)/libwl.so $(WL_BIN)/libwl_dl.so $(WL_DEPS)
	$(CC) $(WL_CFLAGS) -o $@ $< -L$(WL_BIN) -lwl -ldl -Wl,-rpath,'$$ORIGIN'

$(WL_BIN)/demo: $(WL_DIR)/demo.c $(WL_DEPS)
	@mkdir -p $(WL_BIN)
	$(CC) $(WL_CFLAGS) -pthread -o $@ $< -lz

workloads: $(WORKLOADS)

workloads-clean:
	rm -rf $(WL_BIN)

clean: workloads-clean

.PHONY: workloads workloads-clean
