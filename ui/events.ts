/** The events socket as a log, filtered by kind; a dropped socket is opened again from the last seq seen. */
import { socketUrl, query, token } from "./api.ts"
import { byId, fill, h, time } from "./dom.ts"

const KINDS = ["order", "fill", "position", "managed", "risk", "engine", "fair_value"] as const
const KEPT = 400

let socket: WebSocket | undefined
let lastSeq = 0
let delay = 500
let stopped = false
let listener: (event: LogEvent) => void = () => {}
const lines: Array<HTMLElement> = []

export interface LogEvent {
  readonly seq: number
  readonly ts: number
  readonly kind: string
  readonly key: string
  readonly payload: Record<string, unknown>
}

export const initEvents = (onEvent: (event: LogEvent) => void) => {
  listener = onEvent
  byId("events-reconnect").addEventListener("click", () => socket?.close())
  fill(
    byId("event-kinds"),
    KINDS.map((k) =>
      h("label", {}, h("input", { type: "checkbox", checked: true, "data-kind": k, onchange: applyFilter }), ` ${k}`)
    )
  )
}

const shown = (): ReadonlySet<string> =>
  new Set(
    [...byId("event-kinds").querySelectorAll<HTMLInputElement>("input[data-kind]")]
      .filter((i) => i.checked)
      .map((i) => i.getAttribute("data-kind") as string)
  )

const family = (kind: string) => kind.split(".")[0] as string

const applyFilter = () => {
  const on = shown()
  for (const line of lines) line.hidden = !on.has(family(line.getAttribute("data-kind") ?? ""))
}

const status = (text: string) => (byId("events-status").textContent = text)

export const connectEvents = () => {
  stopped = false
  open()
}

export const disconnectEvents = () => {
  stopped = true
  socket?.close()
  socket = undefined
}

/** The seq the log has reached: a reconnect asks for what came after it. */
export const eventsSeq = () => lastSeq

const open = () => {
  const secret = token.get()
  if (secret === null || stopped) return
  const ws = new WebSocket(socketUrl(`/trading/ws/events${query({ since: lastSeq, key: secret })}`))
  socket = ws
  const from = lastSeq
  ws.onopen = () => {
    delay = 500
    status(`live, from seq ${from}`)
  }
  ws.onmessage = (message) => {
    const event = JSON.parse(String(message.data))
    if (event.seq <= lastSeq) return
    lastSeq = event.seq
    add(event)
    listener(event)
  }
  ws.onclose = (event) => {
    if (socket !== ws || stopped) return
    if (event.code === 4401 || event.code === 4403) {
      status(`closed by the server: ${event.reason}`)
      return
    }
    status(`reconnecting after seq ${lastSeq} (${event.code}${event.reason === "" ? "" : `: ${event.reason}`})`)
    window.setTimeout(open, delay)
    delay = Math.min(delay * 2, 10_000)
  }
}

const add = (event: LogEvent) => {
  const line = h(
    "li",
    { "data-kind": event.kind, "data-seq": event.seq, class: family(event.kind) },
    h("span", { class: "seq" }, String(event.seq)),
    h("span", {}, time(event.ts)),
    h("b", {}, event.kind),
    h("span", { class: "key" }, event.key),
    h("code", {}, JSON.stringify(event.payload).slice(0, 300))
  )
  line.hidden = !shown().has(family(event.kind))
  const log = byId("events")
  log.prepend(line)
  lines.unshift(line)
  while (lines.length > KEPT) lines.pop()?.remove()
}
