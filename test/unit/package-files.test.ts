import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { prebuiltBundlePath } from '../../src/worker';

/**
 * Every prebuilt workflow bundle a worker may pick (`prebuiltBundlePath`: with or without the codec's
 * failure converter, with or without tracing) is in the package: a missing one makes an installed
 * worker bundle at start, with webpack and the bundler's full source map.
 */
test("the package's files hold every prebuilt workflow bundle a worker may pick", () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as { files: string[] };
  const names = [false, true].flatMap((codec) =>
    [false, true].map((otel) => `dist/workflow-bundle${codec ? '-codec' : ''}${otel ? '-otel' : ''}.js`),
  );
  expect(names).toHaveLength(4);
  for (const name of names) expect(pkg.files).toContain(name);
  // The names are the ones the worker looks for (when the build wrote them).
  const built = prebuiltBundlePath(true, true);
  if (built !== undefined) expect(built.endsWith('workflow-bundle-codec-otel.js')).toBe(true);
});
