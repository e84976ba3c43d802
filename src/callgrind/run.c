/*
 * run.c - runs a command under valgrind's callgrind and leaves
 * profiles/LABEL.callgrind plus its flat and call-tree annotations.
 * With --codspeed it uses exactly the flags CodSpeed's runner uses
 * (codspeed_flags below); on stock valgrind, which rejects some of them,
 * it probes valgrind once with the flag list and drops what it refuses,
 * saying which.
 */
#include "prof/callgrind.h"
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_FLAGS 32

static const char *const codspeed_flags[] = {
	"-q", "--trace-children=yes", "--cache-sim=yes", "--I1=32768,8,64",
	"--D1=32768,8,64", "--LL=8388608,16,64", "--instr-atstart=no",
	"--collect-systime=nsec", "--read-inline-info=yes", "--tool=callgrind",
	"--compress-strings=no", "--combine-dumps=yes", "--dump-line=no",
};
static const char *const plain_flags[] = {
	"-q", "--tool=callgrind", "--combine-dumps=yes", "--read-inline-info=yes",
};

static bool in_path(const char *prog)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (!path)
		path = "/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		snprintf(buf, sizeof(buf), "%.*s/%s", (int)n, path, prog);
		if (access(buf, X_OK) == 0)
			return true;
		path += n + (path[n] == ':');
	}
	return false;
}

/* Runs argv (through the one launcher, util/spawn.c) with stdout+stderr
 * captured into *out; returns its shell exit status or -errno. */
static int capture(char **argv, struct strbuf *out)
{
	struct spawn sp;
	int fds[2], st, e;
	char buf[4096];
	ssize_t n;

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -errno;
	e = spawn_held(&sp, argv, fds[1], fds[1]);
	close(fds[1]);
	if (e == 0 && (e = spawn_release(&sp)) < 0)
		waitpid(sp.pid, &st, 0);	/* exec failed: reap the child */
	if (e < 0) {
		close(fds[0]);
		return e;
	}
	while ((n = read(fds[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		if (n > 0)
			sb_add(out, buf, (size_t)n);
	close(fds[0]);
	while (waitpid(sp.pid, &st, 0) < 0)
		if (errno != EINTR)
			return -errno;
	return spawn_exit_status(st);
}

static bool valgrind_is_codspeed(void)
{
	char *argv[] = { "valgrind", "--version", NULL };
	struct strbuf out = STRBUF_INIT;
	bool yes = capture(argv, &out) >= 0 && strstr(sb_str(&out), "codspeed");

	sb_release(&out);
	return yes;
}

/* Drops the flags valgrind refuses ("Bad option: --x=y"), telling the user. */
static void drop_rejected(const char **flags, size_t *n)
{
	for (int round = 0; round < MAX_FLAGS; round++) {
		char *argv[MAX_FLAGS + 5];
		size_t k = 0;
		argv[k++] = "valgrind";
		for (size_t i = 0; i < *n; i++)
			argv[k++] = (char *)flags[i];
		/* the probe's own profile goes nowhere, not into the user's cwd */
		argv[k++] = "--callgrind-out-file=/dev/null";
		argv[k++] = "true";
		argv[k] = NULL;
		struct strbuf out = STRBUF_INIT;
		capture(argv, &out);
		const char *bad = strstr(sb_str(&out), "Bad option: ");
		if (!bad) {
			sb_release(&out);
			return;
		}
		bad += strlen("Bad option: ");
		size_t len = strcspn(bad, "\n ");
		bool dropped = false;
		for (size_t i = 0; i < *n && !dropped; i++) {
			if (strlen(flags[i]) == len && !strncmp(flags[i], bad, len)) {
				warning("this valgrind rejects %s (a valgrind-codspeed flag); running without it",
					flags[i]);
				memmove(&flags[i], &flags[i + 1], (*n - i - 1) * sizeof(*flags));
				(*n)--;
				dropped = true;
			}
		}
		sb_release(&out);
		if (!dropped)
			return;
	}
}

static int run_valgrind(const char **flags, size_t nflags, const char *outfile,
			bool codspeed, char **cmd, pid_t *child)
{
	VEC(char *) argv = { 0 };
	struct utsname u;
	char *outopt = xasprintf("--callgrind-out-file=%s", outfile);

	if (codspeed && in_path("setarch") && uname(&u) == 0) {
		VEC_PUSH(&argv, "setarch");
		VEC_PUSH(&argv, xstrdup(u.machine));
		VEC_PUSH(&argv, "--addr-no-randomize");
	}
	VEC_PUSH(&argv, "valgrind");
	for (size_t i = 0; i < nflags; i++)
		VEC_PUSH(&argv, (char *)flags[i]);
	VEC_PUSH(&argv, outopt);
	for (char **c = cmd; *c; c++)
		VEC_PUSH(&argv, *c);
	VEC_PUSH(&argv, NULL);

	struct spawn sp;
	int st = 0, e = spawn_held(&sp, argv.v, -1, -1);

	if (e == 0 && (e = spawn_release(&sp)) < 0)
		waitpid(sp.pid, NULL, 0);
	if (e < 0) {
		error("cannot run %s: %s", argv.v[0], strerror(-e));
		free(outopt);
		VEC_FREE(&argv);
		return e;
	}
	*child = sp.pid;
	while (waitpid(sp.pid, &st, 0) < 0 && errno == EINTR)
		;
	if (argv.v[0][0] == 's')
		free(argv.v[1]);
	free(outopt);
	VEC_FREE(&argv);
	return spawn_exit_status(st);
}

static int write_annotation(const char *profile, const char *path, unsigned tree)
{
	struct cg_profile p;
	struct cg_annotate_opts o = { .threshold = 99, .tree = tree };
	struct out_file out;
	FILE *f;
	int rc = 0;

	cg_profile_init(&p, 0);
	if (cg_load_file(&p, profile) < 0) {
		cg_profile_free(&p);
		return -EINVAL;
	}
	if (out_open(&out, path) < 0) {
		cg_profile_free(&p);
		return -EIO;
	}
	f = out.f;
	for (size_t i = 0; i < p.parts.n; i++) {
		if (cg_part_empty(p.parts.v[i])) {
			fprintf(f, "Part %u - %s: empty (no costs)\n\n", p.parts.v[i]->number,
				strtab_get(&p.strs, p.parts.v[i]->trigger));
			continue;
		}
		cg_annotate_text(f, &p, p.parts.v[i], &o);
	}
	rc = out_commit(&out);
	cg_profile_free(&p);
	return rc;
}

int cg_run(const struct cg_run_opts *o)
{
	const char *flags[MAX_FLAGS];
	size_t n = 0;

	if (!in_path("valgrind"))
		return error("valgrind is not installed; install it with 'apt-get install valgrind'");
	if (mkdir("profiles", 0777) < 0 && errno != EEXIST)
		return error("cannot create 'profiles': %s", strerror(errno));

	bool fork_ok = valgrind_is_codspeed();
	if (o->codspeed)
		for (size_t i = 0; i < ARRAY_SIZE(codspeed_flags); i++)
			flags[n++] = codspeed_flags[i];
	else
		for (size_t i = 0; i < ARRAY_SIZE(plain_flags); i++)
			flags[n++] = plain_flags[i];
	if (o->codspeed && !fork_ok) {
		size_t before = n;
		info("valgrind is stock valgrind, not valgrind-codspeed: checking which CodSpeed flags it accepts");
		drop_rejected(flags, &n);
		if (n == before)
			info("it accepts all %zu of them", n);
	}

	char *out = xasprintf("profiles/%s.callgrind", o->label);
	char *flat = xasprintf("profiles/%s.callgrind.flat.txt", o->label);
	char *tree = xasprintf("profiles/%s.callgrind.tree.txt", o->label);
	/* %p: with --trace-children every process writes its own file; the
	 * profiled command's is the one of the process we started. */
	char *pattern = xasprintf("%s.%%p", out);
	pid_t child = 0;
	/* valgrind writes beside out: an old profile is replaced only by a
	 * new one (the rename below), never lost to a command that failed. */
	int status = run_valgrind(flags, n, pattern, o->codspeed, o->argv, &child);
	char *mine = xasprintf("%s.%d", out, (int)child);
	if (status >= 0 && rename(mine, out) != 0) {
		status = error("valgrind wrote no profile '%s' (did the command start? exit status %d)",
			       out, status);
	} else if (status >= 0) {
		if (write_annotation(out, flat, CG_TREE_NONE) < 0 ||
		    write_annotation(out, tree, CG_TREE_BOTH) < 0)
			status = -EINVAL;
		else
			info("wrote %s, %s, %s", out, flat, tree);
	}
	free(pattern);
	free(mine);
	free(out);
	free(flat);
	free(tree);
	return status;
}
