import { candidateNames, expandWord, globMatches, type LineFacts } from './dynamic-names';
import { SHELLS, shellScript } from './shell-script';
import { parseShell, ShellParseError, type SimpleCommand, type Word } from './shell-words';

/**
 * The command policy: commands bash refuses before anything runs (a deny list of command shapes). It is
 * defense in depth, a tripwire for the obvious (`sudo apt-get install …`), not the boundary: a name
 * built while the command runs (`$cmd`, a script file) passes it, and the sandbox is what confines
 * such a command. Every check is linear in the command's length.
 */

export const POLICY_ENV_VAR = 'DURABLE_AGENT_COMMAND_POLICY';

/** A command as the policy sees it: its name (basename of the first word) and arguments. */
interface Invocation {
  name: string;
  args: string[];
  redirects: SimpleCommand['redirects'];
}

interface Rule {
  name: string;
  /** Why it is refused, for the model. */
  why: string;
  /** Command names refused outright; a trailing `*` matches any name with that prefix. */
  names?: string[];
  /** A finer test, for commands that are fine except with certain arguments. */
  test?: (command: Invocation) => boolean;
}

const DEV_SAFE = new Set(['/dev/null', '/dev/zero', '/dev/full', '/dev/random', '/dev/urandom', '/dev/tty']);
// bash's own /dev/tcp and /dev/udp are sockets, not devices.
const DEV_SAFE_PREFIXES = ['/dev/std', '/dev/fd/', '/dev/pts/', '/dev/shm/', '/dev/tcp/', '/dev/udp/'];

function isDeviceTarget(target: string): boolean {
  if (!target.startsWith('/dev/') || DEV_SAFE.has(target)) return false;
  return !DEV_SAFE_PREFIXES.some((prefix) => target.startsWith(prefix));
}

const WRITE_REDIRECTS = new Set(['>', '>>', '>|', '<>', '&>', '&>>', '>&']);
const ROOT_TARGETS = new Set(['/', '/*', '/.', '~', '~/', '~/*', '/..']);
const POWER_VERBS = new Set(['poweroff', 'reboot', 'halt', 'kexec', 'suspend', 'hibernate', 'emergency', 'rescue']);

function hasRecursiveFlag(args: string[]): boolean {
  for (const arg of args) {
    if (arg === '--recursive') return true;
    if (arg.startsWith('-') && !arg.startsWith('--') && (arg.includes('r') || arg.includes('R'))) return true;
  }
  return false;
}

/** The rules on by default, each with a name an operator can turn off. */
export const DEFAULT_RULES: readonly Rule[] = [
  {
    name: 'privilege-escalation',
    why: 'commands may not gain other users’ or root’s rights',
    names: ['sudo', 'sudoedit', 'su', 'doas', 'pkexec', 'runuser'],
  },
  {
    name: 'disk-format',
    why: 'commands may not format or repartition disks',
    names: ['mkfs', 'mkfs.*', 'mke2fs', 'mkswap', 'wipefs', 'fdisk', 'sfdisk', 'cfdisk', 'parted', 'sgdisk'],
  },
  {
    name: 'power',
    why: 'commands may not shut down or restart the machine',
    names: ['shutdown', 'reboot', 'halt', 'poweroff', 'telinit'],
    test: ({ name, args }) =>
      (name === 'systemctl' && args.some((a) => POWER_VERBS.has(a))) ||
      (name === 'init' && args.some((a) => a === '0' || a === '6')),
  },
  {
    name: 'block-device-write',
    why: 'commands may not write to devices (dd of=/dev/…, > /dev/sda, shred /dev/…)',
    test: ({ name, args, redirects }) =>
      redirects.some((r) => WRITE_REDIRECTS.has(r.op) && isDeviceTarget(r.target.text)) ||
      (name === 'dd' && args.some((a) => a.startsWith('of=') && isDeviceTarget(a.slice(3)))) ||
      (name === 'shred' && args.some(isDeviceTarget)),
  },
  {
    name: 'rm-root',
    why: 'commands may not recursively delete /, ~ or everything in them',
    test: ({ name, args }) =>
      name === 'rm' &&
      (args.includes('--no-preserve-root') ||
        (hasRecursiveFlag(args) && args.some((a) => ROOT_TARGETS.has(a) || ROOT_TARGETS.has(stripSlashes(a))))),
  },
];

function stripSlashes(arg: string): string {
  let end = arg.length;
  while (end > 1 && arg[end - 1] === '/') end--;
  return arg.slice(0, end);
}

/** Commands that run the command named by (one of) their arguments. */
const WRAPPERS = new Set([
  'env', 'nohup', 'nice', 'ionice', 'timeout', 'stdbuf', 'setsid', 'time', 'command', 'builtin', 'exec',
  'xargs', 'chrt', 'taskset', 'flock', 'watch', 'unbuffer', 'strace', 'ltrace', 'chroot', 'nsenter',
  'unshare', 'busybox', 'find', 'parallel', 'sg', 'caffeinate', 'systemd-run', 'script',
]); // prettier-ignore
/** Shells whose `-c` argument is itself a command line, and `eval`, whose arguments are. */
/** Reserved words that introduce a command (`if sudo …`, `! sudo …`). */
const PREFIX_WORDS = new Set(['if', 'then', 'else', 'elif', 'do', 'while', 'until', '{', '}', '!', 'coproc']);
/** Reserved words whose simple command names no command (`for x in a b`, `case $x in`). */
const NON_COMMAND_WORDS = new Set(['for', 'case', 'select', 'function', '[[', 'fi', 'done', 'esac', 'in']);

function basename(word: string): string {
  const slash = word.lastIndexOf('/');
  return slash < 0 ? word : word.slice(slash + 1);
}

function isAssignment(word: Word): boolean {
  const eq = word.text.indexOf('=');
  if (eq <= 0) return false;
  for (let i = 0; i < eq; i++) {
    const c = word.text[i] as string;
    const ok = c === '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

export interface PolicyConfig {
  /** Default rules turned off, by name (`all` turns every default rule off). */
  disable?: string[];
  /** Extra commands refused: a name (`curl`) or a name and subcommand words (`git push`). */
  deny?: string[];
}

export interface PolicyRefusal {
  rule: string;
  why: string;
  /** The command name that matched. */
  command: string;
}

/** Linux's MAX_ARG_STRLEN: `bash -c` cannot receive a longer command, so none is parsed. */
export const MAX_COMMAND_BYTES = 131_072;
/** How deep `bash -c '…'` and `eval` are followed; each level parses its own string once. */
const MAX_EVAL_DEPTH = 8;
/** How many wrappers (`env nice timeout 5 …`) in a row are followed. */
const MAX_WRAPPERS = 8;

/** A command policy: the default rules minus the disabled ones, plus denied commands. */
export class CommandPolicy {
  private readonly rules: Rule[];
  private readonly exact = new Map<string, Rule>();
  private readonly prefixes: { prefix: string; rule: Rule }[] = [];
  private readonly denied = new Map<string, string[][]>();

  constructor(configs: PolicyConfig[] = []) {
    const disabled = new Set(configs.flatMap((c) => c.disable ?? []));
    const known = DEFAULT_RULES.map((r) => r.name);
    for (const name of disabled) {
      if (name !== 'all' && !known.includes(name)) {
        throw new Error(`unknown command policy rule '${name}'; the rules are: all, ${known.join(', ')}`);
      }
    }
    this.rules = DEFAULT_RULES.filter((r) => !disabled.has('all') && !disabled.has(r.name));
    for (const rule of this.rules) {
      for (const name of rule.names ?? []) {
        if (name.endsWith('*')) this.prefixes.push({ prefix: name.slice(0, -1), rule });
        else this.exact.set(name, rule);
      }
    }
    for (const entry of configs.flatMap((c) => c.deny ?? [])) {
      const words = entry.split(' ').filter((w) => w !== '');
      const [name, ...sub] = words;
      if (!name) throw new Error(`an empty command in the command policy's deny list`);
      this.denied.set(name, [...(this.denied.get(name) ?? []), sub]);
    }
  }

  /** The names of the rules in force, for the tool's description and the docs. */
  get ruleNames(): string[] {
    return [...this.rules.map((r) => r.name), ...(this.denied.size ? ['deny-list'] : [])];
  }

  /** Why `command` is refused, or undefined when it may run. Never throws. */
  check(command: string): PolicyRefusal | undefined {
    if (Buffer.byteLength(command) >= MAX_COMMAND_BYTES) {
      return {
        rule: 'command-length',
        why: `a command is at most ${MAX_COMMAND_BYTES - 1} bytes (the kernel's limit for one argument); write a script with write_file and run that`,
        command: '',
      };
    }
    return this.checkLine(command, 0);
  }

  private checkLine(line: string, depth: number): PolicyRefusal | undefined {
    let commands: SimpleCommand[];
    try {
      commands = parseShell(line);
    } catch (err) {
      const why = err instanceof ShellParseError ? err.message : String(err);
      return { rule: 'unparsable', why: `the policy cannot check a command with ${why}`, command: '' };
    }
    // What the line itself says a dynamic name or a shell's stdin may be (see dynamic-names.ts).
    const facts: LineFacts & { echoed: string[] } = { vars: new Map(), positional: [], echoed: [] };
    if (line.includes('echo') || line.includes('printf')) {
      for (const { words } of commands) {
        const name = words[0] && !words[0].dynamic ? basename(words[0].text) : '';
        if (name === 'echo' || name === 'printf')
          facts.echoed.push(
            words
              .slice(1)
              .map((w) => w.text)
              .join(' '),
          );
      }
    }
    for (const command of commands) {
      const refusal = this.checkSimple(command.words, command.redirects, depth, 0, facts);
      if (refusal) return refusal;
      learn(command.words, facts);
    }
    return undefined;
  }

  /** A name that a dynamic command word may expand to and that is refused. */
  private checkDynamic(head: Word, facts: LineFacts): PolicyRefusal | undefined {
    for (const candidate of candidateNames(head.raw ?? '', facts)) {
      const name = basename(candidate);
      const refusal = this.checkName(name, []) ?? this.checkGlob(name);
      if (refusal) return refusal;
    }
    return undefined;
  }

  /** A refused name that the glob `pattern` matches (`su?o`, `/usr/bin/su*`). */
  private checkGlob(pattern: string): PolicyRefusal | undefined {
    const names = [...this.exact.keys(), ...this.prefixes.map((p) => `${p.prefix}x`), ...this.denied.keys()];
    const name = names.find((n) => globMatches(pattern, n));
    return name === undefined ? undefined : this.checkName(name, []);
  }

  private checkSimple(
    words: Word[],
    redirects: SimpleCommand['redirects'],
    depth: number,
    wrapped = 0,
    facts: LineFacts & { echoed: string[] } = { vars: new Map(), positional: [], echoed: [] },
  ): PolicyRefusal | undefined {
    let start = 0;
    while (start < words.length) {
      const word = words[start] as Word;
      if (isAssignment(word) || (word.plain && PREFIX_WORDS.has(word.text))) start++;
      else break;
    }
    const head = words[start];
    const redirected = this.checkInvocation({ name: '', args: [], redirects });
    if (redirected) return redirected;
    if (!head || (head.plain && NON_COMMAND_WORDS.has(head.text))) return undefined;
    const name = basename(head.text);
    const args = words.slice(start + 1).map((w) => w.text);
    const refusal = this.checkInvocation({ name, args, redirects: [] });
    if (refusal) return refusal;
    if (head.dynamic) {
      const dynamic = this.checkDynamic(head, facts);
      if (dynamic) return dynamic;
    }
    if (depth < MAX_EVAL_DEPTH && name === 'alias') {
      for (const arg of args) {
        const eq = arg.indexOf('=');
        const aliased = eq > 0 ? this.checkLine(arg.slice(eq + 1), depth + 1) : undefined;
        if (aliased) return aliased;
      }
    }
    if (depth < MAX_EVAL_DEPTH && SHELLS.has(name) && shellScript(args) === undefined) {
      // A shell reading its commands from stdin: a here-string, or what the line echoes into it.
      const fed = [...redirects.filter((r) => r.op === '<<<').map((r) => r.target.text), ...facts.echoed];
      for (const script of fed) {
        const inner = this.checkLine(script, depth + 1);
        if (inner) return inner;
      }
    }

    if (WRAPPERS.has(name)) {
      // Each level looks at all later words: a bound keeps `env env env … sudo` linear.
      if (wrapped >= MAX_WRAPPERS) {
        return { rule: 'unparsable', why: `the policy checks at most ${MAX_WRAPPERS} nested wrappers`, command: name };
      }
      // The wrapped command is one of the later words: any of them that is a refused name refuses
      // it (erring toward refusing), and the first that is not an option or a number is checked in full.
      for (const arg of args) {
        const byName = this.checkName(basename(arg), []);
        if (byName) return byName;
      }
      const inner = words
        .slice(start + 1)
        .findIndex((w) => !w.text.startsWith('-') && !isNumberLike(w.text) && !isAssignment(w));
      if (inner >= 0) return this.checkSimple(words.slice(start + 1 + inner), [], depth, wrapped + 1, facts);
    }
    if (depth < MAX_EVAL_DEPTH && (name === 'eval' || SHELLS.has(name))) {
      const evaluated = words.slice(start + 1).map((w) => (w.dynamic ? expandWord(w.raw ?? '', facts) : w.text));
      const script = name === 'eval' ? evaluated.join(' ') : shellScript(args);
      if (script !== undefined) return this.checkLine(script, depth + 1);
    }
    return undefined;
  }

  private checkInvocation(command: Invocation): PolicyRefusal | undefined {
    if (command.name) {
      const byName = this.checkName(command.name, command.args);
      if (byName) return byName;
    }
    for (const rule of this.rules) {
      if (rule.test?.(command)) return { rule: rule.name, why: rule.why, command: command.name || 'a redirection' };
    }
    return undefined;
  }

  private checkName(name: string, args: string[]): PolicyRefusal | undefined {
    const rule = this.exact.get(name) ?? this.prefixes.find((p) => name.startsWith(p.prefix))?.rule;
    if (rule) return { rule: rule.name, why: rule.why, command: name };
    for (const sub of this.denied.get(name) ?? []) {
      if (isSubsequence(sub, args)) {
        const shown = [name, ...sub].join(' ');
        return { rule: 'deny-list', why: `the operator denied '${shown}'`, command: shown };
      }
    }
    return undefined;
  }
}

/** Notes what a command sets that a later command's name may use: `x=sudo`, `set -- sudo id`. */
function learn(words: Word[], facts: LineFacts): void {
  if (words[0]?.text.includes('=') && words.every(isAssignment)) {
    for (const w of words) {
      const eq = w.text.indexOf('=');
      facts.vars.set(
        w.text.slice(0, eq),
        w.dynamic ? (w.raw ?? '').slice((w.raw ?? '').indexOf('=') + 1) : w.text.slice(eq + 1),
      );
    }
  } else if (words[0]?.text === 'set' && words[1]?.text === '--') {
    facts.positional = words.slice(2).map((w) => w.text);
  }
}

function isNumberLike(text: string): boolean {
  if (text === '') return false;
  for (const c of text) if (!((c >= '0' && c <= '9') || c === '.' || c === 's' || c === 'm' || c === 'h')) return false;
  return text[0] !== undefined && text[0] >= '0' && text[0] <= '9';
}

/** True when every word of `needle` appears in `haystack`, in order (`git push` in `git -C x push`). */
function isSubsequence(needle: string[], haystack: string[]): boolean {
  let at = 0;
  for (const word of haystack) if (at < needle.length && word === needle[at]) at++;
  return at === needle.length;
}

/**
 * Reads `DURABLE_AGENT_COMMAND_POLICY`: comma-separated `-<rule>` (turn a default rule off),
 * `none` (turn them all off) and `deny:<command>` (refuse a command, e.g. `deny:curl`,
 * `deny:git push`). Unknown entries throw an error naming the variable.
 */
export function policyFromEnv(env: NodeJS.ProcessEnv = process.env): PolicyConfig {
  const raw = env[POLICY_ENV_VAR] ?? '';
  const config: Required<PolicyConfig> = { disable: [], deny: [] };
  for (const item of raw.split(',').map((s) => s.trim())) {
    if (item === '') continue;
    // Only the documented spellings: `-all`, `deny: curl` or `NONE` are refused, not guessed at.
    if (item === 'none') config.disable.push('all');
    else if (/^-[a-z-]+$/.test(item) && item !== '-all') config.disable.push(item.slice(1));
    else if (/^deny:\S/.test(item)) config.deny.push(item.slice(5));
    else {
      throw new Error(
        `${POLICY_ENV_VAR}: cannot read '${item}'; use comma-separated -<rule>, none or deny:<command> ` +
          `(rules: ${DEFAULT_RULES.map((r) => r.name).join(', ')})`,
      );
    }
  }
  // Validate rule names now, with the variable named.
  try {
    new CommandPolicy([config]);
  } catch (err) {
    throw new Error(`${POLICY_ENV_VAR}: ${(err as Error).message}`);
  }
  return config;
}

/** The message of a refused command: the rule by name, why, and how an operator can change it. */
export function refusalMessage(refusal: PolicyRefusal): string {
  const what = refusal.command ? `'${refusal.command}' ` : '';
  return (
    `Error: command refused by the command policy, rule '${refusal.rule}': ${what}— ${refusal.why}. ` +
    `Nothing was run. (Operators change the policy with ${POLICY_ENV_VAR}; see docs/sandbox.md.)`
  );
}
