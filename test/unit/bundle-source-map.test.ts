import { withoutSourcesContent } from '../../src/worker/workflow-bundle';

/** The prebuilt bundles' inline source map keeps its mappings and drops the sources' text. */
const map = {
  version: 3,
  file: 'workflow-bundle.js',
  sources: ['webpack://src/workflows/loop.ts', 'webpack://src/workflows/run/run.ts'],
  sourcesContent: ['export function loop() {}\n', 'export class Run {}\n'],
  names: ['loop'],
  mappings: 'AAAA,SAASA',
};
const code = 'var x = 1;\nfunction loop() { return x; }\n';

function inline(header: string, value: unknown): string {
  return `${code}${header}${Buffer.from(JSON.stringify(value)).toString('base64')}\n`;
}

function mapOf(bundle: string): Record<string, unknown> {
  const data = bundle.indexOf('base64,', bundle.lastIndexOf('//# sourceMappingURL=data:'));
  return JSON.parse(Buffer.from(bundle.slice(data + 'base64,'.length).trimEnd(), 'base64').toString());
}

test.each([
  '//# sourceMappingURL=data:application/json;charset=utf-8;base64,',
  '//# sourceMappingURL=data:application/json;base64,',
])('drops sourcesContent and keeps the code, the map header and every other field (%s)', (header) => {
  const slim = withoutSourcesContent(inline(header, map));
  expect(slim.startsWith(`${code}${header}`)).toBe(true);
  const { sourcesContent, ...rest } = map;
  expect(sourcesContent).toHaveLength(2);
  expect(mapOf(slim)).toEqual(rest);
});

test('a bundle without an inline map, or whose map has no sources text, is returned unchanged', () => {
  expect(withoutSourcesContent(code)).toBe(code);
  const { sourcesContent: _dropped, ...noContent } = map;
  const bundle = inline('//# sourceMappingURL=data:application/json;base64,', noContent);
  expect(withoutSourcesContent(bundle)).toBe(bundle);
});
