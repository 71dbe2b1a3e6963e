/**
 * Entry point of an output-validator thread (a worker_threads Worker started by
 * output-check-pool.ts). It checks one schema or answer at a time and answers every request; an
 * error thrown by the validator comes back as a verdict, never as an uncaught exception.
 */
import { parentPort } from 'node:worker_threads';
import { cutChars } from '../shared/bounds';
import type { CheckOutputInput, CheckOutputOutput } from '../shared/output-schema';
import { checkOutput } from './output-validator';

/** A check posted to the thread. */
export interface OutputCheckRequest {
  id: number;
  input: CheckOutputInput;
}

/** Its verdict. */
export interface OutputCheckResponse {
  id: number;
  output: CheckOutputOutput;
}

const port = parentPort;
if (!port) throw new Error('output-check-thread.ts must run in a worker thread');

port.on('message', (request: OutputCheckRequest) => {
  let output: CheckOutputOutput;
  try {
    output = checkOutput(request.input);
  } catch (error) {
    const message = cutChars(error instanceof Error ? error.message : String(error), 1000);
    output =
      request.input.text === undefined
        ? { kind: 'bad_schema', message }
        : { kind: 'invalid', violations: [`the answer could not be checked: ${message}`] };
  }
  port.postMessage({ id: request.id, output } satisfies OutputCheckResponse);
});
