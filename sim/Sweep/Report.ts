/**
 * `sweep.html`: every run of a sweep in one self-contained page — a table sortable by any column (click its head),
 * each run's equity curve drawn small in its row, and the chosen runs' curves together in one chart (click rows to
 * add or remove them; the best five by the sweep's metric are drawn first). The page loads nothing from the network.
 */
import { embed, escape, uplot } from "../Report.ts"
import { isFailure, type JobOutcome, type JobResult } from "./Job.ts"
import type { SweepSpec } from "./Spec.ts"

const SPARK_W = 140
const SPARK_H = 28

/** A run's equity curve as a small SVG line, scaled to its own range. */
export const sparkline = (equity: ReadonlyArray<readonly [number, string]>): string => {
  if (equity.length < 2) return ""
  const xs = equity.map((p) => p[0])
  const ys = equity.map((p) => Number(p[1]))
  const [x0, x1] = [xs[0]!, xs[xs.length - 1]!]
  const [y0, y1] = [Math.min(...ys), Math.max(...ys)]
  const sx = (x: number) => (x1 === x0 ? 0 : ((x - x0) / (x1 - x0)) * SPARK_W)
  const sy = (y: number) => (y1 === y0 ? SPARK_H / 2 : SPARK_H - 2 - ((y - y0) / (y1 - y0)) * (SPARK_H - 4))
  const points = xs.map((x, i) => `${sx(x).toFixed(1)},${sy(ys[i]!).toFixed(1)}`).join(" ")
  const color = ys[ys.length - 1]! >= ys[0]! ? "#1f9d55" : "#d64545"
  return `<svg width="${SPARK_W}" height="${SPARK_H}" viewBox="0 0 ${SPARK_W} ${SPARK_H}"><polyline fill="none" stroke="${color}" stroke-width="1.2" points="${points}"/></svg>`
}

const SCRIPT = `
const data = JSON.parse(document.getElementById("sweep-data").textContent);
const table = document.getElementById("runs");
const body = table.tBodies[0];
let sortCol = 0, sortDir = 1; // the rows come ranked: the rank column, ascending
table.tHead.addEventListener("click", (e) => {
  const th = e.target.closest("th"); if (!th) return;
  const col = th.cellIndex; sortDir = col === sortCol ? -sortDir : (th.dataset.dir === "less" ? 1 : -1); sortCol = col;
  const rows = [...body.rows];
  const key = (r) => { const c = r.cells[col]; return c.dataset.v === undefined ? c.textContent : c.dataset.v; };
  rows.sort((a, b) => {
    const x = key(a), y = key(b), nx = Number(x), ny = Number(y);
    const both = x !== "" && y !== "" && !isNaN(nx) && !isNaN(ny);
    return sortDir * (both ? nx - ny : String(x).localeCompare(String(y)));
  });
  for (const r of rows) body.appendChild(r);
  for (const h of table.tHead.rows[0].cells) h.classList.toggle("sorted", h.cellIndex === col);
});
const chosen = new Set(data.best);
const colors = ["#2f6fdf", "#1f9d55", "#d64545", "#b7791f", "#805ad5", "#319795", "#dd6b20", "#4a5568"];
let plot = null;
const elapsed = (ms) => ms < 600000 ? (ms / 1000).toFixed(0) + " s" : (ms / 60000).toFixed(ms < 6000000 ? 1 : 0) + " min";
const draw = () => {
  const runs = data.runs.filter((r) => chosen.has(r.job));
  const times = [...new Set(runs.flatMap((r) => r.equity.map((p) => p[0])))].sort((a, b) => a - b);
  const at = new Map(times.map((t, i) => [t, i]));
  const series = runs.map((r) => { const s = times.map(() => null); for (const [t, v] of r.equity) s[at.get(t)] = v; return s; });
  const opts = {
    title: "Equity of the chosen runs (time since each tape's start)", width: Math.min(document.body.clientWidth, 1100), height: 300,
    scales: { x: { time: false } }, cursor: { drag: { x: true, y: false } },
    series: [{ label: "since start", value: (u, v) => v == null ? "–" : elapsed(v) },
      ...runs.map((r, i) => ({ label: r.job, stroke: colors[i % colors.length], width: 1.5, spanGaps: true }))],
    axes: [{ values: (u, vs) => vs.map(elapsed) }, { size: 90 }]
  };
  if (plot) plot.destroy();
  plot = new uPlot(opts, [times, ...series], document.getElementById("equity"));
  for (const r of body.rows) r.classList.toggle("chosen", chosen.has(r.dataset.job));
};
body.addEventListener("click", (e) => {
  const row = e.target.closest("tr"); if (!row || !row.dataset.job) return;
  chosen.has(row.dataset.job) ? chosen.delete(row.dataset.job) : chosen.add(row.dataset.job); draw();
});
draw();
`

/** The page for a sweep's outcomes (given in job order), its rows ranked by the metric, best first. */
export const renderSweep = (sweep: {
  readonly spec: SweepSpec
  readonly outcomes: ReadonlyArray<JobOutcome>
  readonly ranked: ReadonlyArray<JobResult>
}): string => {
  const { spec, outcomes, ranked } = sweep
  const names = Object.keys(spec.params).sort()
  const rankOf = new Map(ranked.map((r, i) => [r.job, i + 1]))
  const lib = uplot()
  const metricCols: ReadonlyArray<readonly [string, (r: JobResult) => string | number | null, "more" | "less"]> = [
    ["net", (r) => r.metrics.net, "more"],
    ["realized", (r) => r.metrics.realized, "more"],
    ["fees", (r) => r.metrics.fees, "less"],
    ["final equity", (r) => r.metrics.final_equity, "more"],
    ["max drawdown", (r) => r.metrics.max_drawdown, "less"],
    ["orders", (r) => r.metrics.orders, "more"],
    ["fills", (r) => r.metrics.fills, "more"]
  ]
  const head = [
    `<th data-dir="less" class="sorted">rank by ${escape(spec.metric)}</th>`,
    `<th data-dir="less">job</th>`,
    ...names.map((n) => `<th>${escape(n)}</th>`),
    `<th>seed</th>`,
    `<th>tape</th>`,
    ...metricCols.map(([label, , dir]) => `<th data-dir="${dir}">${escape(label)}</th>`),
    `<th>equity</th>`
  ].join("")
  const cell = (value: unknown) => {
    const text = value === null || value === undefined ? "–" : typeof value === "string" ? value : JSON.stringify(value)
    return `<td data-v="${escape(value === null || value === undefined ? "" : String(text))}">${escape(text)}</td>`
  }
  // Rows as the page says: ranked by the metric, best first; runs that failed after them, in job order.
  const rows = [...outcomes]
    .sort((a, b) => (rankOf.get(a.job) ?? Infinity) - (rankOf.get(b.job) ?? Infinity))
    .map((o) => {
      const failure = isFailure(o)
      const cells = [
        cell(failure ? null : (rankOf.get(o.job) ?? null)),
        cell(o.job),
        ...names.map((n) => cell(o.params[n])),
        cell(o.seed),
        cell(o.tape),
        ...(failure
          ? [`<td colspan="${metricCols.length + 1}" class="failed">${escape(o.error)}</td>`]
          : [...metricCols.map(([, read]) => cell(read(o))), `<td>${sparkline(o.equity)}</td>`])
      ]
      return `<tr${failure ? "" : ` data-job="${escape(o.job)}"`}>${cells.join("")}</tr>`
    })
    .join("\n")
  const failed = outcomes.filter(isFailure).length
  const data = {
    best: ranked.slice(0, 5).map((r) => r.job),
    // Each curve from its own tape's start, so runs over different tapes share one time axis.
    runs: ranked.map((r) => ({
      job: r.job,
      equity: r.equity.map(([t, v]) => [t - (r.equity[0]?.[0] ?? 0), Number(v)])
    }))
  }
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sweep: ${escape(spec.strategy)}</title>
<style>${lib.style}</style>
<style>
body{font:13px/1.4 system-ui,sans-serif;margin:24px;color:#1c2430;background:#fff}
h1{font-size:20px;margin:0 0 8px}.hint{color:#5a6678;font-size:12px}
table{border-collapse:collapse;margin-top:12px}th{cursor:pointer;text-align:left;background:#f3f5f9;position:sticky;top:0}
th,td{padding:3px 10px 3px 0;border-bottom:1px solid #e3e7ee;white-space:nowrap}th.sorted{text-decoration:underline}
tr[data-job]{cursor:pointer}tr.chosen{background:#eaf1fd}td.failed{color:#d64545}
</style></head><body>
<h1>Sweep: ${escape(spec.strategy)}</h1>
<p>${outcomes.length} runs${failed > 0 ? `, ${failed} failed` : ""}; ranked by <b>${escape(spec.metric)}</b>.</p>
<p class="hint">Click a column's head to sort by it; click rows to add or remove their equity in the chart (drag to zoom, double-click to zoom out).</p>
<div id="equity"></div>
<table id="runs"><thead><tr>${head}</tr></thead><tbody>
${rows}
</tbody></table>
<script type="application/json" id="sweep-data">${embed(data)}</script>
<script>${lib.script}</script>
<script>${SCRIPT}</script>
</body></html>
`
}
