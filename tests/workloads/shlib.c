/*
 * shlib - hot code in shared libraries.
 * Truth: per round wl_lib_spin (libwl.so, DT_NEEDED, found via the
 * $ORIGIN rpath) runs 5 units, wl_dl_spin (libwl_dl.so, dlopen'ed from
 * the executable's directory) 3 units, and main_spin in the executable
 * 2 units: about 50% / 30% / 20% of the samples.
 * Usage: shlib [SECONDS=2]
 */
#include "wl.h"
#include <dlfcn.h>
#include <string.h>
#include <unistd.h>

volatile unsigned long wl_sink;

void wl_lib_spin(unsigned long n);	/* libwl.so */

WL_NOINLINE void main_spin(unsigned long n) { WL_BURN(n, 0x3a); }

typedef void (*spin_fn)(unsigned long);

static spin_fn load_dl_spin(void)
{
	char path[4096];
	ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 32);
	char *slash;
	void *h;

	if (n <= 0)
		return NULL;
	path[n] = '\0';
	slash = strrchr(path, '/');
	if (!slash)
		return NULL;
	strcpy(slash + 1, "libwl_dl.so");
	h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "shlib: %s\n", dlerror());
		return NULL;
	}
	return (spin_fn)dlsym(h, "wl_dl_spin");
}

int main(int argc, char **argv)
{
	double secs = wl_seconds_arg(argc, argv, 1, 2.0);
	double end = wl_cpu_now() + secs;
	spin_fn dl_spin = load_dl_spin();
	unsigned long rounds = 0;

	if (!dl_spin)
		return 1;
	while (wl_cpu_now() < end) {
		unsigned long unit = 100UL * wl_round_permille();

		wl_lib_spin(5 * unit);
		dl_spin(3 * unit);
		main_spin(2 * unit);
		rounds++;
	}
	printf("shlib: %lu rounds\n", rounds);
	return 0;
}
