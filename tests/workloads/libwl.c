/*
 * libwl.c - the code of the two shared libraries of the "shlib" workload.
 * Built twice: as libwl.so (linked by shlib, DT_NEEDED) exporting
 * wl_lib_spin, and with -DWL_DLOPEN as libwl_dl.so (loaded by dlopen at
 * run time) exporting wl_dl_spin.  Both are -fPIC -O2 -g without frame
 * pointers, so unwinding through them needs their .eh_frame/.debug_frame.
 */
#include "wl.h"

extern volatile unsigned long wl_lib_sink;
volatile unsigned long wl_lib_sink;
#define wl_sink wl_lib_sink

#ifdef WL_DLOPEN
WL_NOINLINE void wl_dl_spin(unsigned long n) { WL_BURN(n, 0xd10); }
#else
WL_NOINLINE void wl_lib_spin(unsigned long n) { WL_BURN(n, 0x11b); }
#endif
