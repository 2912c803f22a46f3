/** The backtest report as one self-contained HTML page: figures, an equity curve, and fills drawn over the price. */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import type { BacktestReport } from "./Backtest.ts"

export const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const require = createRequire(import.meta.url)

/** uPlot's script and style, read once and inlined, so the page stays one file that loads nothing. */
let library: { readonly script: string; readonly style: string } | undefined
export const uplot = () =>
  (library ??= {
    script: readFileSync(require.resolve("uplot/dist/uPlot.iife.min.js"), "utf8").replace(/<\/script/gi, "<\\/script"),
    style: readFileSync(require.resolve("uplot/dist/uPlot.min.css"), "utf8")
  })

/** JSON inside a script element: `<` escaped so no string in it can close the element. */
export const embed = (value: unknown) => JSON.stringify(value).replace(/</g, "\\u003c")

/**
 * Draws the two charts from the embedded data: drag to zoom (double-click to reset), hover for the values. Fills are
 * points on the price chart's time axis; the mid line spans the gaps between its own points.
 */
const CHARTS = `
const data = JSON.parse(document.getElementById("report-data").textContent);
const width = () => Math.min(document.body.clientWidth, 940);
const secs = (ms) => ms / 1000;
const money = (u, v) => v == null ? "–" : v.toFixed(2);
const near = (u, lo, hi) => { const m = (hi - lo) * 0.08 || Math.abs(hi) * 0.001 || 1; return [lo - m, hi + m]; };
const plots = [];
plots.push(new uPlot({
  title: "Equity (cash + positions at mid)", width: width(), height: 260,
  scales: { x: { time: true }, y: { range: near } }, cursor: { drag: { x: true, y: false } },
  series: [{}, { label: "equity", stroke: "#2f6fdf", width: 2, value: money }],
  axes: [{}, { size: 70 }]
}, [data.equity.map((p) => secs(p[0])), data.equity.map((p) => p[1])], document.getElementById("equity")));
const times = [...new Set([...data.prices.map((p) => p[0]), ...data.fills.map((f) => f.ts)])].sort((a, b) => a - b);
const at = new Map(times.map((t, i) => [t, i]));
const mid = times.map(() => null), buys = times.map(() => null), sells = times.map(() => null);
for (const [t, v] of data.prices) mid[at.get(t)] = v;
for (const f of data.fills) (f.side === "buy" ? buys : sells)[at.get(f.ts)] = f.price;
const dots = (color) => ({ stroke: color, fill: color, width: 0, paths: () => null, points: { show: true, size: 9, fill: color } });
plots.push(new uPlot({
  title: "Fills over the mid of " + data.market, width: width(), height: 260,
  scales: { x: { time: true }, y: { range: near } }, cursor: { drag: { x: true, y: false } },
  series: [{}, { label: "mid", stroke: "#7a8496", width: 1.5, spanGaps: true },
    { label: "buy (YES)", ...dots("#1f9d55") }, { label: "sell (NO)", ...dots("#d64545") }],
  axes: [{}, { size: 60 }]
}, [times.map(secs), mid, buys, sells], document.getElementById("prices")));
addEventListener("resize", () => plots.forEach((p) => p.setSize({ width: width(), height: 260 })));
`

/** The positions that resolved while held: market, contracts, payout, P&L booked, cash paid in. */
const settlementTable = (report: BacktestReport): string => {
  if (report.settlements.length === 0) return ""
  const head = ["Settled", "Market", "Contracts", "Payout", "P&L", "Cash"]
  const row = (s: BacktestReport["settlements"][number]) =>
    [String(s.ts), s.market_id, s.contracts, s.payout, s.realized_pnl, s.cash_change]
      .map((v) => `<td>${escape(v)}</td>`)
      .join("")
  return `<h2>Settlements</h2>
<table id="settlements"><tr>${head.map((h) => `<td>${escape(h)}</td>`).join("")}</tr>${report.settlements
    .map((s) => `<tr>${row(s)}</tr>`)
    .join("")}</table>`
}

/** Renders the report; the page loads nothing from the network. */
export const renderReport = (report: BacktestReport): string => {
  const fills = report.fills.filter((f) => f.market_id === report.prices.market_id)
  // The charts are for the eye: the figures above them are the exact decimals.
  const data = {
    market: report.prices.market_id,
    equity: report.equity.map(([t, v]) => [t, Number(v)]),
    prices: report.prices.points.map(([t, v]) => [t, Number(v)]),
    fills: fills.map((f) => ({ ts: f.ts, side: f.side, price: Number(f.price), amount: f.amount }))
  }
  const lib = uplot()
  const rows: ReadonlyArray<readonly [string, string]> = [
    ["Strategy", report.strategy],
    ["Tape", `${report.tape.source}, ${report.tape.markets} markets, ${report.tape.events} events`],
    ["Seed", String(report.seed)],
    ["Realized P&L", report.pnl.realized],
    ["Settled P&L", `${report.pnl.settled} (${report.settlements.length} positions settled)`],
    ["Unrealized P&L", report.pnl.unrealized ?? "unmarked"],
    ["Fees", report.pnl.fees],
    ["Net P&L", report.pnl.net ?? "unmarked"],
    ["Equity", `${report.starting_cash} → ${report.final_equity}`],
    ["Max drawdown", report.max_drawdown],
    ["Orders / fills", `${report.orders} / ${report.fills.length}`],
    ["Max contracts held", report.exposure.max_contracts],
    ["Time in market", `${(report.exposure.time_in_market * 100).toFixed(1)}%`],
    ["Event log sha256", report.events_sha256]
  ]
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escape(report.strategy)}: backtest</title>
<style>${lib.style}</style>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:940px;color:#1c2430;background:#fff}
h1{font-size:20px;margin:0 0 12px}h2{font-size:16px;margin:16px 0 8px}table{border-collapse:collapse;margin-bottom:16px}
td{padding:3px 14px 3px 0;border-bottom:1px solid #e3e7ee}td:first-child{color:#5a6678}
.chart{margin:16px 0}.hint{color:#5a6678;font-size:12px}
</style></head><body>
<h1>Backtest: ${escape(report.strategy)}</h1>
<table>${rows.map(([k, v]) => `<tr><td>${escape(k)}</td><td>${escape(v)}</td></tr>`).join("")}</table>
${settlementTable(report)}
<p class="hint">Drag across a chart to zoom in, double-click to zoom out; hover for the values.</p>
<div class="chart" id="equity"></div>
<div class="chart" id="prices"></div>
<script type="application/json" id="report-data">${embed(data)}</script>
<script>${lib.script}</script>
<script>${CHARTS}</script>
</body></html>
`
}
