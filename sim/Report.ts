/** The backtest report as one self-contained HTML page: figures, an equity curve, and fills drawn over the price. */
import type { BacktestReport } from "./Backtest.ts"

const escape = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!)

const WIDTH = 900
const HEIGHT = 260
const PAD = { left: 64, right: 16, top: 16, bottom: 28 }

interface Scale {
  readonly x: (ts: number) => number
  readonly y: (v: number) => number
  readonly yTicks: ReadonlyArray<number>
  readonly t0: number
  readonly t1: number
}

const scaleOf = (ts: ReadonlyArray<number>, values: ReadonlyArray<number>): Scale => {
  const t0 = Math.min(...ts)
  const t1 = Math.max(t0 + 1, ...ts)
  let lo = Math.min(...values)
  let hi = Math.max(...values)
  if (hi - lo < 1e-9) {
    lo -= 1
    hi += 1
  }
  const margin = (hi - lo) * 0.08
  lo -= margin
  hi += margin
  const w = WIDTH - PAD.left - PAD.right
  const h = HEIGHT - PAD.top - PAD.bottom
  return {
    x: (t) => PAD.left + ((t - t0) / (t1 - t0)) * w,
    y: (v) => PAD.top + (1 - (v - lo) / (hi - lo)) * h,
    yTicks: [0, 0.25, 0.5, 0.75, 1].map((f) => lo + (hi - lo) * f),
    t0,
    t1
  }
}

const axes = (s: Scale, digits: number) => {
  const grid = s.yTicks
    .map(
      (v) =>
        `<line x1="${PAD.left}" x2="${WIDTH - PAD.right}" y1="${s.y(v).toFixed(1)}" y2="${s.y(v).toFixed(1)}" class="grid"/>` +
        `<text x="${PAD.left - 6}" y="${(s.y(v) + 4).toFixed(1)}" text-anchor="end">${v.toFixed(digits)}</text>`
    )
    .join("")
  const minutes = (s.t1 - s.t0) / 60_000
  const xLabels = [0, 0.5, 1]
    .map((f) => {
      const t = s.t0 + (s.t1 - s.t0) * f
      const anchor = f === 0 ? "start" : f === 1 ? "end" : "middle"
      return `<text x="${s.x(t).toFixed(1)}" y="${HEIGHT - 8}" text-anchor="${anchor}">+${(minutes * f).toFixed(1)} min</text>`
    })
    .join("")
  return grid + xLabels
}

const line = (points: ReadonlyArray<readonly [number, number]>, s: Scale, cls: string) =>
  points.length === 0
    ? ""
    : `<polyline class="${cls}" points="${points.map(([t, v]) => `${s.x(t).toFixed(1)},${s.y(v).toFixed(1)}`).join(" ")}"/>`

const chart = (title: string, body: string) =>
  `<figure><figcaption>${escape(title)}</figcaption><svg viewBox="0 0 ${WIDTH} ${HEIGHT}" role="img" aria-label="${escape(title)}">${body}</svg></figure>`

/** Renders the report; the page loads nothing from the network. */
export const renderReport = (report: BacktestReport): string => {
  const equity = report.equity.map(([t, v]) => [t, Number(v)] as const)
  const prices = report.prices.points.map(([t, v]) => [t, Number(v)] as const)
  const fills = report.fills.filter((f) => f.market_id === report.prices.market_id)
  const eqScale = scaleOf(
    equity.map(([t]) => t),
    equity.map(([, v]) => v)
  )
  const priceScale = scaleOf(
    [...prices.map(([t]) => t), ...fills.map((f) => f.ts)],
    [...prices.map(([, v]) => v), ...fills.map((f) => Number(f.price))]
  )
  const marks = fills
    .map(
      (f) =>
        `<circle class="${f.side}" cx="${priceScale.x(f.ts).toFixed(1)}" cy="${priceScale.y(Number(f.price)).toFixed(1)}" r="4"><title>${escape(
          `${f.side} ${f.amount} @ ${f.price}`
        )}</title></circle>`
    )
    .join("")
  const rows: ReadonlyArray<readonly [string, string]> = [
    ["Strategy", report.strategy],
    ["Tape", `${report.tape.source}, ${report.tape.markets} markets, ${report.tape.events} events`],
    ["Seed", String(report.seed)],
    ["Realized P&L", report.pnl.realized],
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
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:940px;color:#1c2430;background:#fff}
h1{font-size:20px;margin:0 0 12px}table{border-collapse:collapse;margin-bottom:16px}
td{padding:3px 14px 3px 0;border-bottom:1px solid #e3e7ee}td:first-child{color:#5a6678}
figure{margin:16px 0}figcaption{font-weight:600;margin-bottom:4px}svg{width:100%;height:auto;background:#fafbfd;border:1px solid #e3e7ee}
svg text{font-size:11px;fill:#5a6678}.grid{stroke:#e3e7ee}.equity{fill:none;stroke:#2f6fdf;stroke-width:2}
.price{fill:none;stroke:#7a8496;stroke-width:1.5}.buy{fill:#1f9d55}.sell{fill:#d64545}
.legend span{display:inline-block;margin-right:16px}.dot{display:inline-block;width:10px;height:10px;border-radius:5px;margin-right:4px}
</style></head><body>
<h1>Backtest: ${escape(report.strategy)}</h1>
<table>${rows.map(([k, v]) => `<tr><td>${escape(k)}</td><td>${escape(v)}</td></tr>`).join("")}</table>
${chart("Equity (cash + positions at mid)", axes(eqScale, 2) + line(equity, eqScale, "equity"))}
${chart(`Fills over the mid of ${report.prices.market_id}`, axes(priceScale, 2) + line(prices, priceScale, "price") + marks)}
<p class="legend"><span><i class="dot" style="background:#1f9d55"></i>buy (YES)</span><span><i class="dot" style="background:#d64545"></i>sell (NO)</span></p>
</body></html>
`
}
