/**
 * modelRequest is where every provider's request is built: both tool protocols' requests leave it
 * well-formed (system prompt, messages, tool descriptions and schemas, output schema), and a request
 * with nothing to replace is passed on as it is.
 */
import { modelRequest } from '../../src/activities/model-request';
import { ConversationCache } from '../../src/activities/conversation-cache';
import { isWellFormed } from '../../src/shared/well-formed';
import type { Message, ToolSpec } from '../../src/shared/messages';

const conversation = { id: 'c', baseLength: 0, baseHash: '', delta: [], headHash: '', full: true };
const messages: Message[] = [
  { role: 'user', content: 'look \udc00' },
  { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'half \ud83d' }] },
];
const tools: ToolSpec[] = [
  { name: 'mcp__s__t', description: 'an MCP text \ud800', input_schema: { type: 'object', properties: {} } },
];
const allStrings = (value: unknown): string[] =>
  typeof value === 'string'
    ? [value]
    : typeof value === 'object' && value !== null
      ? Object.entries(value).flatMap(([k, v]) => [k, ...allStrings(v)])
      : [];

test.each([undefined, 'xml' as const])('the request (tool protocol %s) holds no lone surrogate', (toolProtocol) => {
  const { request } = modelRequest(
    {
      model: 'claude-sonnet-5-5',
      system: 'sys \ud800',
      conversation,
      maxTokens: 100,
      ...(toolProtocol ? { toolProtocol } : {}),
      outputSchema: { type: 'object', description: 'answer \udfff' },
    },
    messages,
    new ConversationCache(),
    tools,
    undefined,
  );
  expect(allStrings(request).every(isWellFormed)).toBe(true);
  expect(JSON.stringify(request)).toContain('half \ufffd');
  expect(request.system).toContain('sys \ufffd');
  // What the run holds is left as it was.
  expect(messages[0]!.content).toBe('look \udc00');
});

test('a request with nothing to replace keeps its messages as they are', () => {
  const clean: Message[] = [{ role: 'user', content: 'hello 😀' }];
  const { request } = modelRequest(
    { model: 'claude-sonnet-5-5', conversation, maxTokens: 100 },
    clean,
    new ConversationCache(),
    [],
    undefined,
  );
  expect(request.messages).toBe(clean);
});
