/**
 * What a sandboxed bash command can and cannot reach, against the real bubblewrap: no secret in its
 * environment or its /proc, none of the worker's files, no network unless the run allows it, a
 * private /tmp, nothing writable outside the workspace, no hard link to an outside file.
 */
import { existsSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createBashTool, ToolRegistry } from '../../src/tools';
import { SANDBOX_SHM_BYTES } from '../../src/sandbox';
import { makeContext, makeWorkspace } from '../tools/helpers';

const KEY = `sk-ant-isolation-${process.pid}-${Date.now()}`;
const registry = new ToolRegistry([createBashTool({ sandbox: 'bwrap' })]);
const { ws, outside, cleanup } = makeWorkspace();
const run = async (command: string, overrides = {}) =>
  (await registry.run('bash', { command }, makeContext(ws, overrides))).content;

let savedKey: string | undefined;
beforeAll(() => {
  savedKey = process.env.ANTHROPIC_API_KEY;
  process.env.ANTHROPIC_API_KEY = KEY;
  process.env.DA_TEST_WORKER_SECRET = KEY;
});
afterAll(() => {
  if (savedKey === undefined) delete process.env.ANTHROPIC_API_KEY;
  else process.env.ANTHROPIC_API_KEY = savedKey;
  delete process.env.DA_TEST_WORKER_SECRET;
  cleanup();
});

describe('secrets', () => {
  test('env, /proc/$PPID/environ, /proc/1/environ and every process environment show none of the worker’s', async () => {
    const output = await run(
      'env; echo ---; cat /proc/$PPID/environ | tr "\\0" "\\n"; echo ---; cat /proc/1/environ | tr "\\0" "\\n"; ' +
        'echo ---; for f in /proc/[0-9]*/environ; do tr "\\0" "\\n" < $f; done; echo ---; ps -eo pid,args',
    );
    expect(output).not.toContain(KEY);
    expect(output).not.toContain('DA_TEST_WORKER_SECRET');
    expect(output).toContain('PATH=/usr/local/sbin:'); // the commands ran and printed what they see
    // Only the sandbox's own processes are there: its init (bwrap), the shell, ps.
    expect(output).toMatch(/^\s*1 \/usr\/bin\/bwrap /m);
    expect(output).not.toMatch(/\bnode\b|jest/);
  });

  test('the worker’s working directory, HOME and files outside the workspace are not there', async () => {
    const home = os.homedir();
    const output = await run(
      `ls ${JSON.stringify(process.cwd())} ${JSON.stringify(home)} ${JSON.stringify(outside)} 2>&1; ` +
        `cat ${JSON.stringify(path.join(outside, 'secret.txt'))} 2>&1; ls /root /home /work 2>&1; ` +
        'cat /etc/shadow /etc/npmrc 2>&1; ls /etc',
    );
    expect(output).not.toContain('TOP SECRET');
    expect(output).toContain(`ls: cannot access '${process.cwd()}': No such file or directory`);
    expect(output).toContain(`ls: cannot access '${home}': No such file or directory`);
    expect(output).toContain(`cat: /etc/shadow: No such file or directory`);
    expect(output).not.toMatch(/^package\.json$/m);
  });

  test('a symlink planted in the workspace that points outside leads nowhere', async () => {
    const output = await run(`ln -sf ${JSON.stringify(path.join(outside, 'secret.txt'))} planted; cat planted 2>&1`);
    expect(output).not.toContain('TOP SECRET');
    expect(output).toMatch(/No such file or directory/);
  });
});

describe('network', () => {
  let server: Server;
  let port = 0;
  beforeAll(async () => {
    server = createServer((socket) => socket.end('hello from the host\n'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  const connect = () =>
    `exec 3<>/dev/tcp/127.0.0.1/${port} && head -1 <&3 || echo "no connection"; ` +
    'exec 4<>/dev/tcp/10.255.255.1/80 2>/dev/null && echo "outside reachable" || echo "outside unreachable"';

  test('without network: true a command cannot reach a server on the host’s loopback', async () => {
    const output = await run(connect());
    expect(output).toContain('no connection');
    expect(output).not.toContain('hello from the host');
    expect(output).toContain('outside unreachable');
  });

  test('with network: true the same command reaches it', async () => {
    const output = await run(connect(), { network: true });
    expect(output).toContain('hello from the host');
  });

  // Abstract unix sockets (no file; the name starts with a NUL) belong to the network namespace.
  test('an abstract unix socket of the host is reachable only with network: true', async () => {
    const name = `da-abstract-${process.pid}`;
    const abstract = createServer((socket) => socket.end('hello from an abstract socket\n'));
    await new Promise<void>((resolve) => abstract.listen(`\0${name}`, resolve));
    try {
      // Node pads an abstract name with NULs to the whole address, so the client pads it the same way.
      const perl =
        `perl -MIO::Socket::UNIX -e '$n = "\\0${name}"; $n .= "\\0" x (108 - length $n); ` +
        `$s = IO::Socket::UNIX->new(Peer => $n) or die "no connection: $!\\n"; print scalar <$s>' 2>&1`;
      const isolated = await run(perl);
      expect(isolated).toContain('no connection: Connection refused');
      expect(isolated).not.toContain('hello from an abstract socket');
      expect(await run(perl, { network: true })).toContain('hello from an abstract socket');
    } finally {
      await new Promise<void>((resolve) => abstract.close(() => resolve()));
    }
  });
});

describe('file system', () => {
  test('/tmp is private: the host’s files are not there and what the command writes stays in the call', async () => {
    const hostFile = path.join(os.tmpdir(), `da-host-visible-${process.pid}`);
    writeFileSync(hostFile, 'host tmp file\n');
    const name = `da-sandbox-wrote-${process.pid}`;
    try {
      const first = await run(`cat ${hostFile} 2>&1; echo inside > /tmp/${name}; cat /tmp/${name}`);
      expect(first).toContain('No such file or directory');
      expect(first).toContain('inside');
      expect(existsSync(path.join(os.tmpdir(), name))).toBe(false);
      expect(await run(`cat /tmp/${name} 2>&1`)).toContain('No such file or directory');
    } finally {
      rmSync(hostFile, { force: true });
    }
  });

  test('writes outside the workspace fail; inside they land in the workspace', async () => {
    const parent = path.dirname(ws);
    const output = await run(
      `touch /usr/da-x /etc/da-x ${JSON.stringify(path.join(parent, 'da-x'))} /da-x 2>&1; echo ok > inside.txt; ` +
        `echo "parent: $(ls ${JSON.stringify(parent)} | tr '\\n' ' ')"`,
    );
    expect(output).toContain("touch: cannot touch '/usr/da-x': Read-only file system");
    expect(output).toContain("touch: cannot touch '/etc/da-x': Read-only file system");
    expect(output).toContain("touch: cannot touch '/da-x': Read-only file system");
    // The workspace's parent lies in the private /tmp here: writable, but nothing reaches the host.
    expect(existsSync('/usr/da-x') || existsSync('/etc/da-x') || existsSync(path.join(parent, 'da-x'))).toBe(false);
    expect(readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('ok\n');
    // The workspace's parent (a path bwrap made up) does not show its real siblings.
    expect(output).toMatch(/^parent: .*\bws\b/m);
    expect(output).not.toMatch(/^parent: .*\boutside\b/m);
  });

  test('a hard link to a file outside the workspace cannot be made: the workspace is its own mount', async () => {
    // Prove the link would work outside the sandbox (same file system), so the refusal is the mount's.
    const probe = path.join(ws, 'probe-link');
    const target = path.join(outside, 'secret.txt');
    linkSync(target, probe);
    rmSync(probe);
    mkdirSync(path.join(ws, 'sub'), { recursive: true });
    const output = await run(`ln /etc/passwd sub/passwd-link 2>&1; ln /usr/bin/env env-link 2>&1; ls sub`);
    expect(output).toMatch(
      /ln: failed to create hard link 'sub\/passwd-link' => '\/etc\/passwd': Invalid cross-device link/,
    );
    expect(output).toMatch(/ln: failed to create hard link 'env-link' => '\/usr\/bin\/env': Invalid cross-device link/);
    expect(existsSync(path.join(ws, 'env-link'))).toBe(false);
  });

  test('/dev is read-only and /dev/shm is memory capped like /tmp', async () => {
    const mib = SANDBOX_SHM_BYTES / (1024 * 1024);
    const output = await run(
      `cd /dev && echo x > da-x 2>&1; cd /dev/shm && head -c ${mib + 16}M /dev/zero 2>&1 > big; ` +
        'echo "shm: $(stat -c %s big)"; echo ok > /dev/null && echo "null ok"',
    );
    expect(output).toMatch(/da-x: Read-only file system/);
    expect(output).toMatch(/No space left on device/);
    expect(output).toContain(`shm: ${SANDBOX_SHM_BYTES}\n`);
    expect(output).toContain('null ok');
  });

  test('no capabilities and no nested user namespaces inside', async () => {
    const output = await run(
      'grep CapEff /proc/self/status; unshare -U true 2>&1; echo "unshare: $?"; mkdir -p /tmp/m; mount -t tmpfs x /tmp/m 2>&1',
    );
    expect(output).toMatch(/CapEff:\s+0000000000000000/);
    expect(output).toMatch(/unshare: [1-9]/);
    expect(output).toMatch(/mount: \/tmp\/m: permission denied/);
  });
});
