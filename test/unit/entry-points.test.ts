/**
 * The package's entry points export exactly these values (docs/contracts.md, docs/library.md): a name
 * added or removed is a change to the public API, made on purpose here and in the docs, not by a
 * re-export that slipped in. Types are erased and checked by the package tests (test/package/).
 */
import * as main from '../../src/index';
import * as workflow from '../../src/workflow';

test("the 'durable-agent' entry point's values", () => {
  expect(Object.keys(main).sort()).toEqual([
    'AGENT_ACTIVITY_PREFIX',
    'AGENT_WORKER_DEFAULTS',
    'AesGcmCodec',
    'AgentPlugin',
    'AgentRun',
    'ConnectionFailedError',
    'OutputMismatchError',
    'RUN_FAILED_TYPE',
    'RunEndedError',
    'RunRefusedError',
    'WORKFLOW_TYPE',
    'agentActivityType',
    'defineTool',
    'loadConnectionConfig',
    'newRunId',
    'outputSchemaOf',
    'parseCodecKeys',
    'searchAttributeCommand',
    'typedOutput',
  ]);
});

test("the 'durable-agent/workflow' entry point's values", () => {
  expect(Object.keys(workflow).sort()).toEqual([
    'WORKFLOW_TYPE',
    'agentWorkflow',
    'approveToolUpdate',
    'denyToolUpdate',
    'endSessionUpdate',
    'eventsQuery',
    'interruptSignal',
    'sendMessageUpdate',
    'stateQuery',
  ]);
});
