// The inspector's page: two views chosen by the address's hash, #/ (runs) and #/run/<id>.
import { getJson } from './api.js';
import { clear, h, put } from './dom.js';
import { showRunList } from './list.js';
import { showRun } from './run.js';

const app = document.getElementById('app');
let config = { readOnly: true };
let leave = () => {};

async function route() {
  leave();
  leave = () => {};
  const hash = location.hash || '#/';
  const run = /^#\/run\/(.+)$/.exec(hash);
  clear(app);
  try {
    if (run) leave = await showRun(app, decodeURIComponent(run[1]), config);
    else leave = await showRunList(app, config);
  } catch (error) {
    put(app, h('h1', {}, 'Something went wrong'), h('p', { role: 'alert' }, String(error.message ?? error)));
  }
}

async function start() {
  config = await getJson('/api/config');
  document.getElementById('mode').textContent = config.readOnly
    ? `read-only · namespace ${config.namespace}`
    : `namespace ${config.namespace}`;
  window.addEventListener('hashchange', () => void route());
  await route();
}

void start();
