/*
 * firefox.c - export a profile in the Firefox Profiler's "processed
 * profile" format, version 57 (meta.preprocessedProfileVersion), the
 * version samply writes, so profiler.firefox.com (or a local copy of the
 * profiler) opens a recording with its tracks, call tree, flame graph and
 * stack chart.  Newer profilers upgrade a version-57 file as it loads.
 *
 * What version 57 asks for, and what is written (docs/viewer.md says
 * which documents were read and what the tests check):
 *  - profile.meta: interval (ms), startTime (ms since the epoch: the
 *    recording's start_time, 0 when unknown), categories (Other is the
 *    grey default; User, Kernel, JIT), sampleUnits, symbolicated: true
 *    (names are prof's, the viewer must not ask a symbol server).
 *  - profile.shared.stringArray: every string of the file, referred to by
 *    index from all threads (version 56 moved it out of the threads).
 *  - profile.libs: one per module a frame uses: path, name, and from the
 *    module's ELF build-id the codeId (the full id) and breakpadId.
 *  - profile.threads: one per recorded thread that has samples under the
 *    view, each with pid (a string), tid, name, processName, isMainThread
 *    and its own stackTable (frame, prefix < own index), frameTable,
 *    funcTable (a function is (name, module), as in the text report),
 *    resourceTable (one library per module) and samples in time order,
 *    times in ms since the first sample.
 *  - Weights: --metric=cpu writes one sample per CPU sample (weightType
 *    "samples") with each one's CPU time in threadCPUDelta (µs) when the
 *    recording has it (clock events), which draws the CPU graph in the
 *    tracks.  The time metrics (off-cpu, io-wait, sleep, wall) write
 *    "tracing-ms" weights: each off-CPU interval weighs its length, at the
 *    time the thread left the CPU.
 *  - Off-CPU intervals (any metric) are also interval markers named by
 *    the state (I/O wait, Uninterruptible, Sleep, Preempted) of one
 *    "OffCPU" marker schema shown in the tracks, each with the stack the
 *    thread blocked in as its cause.  A thread that only waited still
 *    gets a thread, for its markers.
 *  - A profile without sample times (callgrind input) gets one sample per
 *    (thread, stack) aggregate, all at time 0, with its weight.
 */
#include "prof/output.h"
#include "output-priv.h"
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#define FF_PROCESSED_VERSION 57
enum { CAT_OTHER, CAT_USER, CAT_KERNEL, CAT_JIT, CAT_OFFCPU };

struct ff_sample {
	uint64_t t_ns, weight;		/* weight: count, or ns for time metrics */
	uint64_t cpu_ns;		/* CPU time of a CPU sample, 0 if unknown */
	uint32_t node;
};

/* Profile-wide state: strings and libs are shared by all threads. */
struct ff_state {
	const struct prof_profile *p;
	const struct prof_view *v;
	struct fn_index fns;		/* frame -> (name, module) function */
	struct strtab strs;		/* shared.stringArray */
	struct u64map module_lib;	/* module id -> index in libs */
	VEC(uint32_t) libs;		/* lib index -> module id */
	uint64_t t0;			/* time 0 of every thread, ns */
	struct u64map pid_start;	/* pid -> its first sample's time, ns */
	struct proc_table procs;	/* process names */
	bool time_metric;		/* weights are ns ("tracing-ms") */
	bool cpu_delta;			/* threadCPUDelta is written */
	bool cpu_ns;			/* render_timed_has_cpu_ns() */
};

/* One thread's tables, as JSON column bodies, and the maps that fill them. */
struct ff_thread {
	struct u64map node_stack, frame_ix, func_ix, res_ix;	/* -> index */
	size_t nstacks, nframes, nfuncs, nres;
	struct strbuf st_frame, st_prefix;
	struct strbuf fr_addr, fr_depth, fr_cat, fr_func, fr_line;
	struct strbuf fn_name, fn_res, fn_file, fn_js, fn_line;
	struct strbuf rs_lib, rs_name;
	VEC(struct ff_sample) samples;
	VEC(struct ff_sample) off_cpu;	/* markers: weight = length, cpu_ns = metric */
};

/* Appends x as entry n of a JSON column body. */
static void col_add(struct strbuf *col, size_t n, unsigned long long x)
{
	sb_addf(col, n ? ",%llu" : "%llu", x);
}

static void col_add_null(struct strbuf *col, size_t n)
{
	sb_adds(col, n ? ",null" : "null");
}

static uint32_t lib_index(struct ff_state *s, uint32_t module)
{
	bool created;
	uint64_t *slot = u64map_slot(&s->module_lib, module, &created);

	if (created) {
		*slot = s->libs.n;
		VEC_PUSH(&s->libs, module);
	}
	return (uint32_t)*slot;
}

/* The resource (a library) of a module, -1 for frames without one. */
static long long resource_index(struct ff_state *s, struct ff_thread *t, uint32_t module)
{
	if (module >= s->p->modules.n)
		return -1;
	bool created;
	uint64_t *slot = u64map_slot(&t->res_ix, module, &created);
	if (created) {
		*slot = t->nres;
		col_add(&t->rs_lib, t->nres, lib_index(s, module));
		col_add(&t->rs_name, t->nres,
			strtab_intern(&s->strs, prof_module_basename(s->p, module)));
		t->nres++;
	}
	return (long long)*slot;
}

static uint32_t func_index(struct ff_state *s, struct ff_thread *t, uint32_t frame)
{
	uint32_t fn = s->fns.frame_fn[frame];
	bool created;
	uint64_t *slot = u64map_slot(&t->func_ix, fn, &created);

	if (created) {
		const struct prof_fn_row *r = &s->fns.fns.v[fn];
		const char *file = prof_str(s->p, r->file);
		long long res = resource_index(s, t, r->module);
		*slot = t->nfuncs;
		col_add(&t->fn_name, t->nfuncs,
			strtab_intern(&s->strs, render_fn_name(s->p, r->func)));
		if (res < 0)
			sb_adds(&t->fn_res, t->nfuncs ? ",-1" : "-1");
		else
			col_add(&t->fn_res, t->nfuncs, (unsigned long long)res);
		if (*file)
			col_add(&t->fn_file, t->nfuncs, strtab_intern(&s->strs, file));
		else
			col_add_null(&t->fn_file, t->nfuncs);
		/* a JS engine's JIT frame with its script (V8's perf map names) */
		sb_adds(&t->fn_js, t->nfuncs ? "," : "");
		bool js = s->p->frames.v[frame].kind == PROF_FRAME_JIT && *file;
		sb_adds(&t->fn_js, js ? "true" : "false");
		if (js && s->p->frames.v[frame].line)	/* V8 names the function's start */
			col_add(&t->fn_line, t->nfuncs, s->p->frames.v[frame].line);
		else
			col_add_null(&t->fn_line, t->nfuncs);
		t->nfuncs++;
	}
	return (uint32_t)*slot;
}

static uint32_t frame_category(const struct prof_frame *f)
{
	switch (f->kind) {
	case PROF_FRAME_USER: return CAT_USER;
	case PROF_FRAME_KERNEL: return CAT_KERNEL;
	case PROF_FRAME_JIT: return CAT_JIT;
	default: return CAT_OTHER;
	}
}

/* inline_depth: frames inlined into this one's address so far (0 for an
 * outer frame), as the viewer numbers an inline stack. */
static uint32_t frame_index(struct ff_state *s, struct ff_thread *t, uint32_t frame,
			    uint32_t inline_depth)
{
	const struct prof_frame *f = &s->p->frames.v[frame];
	bool created;
	uint64_t *slot = u64map_slot(&t->frame_ix, frame, &created);

	if (created) {
		uint32_t func = func_index(s, t, frame);
		*slot = t->nframes;
		if (f->addr && f->module < s->p->modules.n)
			col_add(&t->fr_addr, t->nframes, (unsigned long long)f->addr);
		else
			sb_adds(&t->fr_addr, t->nframes ? ",-1" : "-1");
		col_add(&t->fr_depth, t->nframes, inline_depth);
		col_add(&t->fr_cat, t->nframes, frame_category(f));
		col_add(&t->fr_func, t->nframes, func);
		if (f->line)
			col_add(&t->fr_line, t->nframes, f->line);
		else
			col_add_null(&t->fr_line, t->nframes);
		t->nframes++;
	}
	return (uint32_t)*slot;
}

/* Where node's frame sits in its inline stack, as the viewer numbers it:
 * 0 for an outer frame, else 1 + its caller's depth (prof puts an inlined
 * frame below the frame it was inlined into). */
static uint32_t inline_depth(const struct prof_profile *p, uint32_t node)
{
	uint32_t depth = 0;

	for (uint32_t n = node; n && p->nodes.v[n].frame < p->frames.n &&
	     p->frames.v[p->nodes.v[n].frame].inlined; n = p->nodes.v[n].parent)
		depth++;
	return depth;
}

/* The stack index of a trie node, adding it and its callers on first use:
 * a caller always gets its index first, so every prefix < own index.
 * -1 for the root (an empty stack). */
static long long stack_index(struct ff_state *s, struct ff_thread *t, uint32_t node)
{
	const struct prof_profile *p = s->p;
	uint64_t idx;

	if (!node || node >= p->nodes.n)
		return -1;
	if (u64map_get(&t->node_stack, node, &idx))
		return (long long)idx;
	long long prefix = stack_index(s, t, p->nodes.v[node].parent);
	if (p->nodes.v[node].frame >= p->frames.n)
		return prefix;	/* not a frame: the caller's stack stands for it */
	uint32_t frame = frame_index(s, t, p->nodes.v[node].frame, inline_depth(p, node));
	col_add(&t->st_frame, t->nstacks, frame);
	if (prefix < 0)
		col_add_null(&t->st_prefix, t->nstacks);
	else
		col_add(&t->st_prefix, t->nstacks, (unsigned long long)prefix);
	u64map_put(&t->node_stack, node, t->nstacks);
	return (long long)t->nstacks++;
}

/* A thread's samples from p->timed[order[from..to]] (time order). */
static void timed_samples(struct ff_state *s, struct ff_thread *t, const size_t *order,
			  size_t from, size_t to)
{
	const struct prof_profile *p = s->p;
	bool cpu_ns = s->cpu_ns;

	for (size_t k = from; k < to; k++) {
		const struct prof_timed_sample *e = &p->timed.v[order[k]];
		struct ff_sample *last = t->samples.n ? &t->samples.v[t->samples.n - 1] : NULL;
		if (e->node >= p->nodes.n)
			continue;
		if (e->metric >= PROF_M_IOWAIT_NS && prof_metric_is_duration(e->metric) &&
		    render_view_passes(p, s->v, e->thread, e->node))
			VEC_PUSH(&t->off_cpu, ((struct ff_sample){ e->t_ns, e->value, e->metric,
								  e->node }));
		if (s->time_metric) {
			uint64_t w = render_timed_weight(p, s->v, e, cpu_ns);
			if (w)
				VEC_PUSH(&t->samples, ((struct ff_sample){ e->t_ns, w, 0, e->node }));
		} else if (e->metric == PROF_M_SAMPLES) {
			if (render_view_passes(p, s->v, e->thread, e->node))
				VEC_PUSH(&t->samples, ((struct ff_sample){
					e->t_ns, e->value, cpu_ns ? 0 : e->value * p->period_ns,
					e->node }));
		} else if (e->metric == PROF_M_CPU_NS && last && last->t_ns == e->t_ns &&
			   last->node == e->node && !last->cpu_ns) {
			last->cpu_ns = e->value;	/* the companion of the sample before */
		}
	}
}

/* Without times: one sample per aggregate of the thread, at time 0. */
static void aggregate_samples(struct ff_state *s, struct ff_thread *t, uint32_t thread)
{
	const struct prof_profile *p = s->p;

	for (size_t i = 0; i < p->aggs.n; i++) {
		const struct prof_agg *a = &p->aggs.v[i];
		uint64_t w = a->thread == thread ? prof_view_weight(p, s->v, a) : 0;
		if (w && a->node < p->nodes.n)
			VEC_PUSH(&t->samples, ((struct ff_sample){ s->t0, w, 0, a->node }));
	}
}

static void json_ms(struct strbuf *sb, uint64_t ns, bool comma)
{
	if (comma)
		sb_addch(sb, ',');
	json_number(sb, (double)ns / 1e6);
}

static void emit_samples(struct ff_state *s, struct ff_thread *t, struct strbuf *sb)
{
	struct strbuf stack = STRBUF_INIT, time = STRBUF_INIT, weight = STRBUF_INIT,
		      cpu = STRBUF_INIT;

	for (size_t i = 0; i < t->samples.n; i++) {
		const struct ff_sample *e = &t->samples.v[i];
		long long st = stack_index(s, t, e->node);
		if (st < 0)
			col_add_null(&stack, i);
		else
			col_add(&stack, i, (unsigned long long)st);
		json_ms(&time, e->t_ns > s->t0 ? e->t_ns - s->t0 : 0, i);
		if (s->time_metric)
			json_ms(&weight, e->weight, i);
		else
			col_add(&weight, i, (unsigned long long)e->weight);
		if (i)
			sb_addch(&cpu, ',');
		json_number(&cpu, (double)e->cpu_ns / 1e3);
	}
	sb_addf(sb, "\"samples\":{\"length\":%zu,\"stack\":[%s],\"time\":[%s],"
		"\"weight\":[%s],\"weightType\":\"%s\"", t->samples.n, sb_str(&stack),
		sb_str(&time), sb_str(&weight), s->time_metric ? "tracing-ms" : "samples");
	if (s->cpu_delta)
		sb_addf(sb, ",\"threadCPUDelta\":[%s]", sb_str(&cpu));
	sb_adds(sb, "},\n");
	sb_release(&stack);
	sb_release(&time);
	sb_release(&weight);
	sb_release(&cpu);
}

/* A column of n copies of one value. */
static void col_const(struct strbuf *sb, const char *key, size_t n, const char *value)
{
	sb_addf(sb, ",\"%s\":[", key);
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, i ? ",%s" : "%s", value);
	sb_addch(sb, ']');
}

static void emit_tables(struct ff_thread *t, struct strbuf *sb)
{
	sb_addf(sb, "\"stackTable\":{\"length\":%zu,\"frame\":[%s],\"prefix\":[%s]},\n",
		t->nstacks, sb_str(&t->st_frame), sb_str(&t->st_prefix));
	sb_addf(sb, "\"frameTable\":{\"length\":%zu,\"address\":[%s],\"inlineDepth\":[%s],"
		"\"category\":[%s],\"func\":[%s],\"line\":[%s]", t->nframes, sb_str(&t->fr_addr),
		sb_str(&t->fr_depth), sb_str(&t->fr_cat), sb_str(&t->fr_func), sb_str(&t->fr_line));
	col_const(sb, "subcategory", t->nframes, "0");
	col_const(sb, "nativeSymbol", t->nframes, "null");	/* names are final */
	col_const(sb, "innerWindowID", t->nframes, "0");	/* 0: not a web page's */
	col_const(sb, "column", t->nframes, "null");
	sb_addf(sb, "},\n\"funcTable\":{\"length\":%zu,\"name\":[%s],\"resource\":[%s],"
		"\"fileName\":[%s]", t->nfuncs, sb_str(&t->fn_name), sb_str(&t->fn_res),
		sb_str(&t->fn_file));
	sb_addf(sb, ",\"isJS\":[%s]", sb_str(&t->fn_js));
	col_const(sb, "relevantForJS", t->nfuncs, "false");
	sb_addf(sb, ",\"lineNumber\":[%s]", sb_str(&t->fn_line));	/* JS functions' start only */
	col_const(sb, "columnNumber", t->nfuncs, "null");
	sb_addf(sb, "},\n\"resourceTable\":{\"length\":%zu,\"lib\":[%s],\"name\":[%s]", t->nres,
		sb_str(&t->rs_lib), sb_str(&t->rs_name));
	col_const(sb, "host", t->nres, "null");
	col_const(sb, "type", t->nres, "1");	/* 1: a library */
	sb_adds(sb, "},\n\"nativeSymbols\":{\"length\":0,\"libIndex\":[],\"address\":[],"
		"\"name\":[],\"functionSize\":[]}");
}

static const char *off_cpu_name(uint64_t metric)
{
	switch (metric) {
	case PROF_M_IOWAIT_NS: return "I/O wait";
	case PROF_M_UNINT_NS: return "Uninterruptible";
	case PROF_M_SLEEP_NS: return "Sleep";
	default: return "Preempted";
	}
}

/* Where a thread waited, as /proc/PID/wchan names it: the innermost frame
 * of its off-CPU stack outside the scheduler's own functions. */
static const char *wait_channel(const struct prof_profile *p, uint32_t node)
{
	static const char *const sched[] = { "schedule", "finish_task_switch", "__traceiter",
					     "__switch_to", "context_switch", "_cond_resched" };

	for (uint32_t n = node; n && n < p->nodes.n; n = p->nodes.v[n].parent) {
		const char *name = prof_str(p, p->frames.v[p->nodes.v[n].frame].func);
		bool in_sched = false;
		for (size_t i = 0; i < ARRAY_SIZE(sched) && !in_sched; i++)
			in_sched = strstr(name, sched[i]) != NULL;
		if (!in_sched)
			return name;
	}
	return "";
}

/* Each off-CPU interval as an interval marker (phase 1) of the OffCPU
 * schema (emit_meta), with the stack it blocked in as its cause. */
static void emit_markers(struct ff_state *s, struct ff_thread *t, uint32_t tid,
			 struct strbuf *sb)
{
	struct strbuf data = STRBUF_INIT, name = STRBUF_INIT, start = STRBUF_INIT,
		      end = STRBUF_INIT;
	size_t n = t->off_cpu.n;

	for (size_t i = 0; i < n; i++) {
		const struct ff_sample *e = &t->off_cpu.v[i];
		long long st = stack_index(s, t, e->node);
		uint64_t t_out = e->t_ns > s->t0 ? e->t_ns - s->t0 : 0;
		sb_adds(&data, i ? ",{\"type\":\"OffCPU\",\"state\":" : "{\"type\":\"OffCPU\",\"state\":");
		render_json_str(&data, off_cpu_name(e->cpu_ns));
		sb_adds(&data, ",\"duration\":");
		json_ms(&data, e->weight, false);
		sb_adds(&data, ",\"wchan\":");
		render_json_str(&data, wait_channel(s->p, e->node));
		if (st >= 0) {
			sb_addf(&data, ",\"cause\":{\"tid\":%u,\"time\":", tid);
			json_ms(&data, t_out, false);
			sb_addf(&data, ",\"stack\":%lld}", st);
		}
		sb_addch(&data, '}');
		col_add(&name, i, strtab_intern(&s->strs, off_cpu_name(e->cpu_ns)));
		json_ms(&start, t_out, i);
		json_ms(&end, t_out + e->weight, i);
	}
	sb_addf(sb, "\"markers\":{\"length\":%zu,\"data\":[%s],\"name\":[%s],"
		"\"startTime\":[%s],\"endTime\":[%s]", n, sb_str(&data), sb_str(&name),
		sb_str(&start), sb_str(&end));
	col_const(sb, "phase", n, "1");
	col_const(sb, "category", n, "4");	/* CAT_OFFCPU */
	sb_adds(sb, "},\n");
	sb_release(&data);
	sb_release(&name);
	sb_release(&start);
	sb_release(&end);
}

static void thread_free(struct ff_thread *t)
{
	struct strbuf *cols[] = { &t->st_frame, &t->st_prefix, &t->fr_addr, &t->fr_depth,
				  &t->fr_cat, &t->fr_func, &t->fr_line, &t->fn_name,
				  &t->fn_res, &t->fn_file, &t->fn_js, &t->fn_line, &t->rs_lib, &t->rs_name };

	for (size_t i = 0; i < ARRAY_SIZE(cols); i++)
		sb_release(cols[i]);
	u64map_free(&t->node_stack);
	u64map_free(&t->frame_ix);
	u64map_free(&t->func_ix);
	u64map_free(&t->res_ix);
	VEC_FREE(&t->samples);
	VEC_FREE(&t->off_cpu);
}

/* The thread's object (with a leading comma unless first); false if it
 * has no sample under the view. */
static bool emit_thread(struct ff_state *s, struct strbuf *sb, uint32_t thread,
			struct u64map *seen_tids, bool first, const size_t *start,
			const size_t *order)
{
	const struct prof_thread *th = &s->p->threads.v[thread];
	struct ff_thread t = { 0 };

	if (s->p->timed.n)
		timed_samples(s, &t, order, start[thread], start[thread + 1]);
	else
		aggregate_samples(s, &t, thread);
	if (!t.samples.n && !t.off_cpu.n) {
		thread_free(&t);
		return false;
	}
	sb_adds(sb, first ? "\n{" : ",\n{");
	emit_samples(s, &t, sb);
	emit_markers(s, &t, th->tid, sb);
	emit_tables(&t, sb);
	sb_addf(sb, ",\n\"showMarkersInTimeline\":%s", t.off_cpu.n ? "true" : "false");
	sb_adds(sb, ",\n\"name\":");
	render_json_str(sb, prof_str(s->p, th->comm));
	sb_adds(sb, ",\"processName\":");
	render_json_str(sb, render_proc_table_get(&s->procs, th->pid)->comm);
	/* An exec gives a task a second entry; the viewer wants distinct tids. */
	bool created;
	uint64_t *n = u64map_slot(seen_tids, (uint64_t)th->pid << 32 | th->tid, &created);
	if (created)
		sb_addf(sb, ",\"pid\":\"%u\",\"tid\":%u", th->pid, th->tid);
	else
		sb_addf(sb, ",\"pid\":\"%u\",\"tid\":\"%u.%llu\"", th->pid, th->tid,
			(unsigned long long)++*n);
	uint64_t pid_start = s->t0;
	u64map_get(&s->pid_start, th->pid, &pid_start);
	sb_addf(sb, ",\"isMainThread\":%s,\"processType\":\"default\",\"processStartupTime\":",
		th->pid == th->tid ? "true" : "false");
	json_ms(sb, pid_start - s->t0, false);
	sb_adds(sb, ",\"processShutdownTime\":null,\"registerTime\":");
	uint64_t first_t = t.samples.n ? t.samples.v[0].t_ns : UINT64_MAX;
	if (t.off_cpu.n && t.off_cpu.v[0].t_ns < first_t)
		first_t = t.off_cpu.v[0].t_ns;
	json_ms(sb, first_t - s->t0, false);
	sb_adds(sb, ",\"unregisterTime\":null,\"pausedRanges\":[]}");
	thread_free(&t);
	return true;
}

/* Breakpad's id of an ELF file: the first 16 bytes of its build-id as a
 * GUID (the first three fields byte-swapped), upper case, age 0. */
static void breakpad_id(struct strbuf *sb, const char *build_id)
{
	static const int order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	size_t len = strlen(build_id);

	for (int i = 0; i < 16; i++) {
		size_t at = (size_t)order[i] * 2;
		for (int k = 0; k < 2; k++) {
			char c = at + k < len ? build_id[at + k] : '0';
			sb_addch(sb, c >= 'a' && c <= 'f' ? (char)(c - 'a' + 'A') : c);
		}
	}
	sb_addch(sb, '0');
}

static void emit_libs(struct ff_state *s, struct strbuf *sb)
{
	struct utsname u;
	const char *arch = uname(&u) == 0 ? u.machine : "";

	sb_adds(sb, "\"libs\":[");
	for (size_t i = 0; i < s->libs.n; i++) {
		const struct prof_module *m = &s->p->modules.v[s->libs.v[i]];
		const char *path = prof_str(s->p, m->path), *id = prof_str(s->p, m->build_id);
		const char *name = prof_module_basename(s->p, s->libs.v[i]);
		sb_adds(sb, i ? ",\n{\"arch\":" : "\n{\"arch\":");
		render_json_str(sb, arch);
		sb_adds(sb, ",\"name\":");
		render_json_str(sb, name);
		sb_adds(sb, ",\"debugName\":");
		render_json_str(sb, name);
		sb_adds(sb, ",\"path\":");
		render_json_str(sb, path);
		sb_adds(sb, ",\"debugPath\":");
		render_json_str(sb, path);
		sb_adds(sb, ",\"breakpadId\":\"");
		if (*id)
			breakpad_id(sb, id);
		sb_adds(sb, *id ? "\",\"codeId\":" : "\",\"codeId\":null");
		if (*id)
			render_json_str(sb, id);
		sb_addch(sb, '}');
	}
	sb_adds(sb, "],\n");
}

/* Milliseconds since the epoch of the recording's start_time
 * ("YYYY-MM-DDTHH:MM:SSZ"), 0 when it has none. */
static double start_time_ms(const struct prof_profile *p)
{
	const char *when = prof_meta_get(p, "start_time");
	struct tm tm = { 0 };

	if (!when || !strptime(when, "%Y-%m-%dT%H:%M:%SZ", &tm))
		return 0;
	return (double)timegm(&tm) * 1000.0;
}

/* Profile Info's platform section from what the recorder noted: the OS
 * and kernel, the CPU's model and count, the memory. */
static void emit_platform(const struct prof_profile *p, struct strbuf *sb)
{
	const char *kernel = prof_meta_get(p, "kernel"), *arch = prof_meta_get(p, "arch");
	const char *cpu = prof_meta_get(p, "cpu_model"), *cpus = prof_meta_get(p, "cpus");
	const char *mem = prof_meta_get(p, "memory_bytes");
	struct strbuf os = STRBUF_INIT;

	sb_adds(sb, ",\"platform\":\"Linux\",\"oscpu\":");
	sb_adds(&os, "Linux");
	if (kernel && *kernel)
		sb_addf(&os, " %s", kernel);
	if (arch && *arch)
		sb_addf(&os, " %s", arch);
	render_json_str(sb, sb_str(&os));
	if (arch && *arch) {
		sb_adds(sb, ",\"abi\":");
		render_json_str(sb, arch);
	}
	if (cpu && *cpu) {
		sb_adds(sb, ",\"CPUName\":");
		render_json_str(sb, cpu);
	}
	if (cpus && *cpus && strspn(cpus, "0123456789") == strlen(cpus))
		sb_addf(sb, ",\"logicalCPUs\":%s", cpus);
	if (mem && *mem && strspn(mem, "0123456789") == strlen(mem))
		sb_addf(sb, ",\"mainMemory\":%s", mem);
	sb_release(&os);
}

static void emit_meta(struct ff_state *s, struct strbuf *sb, size_t nthreads)
{
	const struct prof_profile *p = s->p;
	const char *cmd = prof_meta_get(p, "command");

	sb_adds(sb, "\"meta\":{\"version\":24,\"preprocessedProfileVersion\":");
	sb_addf(sb, "%d,\"processType\":0,\"stackwalk\":1,\"debug\":false,\"interval\":",
		FF_PROCESSED_VERSION);
	json_number(sb, p->period_ns ? (double)p->period_ns / 1e6 : 1.0);
	sb_adds(sb, ",\"startTime\":");
	json_number(sb, start_time_ms(p));
	sb_adds(sb, ",\"product\":");
	render_json_str(sb, cmd ? cmd : s->v->title ? s->v->title : "prof");
	emit_platform(p, sb);
	sb_adds(sb, ",\"initialVisibleThreads\":[");	/* every thread recorded, however idle */
	for (size_t i = 0; i < nthreads; i++)
		sb_addf(sb, i ? ",%zu" : "%zu", i);
	sb_adds(sb, "]");
	sb_adds(sb, ",\"importedFrom\":\"prof\",\"symbolicated\":true,"
		"\"usesOnlyOneStackType\":true,\"sourceCodeIsNotOnSearchfox\":true,"
		"\"markerSchema\":[{\"name\":\"OffCPU\",\"display\":[\"marker-chart\","
		"\"marker-table\",\"timeline-overview\"],\"chartLabel\":\"{marker.data.state}\","
		"\"tableLabel\":\"{marker.data.state} in {marker.data.wchan}\",\"fields\":["
		"{\"key\":\"state\",\"label\":\"State\",\"format\":\"string\"},"
		"{\"key\":\"duration\",\"label\":\"Duration\",\"format\":\"duration\"},"
		"{\"key\":\"wchan\",\"label\":\"Wait channel\",\"format\":\"string\"}],\"description\":"
		"\"The thread was off the CPU: waiting for I/O, in another uninterruptible "
		"wait, sleeping, or preempted. Its stack is where it blocked.\"}],"
		"\"extensions\":{\"length\":0,\"baseURL\":[],\"id\":[],"
		"\"name\":[]},\n\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\","
		"\"threadCPUDelta\":\"\xc2\xb5s\"},\n\"categories\":["
		"{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"User\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"JIT\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
		"{\"name\":\"Off-CPU\",\"color\":\"blue\",\"subcategories\":[\"Other\"]}]},\n");
}

int prof_output_firefox(FILE *f, const struct prof_profile *p, const struct prof_view *v)
{
	struct ff_state s = { .p = p, .v = v };
	struct strbuf threads = STRBUF_INIT, out = STRBUF_INIT;
	struct u64map seen_tids = { 0 };
	size_t *start = NULL, *order = NULL, nthreads = 0;
	bool first = true;

	s.time_metric = v->metric != PROF_VIEW_CPU;
	render_proc_table_build(&s.procs, p);
	s.cpu_ns = render_timed_has_cpu_ns(p);
	s.cpu_delta = !s.time_metric && p->timed.n && (s.cpu_ns || p->period_ns);
	s.t0 = p->timed.n ? p->timed.v[0].t_ns : 0;
	for (size_t i = 0; i < p->timed.n; i++) {	/* sorted: the first one wins */
		const struct prof_timed_sample *e = &p->timed.v[i];
		bool created;
		uint64_t *slot = e->thread < p->threads.n ?
			u64map_slot(&s.pid_start, p->threads.v[e->thread].pid, &created) : NULL;
		if (slot && created)
			*slot = e->t_ns;
	}
	render_fn_index_build(&s.fns, p);
	strtab_init(&s.strs);
	if (p->timed.n)
		render_timed_by_thread(p, &start, &order);
	for (uint32_t t = 0; t < p->threads.n; t++)
		if (emit_thread(&s, &threads, t, &seen_tids, first, start, order)) {
			first = false;
			nthreads++;
		}

	sb_addch(&out, '{');
	emit_meta(&s, &out, nthreads);
	emit_libs(&s, &out);
	sb_adds(&out, "\"shared\":{\"stringArray\":");
	render_json_strtab(&out, &s.strs);
	sb_adds(&out, "},\n\"pages\":[],\"counters\":[],\"profilerOverhead\":[],\n\"threads\":[");
	sb_add(&out, threads.buf ? threads.buf : "", threads.len);
	sb_adds(&out, "]}\n");
	int rc = render_flush(f, &out);

	sb_release(&threads);
	sb_release(&out);
	free(start);
	free(order);
	u64map_free(&seen_tids);
	u64map_free(&s.module_lib);
	u64map_free(&s.pid_start);
	render_proc_table_free(&s.procs);
	VEC_FREE(&s.libs);
	strtab_free(&s.strs);
	render_fn_index_free(&s.fns);
	return rc;
}
