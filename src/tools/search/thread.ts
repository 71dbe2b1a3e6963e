/**
 * Entry point of a search thread (a worker_threads Worker started by pool.ts). It runs one job at a
 * time and answers every request, whatever happens: a refused pattern or an unexpected error comes
 * back as `{ ok: false, message }`, never as an uncaught exception.
 */
import { parentPort } from 'node:worker_threads';
import { runJob } from './jobs';
import type { ThreadRequest, ThreadResponse } from './protocol';
import { PatternRefused } from './regex';

const port = parentPort;
if (!port) throw new Error('search/thread.ts must run in a worker thread');

port.on('message', (request: ThreadRequest) => {
  let response: ThreadResponse;
  try {
    response = { id: request.id, reply: { ok: true, value: runJob(request.job) } };
  } catch (error) {
    const message =
      error instanceof PatternRefused
        ? error.message
        : `The search failed: ${error instanceof Error ? error.message : String(error)}`;
    response = { id: request.id, reply: { ok: false, message } };
  }
  port.postMessage(response);
});
