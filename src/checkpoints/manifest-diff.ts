import type { Manifest, ManifestEntry } from './manifest';

/**
 * What changed between two checkpoints of a workspace, path by path, from their manifests alone (no
 * content is read). Directories are not listed (as in git); a path that changed kind (a file became a
 * link) is a removal and an addition.
 */
export type PathChange =
  | { path: string; status: 'added'; after: ManifestEntry }
  | { path: string; status: 'removed'; before: ManifestEntry }
  | { path: string; status: 'modified'; before: ManifestEntry; after: ManifestEntry };

type Shown = Exclude<ManifestEntry, { kind: 'dir' }>;

export function diffManifests(before: Manifest | undefined, after: Manifest): PathChange[] {
  const old = new Map<string, Shown>();
  for (const e of before?.entries ?? []) if (e.kind !== 'dir') old.set(e.path, e);
  const changes: PathChange[] = [];
  const seen = new Set<string>();
  for (const e of after.entries) {
    if (e.kind === 'dir') continue;
    seen.add(e.path);
    const was = old.get(e.path);
    if (!was) changes.push({ path: e.path, status: 'added', after: e });
    else if (was.kind !== e.kind) {
      changes.push({ path: e.path, status: 'removed', before: was });
      changes.push({ path: e.path, status: 'added', after: e });
    } else if (differs(was, e)) changes.push({ path: e.path, status: 'modified', before: was, after: e });
  }
  for (const [path, was] of old) if (!seen.has(path)) changes.push({ path, status: 'removed', before: was });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

function differs(a: Shown, b: Shown): boolean {
  if (a.kind === 'file' && b.kind === 'file') return a.hash !== b.hash || a.mode !== b.mode;
  if (a.kind === 'symlink' && b.kind === 'symlink') return a.target !== b.target;
  return true;
}

/** The paths a list of changes names, once each, in order. */
export function changedPaths(changes: readonly PathChange[]): string[] {
  return [...new Set(changes.map((c) => c.path))];
}
