/*
 * writer.c - writes a live struct prof_profile to prof.data incrementally
 * (format: see format.c).  The recorder calls prof_writer_sample() per
 * sample and prof_writer_flush() now and then; every flush appends only
 * what is new, so the file on disk is always a readable prefix.
 *
 * Design notes / invariants:
 *  - *_done counters say how many of the model's dense, append-only ids
 *    have been written; a flush writes ids [done, n) and advances them.
 *    String 0 and node 0 are implicit, so those counters start at 1.
 *  - thread_comm[i] is the comm string id last written for thread i, and
 *    meta_written mirrors the META records written, index-aligned with
 *    p->meta (keys are never removed from the model): a changed comm or
 *    meta value is re-emitted at the next flush.
 *  - resources_written mirrors the RESOURCES records written, index-aligned
 *    with p->resources (entries are replaced in place, never removed); a
 *    changed entry is re-emitted.  The timeline is append-only, written
 *    from timeline_done on.
 *  - Samples accumulate in `chunk` (the payload of the open SAMPLES
 *    record, with its own delta state) and closed records in `pending`;
 *    they reach the file only after the definitions they reference.
 *  - The file is written under a temporary name beside its path
 *    (".prof.data.XXXXXX") until prof_writer_commit(), called once the
 *    recording has really started (the command runs, the events are on):
 *    only then does an existing file move to "<path>.old" and the new one
 *    take its name.  Help, a usage error, a bad pid or a command that
 *    cannot start leave both as they were.  From the commit on the file
 *    lives at its final path, so a SIGKILLed recording leaves a readable
 *    prof.data.  Once a write fails the error is sticky: every later call
 *    returns it and writes nothing.
 *  - stdout ("-"), devices and FIFOs (-o /dev/null) are written in place
 *    from the start: there is nothing to keep.
 */
#include "format-priv.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct prof_writer {
	int fd;
	char *path, *tmp;		/* tmp: the temporary name until the commit, else NULL */
	int err;			/* sticky negative errno */
	uint64_t bytes;
	size_t strings_done, modules_done, frames_done, nodes_done, threads_done;
	VEC(uint32_t) thread_comm;
	VEC(struct prof_meta) meta_written;
	VEC(struct prof_resources) resources_written;	/* index-aligned with p->resources */
	size_t timeline_done;
	size_t task_events_done;	/* every task event before it is written */
	VEC(uint8_t) task_event_written;

	struct strbuf pending, out;
	/* [0]: SAMPLES (CPU and off-CPU), [1]: HEAP_SAMPLES, each with its
	 * own delta state */
	struct chunk {
		struct strbuf buf;
		bool open;
		uint64_t prev_time;
		uint32_t prev_thread, prev_node;
		uint64_t last_value[PROF_METRIC_COUNT];
	} ck[2];
};

/* The descriptor a new recording is written to: a dup of stdout, the
 * device or FIFO itself, or a temporary file beside path (*tmp set). */
static int open_target(const char *path, char **tmp)
{
	int place;

	*tmp = NULL;
	if (!strcmp(path, "-")) {
		int fd = fcntl(1, F_DUPFD_CLOEXEC, 3);
		return fd < 0 ? -errno : fd;
	}
	/* A symlink at path is moved aside with the old file, never followed. */
	place = out_place(path);
	if (place == -ELOOP)
		place = OUT_BESIDE;
	if (place == OUT_IN_PLACE) {
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return place < 0 ? place : temp_beside(path, tmp);
}

int prof_writer_open(struct prof_writer **out, const char *path)
{
	char *tmp;
	int fd = open_target(path, &tmp), ret;

	*out = NULL;
	if (fd < 0) {
		error("cannot create '%s': %s", path, strerror(-fd));
		return fd;
	}
	struct prof_writer *w = xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->path = xstrdup(path);
	w->tmp = tmp;
	w->strings_done = 1;
	w->nodes_done = 1;
	prof_data_put_header(&w->out);
	ret = write_all(fd, w->out.buf, w->out.len);
	if (ret < 0) {
		error("cannot write '%s': %s", path, strerror(-ret));
		prof_writer_abort(w);
		return ret;
	}
	w->bytes = w->out.len;
	sb_reset(&w->out);
	*out = w;
	return 0;
}

int prof_writer_commit(struct prof_writer *w)
{
	char *old;
	int ret = 0;

	if (!w->tmp)
		return 0;
	old = xasprintf("%s.old", w->path);
	/* rename never follows a symlink at either name. */
	if (rename(w->path, old) < 0 && errno != ENOENT) {
		ret = -errno;
		error("cannot move the existing '%s' aside to '%s': %s", w->path, old, strerror(errno));
	} else if (rename(w->tmp, w->path) < 0) {
		ret = -errno;
		error("cannot create '%s': %s", w->path, strerror(errno));
	} else {
		free(w->tmp);
		w->tmp = NULL;
	}
	free(old);
	return ret;
}

static void close_one(struct prof_writer *w, int i)
{
	struct chunk *c = &w->ck[i];

	if (!c->open)
		return;
	prof_data_put_record(&w->pending, i ? PD_REC_HEAP_SAMPLES : PD_REC_SAMPLES, c->buf.buf, c->buf.len);
	sb_reset(&c->buf);
	c->open = false;
}

static void close_chunk(struct prof_writer *w)
{
	close_one(w, 0);
	close_one(w, 1);
}

static void open_chunk(struct chunk *c, uint64_t time_ns)
{
	c->open = true;
	pd_put(&c->buf, time_ns);
	c->prev_time = time_ns;
	c->prev_thread = c->prev_node = PROF_NONE;
	for (int m = 0; m < PROF_METRIC_COUNT; m++)
		c->last_value[m] = 1;
}

int prof_writer_sample(struct prof_writer *w, uint64_t time_ns, uint32_t thread,
		       uint32_t node, enum prof_metric metric, uint64_t value,
		       unsigned flags)
{
	if (w->err)
		return w->err;
	if ((unsigned)metric >= PROF_M_PEAK_BYTES)	/* derived on load, never stored */
		return -EINVAL;
	bool heap = metric >= PROF_M_HEAP_FIRST;
	bool live = flags & PROF_SAMPLE_LIVE_AT_END;
	if (live && metric != PROF_M_ALLOCS && metric != PROF_M_ALLOC_BYTES)
		return -EINVAL;
	struct chunk *c = &w->ck[heap];
	if (!c->open)
		open_chunk(c, time_ns);

	unsigned code = live ? (metric == PROF_M_ALLOCS ? PD_HEAP_LIVE_COUNT : PD_HEAP_LIVE_BYTES)
			     : heap ? metric - PROF_M_HEAP_FIRST : metric;
	uint64_t head = code | ((uint64_t)(flags & ~PROF_SAMPLE_LIVE_AT_END) << PD_S_FLAGS_SHIFT);
	if (thread == c->prev_thread)
		head |= PD_S_SAME_THREAD;
	if (node == c->prev_node)
		head |= PD_S_SAME_NODE;
	if (!live && value == c->last_value[metric])
		head |= PD_S_SAME_VALUE;
	pd_put(&c->buf, head);
	pd_put(&c->buf, zigzag((int64_t)(time_ns - c->prev_time)));
	if (!(head & PD_S_SAME_THREAD))
		pd_put(&c->buf, thread);
	if (!(head & PD_S_SAME_NODE))
		pd_put(&c->buf, node);
	if (!(head & PD_S_SAME_VALUE))
		pd_put(&c->buf, value);
	c->prev_time = time_ns;
	c->prev_thread = thread;
	c->prev_node = node;
	if (!live)
		c->last_value[metric] = value;
	if (c->buf.len >= PD_SAMPLES_CHUNK)
		close_one(w, heap);
	return 0;
}

int prof_writer_lost(struct prof_writer *w, uint64_t time_ns, uint64_t n)
{
	struct strbuf rec = STRBUF_INIT;

	if (w->err)
		return w->err;
	close_chunk(w);
	pd_put(&rec, time_ns);
	pd_put(&rec, n);
	prof_data_put_record(&w->pending, PD_REC_LOST, rec.buf, rec.len);
	sb_release(&rec);
	return 0;
}

/* Appends one record whose payload is a list of varints. */
static void put_fields(struct strbuf *out, unsigned type, const uint64_t *v, size_t n)
{
	uint8_t payload[16 * 10];
	size_t len = 0;

	for (size_t i = 0; i < n; i++)
		len += varint_put(payload + len, v[i]);
	prof_data_put_record(out, type, payload, len);
}

static void put_thread(struct strbuf *out, size_t id, const struct prof_thread *t)
{
	uint64_t v[] = { id, t->pid, t->tid, t->comm };

	put_fields(out, PD_REC_THREAD, v, ARRAY_SIZE(v));
}

/* The task events whose thread identity is known (a fork's or an exec's is
 * known at that thread's first sample; one never sampled is never written:
 * no track would show it). */
static void put_task_events(struct prof_writer *w, const struct prof_profile *p)
{
	while (w->task_event_written.n < p->task_events.n)
		VEC_PUSH(&w->task_event_written, 0);
	for (size_t i = w->task_events_done; i < p->task_events.n; i++) {
		const struct prof_task_event *e = &p->task_events.v[i];
		if (w->task_event_written.v[i] || e->thread == PROF_NONE)
			continue;
		uint64_t v[] = { e->t_ns, e->pid, e->tid, e->kind, (uint64_t)e->thread + 1 };
		put_fields(&w->out, PD_REC_TASK_EVENT, v, ARRAY_SIZE(v));
		w->task_event_written.v[i] = 1;
	}
	while (w->task_events_done < p->task_events.n && w->task_event_written.v[w->task_events_done])
		w->task_events_done++;
}

static void put_resources(struct prof_writer *w, const struct prof_profile *p)
{
	for (size_t i = 0; i < p->resources.n; i++) {
		const struct prof_resources *r = &p->resources.v[i];
		if (i < w->resources_written.n &&
		    !memcmp(&w->resources_written.v[i], r, sizeof(*r)))
			continue;
		uint64_t v[] = { r->pid, r->tid, r->user_ns, r->sys_ns, r->vol_cs, r->invol_cs,
				 r->minflt, r->majflt, r->rss_peak_bytes, r->io_read_bytes,
				 r->io_write_bytes };
		put_fields(&w->out, PD_REC_RESOURCES, v, ARRAY_SIZE(v));
		if (i < w->resources_written.n)
			w->resources_written.v[i] = *r;
		else
			VEC_PUSH(&w->resources_written, *r);
	}
	for (; w->timeline_done < p->timeline.n; w->timeline_done++) {
		const struct prof_timeline_sample *t = &p->timeline.v[w->timeline_done];
		uint64_t v[] = { t->t_ns, t->pid, t->rss_bytes, t->cpu_pct_x100,
				 t->io_wait_pct_x100 };
		put_fields(&w->out, PD_REC_TIMELINE, v, ARRAY_SIZE(v));
	}
	put_task_events(w, p);
}

static void put_new_definitions(struct prof_writer *w, const struct prof_profile *p)
{
	struct strbuf *out = &w->out;

	for (; w->strings_done < p->strings.strs.n; w->strings_done++) {
		const char *s = p->strings.strs.v[w->strings_done];
		prof_data_put_record(out, PD_REC_STRING, s, strlen(s));
	}
	for (; w->modules_done < p->modules.n; w->modules_done++) {
		const struct prof_module *m = &p->modules.v[w->modules_done];
		uint64_t v[] = { m->path, m->build_id, m->flags };
		put_fields(out, PD_REC_MODULE, v, ARRAY_SIZE(v));
	}
	for (; w->frames_done < p->frames.n; w->frames_done++) {
		const struct prof_frame *f = &p->frames.v[w->frames_done];
		uint64_t v[] = { f->func, f->file, f->line, (uint32_t)(f->module + 1),
				 f->addr, f->kind, f->inlined, f->pc };
		put_fields(out, PD_REC_FRAME, v, ARRAY_SIZE(v));
	}
	for (; w->nodes_done < p->nodes.n; w->nodes_done++) {
		const struct prof_node *n = &p->nodes.v[w->nodes_done];
		uint64_t v[] = { w->nodes_done - n->parent, n->frame };
		put_fields(out, PD_REC_NODE, v, ARRAY_SIZE(v));
	}
	for (size_t i = 0; i < w->threads_done; i++) {
		if (p->threads.v[i].comm != w->thread_comm.v[i]) {
			put_thread(out, i, &p->threads.v[i]);
			w->thread_comm.v[i] = p->threads.v[i].comm;
		}
	}
	for (; w->threads_done < p->threads.n; w->threads_done++) {
		put_thread(out, w->threads_done, &p->threads.v[w->threads_done]);
		VEC_PUSH(&w->thread_comm, p->threads.v[w->threads_done].comm);
	}
	for (size_t i = 0; i < p->meta.n; i++) {
		const struct prof_meta *m = &p->meta.v[i];
		if (i < w->meta_written.n && w->meta_written.v[i].key == m->key &&
		    w->meta_written.v[i].value == m->value)
			continue;
		uint64_t v[] = { m->key, m->value };
		put_fields(out, PD_REC_META, v, ARRAY_SIZE(v));
		if (i < w->meta_written.n)
			w->meta_written.v[i] = *m;
		else
			VEC_PUSH(&w->meta_written, *m);
	}
	put_resources(w, p);
}

static void put_summary(struct strbuf *out, unsigned type, const struct prof_profile *p)
{
	uint64_t v[] = { p->samples, p->samples_truncated, p->lost,
			 p->period_ns, p->start_ns, p->end_ns };

	put_fields(out, type, v, ARRAY_SIZE(v));
}

static int write_out(struct prof_writer *w)
{
	int ret = write_all(w->fd, w->out.buf, w->out.len);

	if (ret < 0)
		w->err = ret;
	else
		w->bytes += w->out.len;
	sb_reset(&w->out);
	return ret;
}

int prof_writer_flush(struct prof_writer *w, const struct prof_profile *p)
{
	if (w->err)
		return w->err;
	put_new_definitions(w, p);
	close_chunk(w);
	if (w->pending.len) {
		sb_add(&w->out, w->pending.buf, w->pending.len);
		sb_reset(&w->pending);
	}
	put_summary(&w->out, PD_REC_SUMMARY, p);
	return write_out(w);
}

int prof_writer_close(struct prof_writer *w, const struct prof_profile *p)
{
	int ret = prof_writer_commit(w);

	if (!ret)
		ret = prof_writer_flush(w, p);

	if (!ret) {
		put_summary(&w->out, PD_REC_END, p);
		ret = write_out(w);
	}
	if (!ret && fsync(w->fd) < 0 && errno != EINVAL)
		ret = -errno;
	if (close(w->fd) < 0 && !ret)
		ret = -errno;
	w->fd = -1;
	prof_writer_abort(w);
	return ret;
}

void prof_writer_abort(struct prof_writer *w)
{
	if (!w)
		return;
	if (w->fd >= 0)
		close(w->fd);
	if (w->tmp)	/* never started: the file at path stays as it was */
		unlink(w->tmp);
	free(w->tmp);
	free(w->path);
	VEC_FREE(&w->thread_comm);
	VEC_FREE(&w->meta_written);
	VEC_FREE(&w->resources_written);
	VEC_FREE(&w->task_event_written);
	sb_release(&w->ck[0].buf);
	sb_release(&w->ck[1].buf);
	sb_release(&w->pending);
	sb_release(&w->out);
	free(w);
}

