import { ViewCache } from '../../src/inspector/view-cache';

/** The inspector's memory for reopened runs stays bounded by count and by bytes, oldest out first. */

test('keeps at most maxRuns views, dropping the least recently used', async () => {
  const cache = new ViewCache(2, 1_000_000);
  let reads = 0;
  const read = (json: string) => async () => (reads++, json);
  await cache.get('a', read('A'));
  await cache.get('b', read('B'));
  await cache.get('a', read('A'));
  await cache.get('c', read('C'));
  expect(cache.size.runs).toBe(2);
  expect(reads).toBe(3);
  await cache.get('a', read('A'));
  expect(reads).toBe(3);
  await cache.get('b', read('B'));
  expect(reads).toBe(4);
});

test('keeps at most maxBytes of views; a view larger than the budget is served, not kept', async () => {
  const cache = new ViewCache(100, 10);
  await cache.get('a', async () => '123456');
  await cache.get('b', async () => '123456');
  expect(cache.size).toEqual({ runs: 1, bytes: 6 });
  expect(await cache.get('huge', async () => 'x'.repeat(11))).toHaveLength(11);
  expect(cache.size).toEqual({ runs: 1, bytes: 6 });
});

test('concurrent reads of one key share one read', async () => {
  const cache = new ViewCache();
  let reads = 0;
  const slow = async () => (reads++, await new Promise((r) => setTimeout(r, 20)), 'v');
  expect(await Promise.all([cache.get('k', slow), cache.get('k', slow), cache.get('k', slow)])).toEqual([
    'v',
    'v',
    'v',
  ]);
  expect(reads).toBe(1);
});
