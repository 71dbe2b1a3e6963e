import { ErrorTypes } from './constants';
/**
 * A run cancelled from Temporal (`temporal workflow cancel`) ends Canceled, and Temporal's cancel
 * carries no details from a TypeScript workflow. So the run writes its `AgentRunResult` (exit reason
 * `cancelled`, usage, cost, the text it had) into its memo under this key just before it ends,
 * where clients read it after the run closed, with no worker up.
 */
export const CANCELLED_RESULT_MEMO = 'durableAgentResult';

/**
 * The memo is small on the server (32 KiB per run by default): the result's text is cut to this
 * many bytes there (UTF-8), an ellipsis marking the cut.
 */
export const MAX_CANCELLED_TEXT_BYTES = 16 * 1024;

/** The failure type in a cancelled run's result. */
export const CANCELLED_ERROR = ErrorTypes.Cancelled;
