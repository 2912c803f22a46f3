/** Markets of every venue with search, and the chosen market's live YES and NO ladders and recent trades. */
import { api, describe, query, type Schemas, socketUrl } from "./api.ts"
import { byId, fill, h, time } from "./dom.ts"
import { complement, fromMicros, toMicros } from "./fixed.ts"

export type Market = Schemas["Market"]

type Level = Schemas["BookLevel"]

type TradeRow = Pick<Schemas["Trade"], "ts" | "price" | "amount" | "taker_side">

const DEPTH = 25
const TRADES_KEPT = 30

let venues: ReadonlyArray<string> = []
let selected: Market | undefined
let socket: WebSocket | undefined
let bids = new Map<number, Level>()
let asks = new Map<number, Level>()
let trades: Array<TradeRow> = []
/** My remaining amounts resting on the chosen market: YES price in micros → amount, per side. */
let mine = { buy: new Map<number, number>(), sell: new Map<number, number>() }
let lastSeq = 0
const listeners: Array<(market: Market | undefined) => void> = []

export const selectedMarket = () => selected
export const onSelect = (listener: (market: Market | undefined) => void) => void listeners.push(listener)

export const initMarkets = async () => {
  const answer = await api("GET /venues")
  venues = answer.data.map((v) => v.id)
  const venueSelect = byId<HTMLSelectElement>("market-venue")
  fill(venueSelect, h("option", { value: "" }, "all venues"), ...venues.map((v) => h("option", { value: v }, v)))
  let timer: number | undefined
  const later = () => {
    clearTimeout(timer)
    timer = window.setTimeout(() => void search(), 250)
  }
  byId("market-search").addEventListener("input", later)
  venueSelect.addEventListener("change", () => void search())
  await search()
}

let searches = 0

/** Each venue's answer is shown as it arrives: a slow or unreachable venue does not hold back the others. */
const search = async () => {
  const text = byId<HTMLInputElement>("market-search").value.trim()
  const venue = byId<HTMLSelectElement>("market-venue").value
  const list = byId("market-list")
  const chosen = venue === "" ? venues : [venue]
  const round = ++searches
  const sections = chosen.map((v) =>
    h("ul", { class: "venue-markets", "data-venue": v }, h("li", { class: "meta" }, `${v}…`))
  )
  fill(
    list,
    sections.map((section) => h("li", { class: "venue" }, section))
  )
  let found = 0
  await Promise.all(
    chosen.map(async (v, i) => {
      const section = sections[i]!
      try {
        const answer = await api("GET /venues/{venue}/markets", {
          path: { venue: v },
          query: { search: text, limit: 25 }
        })
        if (round !== searches) return
        found += answer.data.length
        fill(section, answer.data.map(marketItem))
      } catch (error) {
        if (round !== searches) return
        fill(section, h("li", { class: "venue-error" }, `${v}: ${describe(error)}`))
      }
    })
  )
  if (round === searches && found === 0) list.append(h("li", { class: "empty" }, "no market matches"))
}

const marketItem = (m: Market) =>
  h(
    "li",
    { "data-market-id": m.id, class: m.id === selected?.id ? "market chosen" : "market", onclick: () => choose(m) },
    h("span", { class: "title" }, m.title),
    h("span", { class: "quote" }, `${m.best_bid ?? "–"} / ${m.best_ask ?? "–"}`),
    h("span", { class: "id" }, m.id)
  )

const choose = (market: Market) => {
  selected = market
  for (const li of byId("market-list").querySelectorAll("li.market")) {
    li.classList.toggle("chosen", li.getAttribute("data-market-id") === market.id)
  }
  fill(byId("book-title"), market.title, " ", h("span", { class: "id" }, market.id))
  listeners.forEach((l) => l(market))
  connect()
}

/** Opens the market stream for the chosen market; a closed socket is opened again for a fresh snapshot. */
const connect = () => {
  socket?.close()
  bids = new Map()
  asks = new Map()
  trades = []
  render()
  const market = selected
  if (market === undefined) return
  const ws = new WebSocket(socketUrl(`/ws/markets${query({ ids: market.id, depth: DEPTH })}`))
  socket = ws
  const status = byId("book-status")
  ws.onopen = () => (status.textContent = "live")
  ws.onmessage = (message) => {
    const frame = JSON.parse(String(message.data))
    lastSeq = frame.seq
    if (frame.type === "snapshot") {
      bids = new Map(frame.bids.map((l: Level) => [toMicros(l.price), l]))
      asks = new Map(frame.asks.map((l: Level) => [toMicros(l.price), l]))
    } else if (frame.type === "change") {
      for (const l of frame.bids as ReadonlyArray<Level>) setLevel(bids, l)
      for (const l of frame.asks as ReadonlyArray<Level>) setLevel(asks, l)
    } else if (frame.type === "trade") {
      trades.unshift({ ts: frame.ts, price: frame.price, amount: frame.amount, taker_side: frame.taker_side })
      trades.length = Math.min(trades.length, TRADES_KEPT)
    }
    render()
  }
  ws.onclose = (event) => {
    if (socket !== ws) return
    status.textContent = `reconnecting (${event.code}${event.reason === "" ? "" : `: ${event.reason}`})`
    window.setTimeout(() => socket === ws && connect(), 1000)
  }
}

const setLevel = (side: Map<number, Level>, level: Level) => {
  if (toMicros(level.size) === 0) side.delete(toMicros(level.price))
  else side.set(toMicros(level.price), level)
}

/** The resting orders of mine on the chosen market, shown beside their level. */
export const setMine = (
  orders: ReadonlyArray<{
    market_id: string
    side: string
    price: string | null
    remaining: string
    held_by: string
    status: string
  }>
) => {
  mine = { buy: new Map(), sell: new Map() }
  for (const o of orders) {
    if (o.market_id !== selected?.id || o.held_by !== "venue" || o.price === null) continue
    if (o.status !== "open" && o.status !== "pending") continue
    const side = o.side === "sell" ? mine.sell : mine.buy
    const key = toMicros(o.price)
    side.set(key, (side.get(key) ?? 0) + toMicros(o.remaining))
  }
  render()
}

const amount = (micros: number | undefined) => (micros === undefined || micros === 0 ? "" : String(micros / 1_000_000))

interface Row {
  readonly price: string
  readonly size: string
  readonly side: "bid" | "ask"
  readonly mine: number | undefined
}

const ladder = (label: string, rowsAsk: ReadonlyArray<Row>, rowsBid: ReadonlyArray<Row>) =>
  h(
    "table",
    { class: "ladder" },
    h("thead", {}, h("tr", {}, h("th", {}, `${label} price`), h("th", {}, "size"), h("th", {}, "mine"))),
    h(
      "tbody",
      {},
      ...[...rowsAsk].reverse().map(row),
      h("tr", { class: "spread" }, h("td", { colspan: 3 }, "")),
      ...rowsBid.map(row)
    )
  )

const row = (r: Row) =>
  h(
    "tr",
    { class: `${r.side}${r.mine ? " has-mine" : ""}`, "data-side": r.side, "data-price": r.price },
    h("td", { class: "price" }, r.price),
    h("td", { class: "size" }, r.size),
    h("td", { class: "mine" }, amount(r.mine))
  )

/** The levels of one side, with a level for each price of mine the view does not show (beyond its depth). */
const withMine = (side: Map<number, Level>, own: Map<number, number>) => {
  const out = new Map(side)
  for (const key of own.keys()) if (!out.has(key)) out.set(key, { price: fromMicros(key), size: "" })
  return [...out.entries()]
}

const render = () => {
  const yesBids = withMine(bids, mine.buy).sort((a, b) => b[0] - a[0])
  const yesAsks = withMine(asks, mine.sell).sort((a, b) => a[0] - b[0])
  const yes = ladder(
    "YES",
    yesAsks.map(([k, l]) => ({ price: l.price, size: l.size, side: "ask", mine: mine.sell.get(k) })),
    yesBids.map(([k, l]) => ({ price: l.price, size: l.size, side: "bid", mine: mine.buy.get(k) }))
  )
  // The NO book mirrors the YES book at 1 − p: a YES bid is a NO ask, a YES ask a NO bid.
  const no = ladder(
    "NO",
    yesBids.map(([k, l]) => ({ price: complement(l.price), size: l.size, side: "ask", mine: mine.buy.get(k) })),
    yesAsks.map(([k, l]) => ({ price: complement(l.price), size: l.size, side: "bid", mine: mine.sell.get(k) }))
  )
  if (selected === undefined) {
    fill(byId("ladder-yes"), h("p", { class: "hint" }, "choose a market"))
    fill(byId("ladder-no"))
  } else {
    fill(byId("ladder-yes"), yes)
    fill(byId("ladder-no"), no)
  }
  fill(
    byId("trades"),
    trades.length === 0
      ? h("li", { class: "empty" }, "no trades yet")
      : trades.map((t) =>
          h("li", { class: t.taker_side }, `${time(t.ts)}  ${t.taker_side.padEnd(4)} ${t.amount} @ ${t.price}`)
        )
  )
  byId("book-seq").textContent = selected === undefined ? "" : `seq ${lastSeq}`
}
