import type { ExitReason } from '../../shared/run';
import { ErrorTypes } from '../../shared/constants';

/** Ends the loop with a given exit reason; never escapes the workflow. */
export class LoopExit {
  constructor(
    readonly exitReason: ExitReason,
    readonly finalText: string,
    readonly error?: { type: string; message: string },
  ) {}

  static interrupted(interrupt: { reason?: string }, lastText: string): LoopExit {
    return new LoopExit('interrupted', lastText, {
      type: ErrorTypes.Interrupted,
      message: interrupt.reason ? `interrupted: ${interrupt.reason}` : 'interrupted',
    });
  }
}

/**
 * What a step of the iteration boundary (steps/boundary.ts) tells the loop: end the run with this exit,
 * go round `again` from the first check, or `go_on` with the next step.
 */
export type Next = LoopExit | 'again' | 'go_on';
