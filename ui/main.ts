/** The dashboard: sign in with an access token, then markets, the ticket, orders, portfolio, events and the desk. */
import "./style.css"
import { ApiFailure, api, describe, openApiDocument, type Schemas, token } from "./api.ts"
import { initDesk, loadRisk, loadStatus, setDeskEnabled } from "./desk.ts"
import { byId, fill, h } from "./dom.ts"
import { connectEvents, initEvents } from "./events.ts"
import { initMarkets, setMine } from "./markets.ts"
import { initOrders, loadOrders, noteEvent, setOrdersEnabled } from "./orders.ts"
import { initPortfolio, loadPortfolio } from "./portfolio.ts"
import { initTicket, setTicketEnabled } from "./ticket.ts"

type Account = Schemas["Account"]

let accounts: ReadonlyArray<Account> = []
let started = false
const account = () => byId<HTMLSelectElement>("account").value

const permissionsOf = (name: string) => accounts.find((a) => a.account === name)?.permissions ?? []

let refreshing = false
let again = false
/** Reads orders, portfolio and status again; calls that arrive meanwhile are folded into one more read. */
const refresh = async () => {
  if (refreshing) {
    again = true
    return
  }
  refreshing = true
  try {
    const [orders] = await Promise.all([loadOrders(), loadPortfolio(), loadStatus()])
    setMine(orders)
    byId("refresh-error").textContent = ""
  } catch (error) {
    byId("refresh-error").textContent = describe(error)
  } finally {
    refreshing = false
    if (again) {
      again = false
      void refresh()
    }
  }
}

let pending: number | undefined
const soon = () => {
  clearTimeout(pending)
  pending = window.setTimeout(() => void refresh(), 100)
}

const applyPermissions = () => {
  const permissions = permissionsOf(account())
  const trade = permissions.includes("trade")
  const manage = permissions.includes("manage_credentials")
  setTicketEnabled(trade)
  setOrdersEnabled(trade)
  setDeskEnabled(trade, manage)
  byId("readonly").hidden = trade
}

const signIn = async (secret: string) => {
  const message = byId("signin-message")
  message.textContent = "signing in…"
  token.set(secret)
  let me: Schemas["Me"]
  try {
    me = await api("GET /trading/me")
    accounts = (await api("GET /trading/accounts")).data
  } catch (error) {
    token.clear()
    message.className = "error"
    message.textContent =
      error instanceof ApiFailure && error.status === 401
        ? `The server refused this token: ${error.message}. Paste the owner's access token from the registry ` +
          "(servers.json; the server's console says where), or a token made with `crossbook token create`."
        : `Could not sign in: ${describe(error)}`
    return
  }
  message.textContent = ""
  byId("signin").hidden = true
  byId("session").hidden = false
  byId("trading").hidden = false
  fill(
    byId("user"),
    h("b", { id: "user-name" }, me.name),
    " ",
    h(
      "span",
      { id: "permissions" },
      me.accounts.map((a) => h("span", { class: "grant" }, `${a.account}: ${a.permissions.join(", ")}`))
    )
  )
  const select = byId<HTMLSelectElement>("account")
  fill(
    select,
    accounts.map((a) => h("option", { value: a.account }, a.account))
  )
  const sim = accounts.find((a) => a.account === "sim:default")
  if (sim !== undefined) select.value = sim.account
  if (!started) await start()
  applyPermissions()
}

const start = async () => {
  started = true
  const document = await openApiDocument()
  const venues = (await api("GET /venues")).data.map((v) => v.id)
  await initTicket({ account, placed: soon })
  initOrders({ account, changed: soon })
  initPortfolio({ account })
  initDesk({ account, changed: soon, venues, document })
  initEvents((event) => {
    noteEvent(event)
    if (event.kind === "risk.updated") void loadRisk()
    soon()
  })
  byId("account").addEventListener("change", () => {
    applyPermissions()
    void loadRisk()
    void refresh()
  })
  connectEvents()
  await Promise.all([refresh(), loadRisk()])
  window.setInterval(() => void refresh(), 1500)
}

const boot = () => {
  byId("signin").addEventListener("submit", (event) => {
    event.preventDefault()
    const secret = byId<HTMLInputElement>("token").value.trim()
    if (secret === "") return
    byId<HTMLInputElement>("token").value = ""
    void signIn(secret)
  })
  byId("signout").addEventListener("click", () => {
    token.clear()
    location.reload()
  })
  initMarkets().catch((error) => (byId("market-list").textContent = `markets: ${describe(error)}`))
  const saved = token.get()
  if (saved !== null) void signIn(saved)
}

boot()
