import type { Client } from '@temporalio/client';
import type { ServerResponse } from 'node:http';
import { getRun } from '../client';
import { withWholeApprovalInputs } from '../cli/approval-input';
import { followRun, type FollowEvent } from '../plugin/follow-run';
import type { RunEvent } from '../shared';

/**
 * Live updates for open run pages, over server-sent events. One follower per run however many
 * pages show it: the same loop as `durable-agent follow` (a `describe()` per look, not billable;
 * the `events` query only when the run's history moved), so a page left open costs what `follow`
 * costs, and ten pages on one run cost the same.
 */

/** Runs followed at once; a page on one more run is told to reload later (server memory stays bounded). */
export const MAX_FOLLOWED_RUNS = 32;
/** Pages listening at once, over all runs. */
export const MAX_LISTENERS = 256;
/** Events kept per run for pages that open later (the newest ones; approvals are kept apart). */
const MAX_KEPT_EVENTS = 500;
/** A follower with no page left stops after this long (a reload reconnects within it). */
const IDLE_STOP_MS = 5_000;
/** A comment line this often keeps proxies from closing a quiet stream. */
const KEEPALIVE_MS = 15_000;

interface Feed {
  listeners: Set<ServerResponse>;
  events: RunEvent[];
  /** Approval requests still waiting (by tool use id): kept whatever the event window drops. */
  approvals: Map<string, RunEvent>;
  partial: FollowEvent | undefined;
  ended: boolean;
  abort: AbortController;
  idle?: NodeJS.Timeout;
}

export class LiveHub {
  private readonly feeds = new Map<string, Feed>();
  private listeners = 0;
  private readonly keepalive: NodeJS.Timeout;

  constructor(
    private readonly client: Client,
    private readonly intervalMs = 500,
  ) {
    this.keepalive = setInterval(() => {
      for (const feed of this.feeds.values()) for (const res of feed.listeners) res.write(': keepalive\n\n');
    }, KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** Streams the run's events to `res` until the run ends or the page goes away. */
  subscribe(workflowId: string, res: ServerResponse): void {
    let feed = this.feeds.get(workflowId);
    if ((!feed && this.feeds.size >= MAX_FOLLOWED_RUNS) || this.listeners >= MAX_LISTENERS) {
      res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8', 'retry-after': '10' });
      res.end(
        `the inspector follows at most ${MAX_FOLLOWED_RUNS} runs for ${MAX_LISTENERS} pages at once; close some pages`,
      );
      return;
    }
    res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-store',
      'x-accel-buffering': 'no',
    });
    if (!feed) feed = this.start(workflowId);
    if (feed.idle) clearTimeout(feed.idle);
    feed.idle = undefined;
    feed.listeners.add(res);
    this.listeners++;
    for (const event of feed.events) send(res, 'run', event);
    for (const event of feed.approvals.values()) if (!feed.events.includes(event)) send(res, 'run', event);
    if (feed.partial) send(res, 'partial', feed.partial);
    if (feed.ended) send(res, 'end', {});
    res.on('close', () => {
      if (!feed.listeners.delete(res)) return;
      this.listeners--;
      if (feed.listeners.size === 0 && !feed.ended) {
        feed.idle = setTimeout(() => this.stop(workflowId), IDLE_STOP_MS);
        feed.idle.unref();
      }
    });
  }

  /** Runs followed now (for tests of the bound). */
  get followed(): number {
    return this.feeds.size;
  }

  close(): void {
    clearInterval(this.keepalive);
    for (const id of [...this.feeds.keys()]) this.stop(id);
  }

  private start(workflowId: string): Feed {
    const feed: Feed = {
      listeners: new Set(),
      events: [],
      approvals: new Map(),
      partial: undefined,
      ended: false,
      abort: new AbortController(),
    };
    this.feeds.set(workflowId, feed);
    void this.follow(workflowId, feed);
    return feed;
  }

  private async follow(workflowId: string, feed: Feed): Promise<void> {
    try {
      const events = followRun(getRun(this.client, workflowId), {
        partial: true,
        intervalMs: this.intervalMs,
        signal: feed.abort.signal,
      });
      for await (const raw of events) {
        if (raw.kind === 'partial') {
          feed.partial = raw;
          this.broadcast(feed, 'partial', raw);
          continue;
        }
        const [event] = raw.kind === 'approval_requested' ? await wholeInputs(this.client, workflowId, raw) : [raw];
        if (!event) continue;
        if (event.kind === 'model_call_finished' || event.kind === 'model_call_failed') feed.partial = undefined;
        if (event.kind === 'approval_requested') feed.approvals.set(event.toolUseId, event);
        if (event.kind === 'approval_resolved') feed.approvals.delete(event.toolUseId);
        feed.events.push(event);
        if (feed.events.length > MAX_KEPT_EVENTS) feed.events.splice(0, feed.events.length - MAX_KEPT_EVENTS);
        this.broadcast(feed, 'run', event);
      }
    } catch (error) {
      if (!feed.abort.signal.aborted)
        this.broadcast(feed, 'problem', { message: (error as Error).message ?? String(error) });
    }
    if (feed.abort.signal.aborted) return;
    feed.ended = true;
    feed.partial = undefined;
    this.broadcast(feed, 'end', {});
    for (const res of feed.listeners) res.end();
    // A page that opens after the end reads the closed run from history: the feed is not kept.
    this.feeds.delete(workflowId);
  }

  private stop(workflowId: string): void {
    const feed = this.feeds.get(workflowId);
    if (!feed) return;
    feed.abort.abort();
    if (feed.idle) clearTimeout(feed.idle);
    for (const res of feed.listeners) res.end();
    this.listeners -= feed.listeners.size;
    feed.listeners.clear();
    this.feeds.delete(workflowId);
  }

  private broadcast(feed: Feed, name: string, data: unknown): void {
    for (const res of feed.listeners) send(res, name, data);
  }
}

async function wholeInputs(client: Client, workflowId: string, event: RunEvent): Promise<RunEvent[]> {
  return withWholeApprovalInputs(client.workflow, workflowId, [event]).catch(() => [event]);
}

function send(res: ServerResponse, name: string, data: unknown): void {
  if (!res.writableEnded) res.write(`event: ${name}\ndata: ${JSON.stringify(data)}\n\n`);
}
