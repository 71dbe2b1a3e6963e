import type { WorkflowExecutionInfo } from '@temporalio/client';
import { FORKED_FROM_MEMO, type ForkOrigin } from '../shared/fork';
import { forkedFromSearchAttribute } from '../shared/search-attributes';

/**
 * Where a fork came from, as `status` and `list` show it: its memo `forkedFrom` (`{ workflowId, runId,
 * turn }`), else its `DurableAgentForkedFrom` search attribute (the origin's workflow id alone). Any
 * client can write a memo: only a well-formed one is shown.
 */
export function forkOriginOf(
  info: Pick<WorkflowExecutionInfo, 'memo' | 'typedSearchAttributes' | 'searchAttributes'>,
): ForkOrigin | { workflowId: string } | null {
  const memo = info.memo?.[FORKED_FROM_MEMO] as Partial<ForkOrigin> | undefined;
  if (
    memo &&
    typeof memo.workflowId === 'string' &&
    typeof memo.runId === 'string' &&
    Number.isSafeInteger(memo.turn) &&
    (memo.turn as number) >= 0
  ) {
    return { workflowId: memo.workflowId, runId: memo.runId, turn: memo.turn as number };
  }
  const name = forkedFromSearchAttribute.name;
  const raw = info.searchAttributes?.[name];
  const id =
    info.typedSearchAttributes.getAll().find((pair) => pair.key.name === name)?.value ??
    (Array.isArray(raw) ? raw[0] : undefined);
  return typeof id === 'string' && id !== '' ? { workflowId: id } : null;
}

/** `agent-… at turn 3`, or the id alone when the turn is not known. */
export function describeForkOrigin(origin: ForkOrigin | { workflowId: string }): string {
  return 'turn' in origin ? `${origin.workflowId} at turn ${origin.turn}` : origin.workflowId;
}
