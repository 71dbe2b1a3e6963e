import type { Client } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers';
import { RUN_STATUSES } from '../cli/list-flags';
import { isRunStatus, listQuery, toListing, type RunListing } from '../cli/list-command';
import { BadRequest } from './errors';

/**
 * The run list: one page of the visibility API at a time (its own page token), so a namespace
 * with 10,000 runs opens as fast as one with ten. Subagents are folded under their parent (the
 * list shows top-level runs; a parent's children are a query of their own).
 */

/** A page is at most this many runs: the visibility store answers a small page quickly. */
export const MAX_PAGE_SIZE = 100;
export const DEFAULT_PAGE_SIZE = 50;
/** Characters a text filter may use: they go into a visibility query, so nothing that could end a literal. */
const TEXT_FILTER = /^[\w.:@/+-]{1,100}$/;
/** Page tokens are opaque bytes from the server; this bounds what a client may hand back. */
const MAX_TOKEN_CHARS = 4_096;

export interface RunListRow extends RunListing {
  parentWorkflowId: string | null;
  /** A fork's origin (memo `forkedFrom`). */
  forkedFrom: { workflowId: string; runId?: string; turn?: number } | null;
}

export interface RunListPage {
  query: string;
  runs: RunListRow[];
  /** Hand back as `pageToken` for the next page; null on the last page. */
  nextPageToken: string | null;
}

export interface RunListRequest {
  status?: string;
  text?: string;
  /** Only the subagents this run started. */
  parent?: string;
  pageToken?: string;
  pageSize?: number;
}

/** Reads the query string of `/api/runs`, refusing what it cannot use with a message naming what it takes. */
export function parseRunListRequest(params: URLSearchParams): RunListRequest {
  const request: RunListRequest = {};
  const status = params.get('status') ?? '';
  if (status) {
    if (!isRunStatus(status))
      throw new BadRequest(`status must be one of: ${RUN_STATUSES.join(', ')}; got '${status.slice(0, 40)}'`);
    request.status = status;
  }
  const text = params.get('text')?.trim() ?? '';
  if (text) {
    if (!TEXT_FILTER.test(text)) {
      throw new BadRequest(
        'text must be 1-100 letters, digits or . _ : @ / + - (it matches the start of a run id or model)',
      );
    }
    request.text = text;
  }
  const parent = params.get('parent') ?? '';
  if (parent) {
    if (parent.length > 1000 || /['"\\\n]/.test(parent))
      throw new BadRequest('parent must be a run id without quotes or backslashes');
    request.parent = parent;
  }
  const token = params.get('pageToken') ?? '';
  if (token) {
    if (token.length > MAX_TOKEN_CHARS || !/^[A-Za-z0-9+/=_-]+$/.test(token))
      throw new BadRequest('pageToken must be the token a previous page returned');
    request.pageToken = token;
  }
  const size = params.get('pageSize');
  if (size !== null) {
    const n = Number(size);
    if (!Number.isInteger(n) || n < 1 || n > MAX_PAGE_SIZE)
      throw new BadRequest(`pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}`);
    request.pageSize = n;
  }
  return request;
}

/** The visibility query for a request: agent runs (top level unless `parent`), narrowed by status and text. */
export function runListQuery(request: RunListRequest): string {
  const parts = [listQuery({ status: request.status, topLevel: request.parent === undefined })];
  if (request.parent !== undefined) parts.push(`ParentWorkflowId = '${request.parent}'`);
  if (request.text)
    parts.push(`(WorkflowId STARTS_WITH '${request.text}' OR DurableAgentModel STARTS_WITH '${request.text}')`);
  return parts.join(' AND ');
}

export async function listRunPage(client: Client, request: RunListRequest): Promise<RunListPage> {
  const query = runListQuery(request);
  const response = await client.workflowService.listWorkflowExecutions({
    namespace: client.options.namespace,
    query,
    pageSize: request.pageSize ?? DEFAULT_PAGE_SIZE,
    ...(request.pageToken ? { nextPageToken: Buffer.from(request.pageToken, 'base64url') } : {}),
  });
  const runs: RunListRow[] = [];
  for (const raw of response.executions ?? []) {
    const info = await executionInfoFromRaw(raw, client.options.loadedDataConverter, raw, client.options.namespace);
    runs.push({
      ...toListing(info),
      parentWorkflowId: info.parentExecution?.workflowId ?? null,
      forkedFrom: forkOrigin(info.memo?.['forkedFrom']),
    });
  }
  const token = response.nextPageToken;
  return { query, runs, nextPageToken: token && token.length ? Buffer.from(token).toString('base64url') : null };
}

/** The memo `forkedFrom` as docs/checkpoints.md describes it, or null when absent or malformed. */
export function forkOrigin(value: unknown): RunListRow['forkedFrom'] {
  if (value === null || typeof value !== 'object') return null;
  const v = value as Record<string, unknown>;
  if (typeof v['workflowId'] !== 'string' || !v['workflowId']) return null;
  return {
    workflowId: v['workflowId'],
    ...(typeof v['runId'] === 'string' ? { runId: v['runId'] } : {}),
    ...(typeof v['turn'] === 'number' ? { turn: v['turn'] } : {}),
  };
}
