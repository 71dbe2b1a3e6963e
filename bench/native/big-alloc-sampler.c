/*
 * An LD_PRELOAD sampler of large allocations, for docs/benchmarks.md ("What glibc holds"): every
 * fourth malloc/calloc/realloc of 200 KiB or more writes its size, thread and call stack to
 * /tmp/big-alloc.<pid>.txt. Not part of the build:
 *
 *   gcc -shared -fPIC -O1 -o /tmp/big-alloc.so bench/native/big-alloc-sampler.c
 *   LD_PRELOAD=/tmp/big-alloc.so BENCH_THROUGHPUT=ours-eager node dist/bench/index.js --only=throughput
 *
 * backtrace_symbols_fd writes the symbols without allocating, and a thread-local flag keeps the
 * sampler from sampling its own allocations.
 */
#define _GNU_SOURCE
#include <execinfo.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);

static __thread int inside = 0;
static int fd = -1;
static const size_t MIN_SIZE = 200 * 1024;
static volatile unsigned long count = 0;

static void record(size_t size) {
  if (inside) return;
  inside = 1;
  if (__sync_add_and_fetch(&count, 1) % 4 == 1) {
    if (fd < 0) {
      char p[128];
      snprintf(p, sizeof p, "/tmp/big-alloc.%d.txt", getpid());
      fd = open(p, O_WRONLY | O_CREAT | O_APPEND, 0644);
    }
    void *bt[14];
    int k = backtrace(bt, 14);
    char line[64];
    int l = snprintf(line, sizeof line, "== %zu tid %d\n", size, gettid());
    if (fd >= 0 && write(fd, line, l) > 0) backtrace_symbols_fd(bt + 2, k - 2, fd);
  }
  inside = 0;
}

void *malloc(size_t s) {
  if (s >= MIN_SIZE) record(s);
  return __libc_malloc(s);
}
void *calloc(size_t a, size_t b) {
  if (a * b >= MIN_SIZE) record(a * b);
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t s) {
  if (s >= MIN_SIZE) record(s);
  return __libc_realloc(p, s);
}
