import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { getRun, interruptRun } from '../../src/client';
import type { ModelProvider } from '../../src/models/types';
import { createDefaultRegistry } from '../../src/tools';
import { createAgentWorker } from '../../src/worker';
import { quietRuntime, testBundlePath } from '../support/temporal';
import { launchChromium, startUiServer, type Browser, type UiServer } from './ui-support';

/** What a Web UI test drives: a dev server with its UI, Chromium, a client and a worker with a scripted model. */
export interface UiStack {
  server: UiServer;
  browser: Browser;
  client: Client;
  taskQueue: string;
  /** Interrupts the run `workflowId` if given and waits for it, then stops everything and restores TEMPORAL_UI_URL. */
  close(workflowId?: string): Promise<void>;
}

export async function startUiStack(label: string, model: ModelProvider): Promise<UiStack> {
  quietRuntime();
  const savedUiUrl = process.env.TEMPORAL_UI_URL;
  const [server, browser] = await Promise.all([startUiServer(), launchChromium()]);
  // The links the CLI prints point at this server's UI.
  process.env.TEMPORAL_UI_URL = server.uiBase;
  const connection = await Connection.connect({ address: server.address });
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const client = new Client({ connection });
  const taskQueue = `${label}-${Date.now()}`;
  const worker = await createAgentWorker({
    connection: nativeConnection,
    namespace: 'default',
    taskQueue,
    workflowBundlePath: testBundlePath(),
    deps: { models: () => model, tools: createDefaultRegistry() },
  });
  const workerDone = worker.run();
  return {
    server,
    browser,
    client,
    taskQueue,
    async close(workflowId) {
      if (savedUiUrl === undefined) delete process.env.TEMPORAL_UI_URL;
      else process.env.TEMPORAL_UI_URL = savedUiUrl;
      if (workflowId) {
        await interruptRun(getRun(client, workflowId), 'test over').catch(() => undefined);
        await getRun(client, workflowId)
          .result()
          .catch(() => undefined);
      }
      worker.shutdown();
      await workerDone;
      await browser.close();
      await connection.close();
      await nativeConnection.close();
      await server.stop();
    },
  };
}
