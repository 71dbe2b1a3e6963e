/**
 * Entry point of an output-validator thread (a worker_threads Worker started by
 * output-check-pool.ts). It checks one schema or answer at a time and answers every request; an
 * error thrown by the validator comes back as a verdict, never as an uncaught exception.
 */
import { parentPort } from 'node:worker_threads';
import { cutChars } from '../shared/bounds';
import type { CheckOutputInput, CheckOutputOutput } from '../shared/output-schema';
import { checkOutputFirst } from './output-validator';

/** A check posted to the thread. */
export interface OutputCheckRequest {
  id: number;
  input: CheckOutputInput;
}

/**
 * Its verdict. An answer that fails gets two: the first pass's (`final` false: it stopped at the
 * first error), then the one naming every violation; the pool keeps the first if the second is late.
 */
export interface OutputCheckResponse {
  id: number;
  output: CheckOutputOutput;
  final: boolean;
}

const port = parentPort;
if (!port) throw new Error('output-check-thread.ts must run in a worker thread');

function failed(input: CheckOutputInput, error: unknown): CheckOutputOutput {
  const message = cutChars(error instanceof Error ? error.message : String(error), 1000);
  return input.text === undefined
    ? { kind: 'bad_schema', message }
    : { kind: 'invalid', violations: [`the answer could not be checked: ${message}`] };
}

port.on('message', (request: OutputCheckRequest) => {
  let output: CheckOutputOutput;
  try {
    const first = checkOutputFirst(request.input);
    output = first.output;
    if (first.detail) {
      port.postMessage({ id: request.id, output, final: false } satisfies OutputCheckResponse);
      try {
        output = first.detail();
      } catch {
        // The first pass's verdict stands.
      }
    }
  } catch (error) {
    output = failed(request.input, error);
  }
  port.postMessage({ id: request.id, output, final: true } satisfies OutputCheckResponse);
});
