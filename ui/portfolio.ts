/** Positions, balances, fills, and the P&L since the page opened as a line (uPlot). */
import uPlot from "uplot"
import "uplot/dist/uPlot.min.css"
import { api } from "./api.ts"
import { byId, fill, h, table, time } from "./dom.ts"
import { toMicros } from "./fixed.ts"

let account: () => string = () => ""
let chart: uPlot | undefined
const times: Array<number> = []
const net: Array<number> = []
const MAX_POINTS = 5000

export const initPortfolio = (options: { account: () => string }) => {
  account = options.account
}

/** A row; each cell carries its whole text as a title, for a column cut short to keep the table in its panel. */
const cells = (...values: ReadonlyArray<string | number | null>) =>
  h("tr", {}, ...values.map((v) => h("td", { title: v === null ? "" : String(v) }, v === null ? "–" : String(v))))

/**
 * A settled position as one phrase: what it held, what each contract paid, the P&L it booked, and on a venue that pays
 * once the holder redeems, what is left to redeem or that it was redeemed.
 */
const settledText = (
  settled: {
    payout: string
    contracts: string
    realized_pnl: string
    redeemable: boolean
    redeemable_amount: string
    redeemed_at: number | null
  } | null
) => {
  if (settled === null) return null
  const held = settled.contracts.startsWith("-") ? `${settled.contracts.slice(1)} NO` : `${settled.contracts} YES`
  const result = settled.payout === "1" ? "YES won" : settled.payout === "0" ? "NO won" : `YES paid ${settled.payout}`
  const redemption = settled.redeemable
    ? `, redeemable ${settled.redeemable_amount}`
    : settled.redeemed_at === null
      ? ""
      : ", redeemed"
  return `${held}, ${result}: ${settled.realized_pnl}${redemption}`
}

export const loadPortfolio = async () => {
  const a = account()
  const [positions, balances, fills, pnl] = await Promise.all([
    api("GET /trading/positions", { query: { account: a } }),
    api("GET /trading/balances", { query: { account: a } }),
    api("GET /trading/fills", { query: { account: a, limit: 30 } }),
    api("GET /trading/pnl", { query: { account: a, level: "account" } })
  ])
  fill(
    byId("positions"),
    table(
      ["market", "contracts", "side", "avg", "mark", "realized", "unrealized", "fees", "settled"],
      positions.data.map((p) =>
        cells(
          p.market_id,
          p.contracts,
          p.side ?? (p.settled === null ? null : "settled"),
          p.average_price,
          p.mark,
          p.realized_pnl,
          p.unrealized_pnl,
          p.fees,
          settledText(p.settled)
        )
      ),
      "no positions"
    )
  )
  fill(
    byId("balances"),
    table(
      ["account", "currency", "cash", "locked", "available"],
      balances.data.map((b) => cells(b.account, b.currency, b.cash, b.locked, b.available))
    )
  )
  fill(
    byId("fills"),
    table(
      ["time", "market", "side", "amount", "price", "fee", "liquidity", "order"],
      fills.data.map((f) =>
        cells(time(f.ts), f.market_id, f.side, f.amount, f.price, f.fee, f.liquidity, f.order_id.slice(0, 10))
      ),
      "no fills"
    )
  )
  // The line is for the eye only: the figures themselves are shown as the server sent them.
  const total = pnl.data.reduce((sum: number, p) => sum + (p.net === null ? 0 : toMicros(p.net)), 0) / 1_000_000
  byId("pnl-now").textContent = pnl.data
    .map((p) => `${p.key}: net ${p.net ?? "–"}${p.settled === "0" ? "" : ` (settled ${p.settled})`}`)
    .join("  ")
  plot(total)
}

const plot = (value: number) => {
  times.push(Date.now() / 1000)
  net.push(value)
  if (times.length > MAX_POINTS) {
    times.shift()
    net.shift()
  }
  const box = byId("pnl-chart")
  if (chart === undefined) {
    chart = new uPlot(
      {
        width: Math.max(box.clientWidth, 300),
        height: 160,
        scales: { x: { time: true } },
        series: [{}, { label: "net P&L", stroke: "#1f77b4", width: 2, fill: "rgba(31,119,180,0.08)" }],
        axes: [{}, { size: 60 }]
      },
      [times, net],
      box
    )
    new ResizeObserver(() => chart?.setSize({ width: Math.max(box.clientWidth, 300), height: 160 })).observe(box)
  } else {
    chart.setData([times, net])
  }
}
