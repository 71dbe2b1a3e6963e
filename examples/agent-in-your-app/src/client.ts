import { Client, Connection } from '@temporalio/client';
import { AgentPlugin, AgentRun } from 'durable-agent';
import { reviewWorkflow } from './workflows';

const TASK_QUEUE = process.env.EXAMPLE_TASK_QUEUE ?? 'my-app';
const MODEL = process.env.EXAMPLE_MODEL; // default: the agent's default model

/**
 * Starts the application's workflow (the agent runs as its child) and a run of the agent on its own,
 * follows the run's events, queries its state and prints both results, one JSON line each.
 */
async function main(): Promise<void> {
  // On the connection, the plugin applies to every client made with it (codec, connection defaults).
  const connection = await Connection.connect({ plugins: [new AgentPlugin()] });
  const client = new Client({ connection });

  const workflowId = `review-${Date.now()}`;
  const result = await client.workflow.execute(reviewWorkflow, {
    taskQueue: TASK_QUEUE,
    workflowId,
    args: ['durable agents run inside your own Temporal application', MODEL],
  });
  console.log(JSON.stringify({ workflowId, result }));

  const run = await AgentRun.start(
    client,
    { prompt: 'Say hello in five words.', ...(MODEL ? { model: MODEL } : {}), maxIterations: 2 },
    { taskQueue: TASK_QUEUE },
  );
  const kinds: string[] = [];
  for await (const event of run.follow()) kinds.push(event.kind);
  const state = await run.state();
  const outcome = await run.result();
  console.log(JSON.stringify({ run: run.workflowId, events: kinds, status: state.status, result: outcome }));
  await connection.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
