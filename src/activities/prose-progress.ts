import type { ModelCallContext, ModelProgressEvent } from '../models/types';
import { ProseStream } from '../shared/text-protocol-stream';

/**
 * A model call's progress under the text protocol (`toolProtocol: 'xml'`): its streamed text
 * carries only the model's words, never the `<tool_code>` block, which followers see as a tool
 * call once it runs (docs/live-output.md). Thinking passes as it is; native tool calling is left alone.
 */
export function proseProgress<T extends Pick<ModelCallContext, 'progress'>>(
  toolProtocol: string | undefined,
  context: T,
): T {
  const progress = context.progress;
  if (toolProtocol !== 'xml' || !progress) return context;
  const prose = new ProseStream((delta) => progress({ kind: 'text', delta }));
  return {
    ...context,
    progress: (event: ModelProgressEvent) => {
      if ((event as Partial<ModelProgressEvent> | null)?.kind === 'text' && typeof event.delta === 'string') {
        prose.push(event.delta);
      } else {
        progress(event);
      }
    },
  };
}
