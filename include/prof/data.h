/*
 * data.h - the prof.data file: writer (used while recording) and reader
 * (used by report, diff, crosscheck).  The on-disk format is documented at
 * the top of src/data/format.c.
 *
 * The writer serializes a live struct prof_profile incrementally: each
 * flush first writes every string, module, frame, node and thread that
 * appeared in the profile since the previous flush, then the samples
 * buffered since then.  A file cut anywhere (SIGKILL, full disk) therefore
 * reads back every sample whose bytes precede the cut (format.c, CUT FILES).
 */
#ifndef PROF_DATA_H
#define PROF_DATA_H

#include "prof/model.h"

#define PROF_DATA_DEFAULT "prof.data"

struct prof_writer;

/*
 * Starts a recording for path, under a temporary name beside it; path
 * "-" writes to (a dup of) stdout, a device or FIFO in place.  Returns 0
 * or a negative errno (error() already printed).
 */
int prof_writer_open(struct prof_writer **out, const char *path);
/*
 * The recording has started: an existing file at path is renamed to
 * "<path>.old" (as perf does; a symlink is moved, never followed) and the
 * new file takes its name.  Until then prof_writer_abort() leaves path
 * as it was.  0 or -errno (error() printed).  prof_writer_close() commits
 * if this was not called.
 */
int prof_writer_commit(struct prof_writer *w);
/* Buffers one sample; p must stay the profile that owns thread and node. */
int prof_writer_sample(struct prof_writer *w, uint64_t time_ns, uint32_t thread,
		       uint32_t node, enum prof_metric metric, uint64_t value,
		       unsigned flags);
/* Records n samples the kernel reported lost. */
int prof_writer_lost(struct prof_writer *w, uint64_t time_ns, uint64_t n);
/* Writes new definitions from p, then the buffered samples.  0 or -errno (ENOSPC...). */
int prof_writer_flush(struct prof_writer *w, const struct prof_profile *p);
/* Final flush, end-of-recording summary record, fsync, close, free.  0 or -errno. */
int prof_writer_close(struct prof_writer *w, const struct prof_profile *p);
/* Frees without writing anything more (after a write error, or a start
 * that failed: an uncommitted file is removed). */
void prof_writer_abort(struct prof_writer *w);

struct prof_read_info {
	uint32_t version;
	bool complete;		/* end record present: recording finished cleanly */
	bool truncated;		/* file ends inside a record */
	uint64_t bytes;		/* bytes consumed */
	uint64_t records;
	uint64_t dropped;	/* samples referring to definitions that never arrived */
};

/*
 * Loads a prof.data file into an initialized profile.  Returns 0 (possibly
 * with info->truncated / !info->complete, which the caller should warn
 * about), or a negative errno with error() printed: -ENOENT, -EACCES,
 * -EINVAL (not a prof.data file / unsupported version / corrupt),
 * -ENODATA (an unfinished file that holds nothing: no sample,
 * resource or timeline point; a finished recording of 0 samples loads).
 */
int prof_data_read(const char *path, struct prof_profile *p, struct prof_read_info *info);
/* Same, from memory (used by the fuzzer and unit tests). */
int prof_data_read_mem(const uint8_t *buf, size_t len, struct prof_profile *p,
		       struct prof_read_info *info);
/*
 * prof_data_read() with a progress callback, called every few MiB with the
 * bytes parsed so far and the file size (report draws "loading 45%").
 */
typedef void prof_data_progress_fn(void *arg, uint64_t done, uint64_t total);
int prof_data_read_progress(const char *path, struct prof_profile *p,
			    struct prof_read_info *info,
			    prof_data_progress_fn *progress, void *arg);

/* True when buf starts with prof.data's magic. */
bool prof_data_has_magic(const void *buf, size_t len);

#endif
