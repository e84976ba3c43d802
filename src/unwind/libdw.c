/*
 * libdw.c - the default unwinder: per-pc rules from each binary's shared
 * CFI (cfi-cache.c) for most samples, and libdwfl's frame unwinder, driven
 * by our own Dwfl_Thread_Callbacks over a sample's (registers, stack
 * copy), for the rest.
 *
 * Design notes / invariants:
 *  - The fast path needs no Dwfl: its rules come from the binaries' own
 *    CFI handles, opened once per binary for every process (and, for
 *    .debug_frame, through the symbolizer's DWARF session).  A new
 *    process of known binaries costs no CFI reading.
 *  - The general unwinder's Dwfl is per address space and built only when
 *    a sample needs it (a rule the fast path does not handle), then kept
 *    until as->generation changes: extended in place when mappings were
 *    only added (dlopen), rebuilt when one went away (exec, munmap).
 *    A Dwfl per sample would re-read every module's ELF headers and CFI for
 *    every sample, which is what made perf's libdw unwinding slow.
 *  - Modules are reported with dwfl_report_module at the mapping's load
 *    bias, once per distinct binary, and libdw gets the binary's own Elf
 *    handle (a new reference): building a Dwfl maps and parses no file.
 *    Their debug files are found as the symbolizer finds them
 *    (prof_elf_find_debuginfo), whose inflated copy spares libdw
 *    decompressing a distribution's debug file per process.
 *  - dwfl_attach_state is done once per Dwfl; its dwfl_arg is the state,
 *    whose `cur` points at the sample being unwound for the duration of
 *    one prof_unwind() call.
 *  - memory_read serves the stack copy first and file-backed mappings
 *    second; everything else fails, which ends the unwind (incomplete).
 *  - x86_64 DWARF register order: rax rdx rcx rbx rsi rdi rbp rsp r8-r15,
 *    then the return address column 16 = rip.
 */
#include "cfi-cache-priv.h"
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>

struct dw_reported {
	const struct prof_elf *elf;
	uint64_t bias, start;
};

struct dw_state {
	Dwfl *dwfl;
	uint64_t generation;
	bool usable;
	const struct unwind_ctx *cur;
	bool read_failed;	/* libdw ends "normally" when a read fails: track it */
	uint64_t rules_generation;
	struct cfi_cache rules;	/* fast path, valid for one mapping generation */
	VEC(struct dw_reported) reported;	/* binaries in the Dwfl */
};

struct dw_walk {
	struct prof_addrspace *as;
	bool go;		/* as has Go code: frames may end at a Go stack switch */
	uint64_t *pcs;
	size_t max, n;
	uint64_t last_sp;
	const char *stop;
	bool at_go_end;		/* ended at a Go stack switch or top frame */
};

static pid_t dw_next_thread(Dwfl *dwfl, void *arg, void **thread_argp)
{
	struct dw_state *st = arg;

	if (*thread_argp)
		return 0;
	*thread_argp = st;
	return st->cur->tid;
}

static bool dw_get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_argp)
{
	*thread_argp = arg;
	return true;
}

static bool dw_memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct dw_state *st = arg;
	uint64_t v;

	if (!prof_unwind_read_word(st->cur, addr, &v)) {
		/* Below sp is the red zone (a leaf's saved registers), never
		 * in the copy: libdw only loses that register, the walk goes
		 * on.  Only reads past the copy's end mean it was too short. */
		if (addr >= st->cur->sp)
			st->read_failed = true;
		return false;
	}
	*result = v;
	return true;
}

static bool dw_set_initial_registers(Dwfl_Thread *thread, void *arg)
{
	struct dw_state *st = arg;
	Dwarf_Word regs[UNWIND_DWARF_NREGS];

	for (int i = 0; i < UNWIND_DWARF_NREGS; i++)
		regs[i] = st->cur->regs->r[unwind_dwarf_to_perf[i]];
	return dwfl_thread_state_registers(thread, 0, UNWIND_DWARF_NREGS, regs);
}

static const Dwfl_Thread_Callbacks dw_thread_callbacks = {
	.next_thread = dw_next_thread,
	.get_thread = dw_get_thread,
	.memory_read = dw_memory_read,
	.set_initial_registers = dw_set_initial_registers,
};

/* find_elf: the module's binary is its userdata (set when reported); libdw
 * gets a new reference to the binary's own Elf handle, which it elf_ends
 * with the Dwfl, or else a dup of its descriptor (libdw closes that). */
static int dw_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
		       Dwarf_Addr base, char **file_name, Elf **elfp)
{
	const struct prof_elf *e = *userdata;

	*elfp = prof_elf_elf_ref(e);
	if (*elfp)
		return -1;
	return prof_elf_fd(e) >= 0 ? fcntl(prof_elf_fd(e), F_DUPFD_CLOEXEC, 0) : -1;
}

static char *dw_debuginfo_path;
static const Dwfl_Callbacks dw_callbacks = {
	.find_elf = dw_find_elf,
	.find_debuginfo = prof_elf_find_debuginfo,
	.debuginfo_path = &dw_debuginfo_path,
};

static void dw_state_free(void *p)
{
	struct dw_state *st = p;

	if (st->dwfl)
		dwfl_end(st->dwfl);
	prof_unwind_cfi_cache_free(&st->rules);
	VEC_FREE(&st->reported);
	free(st);
}

static bool is_reported(const struct dw_state *st, const struct prof_elf *e)
{
	for (size_t i = 0; i < st->reported.n; i++)
		if (st->reported.v[i].elf == e)
			return true;
	return false;
}

/* Reports m's binary as a module at m's load bias: libdwfl places a module
 * at low - (first PT_LOAD's aligned vaddr), so low = bias + that vaddr.
 * Its Elf comes from dw_find_elf when libdw first needs it: never reopened
 * by path, which may be gone (deleted file, exited process). */
static bool dw_report_binary(Dwfl *dwfl, const struct prof_mapping *m)
{
	uint64_t lo, hi;
	void **userdata;

	if (!prof_elf_load_range(m->elf, &lo, &hi))
		return false;
	Dwfl_Module *mod = dwfl_report_module(dwfl, prof_elf_path(m->elf), m->bias + lo, m->bias + hi);
	if (!mod)
		return false;
	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = m->elf;
	return true;
}

/* Reports the binaries of as not reported yet; returns how many now are. */
static size_t dw_report_new(struct dw_state *st, struct prof_addrspace *as)
{
	for (size_t i = 0; i < as->maps.n; i++) {
		const struct prof_mapping *m = &as->maps.v[i];
		if (!m->elf || is_reported(st, m->elf))
			continue;
		if (dw_report_binary(st->dwfl, m)) {
			struct dw_reported r = { m->elf, m->bias, m->start };
			VEC_PUSH(&st->reported, r);
		}
	}
	return st->reported.n;
}

/* Were only mappings added since the Dwfl was built?  Then it can be
 * extended in place, keeping libdw's CFI caches and our rule cache. */
static bool only_additions(const struct dw_state *st, const struct prof_addrspace *as)
{
	for (size_t i = 0; i < st->reported.n; i++) {
		const struct prof_mapping *m = prof_addrspace_find(as, st->reported.v[i].start);
		if (!m || m->elf != st->reported.v[i].elf || m->bias != st->reported.v[i].bias)
			return false;
	}
	return true;
}

/* (Re)builds or extends the Dwfl from the address space's mappings. */
static void dw_update(struct dw_state *st, struct prof_addrspace *as)
{
	st->generation = as->generation;
	if (st->dwfl && st->usable && only_additions(st, as)) {
		dwfl_report_begin_add(st->dwfl);
		dw_report_new(st, as);
		dwfl_report_end(st->dwfl, NULL, NULL);
		return;
	}
	if (st->dwfl)
		dwfl_end(st->dwfl);
	st->usable = false;
	st->reported.n = 0;
	st->dwfl = dwfl_begin(&dw_callbacks);
	if (!st->dwfl)
		return;
	dwfl_report_begin(st->dwfl);
	size_t reported = dw_report_new(st, as);
	dwfl_report_end(st->dwfl, NULL, NULL);
	st->usable = reported > 0 &&
		     dwfl_attach_state(st->dwfl, NULL, as->pid, &dw_thread_callbacks, st);
}

static int dw_frame(Dwfl_Frame *frame, void *arg)
{
	struct dw_walk *w = arg;
	Dwarf_Addr pc;
	Dwarf_Word sp = 0;
	bool activation;

	if (!dwfl_frame_pc(frame, &pc, &activation)) {
		w->stop = "no pc for frame";
		return DWARF_CB_ABORT;
	}
	dwfl_frame_reg(frame, 7, &sp);
	if (w->n == 0) {	/* the initial frame is the sampled ip, already in pcs[0] */
		w->n = 1;
		w->last_sp = sp;
		return DWARF_CB_OK;
	}
	if (sp && w->last_sp && sp < w->last_sp) {
		w->stop = "stack pointer went down (corrupt stack)";
		return DWARF_CB_ABORT;
	}
	w->last_sp = sp;
	if (w->n >= w->max) {
		w->stop = "frame limit reached";
		return DWARF_CB_ABORT;
	}
	w->pcs[w->n++] = pc;
	if (w->go && !activation && prof_unwind_ret_ends_go_stack(w->as, pc)) {
		w->at_go_end = true;
		return DWARF_CB_ABORT;
	}
	return DWARF_CB_OK;
}

/* The address space's libdw state, created on first use. */
static struct dw_state *dw_state_of(struct prof_addrspace *as)
{
	struct prof_unwind_as_state *slot = prof_unwind_as_state(as);
	struct dw_state *st = slot->libdw;

	if (!st) {
		st = slot->libdw = xcalloc(1, sizeof(*st));
		slot->libdw_free = dw_state_free;
		st->generation = st->rules_generation = as->generation - 1;
	}
	return st;
}

/* The fast path: true when every frame had a simple cached rule. */
static bool dw_fast(struct dw_state *st, const struct unwind_ctx *c, uint64_t *pcs, size_t max,
		    struct prof_unwind_result *res)
{
	/* runtime pcs cached as "no rule" may be in new mappings: recompute */
	if (st->rules_generation != c->as->generation) {
		prof_unwind_cfi_cache_reset(&st->rules);
		st->rules_generation = c->as->generation;
	}
	return prof_unwind_cfi_fast(&st->rules, c, pcs, max, res);
}

void prof_unwind_libdw(const struct unwind_ctx *c, uint64_t *pcs, size_t max,
		       struct prof_unwind_result *res)
{
	struct dw_state *st = dw_state_of(c->as);

	if (!c->no_fast_path && dw_fast(st, c, pcs, max, res))
		return;
	c->reads->bp_used = true;	/* libdw's walk gets every register */
	if (st->generation != c->as->generation || !st->dwfl)
		dw_update(st, c->as);
	if (!st->usable) {
		res->stop = "no modules to unwind with";
		return;
	}
	struct dw_walk w = { .as = c->as, .go = prof_unwind_as_has_go(c->as), .pcs = pcs, .max = max };
	st->cur = c;
	st->read_failed = false;
	int rc = dwfl_getthread_frames(st->dwfl, c->tid, dw_frame, &w);
	st->cur = NULL;
	res->n = MAX(w.n, (size_t)1);
	res->complete = w.at_go_end || (rc == 0 && !st->read_failed);
	if (res->complete)
		res->stop = NULL;
	else if (rc == 0)
		res->stop = "stack copy exhausted";
	else
		res->stop = w.stop ? w.stop : "no unwind info or stack copy exhausted";
}
