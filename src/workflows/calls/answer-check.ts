import { ApplicationFailure, proxyLocalActivities, type ActivityInterfaceFor } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { agentActivities } from './activity-proxy';
import { ErrorTypes } from '../../shared/constants';
import {
  MAX_OUTPUT_CORRECTIONS,
  OUTPUT_INVALID_ERROR,
  outputCorrection,
  type OutputSchema,
} from '../../shared/output-schema';
import type { RunEventInput } from '../../shared/run';
import type { Conversation } from '../run/conversation';
import { failureMessage, failureType, stopping } from './failures';
import { LoopExit } from '../run/loop-exit';

/** What the loop does with a final answer of a run with `outputSchema`. */
export type AnswerVerdict =
  /** Valid: `text` is its JSON text, which the run answers with. */
  | { kind: 'valid'; text: string }
  /** Invalid: a corrective message was appended (`exit` undefined: the loop goes on), or the run ends. */
  | { kind: 'invalid'; exit: LoopExit | undefined };

/**
 * Typed answers (docs/output.md). The validator (ajv) is Node code, so it runs in a local activity
 * (`checkOutput`) whose result history records: replay takes the verdicts from there. The schema is
 * checked once at run start (a schema that is not valid JSON Schema fails the run, non-retryably);
 * every final answer is checked; one that does not match gets up to MAX_OUTPUT_CORRECTIONS corrective
 * turns naming the violations, then the run ends `failed` with them. Only runs with `outputSchema`
 * schedule any of this, so histories recorded without it replay unchanged.
 */
export class AnswerCheck {
  /** Corrective turns since the last valid answer (a session's every answer gets its own). */
  private corrections = 0;
  /** The last valid answer's JSON text and value: the result's `output` when it is the final text. */
  private valid: { text: string; value: unknown } | undefined;
  private readonly activities: ActivityInterfaceFor<Pick<Activities, 'checkOutput'>>;

  constructor(
    readonly schema: OutputSchema,
    private readonly conversation: Conversation,
    private readonly emit: (event: RunEventInput) => void,
  ) {
    this.activities = agentActivities(
      proxyLocalActivities<Pick<Activities, 'checkOutput'>>({
        startToCloseTimeout: '30 seconds',
        // A check that finds the validator busy with other runs fails retryably: keep retrying it with
        // backoff, a bounded few minutes (src/activities/output-check-pool.ts).
        retry: {
          initialInterval: '1 second',
          backoffCoefficient: 2,
          maximumInterval: '20 seconds',
          maximumAttempts: 10,
        },
      }),
    );
  }

  /**
   * At run start: a schema that is not valid JSON Schema fails the run with the validator's message;
   * a check that cannot run (after the retries) ends it `failed`, saying so.
   */
  async checkSchema(): Promise<LoopExit | undefined> {
    let checked;
    try {
      checked = await this.activities.checkOutput.executeWithOptions({ summary: 'check outputSchema' }, [
        { schema: this.schema },
      ]);
    } catch (err) {
      if (stopping(err)) throw err;
      return new LoopExit('failed', '', {
        type: failureType(err),
        message: `outputSchema could not be checked: ${failureMessage(err)}`,
      });
    }
    if (checked.kind === 'bad_schema') {
      throw ApplicationFailure.nonRetryable(
        `Invalid run input: outputSchema is not valid JSON Schema: ${checked.message}`,
        ErrorTypes.InvalidInput,
      );
    }
    return undefined;
  }

  /** Checks a final answer against the schema; a check that cannot run ends the run `failed`, saying so. */
  async check(text: string): Promise<AnswerVerdict> {
    let checked;
    try {
      checked = await this.activities.checkOutput.executeWithOptions({ summary: 'check answer · outputSchema' }, [
        { schema: this.schema, text },
      ]);
    } catch (err) {
      if (stopping(err)) throw err;
      return {
        kind: 'invalid',
        exit: new LoopExit('failed', text, {
          type: failureType(err),
          message: `the answer could not be checked against outputSchema: ${failureMessage(err)}`,
        }),
      };
    }
    if (checked.kind === 'valid') {
      this.corrections = 0;
      this.valid = { text: checked.json, value: JSON.parse(checked.json) as unknown };
      return { kind: 'valid', text: checked.json };
    }
    const violations =
      checked.kind === 'invalid' ? checked.violations : [`the schema no longer compiles: ${checked.kind}`];
    if (this.corrections >= MAX_OUTPUT_CORRECTIONS) {
      return {
        kind: 'invalid',
        exit: new LoopExit('failed', text, {
          type: OUTPUT_INVALID_ERROR,
          message:
            `the final answer does not match outputSchema after ${this.corrections} corrective ` +
            `turn${this.corrections === 1 ? '' : 's'}: ${violations.join('; ')}`,
        }),
      };
    }
    this.corrections += 1;
    this.emit({
      kind: 'notice',
      message: `the answer does not match outputSchema (${violations.length} violation${violations.length === 1 ? '' : 's'}); asking the model to correct it`,
    });
    this.conversation.append({ role: 'user', content: outputCorrection(violations) });
    return { kind: 'invalid', exit: undefined };
  }

  /** The parsed answer, when `finalText` is the last answer that matched the schema. */
  outputFor(finalText: string): unknown {
    return this.valid !== undefined && this.valid.text === finalText ? this.valid.value : undefined;
  }
}
