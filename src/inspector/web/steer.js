// The buttons that steer a live run, named as the CLI's commands: Approve, Deny, Interrupt, Send,
// End session. Read-only inspectors show none of them.
import { act } from './api.js';
import { h } from './dom.js';
import { json, time } from './format.js';

function outcome() {
  return h('p', { class: 'note', role: 'status' });
}

async function run(button, status, call) {
  button.disabled = true;
  status.textContent = 'Sending…';
  status.classList.remove('problem');
  try {
    const answer = await call();
    status.textContent = answer.message || 'Done.';
  } catch (error) {
    status.textContent = String(error.message ?? error);
    status.classList.add('problem');
  } finally {
    button.disabled = false;
  }
}

export function approvalsPanel(id, approvals, config, open) {
  if (!open || !approvals.length) return h('div');
  return h(
    'section',
    { class: 'approvals', 'aria-label': 'Waiting for approval' },
    h('h2', {}, `Waiting for approval (${approvals.length})`),
    approvals.map((a) => {
      const status = outcome();
      const reasonId = `deny-reason-${a.toolUseId}`;
      const reason = h('input', { id: reasonId, type: 'text', maxlength: '2000' });
      const approve = h('button', { type: 'button', class: 'primary' }, 'Approve');
      const deny = h('button', { type: 'button' }, 'Deny');
      approve.addEventListener(
        'click',
        () => void run(approve, status, () => act(id, 'approve', { toolUseId: a.toolUseId })),
      );
      deny.addEventListener(
        'click',
        () =>
          void run(deny, status, () =>
            act(id, 'deny', { toolUseId: a.toolUseId, ...(reason.value ? { reason: reason.value } : {}) }),
          ),
      );
      return h(
        'article',
        { class: 'approval', 'aria-label': `Approval for ${a.name} call ${a.toolUseId}` },
        h('h3', {}, `${a.name} `, h('span', { class: 'note' }, `call ${a.toolUseId}`)),
        a.subagent
          ? h('p', { class: 'note' }, `Asked by subagent ${a.subagent.workflowId}; decided here, on its parent.`)
          : null,
        h('pre', { class: 'json' }, json(a.input)),
        a.deadline
          ? h('p', { class: 'note' }, `Denied automatically at ${time(new Date(a.deadline).toISOString())}`)
          : null,
        config.readOnly
          ? h('p', { class: 'note' }, 'Read-only inspector: decide it with durable-agent approve or deny.')
          : h('div', { class: 'row' }, approve, h('label', { for: reasonId }, 'Reason (for Deny)'), reason, deny),
        status,
      );
    }),
  );
}

export function actionsPanel(id, view, config) {
  if (config.readOnly || !view.open) return h('div');
  const status = outcome();
  const message = h('textarea', { id: 'send-message', rows: '2' });
  const send = h('button', { type: 'button', class: 'primary' }, 'Send');
  const interrupt = h('button', { type: 'button' }, 'Interrupt');
  const end = h('button', { type: 'button' }, 'End session');
  send.addEventListener(
    'click',
    () =>
      void run(send, status, async () => {
        const answer = await act(id, 'send', { message: message.value });
        message.value = '';
        return answer;
      }),
  );
  interrupt.addEventListener('click', () => void run(interrupt, status, () => act(id, 'interrupt', {})));
  end.addEventListener('click', () => void run(end, status, () => act(id, 'end', {})));
  return h(
    'section',
    { class: 'actions', 'aria-label': 'Steer this run' },
    h('div', { class: 'row' }, h('label', { for: 'send-message' }, 'Message'), message, send),
    h('div', { class: 'row' }, interrupt, end),
    status,
  );
}
