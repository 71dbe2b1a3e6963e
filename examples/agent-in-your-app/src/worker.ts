import { NativeConnection, Worker } from '@temporalio/worker';
import { AgentPlugin } from 'durable-agent';
import { countWords } from './tools';

export const TASK_QUEUE = process.env.EXAMPLE_TASK_QUEUE ?? 'my-app';

/**
 * The application's worker: its own workflows (which re-export the agent's) on its own task queue,
 * and the agent's activities with the application's tool from the plugin. Model, sandbox, codec and
 * connection settings come from the environment as for the `durable-agent` CLI
 * (ANTHROPIC_API_KEY, DURABLE_AGENT_SANDBOX, DURABLE_AGENT_CODEC_KEYS, TEMPORAL_ADDRESS, ...).
 */
async function main(): Promise<void> {
  const plugin = new AgentPlugin({ tools: [countWords] });
  const connection = await NativeConnection.connect({ plugins: [plugin] });
  const worker = await Worker.create({
    connection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('./workflows'),
  });
  console.log(`worker polling ${TASK_QUEUE}`);
  await worker.run();
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
