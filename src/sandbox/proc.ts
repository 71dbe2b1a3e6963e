import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/**
 * Reading Linux's /proc: which processes exist, their process group, and their PID namespace.
 * Every read tolerates the process exiting under it (it is then simply not listed).
 */

export interface ProcStat {
  pid: number;
  /** Single-letter state; `Z` is a zombie (dead, not yet reaped). */
  state: string;
  ppid: number;
  pgrp: number;
  /** Start time in clock ticks since boot: with the pid, it identifies one process for good. */
  startTime: string;
}

/** Parses /proc/<pid>/stat; undefined when the process is gone or /proc is not Linux's. */
export function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name is parenthesised and may itself contain spaces and parentheses: split after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields from `state` on: state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt
  // utime stime cutime cstime priority nice num_threads itrealvalue starttime …
  const [state, ppid, pgrp] = fields;
  const startTime = fields[19];
  if (state === undefined || ppid === undefined || pgrp === undefined || startTime === undefined) return undefined;
  return { pid, state, ppid: Number(ppid), pgrp: Number(pgrp), startTime };
}

/** Every pid /proc lists now. */
export function listPids(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry);
    if (Number.isInteger(pid) && pid > 0) pids.push(pid);
  }
  return pids;
}

/** The PID namespace a process lives in (`pid:[4026532…]`), or undefined when it is gone. */
export function pidNamespaceOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/pid`);
  } catch {
    return undefined;
  }
}

/** Direct children of a process (its main thread's), from /proc/<pid>/task/<pid>/children. */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter((s) => s !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/** Live processes whose PID namespace is `namespace`. */
export function namespaceMembers(namespace: string): number[] {
  const members: number[] = [];
  for (const pid of listPids()) {
    if (pidNamespaceOf(pid) !== namespace) continue;
    const stat = readStat(pid);
    if (stat && stat.state !== 'Z') members.push(pid);
  }
  return members;
}

/** True when /proc can tell us about processes (Linux). */
export function hasProcfs(): boolean {
  return readStat(process.pid) !== undefined;
}
