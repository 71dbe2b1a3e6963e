// A run's turns as people read them: the model's reasoning and text, each tool call with its input
// and result (long output collapsed), the turn's cost, tokens and time, a link to its event in the
// Temporal Web UI, and subagents opening in place under their `task` call.
import { add, h, put } from './dom.js';
import { cost, duration, json, preview, tokens, totalInput } from './format.js';

/** Characters of a tool's output shown before "Show all". */
const RESULT_PREVIEW_CHARS = 2000;

export function eventLink(view, timing) {
  return `${view.webUi}/${encodeURIComponent(timing.runId)}/history/events/${encodeURIComponent(timing.eventId)}`;
}

function longText(text, cls) {
  if (text.length <= RESULT_PREVIEW_CHARS) return h('pre', { class: cls }, text);
  const pre = h('pre', { class: cls }, text.slice(0, RESULT_PREVIEW_CHARS), '…');
  const button = h('button', { type: 'button', class: 'small' }, `Show all ${text.length} characters`);
  button.addEventListener('click', () => {
    pre.textContent = '';
    add(pre, text);
    button.remove();
  });
  return h('div', {}, pre, button);
}

/** Lazily filled: a closed <details> costs one summary line until someone opens it. */
function lazyDetails(key, summary, fill, open = false) {
  const details = h('details', { 'data-key': key }, h('summary', {}, summary));
  let filled = false;
  const ensure = () => {
    if (filled || !details.open) return;
    filled = true;
    add(details, fill());
  };
  details.addEventListener('toggle', ensure);
  if (open) {
    details.open = true;
    ensure();
  }
  return details;
}

function toolCall(view, call, ctx) {
  const timing = call.timing;
  const status = !call.result ? 'no result yet' : call.result.isError ? 'error' : 'ok';
  const summary = [
    h('span', { class: 'tool-name' }, call.name),
    ' ',
    h('span', { class: 'note' }, preview(call.input, 100)),
    ' ',
    h('span', { class: `badge ${status === 'error' ? 'bad' : ''}` }, status),
    timing?.endedAt
      ? h('span', { class: 'note' }, ` · ${duration(timing.endedAt - (timing.startedAt ?? timing.scheduledAt))}`)
      : null,
  ];
  const details = lazyDetails(`tool:${call.id}`, summary, () => [
    h('h4', {}, 'Input'),
    h('pre', { class: 'json' }, json(call.input)),
    h('h4', {}, call.result?.isError ? 'Result (error)' : 'Result'),
    call.result
      ? longText(call.result.content, call.result.isError ? 'out error' : 'out')
      : h('p', { class: 'note' }, 'No result in history yet.'),
    call.spill ? h('p', { class: 'note' }, 'Whole output saved in the workspace: ', h('code', {}, call.spill)) : null,
    timing?.attempt > 1
      ? h('p', { class: 'note' }, `Attempt ${timing.attempt}; before: ${timing.lastFailure ?? 'failed'}`)
      : null,
    timing?.failure ? h('p', { class: 'problem' }, `Failed: ${timing.failure}`) : null,
    h(
      'p',
      { class: 'note' },
      `Tool call ${call.id}`,
      timing
        ? [
            ' · ',
            h(
              'a',
              { href: eventLink(view, timing), target: '_blank', rel: 'noopener noreferrer' },
              'event in Temporal Web UI',
            ),
          ]
        : null,
    ),
  ]);
  details.classList.add('tool');
  if (!call.subagent) return details;
  const holder = h('div', { class: 'subagent' });
  const label = `${call.subagent.agent ?? 'general-purpose'} subagent ${call.subagent.workflowId}`;
  const open = h('button', { type: 'button', 'aria-expanded': 'false' }, `Open subagent ${call.subagent.workflowId}`);
  open.addEventListener('click', async () => {
    if (open.getAttribute('aria-expanded') === 'true') {
      put(holder);
      open.setAttribute('aria-expanded', 'false');
      open.textContent = `Open subagent ${call.subagent.workflowId}`;
      return;
    }
    open.setAttribute('aria-expanded', 'true');
    open.textContent = `Close subagent ${call.subagent.workflowId}`;
    put(holder, h('p', {}, 'Loading…'));
    try {
      put(holder, await ctx.renderChild(call.subagent.workflowId));
    } catch (error) {
      put(holder, h('p', { role: 'alert', class: 'problem' }, String(error.message ?? error)));
    }
  });
  return h(
    'div',
    { class: 'task' },
    details,
    h(
      'p',
      { class: 'note' },
      label,
      ' ',
      h('a', { href: `#/run/${encodeURIComponent(call.subagent.workflowId)}` }, '(own page)'),
    ),
    open,
    holder,
  );
}

export function turnSection(view, turn, ctx) {
  const t = turn.timing;
  const level = ctx.depth ? 'h4' : 'h3';
  const meta = [
    `${tokens(totalInput(turn.usage))} in · ${tokens(turn.usage.outputTokens)} out`,
    cost(turn.costUsd),
    duration(turn.durationMs),
    turn.stopReason ?? 'no stop reason',
  ];
  return h(
    'section',
    { class: 'turn', 'aria-label': `Turn ${turn.iteration}` },
    h(level, {}, `Turn ${turn.iteration}`),
    h(
      'p',
      { class: 'meta' },
      meta.join(' · '),
      ' · ',
      h(
        'a',
        { href: eventLink(view, t), target: '_blank', rel: 'noopener noreferrer' },
        `event ${t.eventId} in Temporal Web UI`,
      ),
    ),
    t.attempt > 1
      ? h('p', { class: 'warn' }, `Model call retried: attempt ${t.attempt}; before: ${t.lastFailure ?? 'failed'}`)
      : null,
    turn.userMessages.map((m) =>
      h('div', { class: 'user' }, h('span', { class: 'who' }, 'Operator message'), h('div', { class: 'text' }, m)),
    ),
    turn.blocks.map((block, i) => {
      switch (block.type) {
        case 'text':
          return h('div', { class: 'text model' }, block.text);
        case 'reasoning':
          return lazyDetails(`reasoning:${ctx.depth}:${turn.iteration}:${i}`, 'Reasoning', () => [
            h('div', { class: 'text reasoning' }, block.text),
          ]);
        case 'tool':
          return toolCall(view, block.call, ctx);
        default:
          return h('p', { class: 'note' }, `(${block.kind} block)`);
      }
    }),
    ctx.checkpoint ? ctx.checkpoint(view, turn) : null,
  );
}
