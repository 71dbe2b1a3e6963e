// A run's page: what it is and how it ended, pictures of it, each turn, and — while it runs — its
// streaming text, pending approvals and the buttons that steer it (unless read-only).
import { getJson, runPath } from './api.js';
import { add, h, put } from './dom.js';
import { cost, duration, json, time, tokens, totalInput } from './format.js';
import { actionsPanel, approvalsPanel } from './steer.js';
import { timeline, usageChart } from './charts.js';
import { turnSection } from './turns.js';

const runLink = (id) => `#/run/${encodeURIComponent(id)}`;
/** A live page reads the run's turns again at most this often. */
const REFRESH_MS = 1000;

function totals(view) {
  const usage = { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
  let usd = 0;
  let unknown = false;
  for (const t of view.turns) {
    for (const k of Object.keys(usage)) usage[k] += t.usage[k];
    if (t.costUsd === null) unknown = true;
    else usd += t.costUsd;
  }
  return { usage, costUsd: view.result?.costUsd !== undefined ? view.result.costUsd : unknown ? null : usd };
}

function summary(view) {
  const { usage, costUsd } = totals(view);
  const end = view.closeTime ? Date.parse(view.closeTime) : Date.now();
  const items = [
    ['Status', h('span', { class: `status s-${view.status}` }, view.status)],
    ['Model', view.model ?? '-'],
    ['Iterations', String(view.turns.length)],
    ['Cost', cost(costUsd)],
    ['Tokens', `${tokens(totalInput(usage))} in · ${tokens(usage.outputTokens)} out`],
    ['Started', time(view.startTime)],
    ['Duration', duration(end - Date.parse(view.startTime))],
  ];
  return h(
    'dl',
    { class: 'summary' },
    items.map(([k, v]) => h('div', {}, h('dt', {}, k), h('dd', {}, v))),
  );
}

function ending(view, depth) {
  const level = depth ? 'h4' : 'h2';
  const r = view.result;
  const parts = [];
  if (view.closingSummary !== null)
    parts.push(h(level, {}, 'Closing summary'), h('div', { class: 'text model' }, view.closingSummary));
  if (!view.open) {
    parts.push(h(level, {}, 'Outcome'));
    parts.push(h('p', {}, 'Exit reason: ', h('strong', {}, r?.exitReason ?? view.status)));
    if (r?.error) parts.push(h('p', { class: 'problem' }, `${r.error.type ?? 'error'}: ${r.error.message ?? ''}`));
    if (view.reason) parts.push(h('p', { class: 'problem' }, view.reason));
    if (r?.finalText) parts.push(h('h5', {}, 'Final answer'), h('div', { class: 'text model' }, r.finalText));
    if (r && 'output' in r) parts.push(h('h5', {}, 'Typed output'), h('pre', { class: 'json' }, json(r.output)));
  }
  if (view.errors.length) {
    parts.push(h(level, {}, 'Errors'));
    parts.push(
      h(
        'ul',
        {},
        view.errors.map((e) => h('li', { class: 'problem' }, `${time(new Date(e.at).toISOString())}: ${e.message}`)),
      ),
    );
  }
  return parts;
}

/** The body of a run (its own page, or a subagent opened in place at `depth` > 0). */
export function runBody(view, ctx) {
  const depth = ctx.depth ?? 0;
  const level = depth ? 'h4' : 'h2';
  const childCtx = { ...ctx, depth: depth + 1, renderChild: (id) => renderChild(id, { ...ctx, depth: depth + 1 }) };
  return h(
    'div',
    { class: depth ? 'nested' : 'body' },
    summary(view),
    view.compactions ? h('p', { class: 'note' }, `The conversation was compacted ${view.compactions} time(s).`) : null,
    h(level, {}, 'Prompt'),
    h('div', { class: 'text user-prompt' }, view.prompt),
    view.system !== null
      ? h(
          'details',
          {},
          h('summary', {}, `System context (${view.system.length} characters)`),
          h('pre', { class: 'out' }, view.system),
        )
      : null,
    depth === 0 ? [h('h2', {}, 'Timeline'), timeline(view), h('h2', {}, 'Tokens and cost'), usageChart(view)] : null,
    h(level, {}, `Turns (${view.turns.length})`),
    h(
      'div',
      { class: 'turns' },
      view.turns.map((turn) => turnSection(view, turn, childCtx)),
    ),
    ending(view, depth),
  );
}

async function renderChild(id, ctx) {
  const view = await getJson(runPath(id));
  return h(
    'div',
    { class: 'child-run', role: 'group', 'aria-label': `Subagent ${id}` },
    h('p', {}, h('strong', {}, `Subagent ${id}`)),
    runBody(view, ctx),
  );
}

export async function showRun(app, id, config) {
  const heading = h('h1', {}, id);
  const links = h('p', { class: 'links' });
  const live = h('section', { class: 'live', 'aria-label': 'Live', hidden: true });
  const approvals = h('div');
  const actions = h('div');
  const content = h('div');
  add(app, h('p', {}, h('a', { href: '#/' }, '← Runs')), heading, links, approvals, actions, live, content);

  let view;
  const pending = new Map();
  let source;
  let timer;
  let closed = false;

  const render = () => {
    put(
      links,
      h('a', { href: view.webUi, target: '_blank', rel: 'noopener noreferrer' }, 'Open in Temporal Web UI'),
      view.parentWorkflowId
        ? [' · subagent of ', h('a', { href: runLink(view.parentWorkflowId) }, view.parentWorkflowId)]
        : null,
      view.forkedFrom
        ? [
            ' · fork of ',
            h('a', { href: runLink(view.forkedFrom.workflowId) }, view.forkedFrom.workflowId),
            view.forkedFrom.turn !== undefined ? ` at turn ${view.forkedFrom.turn}` : '',
          ]
        : null,
    );
    put(approvals, approvalsPanel(id, [...pending.values()], config, view.open));
    put(actions, actionsPanel(id, view, config));
    const opened = new Set([...content.querySelectorAll('details[open]')].map((d) => d.dataset.key).filter(Boolean));
    put(content, runBody(view, { depth: 0, checkpoint: config.checkpoint }));
    if (opened.size) for (const d of content.querySelectorAll('details')) if (opened.has(d.dataset.key)) d.open = true;
  };
  const load = async () => {
    view = await getJson(runPath(id));
    render();
  };
  const refresh = () => {
    if (timer || closed) return;
    timer = setTimeout(() => {
      timer = undefined;
      void load().catch(() => undefined);
    }, REFRESH_MS);
  };

  await load();
  if (view.open) {
    source = new EventSource(`${runPath(id)}/live`);
    source.addEventListener('run', (message) => {
      const event = JSON.parse(message.data);
      if (event.kind === 'approval_requested') pending.set(event.toolUseId, event);
      if (event.kind === 'approval_resolved') pending.delete(event.toolUseId);
      if (event.kind === 'model_call_finished' || event.kind === 'model_call_failed') live.hidden = true;
      refresh();
    });
    source.addEventListener('partial', (message) => {
      const p = JSON.parse(message.data);
      live.hidden = false;
      put(
        live,
        h('h2', {}, 'Model is writing…'),
        p.thinking
          ? h(
              'details',
              {},
              h('summary', {}, 'Reasoning so far'),
              h('div', { class: 'text reasoning' }, p.thinking.tail),
            )
          : null,
        p.text ? h('div', { class: 'text model', 'aria-live': 'polite' }, p.text.tail) : null,
      );
    });
    source.addEventListener('end', () => {
      source.close();
      pending.clear();
      live.hidden = true;
      void load();
    });
    source.addEventListener('problem', (message) => {
      live.hidden = false;
      put(live, h('p', { role: 'alert', class: 'problem' }, JSON.parse(message.data).message));
    });
  }
  return () => {
    closed = true;
    clearTimeout(timer);
    source?.close();
  };
}
