import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { HAS_PROC_FD, withLocated } from '../../src/safe-fs';
import { tempWorkspace } from '../support/temporal';

/**
 * "An `EINVAL (EINVAL)` message": a system error the file tools have no words of their own for was
 * restated as its code twice. It now says what the system said, with the code once.
 */
const onLinux = HAS_PROC_FD ? test : test.skip;

onLinux('a system error without words of its own reads as the system put it, its code named once', async () => {
  const workspace = await tempWorkspace('errno');
  await fs.writeFile(path.join(workspace, 'plain.txt'), 'x');
  // readlink on a regular file fails with EINVAL, through the walk's /proc/self/fd path.
  const failure = await withLocated(workspace, 'plain.txt', { followLinks: false }, (located) =>
    fs.readlink(located.dir.child(located.name!)),
  ).catch((e: unknown) => e as Error);
  expect(failure).toBeInstanceOf(Error);
  expect((failure as Error).message).toBe("Cannot use 'plain.txt': invalid argument (EINVAL).");
});
