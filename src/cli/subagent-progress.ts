import type { EventsPage, RunEvent } from '../shared';
import { formatEvent } from './format';
import { visibleLine as one } from './terminal-text';

/**
 * Subagents in `run`/`follow` (docs/subagents.md#watching-a-tree): when the followed run reports
 * `subagent_started`, the child's own `events` are followed too, printed indented under it, until
 * the parent reports `subagent_finished` (the child's last events are read first, so they come
 * before that line). A grandchild is followed the same way, one level deeper. Bounded: at most
 * MAX_FOLLOWED runs at once and MAX_FOLLOW_DEPTH levels; a child id seen before (a cycle) or one
 * that cannot be read is said once and left alone.
 */

export const MAX_FOLLOWED = 16;
export const MAX_FOLLOW_DEPTH = 6;
/** Query failures in a row after which a child is no longer followed. */
const MAX_FAILURES = 3;

/** One child run's events, as a child prints them: one line each, the model's text by its first line. */
function childLines(event: RunEvent, runId: string): string[] {
  switch (event.kind) {
    case 'text':
    case 'answer': {
      const first = event.text.split('\n').find((l) => l.trim()) ?? '';
      return first ? [`“${one(first.length > 160 ? `${first.slice(0, 159)}…` : first)}”`] : [];
    }
    case 'approval_requested':
      // Forwarded to the top-level run, which shows it whole with the commands to decide it.
      return [`⏸ approval needed: ${one(event.name)} (tool call ${one(event.toolUseId)}), forwarded to the parent run`];
    case 'run_started':
      return [`● subagent run ${one(runId)} · model ${one(event.model)}`];
    default: {
      const line = formatEvent(event, runId);
      return line ? line.split('\n').filter((l) => l.trim() !== '') : [];
    }
  }
}

interface Child {
  workflowId: string;
  depth: number;
  cursor: number;
  failures: number;
}

export type FetchEvents = (workflowId: string, after: number) => Promise<EventsPage>;

export class SubagentProgress {
  private readonly children = new Map<string, Child>();
  private readonly seen = new Set<string>();

  constructor(
    private readonly out: (line: string) => void,
    private readonly fetch: FetchEvents,
    rootId: string,
  ) {
    this.seen.add(rootId);
  }

  /** Runs followed now (children and deeper). */
  get following(): string[] {
    return [...this.children.keys()];
  }

  /**
   * A page of the top-level run's events: printed by `print` in pieces, each subagent's own events
   * between its `subagent_started` and `subagent_finished`; then every running child is polled.
   */
  async page(events: RunEvent[], print: (events: RunEvent[]) => void): Promise<void> {
    await this.walk(events, print, 0);
    await this.poll();
  }

  /** Reads each followed child's new events and prints them under it. */
  async poll(): Promise<void> {
    for (const child of [...this.children.values()]) await this.read(child);
  }

  private async walk(events: RunEvent[], print: (events: RunEvent[]) => void, depth: number): Promise<void> {
    let from = 0;
    for (let i = 0; i < events.length; i++) {
      const event = events[i]!;
      if (event.kind !== 'subagent_started' && event.kind !== 'subagent_finished') continue;
      if (event.kind === 'subagent_finished') {
        print(events.slice(from, i));
        from = i;
        const child = this.children.get(event.workflowId);
        // Its last events come before the parent's line saying it ended.
        if (child) await this.read(child);
        this.drop(event.workflowId);
      } else {
        print(events.slice(from, i + 1));
        from = i + 1;
        this.follow(event.workflowId, depth + 1, depth);
      }
    }
    print(events.slice(from));
  }

  private follow(workflowId: string, depth: number, parentDepth: number): void {
    const say = (why: string) => this.out(`${indent(parentDepth + 1)}(${why})`);
    if (this.seen.has(workflowId)) return say(`not followed: run ${one(workflowId)} is already shown (a cycle)`);
    this.seen.add(workflowId);
    if (depth > MAX_FOLLOW_DEPTH) return say(`not followed: deeper than ${MAX_FOLLOW_DEPTH} levels`);
    if (this.children.size >= MAX_FOLLOWED) {
      return say(
        `not followed: ${MAX_FOLLOWED} subagents are followed already; durable-agent follow ${one(workflowId)}`,
      );
    }
    this.children.set(workflowId, { workflowId, depth, cursor: 0, failures: 0 });
  }

  /** A finished child, and everything followed under it. */
  private drop(workflowId: string): void {
    const child = this.children.get(workflowId);
    this.children.delete(workflowId);
    if (!child) return;
    for (const other of [...this.children.values()]) {
      if (other.workflowId.startsWith(`${workflowId}.`) && other.depth > child.depth)
        this.children.delete(other.workflowId);
    }
  }

  private async read(child: Child): Promise<void> {
    let page: EventsPage;
    try {
      page = await this.fetch(child.workflowId, child.cursor);
      child.failures = 0;
    } catch (e) {
      const notFound = (e as Error).name === 'WorkflowNotFoundError' || /not found/i.test((e as Error).message ?? '');
      if (notFound || ++child.failures >= MAX_FAILURES) {
        this.out(
          `${indent(child.depth)}(subagent ${one(child.workflowId)} not followed: ${one((e as Error).message?.split('\n')[0] ?? String(e))})`,
        );
        this.children.delete(child.workflowId);
      }
      return;
    }
    // A page from an earlier cursor (a replayed query) is not printed twice.
    const fresh = page.events.filter((e) => e.seq > child.cursor);
    child.cursor = Math.max(child.cursor, page.cursor);
    const prefix = indent(child.depth);
    await this.walk(
      fresh,
      (events) => {
        for (const event of events)
          for (const line of childLines(event, child.workflowId)) this.out(`${prefix}${line.trimStart()}`);
      },
      child.depth,
    );
  }
}

function indent(depth: number): string {
  return `${'    '.repeat(Math.max(0, depth - 1))}  │ `;
}
