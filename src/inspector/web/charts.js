// Pictures of a run, as inline SVG: a timeline (model and tool calls as bars over time, parallel
// calls side by side) and tokens and cost per iteration.
import { s, h } from './dom.js';
import { cost, duration, tokens, totalInput } from './format.js';

const WIDTH = 900;
const ROW = 14;

/** Model calls on the first row, tool calls packed into rows below it so that overlapping calls sit side by side. */
export function timeline(view) {
  const bars = [];
  for (const turn of view.turns) {
    const t = turn.timing;
    bars.push({
      kind: 'model',
      label: `turn ${turn.iteration}: model`,
      start: t.startedAt ?? t.scheduledAt,
      end: t.endedAt,
    });
    for (const block of turn.blocks) {
      if (block.type !== 'tool' || !block.call.timing) continue;
      const c = block.call.timing;
      bars.push({
        kind: block.call.result?.isError ? 'error' : 'tool',
        label: `turn ${turn.iteration}: ${block.call.name}`,
        start: c.startedAt ?? c.scheduledAt,
        end: c.endedAt,
      });
    }
  }
  if (!bars.length) return null;
  const now = Date.now();
  const t0 = Math.min(...bars.map((b) => b.start));
  const t1 = Math.max(...bars.map((b) => b.end ?? now), t0 + 1);
  const x = (t) => ((t - t0) / (t1 - t0)) * WIDTH;
  const rowsEnd = [];
  const placed = bars.map((bar) => {
    if (bar.kind === 'model') return { ...bar, row: 0 };
    let row = 1;
    while ((rowsEnd[row] ?? -Infinity) > bar.start) row++;
    rowsEnd[row] = bar.end ?? now;
    return { ...bar, row };
  });
  const rows = Math.max(1, ...placed.map((b) => b.row)) + 1;
  const height = rows * ROW + 20;
  return h(
    'figure',
    { class: 'chart' },
    s(
      'svg',
      {
        viewBox: `0 0 ${WIDTH} ${height}`,
        role: 'img',
        'aria-label': `Timeline of ${bars.length} calls over ${duration(t1 - t0)}`,
      },
      placed.map((b) =>
        s(
          'rect',
          {
            x: x(b.start).toFixed(1),
            y: b.row * ROW + 2,
            width: Math.max(1.5, x(b.end ?? now) - x(b.start)).toFixed(1),
            height: ROW - 4,
            class: `bar ${b.kind}`,
          },
          s('title', {}, `${b.label} · ${duration((b.end ?? now) - b.start)}`),
        ),
      ),
      s('text', { x: 0, y: height - 4, class: 'axis' }, '0'),
      s('text', { x: WIDTH, y: height - 4, class: 'axis', 'text-anchor': 'end' }, duration(t1 - t0)),
    ),
    h(
      'figcaption',
      {},
      'Timeline: model calls (top row) and tool calls over time; calls that ran in parallel sit side by side.',
    ),
  );
}

/** Input and output tokens per iteration as stacked columns, cost as a line. */
export function usageChart(view) {
  const turns = view.turns;
  if (!turns.length) return null;
  const height = 120;
  const maxTokens = Math.max(1, ...turns.map((t) => totalInput(t.usage) + t.usage.outputTokens));
  const costs = turns.map((t) => t.costUsd);
  const known = costs.filter((c) => c !== null);
  const maxCost = Math.max(1e-9, ...known);
  const w = WIDTH / turns.length;
  const y = (v) => height - (v / maxTokens) * height;
  const points = turns
    .map((t, i) =>
      t.costUsd === null
        ? null
        : `${(i * w + w / 2).toFixed(1)},${(height - (t.costUsd / maxCost) * height).toFixed(1)}`,
    )
    .filter(Boolean);
  const total = known.reduce((a, b) => a + b, 0);
  return h(
    'figure',
    { class: 'chart' },
    s(
      'svg',
      {
        viewBox: `0 0 ${WIDTH} ${height + 16}`,
        role: 'img',
        'aria-label': `Tokens and cost of ${turns.length} iterations; most tokens in one: ${maxTokens}; total cost ${cost(known.length ? total : null)}`,
      },
      turns.map((t, i) => {
        const input = totalInput(t.usage);
        return s(
          'g',
          {},
          s('rect', {
            x: (i * w + 1).toFixed(1),
            y: y(input).toFixed(1),
            width: Math.max(1, w - 2).toFixed(1),
            height: (height - y(input)).toFixed(1),
            class: 'col input',
          }),
          s('rect', {
            x: (i * w + 1).toFixed(1),
            y: y(input + t.usage.outputTokens).toFixed(1),
            width: Math.max(1, w - 2).toFixed(1),
            height: (y(input) - y(input + t.usage.outputTokens)).toFixed(1),
            class: 'col output',
          }),
          s(
            'title',
            {},
            `iteration ${t.iteration}: ${tokens(input)} in, ${tokens(t.usage.outputTokens)} out, ${cost(t.costUsd)}`,
          ),
        );
      }),
      points.length > 1 ? s('polyline', { points: points.join(' '), class: 'cost' }) : null,
      s('text', { x: 0, y: height + 14, class: 'axis' }, 'iteration 1'),
      s('text', { x: WIDTH, y: height + 14, class: 'axis', 'text-anchor': 'end' }, `iteration ${turns.length}`),
    ),
    h('figcaption', {}, 'Tokens per iteration (input, output stacked) and cost (line).'),
  );
}
