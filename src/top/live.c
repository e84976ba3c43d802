/*
 * live.c - `prof top`'s loop (see include/prof/top.h): the live driver of
 * the replay engine for the view.  The engine turns the perf records into
 * trie nodes; the view is its consumer and gets every resolved sample; every --delay seconds the window is cut, the table built
 * and painted on the terminal (or printed, with --stdio or when stdout is
 * not a terminal).  Keys are read between drains, 50 ms apart at most.
 *
 * Design notes:
 *  - Nothing is written to disk: the engine's profile only grows by the
 *    distinct frames and stacks it sees.
 *  - A drain pass stops after 100 ms (keys and refreshes stay on time);
 *    each pass is one batch of the engine (exited processes freed).
 *  - While paused, drained samples are not fed, so the window (and the
 *    table the keys reshape) stays as it was when 'p' was pressed.
 *  - Warnings (a replaced binary, ...) are silenced on a terminal: they
 *    would be painted over or, worse, scroll the screen.
 *  - --off-cpu: the off-CPU estimator of `prof record` (record/offcpu.c,
 *    timed in the kernel where BPF allows) charges intervals to stacks
 *    and the view gets their ns instead of the CPU samples; the CPU event
 *    still runs (the engine learns the mappings from it).  Intervals reach
 *    the view when charged, up to a few hundred ms after they end.
 *  - The target exiting is not an error: the last window stays on screen,
 *    marked "exited", until q (with --stdio the loop ends instead).
 *  - A closed stdout (EPIPE) or terminal (EIO, SIGHUP) ends the loop
 *    quietly with success, as `prof top --stdio | head` expects.
 */
#include "prof/offcpu.h"
#include "prof/perf.h"
#include "prof/python.h"
#include "prof/replay.h"
#include "prof/symbol.h"
#include "prof/target.h"
#include "prof/top.h"
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct live {
	const struct prof_top_opts *o;
	struct prof_profile p;
	struct prof_perf pf;
	struct prof_replay *rp;
	struct prof_python *py;		/* NULL with --no-python */
	struct prof_offcpu *oc;		/* --off-cpu, else NULL */
	char offcpu_why[256];
	struct prof_top_view *v;
	struct prof_top_ui ui;
	struct prof_top_table t;
	struct prof_top_status st;
	char target[64];
	bool tty, exited, quit;
	int width, height;
	uint64_t cpu_prev[2];		/* /proc/stat: iowait, total jiffies */
};

static volatile sig_atomic_t stdio_stop;

static void on_stop(int sig) { stdio_stop = 1; }

/* --comm, as the reports' filter: a comma list of whole thread names. */
static bool comm_selected(const struct live *l, uint32_t thread)
{
	struct prof_view f = { .comm = l->o->comm };

	return thread < l->p.threads.n &&
	       prof_view_comm_selected(&f, prof_str(&l->p, l->p.threads.v[thread].comm));
}

static void on_sample(void *arg, const struct prof_replay_sample *rs)
{
	struct live *l = arg;

	prof_replay_count_sample(&l->p, rs->s->time, rs->complete);
	if (l->oc || (l->o->comm && !comm_selected(l, rs->thread)))
		return;
	if (!l->ui.paused)
		prof_top_feed(l->v, rs->s->time, rs->thread, rs->node, 1);
}

static void on_lost(void *arg, const void *event, uint32_t type, uint64_t time, uint64_t n)
{
	struct live *l = arg;

	l->p.lost += n;
}

static const struct prof_replay_ops view_ops = {
	.sample = on_sample,
	.lost = on_lost,
};

/* --off-cpu: an interval charged to a stack (the class metrics beside the
 * total are left out: they split the same time). */
static void on_offcpu(void *arg, uint64_t time, uint32_t thread, uint32_t node, enum prof_metric metric,
		      uint64_t value, unsigned flags)
{
	struct live *l = arg;

	if (metric != PROF_M_OFFCPU_NS || !value || l->ui.paused || thread >= l->p.threads.n ||
	    l->p.threads.v[thread].pid == (uint32_t)getpid() || (l->o->comm && !comm_selected(l, thread)))
		return;	/* -a: prof's own threads wait for the kernel's wake-ups */
	prof_top_feed(l->v, time, thread, node, value);
}

/* The CPU event's ring and the off-CPU events' (none without --off-cpu). */
static size_t perfs(struct live *l, struct prof_perf **out)
{
	out[0] = &l->pf;
	return 1 + (l->oc ? prof_offcpu_perfs(l->oc, out + 1) : 0);
}

/* One batch of at most ~100 ms of records, in time order across the rings. */
static void drain(struct live *l)
{
	struct prof_perf *pfs[1 + PROF_OFFCPU_MAX_PERFS];
	struct prof_replay_source ctx[1 + PROF_OFFCPU_MAX_PERFS];
	struct prof_perf_source srcs[1 + PROF_OFFCPU_MAX_PERFS];
	size_t n = perfs(l, pfs);

	for (size_t i = 0; i < n; i++) {
		ctx[i] = (struct prof_replay_source){ l->rp, pfs[i] };
		srcs[i] = (struct prof_perf_source){ pfs[i], prof_replay_source_fn, &ctx[i] };
	}
	uint64_t passed = 0;
	prof_perf_drain_until(srcs, n, 100000000ULL, &passed);
	prof_offcpu_rings_passed(l->oc, passed);
	prof_replay_batch_end(l->rp);
}

/* Machine-wide I/O wait since the last call, from /proc/stat; -1 unknown. */
static double iowait_pct(struct live *l)
{
	char *s = read_file("/proc/stat", NULL);
	unsigned long long f[8] = { 0 }, total = 0;
	double pct = -1;

	if (s && sscanf(s, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &f[0], &f[1], &f[2], &f[3],
			&f[4], &f[5], &f[6], &f[7]) == 8) {
		for (int i = 0; i < 8; i++)
			total += f[i];
		if (l->cpu_prev[1] && total > l->cpu_prev[1])
			pct = 100.0 * (double)(f[4] - l->cpu_prev[0]) / (double)(total - l->cpu_prev[1]);
		l->cpu_prev[0] = f[4];
		l->cpu_prev[1] = total;
	}
	free(s);
	return pct;
}

static void describe_target(struct live *l)
{
	const struct prof_top_opts *o = l->o;

	if (o->system_wide && o->cpus)
		snprintf(l->target, sizeof(l->target), "CPUs %d%s", o->cpus[0], o->ncpus > 1 ? ",..." : "");
	else if (o->system_wide)
		snprintf(l->target, sizeof(l->target), "all CPUs");
	else
		snprintf(l->target, sizeof(l->target), "pid %d%s%s", (int)o->pids[0], o->npids > 1 ? ",..." : "",
			 l->exited ? " (exited)" : "");
	if (o->comm) {
		size_t n = strlen(l->target);
		snprintf(l->target + n, sizeof(l->target) - n, ", comm %s", o->comm);
	}
}

static int setup(struct live *l)
{
	const struct prof_top_opts *o = l->o;
	struct prof_replay_config cfg = { .p = &l->p, .unwinder = PROF_UNWIND_LIBDW, .live = true };
	int ret;

	prof_profile_init(&l->p);
	if (prof_perf_init(&l->pf, o->perf) < 0)
		return error("bad sampling configuration"), -EINVAL;
	if (!o->no_python)
		l->py = cfg.python = prof_python_hook_set(&l->pf, prof_python_new(), !o->system_wide);
	l->rp = prof_replay_new(&cfg);
	prof_replay_add_consumer(l->rp, &view_ops, l);
	if (o->off_cpu) {
		struct prof_replay_sink sink = { on_offcpu, l };
		l->oc = prof_offcpu_new(&l->pf, PROF_OFFCPU_SAMPLED, PROF_OFFCPU_PERIOD, l->offcpu_why,
					sizeof(l->offcpu_why));
		if (!l->oc)
			return error("--off-cpu: %s", l->offcpu_why), -EPERM;
		prof_offcpu_live(l->oc);
		prof_offcpu_attach(l->oc, l->rp, &l->p, &sink);
		prof_offcpu_own_samples(l->oc, &l->pf);
	}
	struct prof_target_spec t = { .pids = o->pids, .n = o->npids, .py = l->py };
	ret = o->system_wide ? prof_target_system_wide(&l->pf, l->rp, o->cpus, o->ncpus, l->oc)
			     : prof_target_attach(&l->pf, l->rp, &t, l->oc, NULL);
	if (ret < 0)
		return ret;
	/* a window of 5 s, or of one refresh when that is longer */
	l->v = prof_top_view_new(&l->p, (uint64_t)(MAX(5.0, o->delay) * 1e9));
	l->st.period_ns = l->oc ? 1 : o->perf->event->is_clock ? 1000000000ULL / o->perf->freq : 0;
	l->st.offcpu = l->oc != NULL;
	prof_top_ui_init(&l->ui);
	l->ui.sort = o->sort;
	return 0;
}

static void teardown(struct live *l)
{
	prof_top_table_free(&l->t);
	prof_top_ui_free(&l->ui);
	prof_top_view_free(l->v);
	prof_replay_free(l->rp);
	prof_perf_pump_stop(&l->pf);	/* it pulls the accountant's ring */
	prof_offcpu_free(l->oc);
	if (l->pf.rings)
		prof_perf_close(&l->pf);
	prof_python_free(l->py);	/* after the pump, whose hook reads with it */
	prof_profile_free(&l->p);
	prof_elf_cache_free();
}

/* Rebuilds the table from the window (cut at now unless paused). */
static void refresh_table(struct live *l, uint64_t started)
{
	uint64_t now = now_ns();

	if (!l->ui.paused) {
		prof_top_expire(l->v, now);
		l->st.span_ns = MIN(now - started, (uint64_t)(MAX(5.0, l->o->delay) * 1e9));
		l->st.iowait_pct = iowait_pct(l);
	}
	l->st.lost = l->p.lost;
	describe_target(l);
	l->st.target = l->target;
	prof_top_table_for(l->v, &l->ui, &l->t);
}

/* Paints the terminal or prints one --stdio table; false when output is gone. */
static bool show(struct live *l)
{
	struct strbuf sb = STRBUF_INIT;
	bool ok;

	if (l->tty) {
		int sel = prof_top_render(&l->p, &l->t, &l->st, &l->ui, l->width, l->height, 0, &sb);
		ok = prof_tty_paint(sb_str(&sb), sel) == 0;
	} else {
		prof_top_render(&l->p, &l->t, &l->st, &l->ui, 0, 0, l->o->max_rows, &sb);
		sb_adds(&sb, "\n\n");
		ok = write_all(1, sb.buf, sb.len) == 0;
	}
	sb_release(&sb);
	return ok;
}

static void handle_keys(struct live *l, bool *redraw)
{
	int key;

	while ((key = prof_tty_key(0)) >= 0 || (key = prof_tty_key(50)) >= 0) {
		enum prof_top_action a = prof_top_key(&l->ui, key, &l->t,
						      prof_top_visible_rows(&l->ui, &l->t, l->height));
		if (a == PROF_TOP_QUIT) {
			l->quit = true;
			return;
		}
		*redraw |= a == PROF_TOP_REDRAW;
	}
}

static bool should_stop(struct live *l, uint64_t deadline)
{
	if (l->quit || stdio_stop || (l->tty && prof_tty_stopped()))
		return true;
	if (deadline && now_ns() >= deadline)
		return true;
	if (!l->o->system_wide && !l->exited && !prof_target_any_alive(l->o->pids, l->o->npids)) {
		l->exited = true;
		return !l->tty;	/* a terminal keeps the last window until q */
	}
	return false;
}

static void run(struct live *l)
{
	uint64_t started = now_ns(), delay = (uint64_t)(l->o->delay * 1e9);
	uint64_t deadline = l->o->duration ? started + (uint64_t)(l->o->duration * 1e9) : 0;
	uint64_t next = started + MIN(delay, 1000000000ULL);	/* the first table after <= 1 s */

	while (!should_stop(l, deadline)) {
		bool redraw = false;

		if (l->tty)
			handle_keys(l, &redraw);
		else
			prof_perf_poll(&l->pf, 50);
		drain(l);
		if (l->tty && prof_tty_resized()) {
			prof_tty_size(&l->width, &l->height);
			redraw = true;
		}
		if (now_ns() >= next) {
			refresh_table(l, started);
			next = now_ns() + delay;
			redraw = true;
		} else if (redraw) {
			prof_top_table_for(l->v, &l->ui, &l->t);	/* a key: same window, new view */
		}
		if (redraw && (l->tty || !l->ui.paused) && !show(l))
			return;	/* stdout or the terminal is gone */
	}
	if (!l->tty && !l->quit && !stdio_stop && l->exited) {
		refresh_table(l, started);	/* the target's last window */
		show(l);
	}
}

/* Events on, and a pump thread per ring (without one the loop reads the
 * rings itself: fine too). */
static void start(struct live *l)
{
	struct prof_perf *pfs[1 + PROF_OFFCPU_MAX_PERFS];
	size_t n = perfs(l, pfs);
	int ret;

	prof_perf_enable(&l->pf);
	prof_offcpu_pump_with(l->oc, &l->pf);
	if (l->oc) {
		prof_offcpu_python(l->oc, l->py, &l->pf);
		prof_offcpu_enable(l->oc);
	}
	for (size_t i = 0; i < n; i++) {
		if (i && l->py && (pfs[i]->attr.sample_type & PERF_SAMPLE_STACK_USER))
			prof_python_hook_set_offcpu(pfs[i], l->py);
		(void)prof_perf_pump_start(pfs[i], (size_t)64 << 20);
	}
	if (l->oc && l->o->system_wide && (ret = prof_offcpu_exclude_self(l->oc)) < 0)
		warning("cannot filter prof's own switches out of the off-CPU stacks (%s); they are dropped later",
			strerror(-ret));
}

static void stdio_signals(void)
{
	struct sigaction sa = { 0 };

	sa.sa_handler = on_stop;	/* no SA_RESTART: poll wakes up */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int prof_top_run(const struct prof_top_opts *o)
{
	struct live l = { .o = o };
	int ret, quiet = prof_quiet;

	stdio_signals();
	if ((ret = setup(&l)) < 0) {
		teardown(&l);
		return ret;
	}
	if (l.pf.ring_shrunk)
		warning("locked-memory limit: ring buffers reduced to %u KiB per CPU, samples may be lost",
			l.pf.cfg.ring_pages * 4);
	l.tty = !o->stdio && prof_tty_open() == 0;
	if (l.tty) {
		prof_quiet = 1;
		prof_tty_size(&l.width, &l.height);
	}
	start(&l);
	run(&l);
	prof_perf_disable(&l.pf);
	if (l.oc)
		prof_offcpu_disable(l.oc);
	if (l.tty)
		prof_tty_close();
	prof_quiet = quiet;
	teardown(&l);
	return 0;
}
