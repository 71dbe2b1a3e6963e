/**
 * Defaults that change behaviour live here, in one place. Pure values only: this module is
 * imported by workflow code (deterministic sandbox) as well as by the worker and the client.
 */

/** Task queue shared by the worker and the client; `TEMPORAL_TASK_QUEUE` overrides it at the edges. */
export const DEFAULT_TASK_QUEUE = 'durable-agent';
export const WORKFLOW_TYPE = 'agentWorkflow';
export const DEFAULT_TEMPORAL_ADDRESS = '127.0.0.1:7233';
export const DEFAULT_NAMESPACE = 'default';

export const DEFAULT_MAX_ITERATIONS = 200;
export const DEFAULT_MAX_TOKENS = 8192;
/** The model used when the worker has an Anthropic key and the run names none. */
export const DEFAULT_ANTHROPIC_MODEL = 'claude-sonnet-5-5';
/** The offline model: a deterministic scripted agent that needs no network and costs nothing. */
export const OFFLINE_MODEL = 'offline-demo';

/** Text the run ends with when it hits max iterations and the summary call itself fails. */
export const SUMMARY_FALLBACK_TEXT =
  'The run reached its iteration limit and the closing summary could not be produced. ' +
  'Inspect the run history for the work done so far.';
/** Closing instruction sent (not recorded in the run's history) for the max-iterations summary. */
export const SUMMARY_INSTRUCTION =
  'You have reached the maximum number of iterations for this task and can no longer call tools. ' +
  'Summarize what you accomplished, what remains unfinished, and any important findings, as your final answer.';

/** Model activity timing. The call streams and heartbeats on events, so a hung request is found quickly. */
export const MODEL_START_TO_CLOSE_TIMEOUT = '10 minutes';
// Both kinds of call heartbeat every second, so 20 s is generous; it is how long a crashed
// worker's call waits before it is retried elsewhere (soak: 31 s p50 from kill to progress at 60 s).
export const MODEL_HEARTBEAT_TIMEOUT = '20 seconds';
export const MODEL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '60 seconds',
  maximumAttempts: 10,
} as const;

/**
 * A run's model and tool calls go to the task queue of the worker that holds its conversation
 * (the "sticky activity queue" pattern). If no worker takes a call there within this time (the
 * worker is gone or saturated), the call falls back to the shared queue.
 */
export const STICKY_SCHEDULE_TO_START_TIMEOUT = '10 seconds';

/**
 * Within one status, a run rewrites its search attributes (iterations, cost) at most this often
 * (workflow time). Every upsert is a history event and a visibility write on the server; with real
 * model latency each iteration takes longer than this anyway, so only fast loops are thinned, and
 * a status change or the end of the run always writes at once.
 */
export const SEARCH_ATTRIBUTE_MIN_INTERVAL_MS = 1_000;

/** Tool activity timing: bash may run up to 600 s, so the activity gets a little more. */
export const TOOL_START_TO_CLOSE_TIMEOUT = '11 minutes';
export const TOOL_HEARTBEAT_TIMEOUT = '20 seconds';
export const TOOL_RETRY = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '30 seconds',
  maximumAttempts: 3,
} as const;

/**
 * Read-only built-in tools run as local activities (in the worker running the workflow task, no
 * server round trip; measured about a third of an iteration's overhead). They are bounded by this.
 */
export const LOCAL_TOOL_START_TO_CLOSE_TIMEOUT = '2 minutes';

/** Cap on any tool's text that reaches the model (and therefore the event history). */
export const MAX_TOOL_OUTPUT_CHARS = 30_000;

/** The workflow keeps at most this many progress events for `events` queries. */
export const MAX_RETAINED_EVENTS = 1000;

/*
 * Payload bounds. Temporal refuses a payload over 2 MiB and a workflow task completion over 4 MiB,
 * and a run that sends one is terminated by the server (BadScheduleActivityAttributes,
 * BadContinueAsNewAttributes). Whatever the model, the tools or the users send, every payload a
 * run produces stays inside these bounds by construction. Sizes are UTF-8 bytes of the JSON.
 *
 *   continue-as-new input ≤ run input + conversation (hard cap) + carried events + pending messages + texts
 *                         = 256 KiB + 1 MiB + 128 KiB + 256 KiB + 32 KiB + 64 KiB = 1.72 MiB < 2 MiB
 *   model call input      ≤ system prompt + max(full conversation ≤ hard cap,
 *                                               delta ≤ answer + one turn's tool results + messages)
 *                         = 64 KiB + 1 MiB + 384 KiB + 256 KiB = 1.69 MiB < 2 MiB
 *   model call result     ≤ one answer (1 MiB); the closing summary returns it once, not twice
 *   workflow task         ≤ local tool results (16 × 90 KB) + one model call or continue-as-new < 4 MiB
 */
/** Temporal's limit on one payload (activity input/result, signal/update argument, query result). */
export const TEMPORAL_PAYLOAD_LIMIT_BYTES = 2 * 1024 * 1024;
/** Run input without its continuation state: protects the start and every continue-as-new input. */
export const MAX_RUN_INPUT_BYTES = 256 * 1024;
/** A prompt larger than this is refused at start (it is part of the run input and of every compacted conversation). */
export const MAX_PROMPT_BYTES = 192 * 1024;
/** The system prompt travels with every model call. */
export const MAX_SYSTEM_PROMPT_BYTES = 64 * 1024;
/** One `sendMessage`: protects the update payload and the model call that takes it. */
export const MAX_MESSAGE_BYTES = 128 * 1024;
/** Messages accepted but not yet given to the model: protects the continue-as-new input and the next delta. */
export const MAX_PENDING_MESSAGE_BYTES = 256 * 1024;
/**
 * Hard cap on the conversation at each iteration boundary: above it, older turns are dropped
 * without a model call, so the full resend after a cache miss and the continue-as-new input fit.
 */
export const MAX_CONVERSATION_BYTES = 1024 * 1024;
/** One model answer: protects the model activity's result (a larger answer fails once, non-retryably). */
export const MAX_MODEL_RESPONSE_BYTES = 1024 * 1024;
/** All tool results of one turn: longer results are cut to share this, protecting the next delta. */
export const MAX_TURN_TOOL_RESULT_BYTES = 384 * 1024;
/** Tool calls run per turn; later ones get an error result. Protects the workflow task (local results). */
export const MAX_TOOL_CALLS_PER_TURN = 16;
/** A compaction summary and the latest results it keeps: the compacted conversation stays well under the cap. */
export const MAX_COMPACTION_SUMMARY_BYTES = 256 * 1024;
export const MAX_COMPACTION_RESULTS_BYTES = 128 * 1024;
/** The final text of a run (answers continued after max_tokens are joined up to this). Protects the result. */
export const MAX_FINAL_TEXT_BYTES = 1024 * 1024;
/** The last answer text and the held text of answers cut at max_tokens, as carried into a continue-as-new. */
export const CARRIED_LAST_TEXT_BYTES = 32 * 1024;
export const CARRIED_TEXT_PREFIX_BYTES = 64 * 1024;
/** One `events` query page: protects the query result (a 1 MB answer once broke every page). */
export const MAX_EVENTS_PAGE_BYTES = 256 * 1024;
/** Text kept per progress event: model text, answers, previews. The full text is in the result and transcript. */
export const EVENT_TEXT_CHARS = 1_000;
export const EVENT_ANSWER_CHARS = 16_000;
/** `reasoning` and `text` events keep this much of a turn's thinking and text (the transcript has all of it). */
export const EVENT_TURN_TEXT_CHARS = 4_000;
/**
 * A tool's output as `tool_call_finished` keeps it (`preview`, `truncated` when cut); the transcript
 * has all of it. Events carried into the next execution keep the first EVENT_CARRIED_OUTPUT_CHARS,
 * so a continue-as-new input is no larger than it was with 200-character previews.
 */
export const EVENT_TOOL_OUTPUT_CHARS = 2_000;
export const EVENT_CARRIED_OUTPUT_CHARS = 200;
/** Progress events carried into the next execution, by count and by bytes. */
export const EVENTS_CARRIED_OVER = 200;
export const MAX_CARRIED_EVENTS_BYTES = 128 * 1024;
/** A tool call's arguments as kept in events, approvals and heartbeat details: each string field cut to this. */
export const INPUT_PREVIEW_CHARS = 400;

/**
 * Every stable, namespaced failure type the agent raises: at the activity boundary (model calls,
 * tools, run start) and in the workflow (a run's own end). A client sees one as the type of the
 * workflow's failure or as `AgentRunResult.error.type` (docs/contracts.md lists them all; its test
 * checks that every `DurableAgent.`/`ModelError.` literal in src/ is one of these).
 */
export const ErrorTypes = {
  InvalidInput: 'DurableAgent.InvalidInput',
  /** A tool call stopped by its worker's shutdown: retried on another worker. */
  WorkerShutdown: 'DurableAgent.WorkerShutdown',
  /** A run's workspace the worker's rules refuse (outside its roots, a system directory, …): the run fails at start. */
  WorkspaceRefused: 'DurableAgent.WorkspaceRefused',
  BadRequest: 'ModelError.BadRequest',
  Authentication: 'ModelError.Authentication',
  PermissionDenied: 'ModelError.PermissionDenied',
  NotFound: 'ModelError.NotFound',
  RequestTooLarge: 'ModelError.RequestTooLarge',
  Unprocessable: 'ModelError.Unprocessable',
  BillingLimit: 'ModelError.BillingLimit',
  RateLimited: 'ModelError.RateLimited',
  /** A model call told to wait for its key's rate budget (src/admission/): retried after `nextRetryDelay`. */
  AdmissionWait: 'DurableAgent.RateLimited',
  Overloaded: 'ModelError.Overloaded',
  ServerError: 'ModelError.ServerError',
  Connection: 'ModelError.Connection',
  Timeout: 'ModelError.Timeout',
  MalformedResponse: 'ModelError.MalformedResponse',
  /** The provider's answer is larger than a run can record (MAX_MODEL_RESPONSE_BYTES). */
  ResponseTooLarge: 'ModelError.ResponseTooLarge',
  /** The run ended `failed`: the workflow fails with this type and the AgentRunResult as details. */
  RunFailed: 'DurableAgent.RunFailed',
  Unknown: 'ModelError.Unknown',
  ScriptExhausted: 'ModelError.ScriptExhausted',
  /** The `interrupt` signal, or a hook that stopped the run (exit reason `interrupted`). */
  Interrupted: 'DurableAgent.Interrupted',
  /** A Temporal cancel (exit reason `cancelled`). */
  Cancelled: 'DurableAgent.Cancelled',
  /** The final answer never matched the run's `outputSchema`. */
  OutputInvalid: 'DurableAgent.OutputInvalid',
  /** The answer checker's pool is full: the check is retried with backoff, and ends the run if it never runs. */
  ValidatorBusy: 'DurableAgent.ValidatorBusy',
  /** The conversation does not fit the model's context window even right after compacting. */
  ContextWindowExceeded: 'DurableAgent.ContextWindowExceeded',
  /** A `UserPromptSubmit` hook blocked the prompt. */
  PromptBlocked: 'DurableAgent.PromptBlocked',
  /** The MCP tool definitions a call carried do not match their hash (a bug or a tampered history). */
  McpToolsMismatch: 'DurableAgent.McpToolsMismatch',
  /** A worker's conversation cache lacks the run's conversation: the workflow sends it whole (never ends a run). */
  ConversationCacheMiss: 'DurableAgent.ConversationCacheMiss',
} as const;

/** One of {@link ErrorTypes}. */
export type ErrorType = (typeof ErrorTypes)[keyof typeof ErrorTypes];
