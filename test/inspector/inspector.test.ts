import type { Page } from 'playwright-core';
import { getRun } from '../../src/client';
import { ScriptedModel, text, toolUse } from '../../src/models/scripted';
import { CONTENT_SECURITY_POLICY } from '../../src/inspector/server';
import { eventually } from '../support/run-helpers';
import { connectTestEnv, tempWorkspace, type TestEnv } from '../support/temporal';
import { describeWithChromium, suiteName } from '../ui/ui-support';
import { seriousViolations, startInspectorStack, type InspectorStack } from './inspector-stack';

/**
 * The inspector in a real browser against a real Temporal server and real runs of a scripted
 * model: the list, a run's turns and tool calls, a subagent tree, a session steered from the page,
 * an approval decided from the page, a hostile run's text shown as text, the token, read-only
 * mode, and axe-core's accessibility check.
 */

const UI_MS = 30_000;
let env: TestEnv;
let stack: InspectorStack;
let counter = 0;
const runId = (label: string) => `inspector-${label}-${Date.now()}-${++counter}`;

async function finished(id: string): Promise<void> {
  await getRun(stack.client, id)
    .result()
    .catch(() => undefined);
}

async function openRun(id: string): Promise<Page> {
  return stack.page(`#/run/${encodeURIComponent(id)}`);
}

describeWithChromium(suiteName('durable-agent ui'), () => {
  beforeAll(async () => {
    env = await connectTestEnv();
    stack = await startInspectorStack('inspector', { client: env.client, nativeConnection: env.nativeConnection });
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await env?.close();
  });

  test('a request without the token is refused (401), a wrong one too (403); the page sends a CSP without inline scripts', async () => {
    const base = `http://127.0.0.1:${stack.inspector.port}`;
    for (const path of ['/', '/assets/app.js', '/api/runs', '/api/runs/x/live']) {
      expect((await fetch(`${base}${path}`)).status).toBe(401);
      expect((await fetch(`${base}${path}?token=nope`)).status).toBe(403);
    }
    const post = await fetch(`${base}/api/runs/x/interrupt`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(401);
    const first = await fetch(stack.inspector.url, { redirect: 'manual' });
    expect(first.status).toBe(303);
    const cookie = first.headers.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly; SameSite=Strict/);
    const page = await fetch(`${base}/`, { headers: { cookie: cookie.split(';')[0]! } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toMatch(/script-src 'self'(;|$)/);
    expect(await page.text()).not.toMatch(/<script>|<script [^>]*>[^<]/);
  });

  test('the list shows runs with status, model, iterations; a run page shows each turn with its tool calls, input and result', async () => {
    const workspace = await tempWorkspace('inspector');
    const id = runId('tools');
    stack.model(
      'scripted-tools',
      new ScriptedModel([
        toolUse(
          [
            { name: 'write_file', input: { path: 'notes.txt', content: 'alpha beta gamma' } },
            { name: 'glob', input: { pattern: '*.nothing' } },
          ],
          { text: 'Writing the notes first.', usage: { inputTokens: 120, outputTokens: 30 } },
        ),
        toolUse([{ name: 'read_file', input: { path: 'notes.txt' } }], {
          usage: { inputTokens: 200, outputTokens: 20 },
        }),
        text('The notes say alpha beta gamma.', { usage: { inputTokens: 260, outputTokens: 12 } }),
      ]),
    );
    await stack.start(id, { prompt: 'Write notes, then read them back', model: 'scripted-tools', workspace });
    await finished(id);

    const list = await stack.page();
    const link = list.getByRole('link', { name: id, exact: true });
    await link.waitFor({ timeout: UI_MS });
    const row = list.getByRole('row').filter({ has: link });
    await expect(row.getByText('completed')).toBeDefined();
    expect(await row.innerText()).toMatch(/completed[\s\S]*scripted-tools[\s\S]*\b3\b/);
    await list.getByLabel('Status').selectOption('failed');
    await list
      .getByText('No runs match.')
      .or(list.getByRole('link').filter({ hasNotText: id }).first())
      .first()
      .waitFor({ timeout: UI_MS });
    expect(await list.getByRole('link', { name: id, exact: true }).count()).toBe(0);
    await list.getByLabel('Status').selectOption('');
    await list.getByLabel('Search').fill(id);
    await list.getByRole('link', { name: id, exact: true }).click();

    await list.getByRole('heading', { name: 'Turn 3' }).waitFor({ timeout: UI_MS });
    expect(await list.getByRole('heading', { name: id }).count()).toBe(1);
    await list.getByText('Write notes, then read them back').first().waitFor();
    await list.getByText('Writing the notes first.').waitFor();
    const turn1 = list.getByRole('region', { name: 'Turn 1' });
    await turn1.getByText('write_file').click();
    await turn1.locator('pre.json').getByText('"content": "alpha beta gamma"').waitFor();
    const turn2 = list.getByRole('region', { name: 'Turn 2' });
    await turn2.getByText('read_file').click();
    await turn2.locator('pre.out').getByText('alpha beta gamma').waitFor();
    expect(await turn1.getByRole('link', { name: /event \d+ in Temporal Web UI/ }).getAttribute('href')).toMatch(
      new RegExp(`/workflows/${id}/[\\w-]+/history/events/\\d+$`),
    );
    await list.getByText('The notes say alpha beta gamma.').first().waitFor();
    await list.getByRole('img', { name: /Timeline of 6 calls/ }).waitFor();
    await list.getByRole('img', { name: /Tokens and cost of 3 iterations/ }).waitFor();
    expect(await list.getByText('Exit reason: completed').count()).toBe(1);
    expect(await seriousViolations(list)).toEqual([]);
    if (process.env.DA_INSPECTOR_SCREENSHOT) {
      // docs/images/inspector-run.png: DA_INSPECTOR_SCREENSHOT=docs/images/inspector-run.png npx jest test/inspector/inspector.test.ts
      const shot = await openRun(id);
      await shot.setViewportSize({ width: 1100, height: 1000 });
      await shot.getByRole('heading', { name: 'Turn 3' }).waitFor({ timeout: UI_MS });
      await shot.getByRole('region', { name: 'Turn 1' }).getByText('write_file').click();
      await shot.screenshot({ path: process.env.DA_INSPECTOR_SCREENSHOT, type: 'png' });
      await shot.close();
    }
    await list.close();
  }, 120_000);

  test("a hostile run's HTML, <script>, javascript: links and ANSI escape codes are shown as text, never run", async () => {
    const id = runId('hostile');
    const hostile =
      '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">' +
      '[click me](javascript:window.__pwned=3) <a href="javascript:window.__pwned=4">link</a> \x1b[31mRED\x1b[0m';
    stack.model(
      'scripted-hostile',
      new ScriptedModel([
        toolUse([{ name: 'glob', input: { pattern: '<b onmouseover="window.__pwned=5">*</b>' } }], { text: hostile }),
        text(hostile),
      ]),
    );
    await stack.start(id, {
      prompt: `hostile ${hostile}`,
      model: 'scripted-hostile',
      workspace: await tempWorkspace('hostile'),
    });
    await finished(id);
    const page = await openRun(id);
    await page.getByRole('heading', { name: 'Turn 2' }).waitFor({ timeout: UI_MS });
    await page.getByRole('region', { name: 'Turn 1' }).getByText('glob').click();
    // The markup is there as text, the escape code made visible (␛), and nothing of it ran.
    await page.getByText('<script>window.__pwned = 1</script>', { exact: false }).first().waitFor();
    expect(await page.getByText('\u241b[31mRED\u241b[0m', { exact: false }).count()).toBeGreaterThan(0);
    expect(await page.getByText('<b onmouseover="window.__pwned=5">*</b>', { exact: false }).count()).toBeGreaterThan(
      0,
    );
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator('img, a[href^="javascript"], script:not([src])').count()).toBe(0);
    expect(await page.getByRole('link', { name: 'link', exact: true }).count()).toBe(0);
    await page.close();
  }, 120_000);

  test('a subagent tree: folded under its parent in the list, opened in place under its task call', async () => {
    const id = runId('tree');
    stack.model(
      'scripted-tree',
      new ScriptedModel([
        toolUse([{ name: 'task', input: { prompt: 'count the files', description: 'file counter' } }]),
        text('The child counted zero files.'),
        text('Parent done: zero files.'),
      ]),
    );
    await stack.start(id, {
      prompt: 'delegate it',
      model: 'scripted-tree',
      maxSubagentDepth: 1,
      workspace: await tempWorkspace('tree'),
    });
    await finished(id);
    const child = `${id}.task-1`;
    const list = await stack.page();
    await list.getByLabel('Search').fill(id);
    const parentLink = list.getByRole('link', { name: id, exact: true });
    await parentLink.waitFor({ timeout: UI_MS });
    // Subagents are not listed at the top level.
    expect(await list.getByRole('link', { name: child, exact: true }).count()).toBe(0);
    await list.getByRole('row').filter({ has: parentLink }).getByRole('button', { name: 'Subagents' }).click();
    await list.getByRole('link', { name: child, exact: true }).waitFor({ timeout: UI_MS });
    await parentLink.click();
    await list.getByRole('button', { name: `Open subagent ${child}` }).click();
    const nested = list.getByRole('group', { name: `Subagent ${child}` });
    await nested.getByText('The child counted zero files.').first().waitFor({ timeout: UI_MS });
    await nested.getByText('count the files').first().waitFor();
    await list.close();
  }, 120_000);

  test('a tool call waiting for approval shows its whole input; Approve on the page lets it run; read-only shows no action', async () => {
    const id = runId('approve');
    const workspace = await tempWorkspace('approve');
    const long = 'x'.repeat(3000);
    stack.model(
      'scripted-approve',
      new ScriptedModel([
        toolUse([{ name: 'write_file', input: { path: 'approved.txt', content: `start-${long}-end` } }]),
        text('Written after approval.'),
      ]),
    );
    await stack.start(id, { prompt: 'write it', model: 'scripted-approve', approveMutating: true, workspace });
    const readOnly = await startInspectorStackReadOnly();
    try {
      const ro = await readOnly.page(`#/run/${encodeURIComponent(id)}`);
      await ro.getByRole('heading', { name: /Waiting for approval/ }).waitFor({ timeout: UI_MS });
      for (const name of ['Approve', 'Deny', 'Interrupt', 'Send', 'End session']) {
        expect(await ro.getByRole('button', { name, exact: true }).count()).toBe(0);
      }
      await ro.close();
    } finally {
      await readOnly.close();
    }
    const page = await openRun(id);
    const approval = page.getByRole('article', { name: /Approval for write_file/ });
    await approval.waitFor({ timeout: UI_MS });
    // The whole input, not the run's cut preview.
    await approval.getByText(`-end"`, { exact: false }).waitFor();
    expect(await page.getByRole('button', { name: 'Interrupt' }).count()).toBe(1);
    await approval.getByRole('button', { name: 'Approve' }).click();
    await page.getByText(/Approved write_file call/).waitFor({ timeout: UI_MS });
    await finished(id);
    await page.getByText('Exit reason: completed').waitFor({ timeout: UI_MS });
    await page.getByText('Written after approval.').first().waitFor();
    await page.close();
  }, 120_000);

  test('a session steered from the page: Send a message, then End session', async () => {
    const id = runId('session');
    stack.model(
      'scripted-session',
      new ScriptedModel([text('First answer.'), text('Second answer, after your message.')]),
    );
    await stack.start(id, {
      prompt: 'talk to me',
      model: 'scripted-session',
      session: true,
      workspace: await tempWorkspace('session'),
    });
    const page = await openRun(id);
    await page.getByText('First answer.').first().waitFor({ timeout: UI_MS });
    await eventually(
      async () => (await getRun(stack.client, id).describe()).status.name,
      (s) => expect(s).toBe('RUNNING'),
    );
    await page.getByLabel('Message').fill('please go on <b>now</b>');
    await page.getByRole('button', { name: 'Send', exact: true }).click();
    await page.getByText(/Message sent to/).waitFor({ timeout: UI_MS });
    await page.getByText('Second answer, after your message.').first().waitFor({ timeout: UI_MS });
    await page.getByText('please go on <b>now</b>').first().waitFor();
    await page.getByRole('button', { name: 'End session' }).click();
    await page.getByText('Exit reason: completed').waitFor({ timeout: UI_MS });
    expect(await seriousViolations(page)).toEqual([]);
    await page.close();
  }, 120_000);

  test('an action body is checked as the handlers check it', async () => {
    const first = await fetch(stack.inspector.url, { redirect: 'manual' });
    const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
    const post = (path: string, body: string, type = 'application/json') =>
      fetch(`http://127.0.0.1:${stack.inspector.port}${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': type },
        body,
      });
    const bad = await post('/api/runs/any/approve', JSON.stringify({ toolUseId: 7 }));
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: string }).error).toMatch(/toolUseId must be a non-empty string/);
    expect((await post('/api/runs/any/send', JSON.stringify({ message: '  ' }))).status).toBe(400);
    expect((await post('/api/runs/any/send', JSON.stringify({ message: 'hi', extra: 1 }))).status).toBe(400);
    expect((await post('/api/runs/any/interrupt', 'not json')).status).toBe(400);
    expect((await post('/api/runs/any/interrupt', '{}', 'text/plain')).status).toBe(400);
  });
});

async function startInspectorStackReadOnly() {
  const { startInspector } = await import('../../src/inspector/server');
  const inspector = await startInspector({
    client: env.client,
    readOnly: true,
    webUiLink: () => 'http://127.0.0.1:8233',
  });
  return {
    async page(path: string) {
      const page = await stack.browser.context.newPage();
      await page.goto(`${inspector.url}${path}`);
      return page;
    },
    close: () => inspector.close(),
  };
}
