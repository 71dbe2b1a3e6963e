import { Context } from '@temporalio/activity';
import type { CallModelInput, CallModelOutput, SummarizeRunInput, SummarizeRunOutput } from '../shared/activity-io';
import type { ContentBlock, Message } from '../shared/messages';
import { checkModelResponse } from './response-check';
import { modelRequest } from './model-request';
import { modelProgress } from './model-progress';
import { withCancelWatch } from './cancel-watch';
import { proseProgress } from './prose-progress';
import { onShutdown } from './shutdown';
import type { ActivityEnv } from './environment';

/** The model activities: `callModel` (one turn) and `summarizeRun` (a closing summary). */
export function createModelCalls(env: ActivityEnv) {
  const { deps, conversations, models, cancelWatchMs, toolSpecs, sandboxWarning } = env;
  const offersBash = (input: Pick<CallModelInput, 'toolNames'>) =>
    deps.tools.get('bash') !== undefined && (input.toolNames === undefined || input.toolNames.includes('bash'));

  async function callModel(input: CallModelInput): Promise<CallModelOutput> {
    const ctx = Context.current();
    const messages = conversations.materialize(input.conversation);
    const { request, system } = modelRequest(input, messages, conversations, toolSpecs(input), input.toolChoice);
    const { beatNow, ...progress } = modelProgress(ctx, input.model, { label: 'model call' });
    const response = checkModelResponse(
      await onShutdown(ctx, 'model call', deps.workerQueue, () =>
        withCancelWatch(
          ctx,
          beatNow,
          () =>
            models(input.model).call(request, {
              signal: ctx.cancellationSignal,
              ...proseProgress(input.toolProtocol, progress),
              ...(input.admission ? { admission: input.admission } : {}),
            }),
          cancelWatchMs,
        ),
      ),
    );
    // The workflow appends exactly this assistant turn; the cache does the same so the next delta fits.
    conversations.commit(
      input.conversation.id,
      messages,
      input.conversation.headHash,
      { role: 'assistant', content: response.content },
      system,
    );
    const localTools = [
      ...deps.tools.localNames(input.toolNames),
      ...deps.tools.localNames(input.extraToolNames ?? []),
    ];
    return {
      ...response,
      ...(deps.workerQueue ? { workerQueue: deps.workerQueue } : {}),
      ...(localTools.length ? { localTools } : {}),
      ...(offersBash(input) && sandboxWarning() ? { sandboxWarning: sandboxWarning() } : {}),
    };
  }

  /**
   * A closing call: the summary at the iteration limit, or the summary that compacts a long
   * conversation. Tools stay defined (the history holds tool_use and tool_result blocks, which the
   * API rejects without definitions) but `tool_choice: none` forbids new calls. The instruction is
   * added to this request only; neither the run's history nor the cache changes.
   */
  async function summarizeRun(input: SummarizeRunInput): Promise<SummarizeRunOutput> {
    const ctx = Context.current();
    const messages = conversations.materialize(input.conversation);
    const { request } = modelRequest(
      input,
      withClosingInstruction(messages, input.instruction),
      conversations,
      toolSpecs(input),
      { type: 'none' },
    );
    const { beatNow, ...progress } = modelProgress(ctx, input.model, { label: 'closing summary' });
    const response = checkModelResponse(
      await onShutdown(ctx, 'closing summary', deps.workerQueue, () =>
        withCancelWatch(
          ctx,
          beatNow,
          () =>
            models(input.model).call(request, {
              signal: ctx.cancellationSignal,
              ...progress,
              ...(input.admission ? { admission: input.admission } : {}),
            }),
          cancelWatchMs,
        ),
      ),
    );
    // The text is in the response: returning it twice would double the result's size.
    return { response };
  }

  return { callModel, summarizeRun };
}

/** Appends the instruction to a copy of the conversation, merging into a trailing user turn. */
function withClosingInstruction(messages: Message[], instruction: string): Message[] {
  const copy = messages.slice();
  const last = copy[copy.length - 1];
  if (last?.role === 'user') {
    const blocks: ContentBlock[] =
      typeof last.content === 'string' ? [{ type: 'text', text: last.content }] : [...last.content];
    blocks.push({ type: 'text', text: instruction });
    copy[copy.length - 1] = { role: 'user', content: blocks };
  } else {
    copy.push({ role: 'user', content: instruction });
  }
  return copy;
}
