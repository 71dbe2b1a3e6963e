// The run list: one visibility page at a time, filters by status and text, subagents folded under
// their parent, forks linked to their origin.
import { getJson } from './api.js';
import { add, clear, h } from './dom.js';
import { cost, duration, time } from './format.js';

const STATUSES = [
  'running',
  'awaiting_approval',
  'awaiting_input',
  'completed',
  'interrupted',
  'max_iterations',
  'max_budget',
  'refused',
  'failed',
  'cancelled',
  'terminated',
  'timed_out',
];

const runLink = (id) => `#/run/${encodeURIComponent(id)}`;

function runDuration(run) {
  const end = run.closeTime ? Date.parse(run.closeTime) : Date.now();
  return duration(end - Date.parse(run.startTime));
}

function row(run, depth) {
  const subagents = h('button', { type: 'button', class: 'small', 'aria-expanded': 'false' }, 'Subagents');
  const cells = h(
    'tr',
    { class: depth ? 'child' : undefined },
    h(
      'td',
      {},
      h('span', { class: 'indent' }, depth ? '↳ '.padStart(depth * 2 + 2, ' ') : ''),
      h('a', { href: runLink(run.workflowId) }, run.workflowId),
      run.forkedFrom
        ? h(
            'div',
            { class: 'note' },
            'fork of ',
            h('a', { href: runLink(run.forkedFrom.workflowId) }, run.forkedFrom.workflowId),
            run.forkedFrom.turn !== undefined ? ` at turn ${run.forkedFrom.turn}` : '',
          )
        : null,
    ),
    h('td', {}, h('span', { class: `status s-${run.status}` }, run.status)),
    h('td', {}, run.model ?? '-'),
    h('td', { class: 'num' }, run.iterations ?? '-'),
    h('td', { class: 'num' }, run.model === null && run.iterations === null ? '-' : cost(run.costUsd)),
    h('td', {}, time(run.startTime)),
    h('td', { class: 'num' }, runDuration(run)),
    h('td', {}, subagents),
  );
  let shown = null;
  subagents.addEventListener('click', async () => {
    if (shown) {
      for (const r of shown) r.remove();
      shown = null;
      subagents.setAttribute('aria-expanded', 'false');
      return;
    }
    subagents.disabled = true;
    try {
      const page = await getJson(`/api/runs?parent=${encodeURIComponent(run.workflowId)}&pageSize=100`);
      shown = page.runs.length
        ? page.runs.map((child) => row(child, depth + 1))
        : [h('tr', { class: 'child' }, h('td', { colspan: '8', class: 'note' }, 'No subagents.'))];
      cells.after(...shown);
      subagents.setAttribute('aria-expanded', 'true');
    } finally {
      subagents.disabled = false;
    }
  });
  return cells;
}

export async function showRunList(app) {
  const status = h(
    'select',
    { id: 'filter-status' },
    h('option', { value: '' }, 'any'),
    STATUSES.map((s) => h('option', { value: s }, s)),
  );
  const text = h('input', { id: 'filter-text', type: 'search', placeholder: 'run id or model starts with…' });
  const body = h('tbody');
  const more = h('button', { type: 'button' }, 'Load more');
  const problem = h('p', { role: 'alert', class: 'problem' });
  const count = h('p', { class: 'note', 'aria-live': 'polite' });
  let token = null;
  let shown = 0;

  async function load(reset) {
    if (reset) {
      clear(body);
      token = null;
      shown = 0;
    }
    const params = new URLSearchParams();
    if (status.value) params.set('status', status.value);
    if (text.value.trim()) params.set('text', text.value.trim());
    if (token) params.set('pageToken', token);
    problem.textContent = '';
    try {
      const page = await getJson(`/api/runs?${params}`);
      for (const run of page.runs) body.append(row(run, 0));
      shown += page.runs.length;
      token = page.nextPageToken;
      more.hidden = !token;
      count.textContent = shown ? `${shown} run${shown === 1 ? '' : 's'} shown` : 'No runs match.';
    } catch (error) {
      problem.textContent = String(error.message ?? error);
    }
  }

  status.addEventListener('change', () => void load(true));
  let typing;
  text.addEventListener('input', () => {
    clearTimeout(typing);
    typing = setTimeout(() => void load(true), 300);
  });
  more.addEventListener('click', () => void load(false));
  add(
    app,
    h('h1', {}, 'Runs'),
    h(
      'div',
      { class: 'filters', role: 'search' },
      h('label', { for: 'filter-status' }, 'Status '),
      status,
      h('label', { for: 'filter-text' }, 'Search '),
      text,
      h('button', { type: 'button', onclick: () => void load(true) }, 'Refresh'),
    ),
    problem,
    h(
      'table',
      { class: 'runs' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ['Run', 'Status', 'Model', 'Iterations', 'Cost', 'Started', 'Duration', 'Subagents'].map((c) =>
            h('th', { scope: 'col' }, c),
          ),
        ),
      ),
      body,
    ),
    count,
    more,
  );
  await load(true);
  return () => clearTimeout(typing);
}
