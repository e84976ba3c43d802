/*
 * libunwind.c - the libunwind backend: remote unwinding (unw_init_remote)
 * over a sample's (registers, stack copy) with our own unw_accessors.
 *
 * find_proc_info locates the module of an ip, reads its .eh_frame_hdr
 * (PT_GNU_EH_FRAME) once, and hands libunwind a UNW_INFO_FORMAT_REMOTE_TABLE
 * description of the binary-search table; libunwind's
 * dwarf_search_unwind_table (exported as _Ux86_64_dwarf_search_unwind_table,
 * not declared in its headers) then reads the table and the FDEs through
 * access_mem, which serves file-backed addresses from the mapped ELF file.
 *
 * Design notes / invariants:
 *  - eh_frame_hdr facts are cached per prof_elf in the unwinder (binaries
 *    are shared by every process).
 *  - One unw_addr_space_t per address space, kept in its state slot with
 *    UNW_CACHE_GLOBAL so libunwind's per-ip register-state cache persists
 *    across samples; flushed when as->generation changes, because the
 *    cache is keyed by runtime ip.  Debian's libunwind blocks signals
 *    around every cache access (two sigprocmask syscalls per step, most of
 *    this backend's ~0.5 us/frame); UNW_CACHE_PER_THREAD silently falls
 *    back to the global cache there and UNW_CACHE_NONE is 7x slower.
 *  - access_mem reads only the stack copy and file contents; any other
 *    address fails, which ends the unwind as incomplete.
 */
#include "unwind-priv.h"
#include <gelf.h>
#include <libunwind.h>
#include <string.h>

int _Ux86_64_dwarf_search_unwind_table(unw_addr_space_t as, unw_word_t ip, unw_dyn_info_t *di,
				       unw_proc_info_t *pi, int need_unwind_info, void *arg);

struct eh_hdr_info {
	bool ok;
	uint64_t hdr_vaddr;	/* file vaddr of .eh_frame_hdr */
	uint64_t table_vaddr;
	uint64_t fde_count;
};

struct prof_unwind_libunwind {
	struct u64map hdrs;	/* prof_elf pointer -> index into infos */
	VEC(struct eh_hdr_info) infos;
};

struct lu_as_state {
	unw_addr_space_t uas;
	uint64_t generation;
};

struct lu_arg {
	struct prof_unwind_libunwind *lu;
	const struct unwind_ctx *c;
};

struct prof_unwind_libunwind *prof_unwind_libunwind_new(void)
{
	return xcalloc(1, sizeof(struct prof_unwind_libunwind));
}

void prof_unwind_libunwind_free(struct prof_unwind_libunwind *lu)
{
	u64map_free(&lu->hdrs);
	free(lu->infos.v);
	free(lu);
}

#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30

/* Parses the .eh_frame_hdr header; only the layout every toolchain emits
 * (sdata4 table, udata4 count) is accepted, as libunwind requires it. */
static struct eh_hdr_info read_eh_hdr(const struct prof_elf *e)
{
	struct eh_hdr_info info = { 0 };
	Elf *elf = (Elf *)prof_elf_elf(e);
	size_t phnum;

	if (!elf || elf_getphdrnum(elf, &phnum))
		return info;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		uint8_t h[12];
		if (prof_elf_read_vaddr(e, ph.p_vaddr, h, sizeof(h)) < 0 || h[0] != 1 ||
		    h[2] != DW_EH_PE_udata4 || h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
			return info;
		uint32_t count;
		memcpy(&count, h + 8, 4);
		info.ok = count > 0;
		info.hdr_vaddr = ph.p_vaddr;
		info.table_vaddr = ph.p_vaddr + 12;
		info.fde_count = count;
		return info;
	}
	return info;
}

static const struct eh_hdr_info *eh_hdr(struct prof_unwind_libunwind *lu, const struct prof_elf *e)
{
	bool created;
	uint64_t *slot = u64map_slot(&lu->hdrs, (uintptr_t)e, &created);

	if (created) {
		*slot = lu->infos.n;
		VEC_PUSH(&lu->infos, read_eh_hdr(e));
	}
	return &lu->infos.v[*slot];
}

static int lu_find_proc_info(unw_addr_space_t uas, unw_word_t ip, unw_proc_info_t *pi,
			     int need_unwind_info, void *arg)
{
	struct lu_arg *a = arg;
	const struct prof_mapping *m = prof_addrspace_find(a->c->as, ip);

	if (!m || !m->elf)
		return -UNW_ENOINFO;
	const struct eh_hdr_info *h = eh_hdr(a->lu, m->elf);
	if (!h->ok)
		return -UNW_ENOINFO;
	unw_dyn_info_t di;
	memset(&di, 0, sizeof(di));
	di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
	di.start_ip = m->start;
	di.end_ip = m->end;
	di.u.rti.segbase = h->hdr_vaddr + m->bias;
	di.u.rti.table_data = h->table_vaddr + m->bias;
	/* 8-byte entries (two sdata4), counted in words */
	di.u.rti.table_len = h->fde_count * 8 / sizeof(unw_word_t);
	return _Ux86_64_dwarf_search_unwind_table(uas, ip, &di, pi, need_unwind_info, arg);
}

static void lu_put_unwind_info(unw_addr_space_t uas, unw_proc_info_t *pi, void *arg)
{
}

static int lu_get_dyn_info_list_addr(unw_addr_space_t uas, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

static int lu_access_mem(unw_addr_space_t uas, unw_word_t addr, unw_word_t *val, int write,
			 void *arg)
{
	struct lu_arg *a = arg;
	uint64_t v;

	if (write || !prof_unwind_read_word(a->c, addr, &v))
		return -UNW_EINVAL;
	*val = v;
	return 0;
}

static int lu_access_reg(unw_addr_space_t uas, unw_regnum_t reg, unw_word_t *val, int write,
			 void *arg)
{
	struct lu_arg *a = arg;

	if (write)
		return -UNW_EREADONLYREG;
	if (reg < 0 || reg >= UNWIND_DWARF_NREGS)
		return -UNW_EBADREG;
	*val = a->c->regs->r[unwind_dwarf_to_perf[reg]];
	return 0;
}

static int lu_access_fpreg(unw_addr_space_t uas, unw_regnum_t reg, unw_fpreg_t *val, int write,
			   void *arg)
{
	return -UNW_EINVAL;
}

static int lu_resume(unw_addr_space_t uas, unw_cursor_t *cu, void *arg)
{
	return -UNW_EINVAL;
}

static int lu_get_proc_name(unw_addr_space_t uas, unw_word_t addr, char *buf, size_t len,
			    unw_word_t *off, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t lu_accessors = {
	.find_proc_info = lu_find_proc_info,
	.put_unwind_info = lu_put_unwind_info,
	.get_dyn_info_list_addr = lu_get_dyn_info_list_addr,
	.access_mem = lu_access_mem,
	.access_reg = lu_access_reg,
	.access_fpreg = lu_access_fpreg,
	.resume = lu_resume,
	.get_proc_name = lu_get_proc_name,
};

static void lu_state_free(void *p)
{
	struct lu_as_state *st = p;

	if (st->uas)
		unw_destroy_addr_space(st->uas);
	free(st);
}

static struct lu_as_state *lu_state(struct prof_addrspace *as)
{
	struct prof_unwind_as_state *slot = prof_unwind_as_state(as);
	struct lu_as_state *st = slot->libunwind;

	if (!st) {
		st = slot->libunwind = xcalloc(1, sizeof(*st));
		slot->libunwind_free = lu_state_free;
		st->uas = unw_create_addr_space(&lu_accessors, 0);
		if (st->uas)
			unw_set_caching_policy(st->uas, UNW_CACHE_GLOBAL);
		st->generation = as->generation;
	} else if (st->generation != as->generation && st->uas) {
		unw_flush_cache(st->uas, 0, 0);
		st->generation = as->generation;
	}
	return st;
}

void prof_unwind_libunwind(struct prof_unwind_libunwind *lu, const struct unwind_ctx *c, uint64_t *pcs,
			   size_t max, struct prof_unwind_result *res)
{
	struct lu_as_state *st = lu_state(c->as);
	struct lu_arg arg = { lu, c };
	unw_cursor_t cursor;

	if (!st->uas || unw_init_remote(&cursor, st->uas, &arg) < 0) {
		res->stop = "libunwind cannot start";
		return;
	}
	uint64_t last_sp = c->sp;
	bool go = prof_unwind_as_has_go(c->as);
	res->n = 1;
	while (res->n < max) {
		int r = unw_step(&cursor);
		if (r == 0) {
			res->complete = true;
			res->stop = NULL;
			return;
		}
		if (r < 0) {
			res->stop = "no unwind info or stack copy exhausted";
			return;
		}
		unw_word_t ip, sp;
		if (unw_get_reg(&cursor, UNW_REG_IP, &ip) < 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0) {
			res->stop = "cannot read registers";
			return;
		}
		if (sp < last_sp) {
			res->stop = "stack pointer went down (corrupt stack)";
			return;
		}
		last_sp = sp;
		pcs[res->n++] = ip;
		if (go && prof_unwind_ret_ends_go_stack(c->as, ip)) {
			res->complete = true;
			res->stop = NULL;
			return;
		}
	}
	res->stop = "frame limit reached";
}
