/*
 * churn.c - the target of the fault-injection tests (tests/t8*-*.sh): a
 * process that churns through everything a recorder must keep up with.
 * Every mode writes what it did (pids, tids, CPU time) to a log file so
 * the tests compare the recording against the truth, not a guess.
 *
 *   churn all LOG LIB      main_burn 50 ms; 200 forked children burn 8 ms of
 *                          CPU each in child_burn ("P pid"); 64 threads,
 *                          8 at a time, burn 8 ms each in thread_burn
 *                          ("T tid"); 20 rounds of dlopen(LIB) + 10 ms in
 *                          its dl_burn + dlclose; then execs itself as
 *                          "churn burn 200 LOG", which burns in
 *                          after_exec_burn and logs "cpu_ms N": the CPU
 *                          time of the process and all its children.
 *   churn spin SECS [MARKER [STATUS]]
 *                          spin_burn for SECS of wall time, then create
 *                          MARKER (proof it ran to completion), exit STATUS.
 *   churn tspin SECS N     N threads in tspin_burn for SECS (ring overruns).
 *   churn name NAME SECS   set the thread name (prctl) to NAME - quotes,
 *                          ';', newlines, escape sequences - and spin.
 *   churn replace LIB NEW SECS
 *                          dlopen(LIB), at once rename(NEW, LIB) - the file
 *                          on disk now has another build-id - then burn
 *                          SECS in the old LIB's dl_burn.
 * Built by the tests with -O1 -g -fno-omit-frame-pointer -no-pie.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
volatile unsigned long sink;
static const char *log_path;

static double cpu_now(void)	/* this thread's CPU seconds */
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Each burner spins on its own CPU clock: samples per burner do not
 * depend on how loaded the machine is. */
#define BURN_CPU(ms) do { double end_ = cpu_now() + (ms) / 1000.0; \
	while (cpu_now() < end_) for (int i_ = 0; i_ < 50000; i_++) sink += (unsigned long)i_; } while (0)

NOINLINE void main_burn(int ms) { BURN_CPU(ms); }
NOINLINE void child_burn(int ms) { BURN_CPU(ms); }
NOINLINE void thread_burn(int ms) { BURN_CPU(ms); }
NOINLINE void after_exec_burn(int ms) { BURN_CPU(ms); }
NOINLINE void tspin_burn(double end) { while (wall_now() < end) for (int i = 0; i < 1000; i++) sink += (unsigned long)i; }
NOINLINE void spin_burn(double end) { while (wall_now() < end) for (int i = 0; i < 1000; i++) sink += (unsigned long)i; }

static void logf_line(const char *fmt, long v)
{
	char line[64];
	int fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT, 0644);
	int n = snprintf(line, sizeof(line), fmt, v);

	if (fd < 0 || write(fd, line, (size_t)n) != n)
		_exit(99);
	close(fd);
}

static void *thread_main(void *arg)
{
	(void)arg;
	logf_line("T %ld\n", (long)syscall(SYS_gettid));
	thread_burn(8);
	return NULL;
}

static void *tspin_main(void *arg)
{
	tspin_burn(*(double *)arg);
	return NULL;
}

static void fork_children(int n)
{
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();
		if (pid < 0)
			exit(98);
		if (pid == 0) {
			logf_line("P %ld\n", (long)getpid());
			child_burn(8);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
	}
}

static void start_threads(int n, int batch)
{
	for (int i = 0; i < n; i += batch) {
		pthread_t t[64];
		for (int k = 0; k < batch; k++)
			if (pthread_create(&t[k], NULL, thread_main, NULL))
				exit(97);
		for (int k = 0; k < batch; k++)
			pthread_join(t[k], NULL);
	}
}

typedef void (*burn_fn)(int);

static burn_fn open_lib(const char *lib, void **h)
{
	burn_fn f;

	*h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!*h || !(f = (burn_fn)dlsym(*h, "dl_burn"))) {
		fprintf(stderr, "churn: %s\n", dlerror());
		exit(96);
	}
	return f;
}

static void dl_rounds(const char *lib, int rounds)
{
	for (int i = 0; i < rounds; i++) {
		void *h;
		open_lib(lib, &h)(10);
		dlclose(h);
	}
}

static long cpu_ms_all(void)
{
	struct rusage self, kids;
	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &kids);
	return (self.ru_utime.tv_sec + self.ru_stime.tv_sec + kids.ru_utime.tv_sec +
		kids.ru_stime.tv_sec) * 1000L +
	       (self.ru_utime.tv_usec + self.ru_stime.tv_usec + kids.ru_utime.tv_usec +
		kids.ru_stime.tv_usec) / 1000L;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "all") && argc == 4) {
		log_path = argv[2];
		main_burn(50);
		fork_children(200);
		start_threads(64, 8);
		dl_rounds(argv[3], 20);
		execl("/proc/self/exe", "churn", "burn", "200", argv[2], (char *)NULL);
		return 95;
	}
	if (!strcmp(mode, "burn") && argc == 4) {
		log_path = argv[3];
		after_exec_burn(atoi(argv[2]));
		logf_line("cpu_ms %ld\n", cpu_ms_all());
		return 0;
	}
	if (!strcmp(mode, "spin") && argc >= 3) {
		spin_burn(wall_now() + atof(argv[2]));
		if (argc >= 4)
			close(open(argv[3], O_WRONLY | O_CREAT, 0644));
		return argc >= 5 ? atoi(argv[4]) : 0;
	}
	if (!strcmp(mode, "tspin") && argc == 4) {
		double end = wall_now() + atof(argv[2]);
		int n = atoi(argv[3]);
		pthread_t t[64];
		for (int i = 0; i < n && i < 64; i++)
			pthread_create(&t[i], NULL, tspin_main, &end);
		for (int i = 0; i < n && i < 64; i++)
			pthread_join(t[i], NULL);
		return 0;
	}
	if (!strcmp(mode, "name") && argc == 4) {
		prctl(PR_SET_NAME, argv[2]);
		spin_burn(wall_now() + atof(argv[3]));
		return 0;
	}
	if (!strcmp(mode, "replace") && argc == 5) {
		void *h;
		burn_fn f = open_lib(argv[2], &h);
		if (rename(argv[3], argv[2]) < 0)
			return 94;
		f((int)(atof(argv[4]) * 1000));
		return 0;
	}
	fprintf(stderr, "usage: see tests/fault/churn.c\n");
	return 2;
}
