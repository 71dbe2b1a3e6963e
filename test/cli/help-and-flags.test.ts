/**
 * Every command's command line comes from its flag table (src/cli/commands.ts, run-flags.ts): `--help`
 * names every flag and exits 0, an unknown flag exits 2 naming the accepted ones, and values are
 * checked as the table says. In process, plus the built CLI once to prove the exit codes end to end.
 */
import { COMMANDS } from '../../src/cli/commands';
import { UsageError } from '../../src/cli/flags';
import { describeFailure, main } from '../../src/cli/main';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { CLI_BIN } from '../support/cli-process';
import { durableAgent } from './cli-helpers';

async function captured(argv: string[]): Promise<{ code: number; stdout: string }> {
  let stdout = '';
  const spy = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  try {
    return { code: await main(argv), stdout };
  } finally {
    spy.mockRestore();
  }
}

/** What the CLI would print and exit with for a command line that fails before connecting. */
async function refusal(argv: string[]): Promise<{ code: number; text: string; error: unknown }> {
  try {
    await captured(argv);
  } catch (error) {
    return { ...describeFailure(error), error };
  }
  throw new Error(`durable-agent ${argv.join(' ')} did not fail`);
}

const names = COMMANDS.map((c) => c.name);

test.each(names)('%s --help and -h exit 0 and name every flag of the command', async (name) => {
  const command = COMMANDS.find((c) => c.name === name)!;
  for (const help of ['--help', '-h']) {
    const { code, stdout } = await captured([name, help]);
    expect(code).toBe(0);
    expect(stdout).toContain(`Usage: durable-agent ${name}`);
    for (const flag of command.flags) expect(stdout).toContain(`--${flag.name}`);
    expect(stdout).toContain('--profile');
  }
});

test('durable-agent --help lists every command; no command at all prints it and exits 2', async () => {
  const help = await captured(['--help']);
  expect(help.code).toBe(0);
  for (const name of names) expect(help.stdout).toMatch(new RegExp(`^  ${name}\\b`, 'm'));
  expect(await captured(['help', 'run'])).toEqual({ code: 0, stdout: expect.stringContaining('--max-iterations') });
  expect((await captured([])).code).toBe(2);
});

test.each(names)('%s with an unknown flag exits 2 naming the flags it accepts', async (name) => {
  const command = COMMANDS.find((c) => c.name === name)!;
  const { code, text, error } = await refusal([name, 'some-id', '--no-such-flag']);
  expect(error).toBeInstanceOf(UsageError);
  expect(code).toBe(2);
  const first = text.split('\n')[0]!;
  expect(first).toContain(`unknown flag --no-such-flag for '${name}'`);
  for (const flag of command.flags) expect(first).toContain(`--${flag.name}`);
  // One line and where the rest is: the command's help is not reprinted (issue 44).
  expect(text.split('\n')).toEqual([first, `see 'durable-agent ${name} --help'`]);
  expect(text).not.toContain('Usage: durable-agent');
});

test('an unknown command names the commands there are, and points at --help without printing it', async () => {
  const { code, text } = await refusal(['frobnicate']);
  expect(code).toBe(2);
  expect(text).toBe(
    `error: unknown command 'frobnicate'; the commands are ${names.join(', ')}\nsee 'durable-agent --help'`,
  );
});

test('values are checked as the flag table says, with messages naming the flag', async () => {
  const cases: [string[], string][] = [
    [['run', 'x', '--max-iterations', '1.5'], "--max-iterations must be a whole number, got '1.5'"],
    [['run', 'x', '--max-budget-usd', 'lots'], "--max-budget-usd must be a number, got 'lots'"],
    [['run', 'x', '--tool-protocol', 'json'], "--tool-protocol must be one of native, xml; got 'json'"],
    [['run', 'x', '--model'], '--model needs a value: --model M'],
    [
      ['run', 'x', '--system', 'a', '--system-replace', 'b'],
      '--system (added to the system prompt) or --system-replace',
    ],
    [['codec-server', '--port', '70000'], '--port must be at most 65535, got 70000'],
    [['server', '--ui-port=-1'], '--ui-port must be at least 0, got -1'],
    [['server', '--ui-port', '-1'], "Option '--ui-port' argument is ambiguous. Did you forget"],
    [['list', '--limit', '0'], '--limit must be at least 1, got 0'],
  ];
  for (const [argv, message] of cases) {
    const { code, text } = await refusal(argv);
    expect({ argv, code, line: text.split('\n')[0] }).toEqual({
      argv,
      code: 2,
      line: expect.stringContaining(message),
    });
  }
});

test('the built CLI exits 0 for run --help and 2 for an unknown flag', async () => {
  const help = await durableAgent(['run', '--help']);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain('--output-schema FILE');
  const bad = await durableAgent(['status', 'some-id', '--verbose']);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain("unknown flag --verbose for 'status'; it accepts --json");
  // The error and a pointer, not the whole help again (issue 44).
  expect(bad.stderr.trim().split('\n')).toEqual([
    expect.stringMatching(/^error: /),
    "see 'durable-agent status --help'",
  ]);
});

test('durable-agent --version prints the version package.json states', async () => {
  const { version } = JSON.parse(readFileSync(path.join(__dirname, '../../package.json'), 'utf8')) as {
    version: string;
  };
  expect(await captured(['--version'])).toEqual({ code: 0, stdout: `durable-agent ${version}\n` });
});

test('the built CLI answers --help and a usage error without loading the Temporal client', () => {
  // A preload that reports, as the process exits, how many modules of @temporalio/client it loaded.
  const dir = mkdtempSync(path.join(tmpdir(), 'da-help-'));
  const probe = path.join(dir, 'probe.js');
  writeFileSync(
    probe,
    "process.on('exit', () => process.stderr.write('client modules: ' + " +
      "Object.keys(require.cache).filter((k) => /@temporalio[\\\\/]client[\\\\/]/.test(k)).length + '\\n'));",
  );
  for (const args of [['--help'], ['run', '--help'], ['status', 'some-id', '--verbose']]) {
    const out = spawnSync(process.execPath, ['-r', probe, CLI_BIN, ...args], { encoding: 'utf8' });
    expect({ args, loaded: out.stderr.match(/client modules: (\d+)/)?.[1] }).toEqual({ args, loaded: '0' });
  }
  // The probe itself can see the client when a command does load it.
  const real = spawnSync(process.execPath, ['-r', probe, '-e', "require('@temporalio/client')"], {
    encoding: 'utf8',
    cwd: path.join(__dirname, '../..'),
  });
  expect(Number(real.stderr.match(/client modules: (\d+)/)?.[1])).toBeGreaterThan(0);
});
