import { appendFileSync } from 'node:fs';

/**
 * `NODE_OPTIONS="--require ./dist/bench/malloc-probe.js" MALLOC_PROBE_ADDON=/tmp/malloc-probe.node
 * BENCH_THROUGHPUT=ours-eager,naive-eager node dist/bench/index.js --only=throughput`: in each bench
 * worker process, logs the process's memory and glibc's allocator statistics every 500 ms to
 * /tmp/malloc-probe.<pid>.jsonl, and writes glibc's per-arena report to /tmp/malloc-probe.<pid>.xml at
 * each new RSS high (10 MiB above the last). The addon is bench/native/malloc-probe.c (its header says
 * how to build it); docs/benchmarks.md ("What glibc holds") has what it found. Other processes (the
 * bench itself) load this file and do nothing.
 */
interface MallocProbe {
  info(): Record<'arena' | 'ordblks' | 'hblks' | 'hblkhd' | 'uordblks' | 'fordblks', number>;
  xml(path: string): void;
}

const addon = process.env.MALLOC_PROBE_ADDON;
if (addon && process.argv[1]?.includes('worker-process')) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const probe = require(addon) as MallocProbe;
  const MiB = 2 ** 20;
  const mib = (bytes: number) => Math.round(bytes / MiB);
  let highest = 0;
  setInterval(() => {
    const memory = process.memoryUsage();
    const m = probe.info();
    const row = {
      seconds: Math.round(process.uptime() * 10) / 10,
      rss: mib(memory.rss),
      heapUsed: mib(memory.heapUsed),
      heapTotal: mib(memory.heapTotal),
      external: mib(memory.external),
      mallocArenas: mib(m.arena),
      mallocInUse: mib(m.uordblks),
      mallocFree: mib(m.fordblks),
      freeChunks: m.ordblks,
      mmapped: mib(m.hblkhd),
    };
    appendFileSync(`/tmp/malloc-probe.${process.pid}.jsonl`, `${JSON.stringify(row)}\n`);
    if (memory.rss > highest + 10 * MiB) {
      highest = memory.rss;
      probe.xml(`/tmp/malloc-probe.${process.pid}.xml`);
    }
  }, 500).unref();
}
