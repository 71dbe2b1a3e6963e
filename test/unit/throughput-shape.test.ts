import { throughputShape } from '../../bench/throughput-figure';

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
