/**
 * Metric cardinality: tool names the model makes up are not metric series. The tool metrics name
 * only the tools the run has (the worker's registry, the run's MCP tools); every other name is one
 * `unknown` value, whatever the model invents. Spans, which are not held, keep the name asked for.
 */
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { uniqueQueue } from '../support/temporal';
import { useTraceSuite, waitFor } from './trace-suite';

const t = useTraceSuite();

type Point = { attributes?: Array<{ key: string; value: { stringValue?: string } }> };
const toolNamesOf = (metric: string): string[] =>
  [
    ...new Set(
      ((t.receiver.metrics.get(metric) ?? []) as Point[]).map(
        (p) => p.attributes?.find((a) => a.key === 'gen_ai.tool.name')?.value.stringValue ?? '(none)',
      ),
    ),
  ].sort();

test('made-up tool names are recorded as one `unknown` metric value; real tools by name', async () => {
  const telemetry = t.telemetryFor({ metricExportIntervalMs: 200 });
  const invented = Array.from({ length: 6 }, (_, i) => ({ id: `toolu_x${i}`, name: `invented_${i}`, input: {} }));
  const model = new ScriptedModel([
    toolUse([...invented, { id: 'toolu_g', name: 'glob', input: { pattern: '*.none' } }]),
    text('Done.'),
  ]);
  const taskQueue = uniqueQueue('otel-names');
  const w = await t.worker(telemetry, model, taskQueue);
  const result = await w.runUntil(async () => (await t.start(taskQueue, `otel-names-${Date.now()}`)).result());
  expect(result.exitReason).toBe('completed');
  await t.flushed(telemetry);
  await waitFor(
    () => toolNamesOf('durable_agent.tool.failures').includes('unknown'),
    () => telemetry.forceFlush(),
  );
  expect(toolNamesOf('durable_agent.tool.duration')).toEqual(['glob', 'unknown']);
  expect(toolNamesOf('durable_agent.tool.failures')).toEqual(['unknown']);
  // The spans still say what the model asked for.
  expect(t.named('execute_tool invented_').length).toBe(6);
});
