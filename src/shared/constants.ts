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

/** Stable, namespaced failure types raised at the activity boundary. */
export const ErrorTypes = {
  InvalidInput: 'DurableAgent.InvalidInput',
  /** A tool call stopped by its worker's shutdown: retried on another worker. */
  WorkerShutdown: 'DurableAgent.WorkerShutdown',
  BadRequest: 'ModelError.BadRequest',
  Authentication: 'ModelError.Authentication',
  PermissionDenied: 'ModelError.PermissionDenied',
  NotFound: 'ModelError.NotFound',
  RequestTooLarge: 'ModelError.RequestTooLarge',
  Unprocessable: 'ModelError.Unprocessable',
  BillingLimit: 'ModelError.BillingLimit',
  RateLimited: 'ModelError.RateLimited',
  Overloaded: 'ModelError.Overloaded',
  ServerError: 'ModelError.ServerError',
  Connection: 'ModelError.Connection',
  Timeout: 'ModelError.Timeout',
  MalformedResponse: 'ModelError.MalformedResponse',
  Unknown: 'ModelError.Unknown',
  ScriptExhausted: 'ModelError.ScriptExhausted',
} as const;
