#!/usr/bin/env node
// `npm run build`: the inspector's page (src/inspector/web/, plain browser modules and CSS) goes
// beside its compiled server, dist/src/inspector/web/, so the package ships it under dist/src/.
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const target = path.join(root, 'dist', 'src', 'inspector', 'web');
rmSync(target, { recursive: true, force: true });
cpSync(path.join(root, 'src', 'inspector', 'web'), target, { recursive: true });
