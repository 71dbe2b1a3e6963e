/**
 * Finding (issue 44, low, L1): "41 of 90 command-policy bypass spellings of the last round still pass".
 * The last round's list is not in the repository; this table is its restatement, grown to 112
 * spellings of refused commands (quoting, escapes, `$'…'`, paths, wrappers, builtins, eval, shells,
 * substitutions, variables, braces, globs, grouping). Before this change 21 of them passed the
 * policy (the variables, substitutions, braces, globs, and shells fed on stdin); now none does. The
 * policy stays a tripwire, not the boundary (docs/sandbox.md): a name read from a file or built by a
 * program still passes, and the sandbox confines what it runs. The second table: commands that
 * must keep running.
 */
import { CommandPolicy } from '../../src/sandbox';

const BYPASS_CORPUS: string[] = [
  // quoting and escaping of the name
  `'sudo' id`,
  `"sudo" id`,
  `s'u'do id`,
  `s"u"do id`,
  `\\sudo id`,
  `s\\udo id`,
  `su\\do id`,
  `$'sudo' id`,
  `$'\\x73udo' id`,
  `$'\\163udo' id`,
  `$'\\u0073udo' id`,
  `$"sudo" id`,
  `"s"'u'do id`,
  `''sudo id`,
  `sudo'' id`,
  `""sudo id`,
  `s""udo id`,
  // paths
  `/usr/bin/sudo id`,
  `/bin/../usr/bin/sudo id`,
  `./sudo id`,
  `//usr//bin//sudo id`,
  `/usr/bin/./sudo id`,
  `"/usr/bin/sudo" id`,
  `/usr/bin/su"do" id`,
  // wrappers and builtins
  `env sudo id`,
  `env -i sudo id`,
  `env -u X sudo id`,
  `env A=1 sudo id`,
  `command sudo id`,
  `command -p sudo id`,
  `builtin sudo id`,
  `exec sudo id`,
  `exec -a x sudo id`,
  `nohup sudo id`,
  `nice -n 5 sudo id`,
  `timeout 5 sudo id`,
  `timeout -s KILL 5 sudo id`,
  `xargs sudo id`,
  `echo id | xargs sudo`,
  `time sudo id`,
  `time -p sudo id`,
  `stdbuf -o0 sudo id`,
  `setsid sudo id`,
  `find . -exec sudo id \\;`,
  `nohup nice env sudo id`,
  `busybox sudo id`,
  `flock /tmp/x sudo id`,
  // eval and shells
  `eval sudo id`,
  `eval 'sudo id'`,
  `eval "sudo id"`,
  `bash -c 'sudo id'`,
  `sh -c "sudo id"`,
  `bash -lc 'sudo id'`,
  `bash -c -- 'sudo id'`,
  `/bin/bash -c 'sudo id'`,
  `eval "$(echo sudo id)"`,
  `bash <<< 'sudo id'`,
  `echo 'sudo id' | bash`,
  `echo sudo id | sh`,
  `bash -c "eval 'sudo id'"`,
  // substitution and expansion
  `$(echo sudo) id`,
  '`echo sudo` id',
  `$(printf sudo) id`,
  `x=sudo; $x id`,
  `x=sudo; \${x} id`,
  `x=su; \${x}do id`,
  `\${X:-sudo} id`,
  `\${X-sudo} id`,
  `{sudo,id}`,
  `{sudo,} id`,
  `s{u,}do id`,
  `su?o id`,
  `su[d]o id`,
  `/usr/bin/su* id`,
  `$(which sudo) id`,
  `"$(command -v sudo)" id`,
  `a=(sudo id); "\${a[@]}"`,
  `set -- sudo id; "$@"`,
  `alias s=sudo; s id`,
  `f() { sudo "$@"; }; f id`,
  `sudo() { :; }; \\sudo id`,
  // reserved words and grouping
  `{ sudo id; }`,
  `(sudo id)`,
  `! sudo id`,
  `if true; then sudo id; fi`,
  `true && sudo id`,
  `false || sudo id`,
  `true; sudo id`,
  `true | sudo id`,
  `coproc sudo id`,
  `while sudo id; do break; done`,
  `case x in x) sudo id;; esac`,
  `for i in 1; do sudo id; done`,
  `time { sudo id; }`,
  // the other rules
  `rm -rf /`,
  `rm -r -f /`,
  `"rm" -rf /`,
  `rm -rf "/"`,
  `rm -rf /*`,
  `\\rm -rf /`,
  `command rm -rf /`,
  `rm -rf //`,
  `rm -rf ~`,
  `rm -fr ~/`,
  `dd if=/dev/zero of=/dev/sda`,
  `"dd" of=/dev/sda`,
  `cat x > /dev/sda`,
  `cat x >"/dev/sda"`,
  `mkfs.ext4 /dev/sda1`,
  `/sbin/mkfs /dev/sda1`,
  `systemctl reboot`,
  `env systemctl poweroff`,
];

/** Dynamic names and shells fed on stdin that name nothing refused: still allowed. */
const ALLOWED: string[] = [
  `x=ls; $x -la`,
  `\${PYTHON:-python3} -c 'print(1)'`,
  `"$(command -v git)" status`,
  `ls {a,b}.txt`,
  `./build-*.sh`,
  `echo 'ls -la' | bash`,
  `bash <<< 'echo hi'`,
  `alias ll='ls -l'`,
  `set -- git status; "$@"`,
  `eval "$(echo echo hi)"`,
  `grep -r sudo .`,
  `echo sudo is refused here`,
  `$EDITOR notes.txt`,
  `s=/usr/bin/*; echo $s`,
];

const policy = new CommandPolicy();

test.each(BYPASS_CORPUS)('the bypass spelling %s is refused', (command) => {
  expect(policy.check(command)).toBeDefined();
});

test.each(ALLOWED)('the command %s still runs', (command) => {
  expect(policy.check(command)).toBeUndefined();
});

test('a long glob or brace name is checked in linear time', () => {
  const started = Date.now();
  expect(policy.check(`${'*a'.repeat(20_000)} x`)).toBeUndefined();
  expect(policy.check(`${'{a,b}'.repeat(10_000)} x`)).toBeUndefined();
  expect(policy.check(`${'$(echo '.repeat(2_000)}sudo${')'.repeat(2_000)} x`)).toBeDefined();
  expect(Date.now() - started).toBeLessThan(2_000);
});
