/*
 * perfdata.h - reading perf.data files written by `perf record` (Linux
 * perf 6.x, file and pipe mode) into the shared profile model, and the
 * lower-level parser the importer, the unit tests and the fuzzer share.
 *
 * Layering: the parser (src/perfdata/parse.c, sample.c) only checks and
 * splits bytes: header, attrs with their ids, feature sections, and the
 * records, sorted by time the way perf's ordered-events queue sorts them
 * (src/perf/decode.c decodes each record with its attr).  The importer
 * (src/perfdata/import.c) hands those records to the replay engine
 * (prof/replay.h), which fills a prof_profile.
 */
#ifndef PROF_PERFDATA_H
#define PROF_PERFDATA_H

#include "prof/data.h"
#include "prof/model.h"
#include "prof/perf.h"
#include <linux/perf_event.h>

struct perfdata_info {
	bool pipe;		/* pipe-mode file (records carry the attrs) */
	bool compressed;	/* had PERF_RECORD_COMPRESSED records */
	bool truncated;		/* data section ends inside a record */
	uint32_t nr_attrs;	/* events in the file */
	uint64_t records;	/* records decoded (after decompression) */
	uint64_t samples;	/* sample records of the imported event */
	uint64_t other_samples;	/* samples of other events (not imported) */
	uint64_t skipped;	/* records of kinds we do not use */
	uint64_t bad_samples;	/* sample records that did not decode */
	uint64_t lost;		/* LOST + LOST_SAMPLES */
	uint64_t unwound_complete; /* dwarf/fp samples with a complete stack */
};

/*
 * Loads path (mmapped, never read whole; "-" reads a pipe-mode stream from
 * stdin) into an initialized profile.
 * Returns 0, or a negative errno with one error() line printed: -ENOENT,
 * -EACCES, -EINVAL (not a perf.data file, corrupt header, unsupported
 * feature such as zstd without libzstd), -ENODATA (no sample of the
 * imported event).
 */
int perfdata_read(const char *path, struct prof_profile *p, struct perfdata_info *info);
int perfdata_read_mem(const uint8_t *buf, size_t len, struct prof_profile *p,
		      struct perfdata_info *info);
/* True when buf starts with the "PERFILE2" magic (either byte order). */
bool perfdata_is_perf_data(const void *buf, size_t len);
/* 1: path is a perf.data file, 0: it is not, -errno: cannot open (no message). */
int perfdata_probe(const char *path);

/* ---- parser ---------------------------------------------------------------- */

struct perfdata_attr {
	struct perf_event_attr attr;	/* zero-extended to our sizeof */
	char *name;			/* from HEADER_EVENT_DESC, "" if unknown */
	uint64_t *ids;
	size_t nr_ids;
	int nr_regs_user;		/* popcount(sample_regs_user) */
	int nr_regs_intr;
};

struct perfdata_record {
	uint64_t time;			/* from the sample / sample_id, else inherited */
	const uint8_t *data;		/* starts with struct perf_event_header */
	uint32_t size;
	uint32_t type;
	uint32_t seq;			/* file order: keeps the time sort stable */
};

struct perfdata_build_id {
	int32_t pid;
	char hex[41];
	char *filename;
};

struct perfdata_file {
	const uint8_t *buf;
	size_t len;
	bool pipe, compressed, truncated;
	VEC(struct perfdata_attr) attrs;
	struct u64map id_to_attr;	/* sample id -> attr index */
	VEC(struct perfdata_record) records;	/* sorted by time (stable) */
	VEC(uint8_t *) owned;		/* decompressed buffers records point into */
	VEC(struct perfdata_build_id) build_ids;
	char *hostname, *osrelease, *arch, *version, *cmdline;
	uint32_t nr_cpus_online, nr_cpus_avail;
	uint64_t skipped;
	bool release_behind;		/* buf is a private read-only file map */
	size_t released;		/* bytes of buf already given back */
	/* streaming (perfdata_open_stream): the data section is scanned round by
	 * round and f->records holds one batch at a time */
	bool streaming, stream_done;
	size_t data_start, data_len, scan_off;	/* scan_off: into the data section */
	VEC(struct perfdata_record) pending;	/* scanned, not handed out yet */
	uint64_t round_limit, max_time;	/* perf's ordered-events flush rule */
	uint32_t seq;			/* records scanned so far (file order) */
	struct perfdata_decomp *scan;		/* zstd state and last record time */
};

/* Parses buf (which must outlive f).  0 or -EINVAL with error() printed. */
int perfdata_open(struct perfdata_file *f, const uint8_t *buf, size_t len);
/*
 * Like perfdata_open, but the records are handed out in batches by
 * perfdata_next_records as the data section is read: one pass over the file,
 * each page touched while it is hot.  Batches follow perf's rounds
 * (FINISHED_ROUND): a record is handed out once it is older than the
 * newest record seen at the previous round, so batches are in time order
 * with each other.  Pipe streams and zstd-compressed files are read whole
 * at open (their first batch is everything).  With map (buf is a private
 * read-only mapping of the file) pages nobody needs any more are given
 * back as the reading advances: peak RSS stays far below the file size.
 */
int perfdata_open_stream(struct perfdata_file *f, const uint8_t *buf, size_t len, bool map);
/* The next batch in f->records (replacing the last one); 0 at the end.
 * After perfdata_open, the first call returns all records. */
size_t perfdata_next_records(struct perfdata_file *f);
/* The lowest offset in buf that a record not yet handed out may use. */
size_t perfdata_pending_low(const struct perfdata_file *f);
/* Gives back the pages of f->buf below upto (once 4 MiB have piled up);
 * no-op unless f->release_behind.  Dropped pages read back from the file
 * if touched again, so this only ever costs time, never correctness. */
void perfdata_release_behind(struct perfdata_file *f, const uint8_t *upto);
void perfdata_close(struct perfdata_file *f);
/* The attr of a record: a sample's from its front id, another record's
 * from its sample_id_all trailer; NULL when unknown or absent. */
const struct perfdata_attr *perfdata_sample_attr(const struct perfdata_file *f,
					   const struct perfdata_record *r);
const struct perfdata_attr *perfdata_record_attr(const struct perfdata_file *f,
					   const struct perfdata_record *r);
/* Decodes a PERF_RECORD_SAMPLE with its attr (also stored in *attr when
 * attr is not NULL).  0 or -EINVAL (no message: counted by callers). */
int perfdata_decode_sample(const struct perfdata_file *f, const struct perfdata_record *r,
			   struct prof_perf_sample *s, const struct perfdata_attr **attr);
/* A sample's time from its first bytes only (false if it has none). */
bool perfdata_sample_time(const struct perfdata_file *f, const struct perfdata_record *r, uint64_t *time);
/* Decodes the sample_id trailer of a non-sample record (fields 0 if
 * absent); returns its attr, NULL when it has no trailer. */
const struct perfdata_attr *perfdata_decode_sample_id(const struct perfdata_file *f,
						const struct perfdata_record *r,
						struct prof_perf_sample_id *sid);
/* Index of the attr owning sample id (0 when there is one attr), -1 if unknown. */
int perfdata_attr_of_id(const struct perfdata_file *f, uint64_t id);
/* Reads u64 i of an unaligned array. */
static inline uint64_t perfdata_u64(const uint8_t *p, size_t i)
{
	uint64_t v;
	__builtin_memcpy(&v, p + 8 * i, 8);
	return v;
}

/*
 * The input of a reading command: prof.data, or perf.data (by its magic);
 * "-" is either on stdin, perf's pipe mode too.  Warns when the file was cut.
 * progress may be NULL.  0 or -errno (error() printed).
 */
int perfdata_load_any(const char *input, struct prof_profile *p,
		      prof_data_progress_fn *progress, void *arg);
/*
 * -EEXIST after an error line when out_path holds a recording (prof.data
 * or perf.data): a command's report must never replace one.  0 otherwise.
 */
int perfdata_refuse_over_recording(const char *out_path);

#endif
