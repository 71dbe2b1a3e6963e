import type { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import type { Page } from 'playwright-core';
import { readFileSync } from 'node:fs';
import { WORKFLOW_TYPE, type AgentRunInput } from '../../src/shared';
import type { ModelProvider } from '../../src/models/types';
import { startInspector, type Inspector } from '../../src/inspector/server';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { testBundlePath, uniqueQueue } from '../support/temporal';
import { launchChromium, type Browser } from '../ui/ui-support';

/**
 * What an inspector test drives: a real worker whose models are chosen by model id (each test
 * registers its own scripted model under an id of its own), the inspector's server on a free port
 * over a real client, and headless Chromium.
 */
export interface InspectorStack {
  client: Client;
  taskQueue: string;
  inspector: Inspector;
  browser: Browser;
  /** Registers the model runs with this model id call. */
  model(id: string, provider: ModelProvider): void;
  start(workflowId: string, input: Partial<AgentRunInput> & { prompt: string; model: string }): Promise<void>;
  /** A fresh page, signed in with the token. */
  page(path?: string): Promise<Page>;
  close(): Promise<void>;
}

export async function startInspectorStack(
  label: string,
  options: {
    client: Client;
    nativeConnection: NativeConnection;
    workflowBundlePath?: string;
    dataConverter?: DataConverter;
    readOnly?: boolean;
    browser?: Browser;
  },
): Promise<InspectorStack> {
  const models = new Map<string, ModelProvider>();
  const taskQueue = uniqueQueue(label);
  const worker = await createAgentWorker({
    connection: options.nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: options.workflowBundlePath ?? testBundlePath(),
    deps: {
      models: (id: string) => {
        const model = models.get(id);
        if (!model) throw new Error(`no test model '${id}'`);
        return model;
      },
      tools: createDefaultRegistry(),
    },
    stickyActivities: false,
    ...(options.dataConverter ? { workerOptions: { dataConverter: options.dataConverter } } : {}),
  });
  const workerDone = worker.run();
  const inspector = await startInspector({
    client: options.client,
    readOnly: options.readOnly ?? false,
    webUiLink: (id) => `http://127.0.0.1:8233/namespaces/default/workflows/${encodeURIComponent(id)}`,
    followIntervalMs: 200,
  });
  const browser = options.browser ?? (await launchChromium());
  return {
    client: options.client,
    taskQueue,
    inspector,
    browser,
    model: (id, provider) => void models.set(id, provider),
    async start(workflowId, input) {
      await options.client.workflow.start(WORKFLOW_TYPE, { taskQueue, workflowId, args: [input] });
    },
    async page(path = '') {
      const page = await browser.context.newPage();
      await page.goto(`${inspector.url}${path}`);
      return page;
    },
    async close() {
      await inspector.close();
      worker.shutdown();
      await workerDone;
      if (!options.browser) await browser.close();
    },
  };
}

/** axe-core's own source, evaluated in a page through the DevTools protocol (the page's CSP refuses inline scripts, rightly). */
export const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** The page's serious and critical accessibility violations. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  await page.evaluate(AXE_SOURCE);
  const violations = await page.evaluate(async () => {
    const axe = (globalThis as unknown as { axe: { run(): Promise<{ violations: AxeViolation[] }> } }).axe;
    return (await axe.run()).violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => ({ target: n.target })),
    }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
