/**
 * The bench's workflow bundle entry: the real agent workflow and the naive baseline, bundled
 * together so both run on the same server under the same conditions.
 */
export { agentWorkflow } from '../src/workflows';
export { naiveAgentWorkflow } from './naive-workflow';
