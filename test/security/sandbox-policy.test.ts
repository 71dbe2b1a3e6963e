/**
 * The command policy: what it refuses by default, how operators change it, and that no input makes
 * it throw or take more than linear time.
 */
import fc from 'fast-check';
import { CommandPolicy, detectSandbox, MAX_COMMAND_BYTES, policyFromEnv, sandboxSetting } from '../../src/sandbox';

const policy = new CommandPolicy();
const ruleOf = (command: string, p = policy) => p.check(command)?.rule ?? 'allowed';

test.each([
  ['sudo apt-get install x', 'privilege-escalation'],
  ["s''udo id", 'privilege-escalation'],
  ["$'\\x73udo' id", 'privilege-escalation'],
  ['/usr/bin/sudo id', 'privilege-escalation'],
  ['FOO=1 su -c id', 'privilege-escalation'],
  ['ls && doas id', 'privilege-escalation'],
  ['echo $(sudo id)', 'privilege-escalation'],
  ['echo "a $(echo "b `sudo id`")"', 'privilege-escalation'],
  ['cat <<EOF\n$(sudo id)\nEOF', 'privilege-escalation'],
  ['env -i nice -n 5 timeout 9 sudo id', 'privilege-escalation'],
  ['find . -exec sudo rm {} \\;', 'privilege-escalation'],
  ['bash -c "sudo id"', 'privilege-escalation'],
  ["bash -lc 'sudo id'", 'privilege-escalation'],
  ["sh -ec 'sudo id'", 'privilege-escalation'],
  ["bash -x -o pipefail -c 'sudo id'", 'privilege-escalation'],
  ["bash -O extglob --norc -c -- 'sudo id'", 'privilege-escalation'],
  ["bash --rcfile x -ic 'sudo id'", 'privilege-escalation'],
  ["eval 'sudo id'", 'privilege-escalation'],
  ['if true; then (sudo id); fi', 'privilege-escalation'],
  ['diff <(sudo cat a) b', 'privilege-escalation'],
  ['mkfs.ext4 /dev/sdb1', 'disk-format'],
  ['systemctl reboot', 'power'],
  ['shutdown -h now', 'power'],
  ['dd if=/dev/zero of=/dev/sda bs=1M', 'block-device-write'],
  ['echo x > /dev/nvme0n1', 'block-device-write'],
  ['rm -rf /', 'rm-root'],
  ['rm -fr ~/', 'rm-root'],
  ['rm -r --no-preserve-root /x', 'rm-root'],
  ["echo 'unclosed", 'unparsable'],
  ['echo $(sudo', 'unparsable'],
])('%j is refused by rule %s', (command, rule) => {
  expect(ruleOf(command)).toBe(rule);
});

test.each([
  'ls -la',
  'echo sudo',
  'grep -rn sudo src/',
  'git log --grep=reboot',
  "cat <<'EOF'\n$(sudo id)\nEOF",
  'cat > notes.md <<EOF\nrun sudo make install\nEOF',
  'dd if=in.img of=out.img',
  'echo hi > /dev/null 2>&1',
  'exec 3<>/dev/tcp/127.0.0.1/80',
  'rm -rf ./build /tmp/x',
  'systemctl status nginx',
  'npm test 2>&1 | tail -5',
  'for f in *.ts; do echo "$f"; done',
  "bash -lc 'echo sudo'",
  'exec >&- 2>&-; ls 3<&-',
  'bash -e script.sh sudo',
  'bash -o sudo script.sh',
  'x=$((1 + 2)); echo ${x:-0}',
])('%j is allowed', (command) => {
  expect(ruleOf(command)).toBe('allowed');
});

test('operators turn rules off and deny more commands through DURABLE_AGENT_COMMAND_POLICY', () => {
  const custom = new CommandPolicy([
    policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: '-privilege-escalation, deny:curl, deny:git push' }),
  ]);
  expect(ruleOf('sudo id', custom)).toBe('allowed');
  expect(ruleOf('curl https://example.com', custom)).toBe('deny-list');
  expect(ruleOf('git -C repo push origin main', custom)).toBe('deny-list');
  expect(ruleOf('git pull', custom)).toBe('allowed');
  expect(ruleOf('rm -rf /', custom)).toBe('rm-root');
  const none = new CommandPolicy([policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: 'none' })]);
  expect(ruleOf('sudo rm -rf /', none)).toBe('allowed');
  expect(() => policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: '-no-such-rule' })).toThrow(
    /^DURABLE_AGENT_COMMAND_POLICY: unknown command policy rule 'no-such-rule'; the rules are: all, privilege-escalation/,
  );
  expect(() => policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: 'curl' })).toThrow(/cannot read 'curl'/);
});

test('a run adds denied commands on top of the worker’s policy', () => {
  const combined = new CommandPolicy([{ deny: ['npm publish'] }, { deny: ['wget'] }]);
  expect(ruleOf('npm publish --access public', combined)).toBe('deny-list');
  expect(ruleOf('wget x', combined)).toBe('deny-list');
  expect(ruleOf('sudo id', combined)).toBe('privilege-escalation');
});

test('a command too long for bash -c is refused without being parsed', () => {
  expect(ruleOf(`echo ${'a'.repeat(MAX_COMMAND_BYTES)}`)).toBe('command-length');
});

test('no input makes the policy throw', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (command) => {
      const refusal = policy.check(command);
      expect(refusal === undefined || typeof refusal.rule === 'string').toBe(true);
    }),
    { numRuns: 3000 },
  );
});

test('sudo is found however ordinary commands are composed around it', () => {
  const word = fc.constantFrom('ls', 'echo hi', 'cat f', 'true', 'x=1', 'grep a b', 'make');
  const joiner = fc.constantFrom('; ', ' && ', ' || ', ' | ', '\n', ' & ');
  const wrap = fc.constantFrom((c: string) => c, (c: string) => `(${c})`, (c: string) => `echo $(${c})`,
    (c: string) => `bash -c '${c}'`, (c: string) => `{ ${c}; }`, (c: string) => `if ${c}; then :; fi`,
    (c: string) => `env A=1 ${c}`, (c: string) => `echo "\`${c}\`"`); // prettier-ignore
  fc.assert(
    fc.property(
      fc.array(word, { maxLength: 5 }),
      fc.array(word, { maxLength: 5 }),
      joiner,
      wrap,
      (before, after, join, w) => {
        const command = [...before, w('sudo id'), ...after].join(join);
        expect(ruleOf(command)).toBe('privilege-escalation');
      },
    ),
    { numRuns: 2000 },
  );
});

test('checking takes time linear in the command: nested and repeated constructs at the size limit', () => {
  const limit = MAX_COMMAND_BYTES - 1;
  const inputs = [
    'a;'.repeat(limit / 2),
    `echo "${'$(echo '.repeat(30)}${')'.repeat(30)}"`.padEnd(limit, ' '),
    'env '.repeat(limit / 4),
    "'a'".repeat(limit / 3),
    `cat <<EOF\n${'$(x)\n'.repeat(limit / 6)}`,
    '{a,b}'.repeat(limit / 5),
  ];
  for (const input of inputs) {
    const started = process.hrtime.bigint();
    policy.check(input.slice(0, limit));
    // Generous: linear work on 128 KiB is a few ms; backtracking would take seconds or never end.
    expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(1000);
  }
});

test('only the documented spellings of the policy and sandbox settings are read; others name what is accepted', () => {
  for (const spelling of ['-all', 'NONE', 'deny: curl', '-Privilege-Escalation', 'deny:', '+rm-root']) {
    expect(() => policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: spelling })).toThrow(
      new RegExp(
        `cannot read '${spelling.replace(/[+]/g, '\\+')}'; use comma-separated -<rule>, none or deny:<command>`,
      ),
    );
  }
  expect(policyFromEnv({ DURABLE_AGENT_COMMAND_POLICY: 'none' })).toEqual({ disable: ['all'], deny: [] });
  for (const spelling of ['OFF', ' off', 'Bwrap', '0', 'false', 'none']) {
    expect(() => sandboxSetting({ DURABLE_AGENT_SANDBOX: spelling })).toThrow(
      `DURABLE_AGENT_SANDBOX must be one of bwrap, off (exactly), got '${spelling}'`,
    );
    expect(detectSandbox({ DURABLE_AGENT_SANDBOX: spelling })).toMatchObject({ mode: 'unavailable' });
  }
  expect(sandboxSetting({ DURABLE_AGENT_SANDBOX: 'off' })).toBe('off');
  expect(sandboxSetting({})).toBe('bwrap');
});
