import type { ModelRequest, Usage } from '../shared/messages';

/** Characters per token before any calibration: the usual figure for English text and JSON. */
export const CHARS_PER_TOKEN = 4;
/** What an image or document block is counted as before calibration (base64 text says nothing of its tokens). */
export const MEDIA_BLOCK_TOKENS = 1600;
/** Calibration ratios are kept within these bounds: one odd answer must not make the estimate absurd. */
export const RATIO_BOUNDS = { min: 0.05, max: 20 } as const;
/** Runs whose calibration is kept (least recently used dropped first). */
export const MAX_CALIBRATED_RUNS = 10_000;
/** Weight of the newest answer in a run's calibration. */
const LEARN_WEIGHT = 0.5;

/**
 * The request's size in tokens before calibration: its text (system, messages, tool definitions) at
 * CHARS_PER_TOKEN, media blocks at MEDIA_BLOCK_TOKENS each.
 */
export function rawTokenEstimate(request: Pick<ModelRequest, 'system' | 'messages' | 'tools'>): number {
  let chars = (request.system?.length ?? 0) + JSON.stringify(request.tools ?? []).length;
  let media = 0;
  for (const message of request.messages) {
    if (typeof message.content === 'string') {
      chars += message.content.length;
      continue;
    }
    for (const block of message.content) {
      const type = (block as { type?: unknown }).type;
      if (type === 'image' || type === 'document') media += 1;
      else chars += JSON.stringify(block).length;
    }
  }
  return Math.ceil(chars / CHARS_PER_TOKEN) + media * MEDIA_BLOCK_TOKENS;
}

/** The input tokens a provider's rate limit counts: Anthropic does not count cache reads (most models). */
export function ratedInputTokens(usage: Usage): number {
  return usage.inputTokens + (usage.cacheCreationInputTokens ?? 0);
}

/**
 * Turns a raw estimate into what the provider will count, per run: the ratio of what the provider
 * reported to what was estimated, learned from each of the run's answers (it captures the
 * tokenizer, and prompt caching, which makes a long conversation cost far less than its size). A run
 * without answers yet uses the ratio all runs showed last.
 */
export class TokenCalibration {
  private readonly runs = new Map<string, { ratio: number; output: number }>();
  private shared = 1;
  private sharedOutput = 256;

  /** Input tokens the call is expected to count for. */
  input(run: string, raw: number): number {
    const ratio = this.touch(run)?.ratio ?? this.shared;
    return Math.max(1, Math.ceil(raw * ratio));
  }

  /** Output tokens expected: the run's recent answers' size, at most `maxTokens`. */
  output(run: string, maxTokens: number): number {
    const output = this.touch(run)?.output ?? this.sharedOutput;
    return Math.max(1, Math.min(maxTokens, Math.ceil(output)));
  }

  /** A call's answer: what it was estimated at (raw) and what the provider reported. */
  learn(run: string, raw: number, usage: Usage): void {
    if (raw <= 0) return;
    const rated = ratedInputTokens(usage);
    const sample = clamp(rated / raw);
    const held = this.runs.get(run);
    const ratio = held ? held.ratio + LEARN_WEIGHT * (sample - held.ratio) : sample;
    const output = held ? held.output + LEARN_WEIGHT * (usage.outputTokens - held.output) : usage.outputTokens;
    this.runs.delete(run);
    this.runs.set(run, { ratio, output });
    this.shared = ratio;
    this.sharedOutput = output;
    if (this.runs.size > MAX_CALIBRATED_RUNS) this.runs.delete(this.runs.keys().next().value as string);
  }

  private touch(run: string) {
    const held = this.runs.get(run);
    if (held) {
      this.runs.delete(run);
      this.runs.set(run, held);
    }
    return held;
  }
}

function clamp(ratio: number): number {
  if (!Number.isFinite(ratio)) return 1;
  return Math.min(RATIO_BOUNDS.max, Math.max(RATIO_BOUNDS.min, ratio));
}
