/** Working orders as a tree, parent → children, each parent with its live state; cancel one, or all. */
import { api, describe, type Schemas } from "./api.ts"
import { byId, fill, h, short, time } from "./dom.ts"

export type Order = Schemas["Order"]

/** Parts of a parent's `info` shown as its live state; the rest (params, children, kind, state) is shown elsewhere. */
const HIDDEN_INFO = new Set(["kind", "state", "params", "children", "detail"])

/**
 * The newest trailing level of each parent from the events stream: a trail is an event of its own, and the parent's
 * record is written again only when something else about it changes.
 */
const trailed = new Map<string, { readonly seq: number; readonly level: unknown; readonly reference: unknown }>()

export const noteEvent = (event: { seq: number; kind: string; payload: Record<string, unknown> }) => {
  if (event.kind !== "managed.trailed") return
  const id = String(event.payload["parent_id"])
  if ((trailed.get(id)?.seq ?? 0) < event.seq) {
    trailed.set(id, { seq: event.seq, level: event.payload["level"], reference: event.payload["reference"] })
  }
}

const liveInfo = (order: Order): Record<string, unknown> => {
  const trail = trailed.get(order.id)
  if (trail === undefined || order.type !== "trailing_stop") return order.info
  return { ...order.info, level: trail.level, reference: trail.reference }
}

let canTrade = false
let account: () => string = () => ""
let changed: () => void = () => {}

export const initOrders = (options: { account: () => string; changed: () => void }) => {
  account = options.account
  changed = options.changed
  byId("cancel-all").addEventListener("click", () => void cancelAll())
}

export const setOrdersEnabled = (enabled: boolean) => {
  canTrade = enabled
  byId<HTMLButtonElement>("cancel-all").disabled = !enabled
}

export const loadOrders = async (): Promise<ReadonlyArray<Order>> => {
  const answer = await api("GET /trading/orders", { query: { account: account(), limit: 500 } })
  render(answer.data)
  return answer.data
}

/** An object of the live state (an oco's leg, say) in words: `filled 2 · fired · live_child 3`; false and null left out. */
const objectText = (value: object): string =>
  Object.entries(value)
    .filter(([, v]) => v !== null && v !== undefined && v !== false)
    .map(([k, v]) => (v === true ? k : `${k} ${typeof v === "object" ? objectText(v as object) : String(v)}`))
    .join(" · ") || "–"

/** A time (`…_at`, ms since epoch) as a clock time; a list as a comma list, its objects numbered and in words. */
const infoValue = (key: string, value: unknown): string =>
  key.endsWith("_at") && typeof value === "number"
    ? time(value)
    : Array.isArray(value)
      ? value.some((v) => typeof v === "object" && v !== null)
        ? value
            .map((v, i) => `${i + 1}: ${typeof v === "object" && v !== null ? objectText(v) : String(v)}`)
            .join(" | ")
        : value.join(",")
      : typeof value === "object" && value !== null
        ? objectText(value)
        : String(value)

const infoText = (info: Record<string, unknown>) =>
  Object.entries(info)
    .filter(([k, v]) => !HIDDEN_INFO.has(k) && v !== null && !(Array.isArray(v) && v.length === 0))
    .map(([k, v]) => h("span", { class: "info-item", "data-info": k }, `${k} `, h("b", {}, infoValue(k, v))))

const node = (order: Order, children: ReadonlyArray<Order>): HTMLElement => {
  const detail = typeof order.info["detail"] === "string" ? order.info["detail"] : null
  return h(
    "li",
    {
      class: `order ${order.held_by}`,
      "data-order-id": order.id,
      "data-parent-id": order.parent_id ?? "",
      "data-type": order.type
    },
    h(
      "div",
      { class: "order-line" },
      h("span", { class: "oid", title: order.id }, short(order.id)),
      h("span", { class: `side ${order.side}` }, order.side),
      h("span", { class: "type" }, order.type),
      h("span", {}, `${order.filled}/${order.amount}`),
      order.price === null ? null : h("span", {}, `@ ${order.price}`),
      order.stop_price === null ? null : h("span", {}, `stop ${order.stop_price}`),
      h("span", { class: `status ${order.status}` }, order.status),
      h("span", { class: "market" }, order.market_id),
      h("button", { class: "cancel", disabled: !canTrade, onclick: () => void cancel(order.id) }, "cancel")
    ),
    order.held_by === "engine"
      ? h("div", { class: "info" }, infoText(liveInfo(order)), detail === null ? null : h("em", {}, detail))
      : null,
    children.length > 0
      ? h(
          "ul",
          { class: "children" },
          children.map((c) => node(c, []))
        )
      : null
  )
}

const render = (orders: ReadonlyArray<Order>) => {
  const ids = new Set(orders.map((o) => o.id))
  const children = new Map<string, Array<Order>>()
  for (const o of orders) {
    if (o.parent_id === null || !ids.has(o.parent_id)) continue
    const list = children.get(o.parent_id) ?? []
    list.push(o)
    children.set(o.parent_id, list)
  }
  const roots = orders.filter((o) => o.parent_id === null || !ids.has(o.parent_id))
  fill(
    byId("orders"),
    roots.length === 0
      ? h("li", { class: "empty" }, "no working orders")
      : roots.map((o) => node(o, children.get(o.id) ?? []))
  )
}

const say = (text: string, error = false) => {
  const out = byId("orders-message")
  out.textContent = text
  out.className = error ? "error" : "ok"
}

const cancel = async (id: string) => {
  try {
    // The order is looked for among the chosen account's (a paper account's order is not the default account's).
    const order = await api("DELETE /trading/orders/{id}", { path: { id }, query: { account: account() } })
    say(`cancel ${short(id)}: ${order.status}`)
  } catch (error) {
    say(`cancel ${short(id)}: ${describe(error)}`, true)
  }
  changed()
}

const cancelAll = async () => {
  try {
    const answer = await api("DELETE /trading/orders", { query: { account: account() } })
    say(`canceled ${answer.canceled}`)
  } catch (error) {
    say(`cancel all: ${describe(error)}`, true)
  }
  changed()
}
