import { existsSync, readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/**
 * The page's files (src/inspector/web/): plain ES modules and CSS, no build step, all in the
 * package (nothing from a CDN). Read once at start; only these names are served.
 */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
};

/** From source (tests, ts-node) the folder is beside this file; from dist/src/inspector it is in the package's src/. */
export function webDir(): string {
  const candidates = [
    path.join(__dirname, 'web'),
    path.resolve(__dirname, '..', '..', '..', 'src', 'inspector', 'web'),
  ];
  const found = candidates.find((dir) => existsSync(path.join(dir, 'index.html')));
  if (!found) throw new Error(`the inspector's page is missing (looked in ${candidates.join(', ')})`);
  return found;
}

export interface Asset {
  type: string;
  body: Buffer;
}

export function loadAssets(dir = webDir()): Map<string, Asset> {
  const assets = new Map<string, Asset>();
  for (const name of readdirSync(dir)) {
    const type = TYPES[path.extname(name)];
    if (type) assets.set(name, { type, body: readFileSync(path.join(dir, name)) });
  }
  return assets;
}
