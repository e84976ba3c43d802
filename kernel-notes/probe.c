/*
 * probe.c - asks the running kernel the questions the kernel-notes pages
 * answer: which perf_event_open configurations are accepted (kernel vs user
 * sampling, system-wide, hardware events, inherit + mmap with cpu=-1 vs a
 * CPU, sample_stack_user limits) and how large a per-CPU ring may be
 * mapped before the locked-memory limit refuses it.  Not part of the
 * build: cc -o /tmp/probe kernel-notes/probe.c && /tmp/probe (then again as
 * an unprivileged user with setpriv, see permissions.md).
 */
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>
#include <errno.h>
#include <stdlib.h>
static int op(struct perf_event_attr *a, int pid, int cpu){ return syscall(SYS_perf_event_open,a,pid,cpu,-1,0);}
static void init(struct perf_event_attr *a, int type, int cfg){memset(a,0,sizeof *a);a->size=sizeof *a;a->type=type;a->config=cfg;a->sample_freq=999;a->freq=1;a->disabled=1;a->sample_type=PERF_SAMPLE_IP|PERF_SAMPLE_TID;}
#define R(name, expr) do{ int fd=(expr); printf("%-50s %s\n", name, fd>=0?"ok":strerror(errno)); if(fd>=0) close(fd);}while(0)
int main(int argc,char**argv){ struct perf_event_attr a; int self=getpid();
 init(&a,PERF_TYPE_SOFTWARE,PERF_COUNT_SW_CPU_CLOCK); R("cpu-clock self cpu=-1 kernel+user", op(&a,self,-1));
 a.exclude_kernel=1; R("cpu-clock self cpu=-1 exclude_kernel=1", op(&a,self,-1));
 a.exclude_kernel=0; R("cpu-clock pid=-1 cpu=0 (system-wide)", op(&a,-1,0));
 init(&a,PERF_TYPE_HARDWARE,PERF_COUNT_HW_CPU_CYCLES); a.exclude_kernel=1; R("cycles exclude_kernel=1", op(&a,self,-1));
 init(&a,PERF_TYPE_HARDWARE,PERF_COUNT_HW_INSTRUCTIONS); a.exclude_kernel=1; R("instructions exclude_kernel=1", op(&a,self,-1));
 init(&a,PERF_TYPE_SOFTWARE,PERF_COUNT_SW_CPU_CLOCK); a.exclude_kernel=1; a.inherit=1;
 { int fd=op(&a,self,-1); void*m= fd>=0? mmap(0,2*4096,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0):MAP_FAILED; printf("%-50s %s\n","inherit=1 cpu=-1 then mmap", fd<0?strerror(errno): m==MAP_FAILED?strerror(errno):"ok"); }
 { int fd=op(&a,self,0); void*m= fd>=0? mmap(0,2*4096,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0):MAP_FAILED; printf("%-50s %s\n","inherit=1 cpu=0 then mmap", fd<0?strerror(errno): m==MAP_FAILED?strerror(errno):"ok"); }
 init(&a,PERF_TYPE_SOFTWARE,PERF_COUNT_SW_CPU_CLOCK); a.exclude_kernel=1; a.sample_type|=PERF_SAMPLE_STACK_USER|PERF_SAMPLE_REGS_USER; a.sample_regs_user=0xff;
 a.sample_stack_user=65528; R("sample_stack_user=65528", op(&a,self,-1));
 a.sample_stack_user=65536; R("sample_stack_user=65536", op(&a,self,-1));
 a.sample_stack_user=65001; R("sample_stack_user=65001 (not multiple of 8)", op(&a,self,-1));
 for (int pages=1; pages<=4096; pages*=2){ init(&a,PERF_TYPE_SOFTWARE,PERF_COUNT_SW_CPU_CLOCK); a.exclude_kernel=1; int fd=op(&a,self,0); void*m=mmap(0,(pages+1)*4096,PROT_READ|PROT_WRITE,MAP_SHARED,fd,0); if(m==MAP_FAILED){printf("%-50s %d pages (%d KiB): %s\n","ring mmap per CPU fails at",pages,pages*4,strerror(errno)); close(fd); break;} munmap(m,(pages+1)*4096); close(fd);} 
 return 0; }
