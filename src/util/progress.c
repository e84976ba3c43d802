/*
 * progress.c - one progress line on stderr for work that can take more
 * than a second (loading a large recording, stat -r N): "what 40% (ETA
 * 3 s)", redrawn at most four times a second, erased when done.  Only when
 * stderr is a terminal: pipes and files never see it.
 */
#include "prof/util.h"

void progress_start(struct progress *p, const char *what, bool count)
{
	p->what = what;
	p->start_ns = p->last_ns = now_ns();
	p->enabled = stderr_is_tty() && !prof_quiet;
	p->count = count;
	p->shown = false;
}

void progress_update(struct progress *p, uint64_t done, uint64_t total)
{
	uint64_t now = now_ns();
	double eta;

	if (!p->enabled || !total || (p->shown && now - p->last_ns < 250000000ULL))
		return;
	/* a percentage only for work that is not over in half a second */
	if (!p->count && now - p->start_ns < 500000000ULL)
		return;
	p->last_ns = now;
	p->shown = true;
	if (p->count)
		fprintf(stderr, "\r\033[Kprof: %s %llu of %llu", p->what, (unsigned long long)done + 1,
			(unsigned long long)total);
	else
		fprintf(stderr, "\r\033[Kprof: %s %d%%", p->what, (int)(done * 100 / total));
	if (done) {
		eta = (double)(now - p->start_ns) / 1e9 / (double)done * (double)(total - done);
		fprintf(stderr, " (ETA %.0f s)", eta);
	}
	fflush(stderr);
}

void progress_done(struct progress *p)
{
	if (p->shown)
		fprintf(stderr, "\r\033[K");
	p->shown = false;
}
