/**
 * The order ticket, built from the API document: the fields of `PlaceOrder`, and for a complex type the fields of its
 * params schema (`x-params-by-type`), each with its bounds and default. Errors come from the error body: its message,
 * and each field's problem beside that field.
 */
import { ApiFailure, api, describe, openApiDocument, type Schemas } from "./api.ts"
import { byId, fill, h } from "./dom.ts"
import { onSelect, selectedMarket } from "./markets.ts"

type Schema = Record<string, any>

let components: Record<string, Schema> = {}
let placeOrder: Schema = {}
let paramsByType: Record<string, Schema> = {}
let account: () => string = () => ""
let placed: () => void = () => {}

/** Fields the ticket fills itself or leaves to the API (the market chosen, the account, free-form maps). */
const OWN = new Set(["market_id", "account", "params", "tags"])

const resolve = (schema: Schema): Schema => {
  if (typeof schema["$ref"] !== "string") return schema
  const name = schema["$ref"].split("/").pop() as string
  const { $ref: _ref, ...rest } = schema
  return { ...resolve(components[name] ?? {}), ...rest }
}

/** The bounds and default of a field, in words. */
const hint = (schema: Schema): string => {
  const parts: Array<string> = []
  const low =
    schema["exclusiveMinimum"] !== undefined
      ? `> ${schema["exclusiveMinimum"]}`
      : schema["minimum"] !== undefined
        ? `≥ ${schema["minimum"]}`
        : ""
  const high = schema["maximum"] !== undefined ? `≤ ${schema["maximum"]}` : ""
  if (low !== "" || high !== "") parts.push([low, high].filter((p) => p !== "").join(", "))
  if (schema["default"] !== undefined) parts.push(`default ${JSON.stringify(schema["default"])}`)
  const description = schema["description"]
  if (typeof description === "string" && !description.startsWith("a string") && !description.startsWith("an integer")) {
    parts.push(description)
  }
  return parts.join(" · ")
}

const field = (path: string, raw: Schema, required: boolean): HTMLElement | null => {
  const schema = resolve(raw)
  const name = path.split(".").pop() as string
  const label = h("label", { for: `f-${path}` }, name, required ? h("span", { class: "required" }, " *") : null)
  const wrap = (input: HTMLElement) =>
    h(
      "div",
      { class: "field", "data-field": path },
      label,
      input,
      h("small", { class: "hint" }, hint(schema)),
      h("span", { class: "field-error" })
    )
  const type = schema["type"]
  if (Array.isArray(schema["enum"])) {
    const blank = required
      ? null
      : h("option", { value: "" }, schema["default"] === undefined ? "—" : `default (${schema["default"]})`)
    return wrap(
      h(
        "select",
        { id: `f-${path}`, name: path, "data-kind": "text" },
        blank,
        ...schema["enum"].map((v: string) => h("option", { value: v }, v))
      )
    )
  }
  if (type === "boolean") {
    return wrap(
      h(
        "select",
        { id: `f-${path}`, name: path, "data-kind": "boolean" },
        h("option", { value: "" }, schema["default"] === undefined ? "—" : `default (${schema["default"]})`),
        h("option", { value: "true" }, "true"),
        h("option", { value: "false" }, "false")
      )
    )
  }
  if (type === "number" || type === "integer") {
    return wrap(
      h("input", {
        id: `f-${path}`,
        name: path,
        type: "number",
        step: type === "integer" ? 1 : "any",
        min: schema["minimum"] ?? schema["exclusiveMinimum"],
        max: schema["maximum"],
        placeholder: schema["default"] === undefined ? "" : String(schema["default"]),
        "data-kind": "number"
      })
    )
  }
  if (type === "string") {
    return wrap(
      h("input", {
        id: `f-${path}`,
        name: path,
        type: "text",
        inputmode: schema["pattern"] === undefined ? undefined : "decimal",
        maxlength: schema["maxLength"],
        placeholder: schema["default"] === undefined ? "" : String(schema["default"]),
        "data-kind": "text"
      })
    )
  }
  if (type === "object" && schema["properties"] !== undefined) {
    const inner = Object.entries(schema["properties"] as Record<string, Schema>).map(([k, s]) =>
      field(`${path}.${k}`, s, (schema["required"] ?? []).includes(k))
    )
    return h(
      "fieldset",
      { class: "nested", "data-field": path },
      h("legend", {}, name, required ? " *" : ""),
      inner,
      h("span", { class: "field-error" })
    )
  }
  if (type === "array") {
    const item = resolve(schema["items"] ?? {})
    const keys = Object.keys(item["properties"] ?? {})
    return wrap(
      h("textarea", {
        id: `f-${path}`,
        name: path,
        rows: 3,
        placeholder: `JSON list of {${keys.join(", ")}}`,
        "data-kind": "json"
      })
    )
  }
  return null
}

export const initTicket = async (options: { account: () => string; placed: () => void }) => {
  account = options.account
  placed = options.placed
  const document = await openApiDocument()
  components = document.components.schemas
  placeOrder = components["PlaceOrder"] ?? {}
  paramsByType = placeOrder["properties"]?.["params"]?.["x-params-by-type"] ?? {}
  const form = byId<HTMLFormElement>("ticket")
  const required: ReadonlyArray<string> = placeOrder["required"] ?? []
  const properties = Object.entries(placeOrder["properties"] as Record<string, Schema>).filter(([k]) => !OWN.has(k))
  fill(
    byId("ticket-fields"),
    properties.map(([k, s]) => field(k, s, required.includes(k)))
  )
  byId<HTMLSelectElement>("f-type").addEventListener("change", renderParams)
  renderParams()
  onSelect(() => showMarket())
  showMarket()
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    void submit()
  })
}

const showMarket = () => {
  const market = selectedMarket()
  byId("ticket-market").textContent =
    market === undefined ? "choose a market first" : `${market.id} · tick ${market.tick_size} · lot ${market.lot_size}`
}

const renderParams = () => {
  const type = byId<HTMLSelectElement>("f-type").value
  const schema = paramsByType[type]
  const box = byId("ticket-params")
  if (schema === undefined) {
    fill(box)
    return
  }
  const resolved = resolve(schema)
  const required: ReadonlyArray<string> = resolved["required"] ?? []
  fill(
    box,
    h("h4", {}, `${type} params`),
    Object.entries(resolved["properties"] as Record<string, Schema>).map(([k, s]) =>
      field(`params.${k}`, s, required.includes(k))
    )
  )
}

const setAt = (target: Record<string, any>, path: string, value: unknown) => {
  const keys = path.split(".")
  let at = target
  for (const key of keys.slice(0, -1)) at = at[key] ??= {}
  at[keys[keys.length - 1]!] = value
}

const showErrors = (message: string, errors: ReadonlyArray<{ field: string; message: string }>) => {
  const form = byId("ticket")
  for (const el of form.querySelectorAll(".field-error")) el.textContent = ""
  for (const el of form.querySelectorAll(".invalid")) el.classList.remove("invalid")
  const unplaced: Array<string> = []
  for (const error of errors) {
    const box = form.querySelector(`[data-field="${CSS.escape(error.field)}"]`)
    const slot = box?.querySelector(":scope > .field-error")
    if (box === null || box === undefined || slot === null || slot === undefined)
      unplaced.push(`${error.field}: ${error.message}`)
    else {
      slot.textContent = error.message
      box.classList.add("invalid")
    }
  }
  const out = byId("ticket-message")
  out.className = message === "" ? "" : "error"
  fill(
    out,
    message,
    unplaced.length > 0
      ? h(
          "ul",
          {},
          unplaced.map((u) => h("li", {}, u))
        )
      : null
  )
}

const submit = async () => {
  const market = selectedMarket()
  if (market === undefined) return showErrors("choose a market first", [])
  const body: Record<string, any> = { market_id: market.id, account: account() }
  const problems: Array<{ field: string; message: string }> = []
  for (const input of byId("ticket").querySelectorAll<HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement>(
    "[name]"
  )) {
    const text = input.value.trim()
    if (text === "") continue
    const kind = input.getAttribute("data-kind")
    if (kind === "number") setAt(body, input.name, Number(text))
    else if (kind === "boolean") setAt(body, input.name, text === "true")
    else if (kind === "json") {
      try {
        setAt(body, input.name, JSON.parse(text))
      } catch {
        problems.push({ field: input.name, message: "not valid JSON" })
      }
    } else setAt(body, input.name, text)
  }
  if (problems.length > 0) return showErrors("fix the marked fields", problems)
  showErrors("", [])
  try {
    const order = await api("POST /trading/orders", { body: body as Schemas["PlaceOrder"] })
    const out = byId("ticket-message")
    out.className = "ok"
    out.textContent = `placed ${order.type} ${order.side} ${order.amount}: ${order.id} (${order.status})`
    placed()
  } catch (error) {
    if (error instanceof ApiFailure)
      showErrors(describe(new ApiFailure(error.status, error.code, error.message, [], error.details)), error.errors)
    else showErrors(String(error), [])
  }
}

/** Read-only tokens see the ticket but cannot send it. */
export const setTicketEnabled = (enabled: boolean) => {
  byId<HTMLButtonElement>("ticket-submit").disabled = !enabled
}
