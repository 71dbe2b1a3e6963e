/**
 * From "what a user hits": an agent file copied from Claude Code (`.claude/agents/*.md` with
 * `tools: Read, Grep`) loaded with no warning and its subagent ran with zero tools. Claude Code's
 * names of the built-in tools are now taken for durable-agent's, and a name that matches no tool of
 * the worker is warned about where agent loading warns.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseAgentFile } from '../../src/agents';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { eventsQuery, type RunEvent } from '../../src/shared';
import { withWorker } from '../support/temporal';
import { useWorkflowSuite } from '../support/workflow-suite';
import { RoutedModel } from '../subagents/routed-model';

const { suite, start } = useWorkflowSuite('cc-agent');

const reviewer = (tools: string) =>
  `---\nname: reviewer\ndescription: Reviews code.\ntools: ${tools}\n---\nYou review code.\n`;

test("Claude Code's tool names are durable-agent's built-ins: Read, Write, Edit, Glob, Grep, Bash, Task", () => {
  const parsed = parseAgentFile(reviewer('Read, Write, Edit, Glob, Grep, Bash, Task, read_file'), 'workspace');
  expect(parsed.ok && parsed.agent.tools).toEqual([
    'read_file',
    'write_file',
    'edit_file',
    'glob',
    'grep',
    'bash',
    'task',
  ]);
  // Names are case-sensitive, as Claude Code's are: `read` is no tool of either.
  const lower = parseAgentFile(reviewer('read, constructor'), 'workspace');
  expect(lower.ok && lower.agent.tools).toEqual(['read', 'constructor']);
});

test('an agent file copied from Claude Code gets its tools, and a name matching no tool is warned about', async () => {
  mkdirSync(path.join(suite.workspace, '.claude', 'agents'), { recursive: true });
  writeFileSync(path.join(suite.workspace, '.claude', 'agents', 'reviewer.md'), reviewer('Read, Grep, WebFetch, LS'));
  const parent = new ScriptedModel([
    toolUse([{ id: 't1', name: 'task', input: { prompt: 'child: review src', agent: 'reviewer' } }]),
    text('reviewed'),
  ]);
  const child = new ScriptedModel([text('looks fine')]);
  const model = new RoutedModel({ work: parent, child });
  await withWorker(suite.env, { model }, async (tq) => {
    const handle = await start(tq, { tools: ['read_file', 'grep', 'bash', 'task'] });
    expect(await handle.result()).toMatchObject({ exitReason: 'completed' });
    const { events } = (await handle.query(eventsQuery, { after: 0 })) as { events: RunEvent[] };
    const said = JSON.stringify(events);
    expect(said).toContain(
      'agent .claude/agents/reviewer.md: its tools WebFetch, LS match no tool of this worker and are left out',
    );
  });
  // The subagent was offered what Read and Grep stand for.
  expect(child.requests[0]!.tools?.map((t) => t.name).sort()).toEqual(['grep', 'read_file']);
});
