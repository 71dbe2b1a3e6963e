import type { Message, ModelResponse, ToolChoice } from './messages';

/** Input of the `callModel` and `summarizeRun` activities. Tools travel by name; the worker resolves schemas. */
export interface CallModelInput {
  model: string;
  system?: string;
  messages: Message[];
  /** Tools enabled for the run; undefined means every tool the worker has. */
  toolNames?: string[];
  toolChoice?: ToolChoice;
  maxTokens: number;
}
export type CallModelOutput = ModelResponse;

export interface SummarizeRunInput extends Omit<CallModelInput, 'toolChoice'> {
  /** The closing user instruction, appended only to this request and never to the run's history. */
  instruction: string;
}
export interface SummarizeRunOutput {
  text: string;
  response: ModelResponse;
}

export interface RunToolInput {
  toolUseId: string;
  name: string;
  /** The arguments exactly as the model produced them; validated by the tool's zod schema in the activity. */
  input: unknown;
  workspace?: string;
}
export interface RunToolOutput {
  content: string;
  isError: boolean;
}
