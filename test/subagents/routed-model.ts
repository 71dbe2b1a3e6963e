import type { ModelCallContext, ModelProvider } from '../../src/models/types';
import type { ModelRequest, ModelResponse } from '../../src/shared';

/**
 * One model for a tree of runs: each call goes to the provider whose key starts the run's first
 * user message (its prompt), so a parent and its parallel subagents each play their own script
 * whatever order their calls arrive in.
 */
export class RoutedModel implements ModelProvider {
  readonly name = 'routed';
  constructor(private readonly routes: Record<string, ModelProvider>) {}

  call(request: ModelRequest, ctx: ModelCallContext): Promise<ModelResponse> {
    const first = request.messages[0];
    const prompt = typeof first?.content === 'string' ? first.content : JSON.stringify(first?.content ?? '');
    const key = Object.keys(this.routes)
      .sort((a, b) => b.length - a.length)
      .find((k) => prompt.startsWith(k));
    if (key === undefined)
      throw new Error(`no script for a run whose prompt starts ${JSON.stringify(prompt.slice(0, 80))}`);
    return this.routes[key]!.call(request, ctx);
  }
}
