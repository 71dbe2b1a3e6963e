import {
  cpuRatios,
  throughputRounds,
  throughputShape,
  throughputSideBySide,
  throughputWarmup,
  type ThroughputRow,
} from '../../bench/throughput-figure';

/** The throughput bench's run shape (`BENCH_THROUGHPUT_SHAPE`): the default, accepted shapes, refusals that say what is accepted. */
test('unset or empty: 10 iterations of 1 KiB', () => {
  expect(throughputShape(undefined)).toEqual({ iterations: 10, outputBytes: 1024 });
  expect(throughputShape('')).toEqual({ iterations: 10, outputBytes: 1024 });
});

test('<iterations>x<bytes>, surrounding spaces allowed', () => {
  expect(throughputShape('30x8192')).toEqual({ iterations: 30, outputBytes: 8192 });
  expect(throughputShape(' 100x4096 ')).toEqual({ iterations: 100, outputBytes: 4096 });
});

test.each(['abc', '30', '30x', 'x8192', '0x1024', '101x1024', '10x0', '10x65537', '-5x100', '1e2x10', '10x1024x2'])(
  '%j is refused, naming the form and ranges',
  (value) => {
    expect(() => throughputShape(value)).toThrow(/expected <iterations>x<bytes>, 1-100 iterations and 1-65536 bytes/);
  },
);

test('a shape whose naive history would pass what the server allows is refused', () => {
  expect(() => throughputShape('100x65536')).toThrow(/naive loop's history would be about 313 MiB/);
});

/** `BENCH_THROUGHPUT_ROUNDS`: how many times the variants run, and the ratio the report gives for them. */
test('rounds: unset is one; 1-10 accepted; anything else refused with the range', () => {
  expect(throughputRounds(undefined)).toBe(1);
  expect(throughputRounds(' ')).toBe(1);
  expect(throughputRounds('4')).toBe(4);
  for (const bad of ['0', '11', '2.5', 'two', '-1', '1e1x']) {
    expect(() => throughputRounds(bad)).toThrow(/expected a whole number of rounds from 1 to 10/);
  }
});

test("each round's ours/naive CPU per iteration, and their median", () => {
  const row = (round: number, subject: 'ours' | 'naive', workerCpuMs: number, eager = true): ThroughputRow =>
    ({ round, subject, eager, completed: 100, workerCpuMs }) as ThroughputRow;
  const rows = [
    row(1, 'ours', 1200),
    row(1, 'naive', 1000),
    row(2, 'naive', 1000),
    row(2, 'ours', 1100),
    // A round with only one side (a variant failed to start, say) gives no ratio.
    row(3, 'ours', 1500),
    // Without eager dispatch on both sides, the eager-off rows compare.
    row(4, 'ours', 900, false),
    row(4, 'naive', 1000, false),
  ];
  const { perRound, median } = cpuRatios({ rows });
  expect(perRound.map((r) => r.toFixed(2))).toEqual(['1.20', '1.10', '0.90']);
  expect(median).toBeCloseTo(1.1);
  expect(cpuRatios({ rows: [row(1, 'ours', 1000)] })).toEqual({ perRound: [] });
  // Per iteration: completed runs count, not the rows' order.
  expect(cpuRatios({ rows: [{ ...row(1, 'naive', 1000), completed: 50 }, row(1, 'ours', 1000)] }).median).toBeCloseTo(
    0.5,
  );
});

/** `BENCH_THROUGHPUT_SIDE_BY_SIDE`: the variants of a round at the same time, or one after the other. */
test('side by side: 1 turns it on; unset, empty and 0 leave it off; anything else is refused', () => {
  expect(throughputSideBySide(undefined)).toBe(false);
  expect(throughputSideBySide('')).toBe(false);
  expect(throughputSideBySide('0')).toBe(false);
  expect(throughputSideBySide(' 1 ')).toBe(true);
  for (const bad of ['yes', 'true', '2', 'on']) {
    expect(() => throughputSideBySide(bad)).toThrow(/expected 1 \(side by side\) or 0 \(one after the other\)/);
  }
});

/** `BENCH_THROUGHPUT_WARMUP`: runs each worker completes before the measured ones. */
test('warm-up: unset or empty is 100 runs (20 with --quick); 0-1000 accepted; anything else refused with the range', () => {
  expect(throughputWarmup(false, undefined)).toBe(100);
  expect(throughputWarmup(true, ' ')).toBe(20);
  expect(throughputWarmup(true, '0')).toBe(0);
  expect(throughputWarmup(false, ' 250 ')).toBe(250);
  for (const bad of ['-1', '1001', '2.5', 'some', '1e1x']) {
    expect(() => throughputWarmup(false, bad)).toThrow(/expected a whole number of warm-up runs from 0 to 1000/);
  }
});
