/** Halt and resume with a policy, and the risk rules (edited with manage_credentials). */
import { api, describe, type Schemas } from "./api.ts"
import { byId, fill, h } from "./dom.ts"

let account: () => string = () => ""
let changed: () => void = () => {}
let ruleSchemas: Record<string, any> = {}

const say = (id: string, text: string, error = false) => {
  const out = byId(id)
  out.textContent = text
  out.className = error ? "error" : "ok"
}

export const initDesk = (options: {
  account: () => string
  changed: () => void
  venues: ReadonlyArray<string>
  document: any
}) => {
  account = options.account
  changed = options.changed
  ruleSchemas = options.document.components.schemas.RiskRules?.properties ?? {}
  fill(
    byId("halt-scope"),
    h("option", { value: "*" }, "* (every venue)"),
    options.venues.map((v) => h("option", { value: v }, v))
  )
  byId("halt-form").addEventListener("submit", (event) => {
    event.preventDefault()
    void halt()
  })
  byId("resume").addEventListener("click", () => void resume())
  byId("risk-form").addEventListener("submit", (event) => {
    event.preventDefault()
    void saveRisk()
  })
}

export const setDeskEnabled = (trade: boolean, manage: boolean) => {
  for (const el of byId("halt-form").querySelectorAll<HTMLButtonElement | HTMLInputElement | HTMLSelectElement>(
    "button, input, select"
  ))
    el.disabled = !trade
  byId<HTMLButtonElement>("resume").disabled = !trade
  for (const el of byId("risk-form").querySelectorAll<HTMLButtonElement | HTMLInputElement>("button, input"))
    el.disabled = !manage
  byId("risk-note").textContent = manage ? "" : "editing the rules needs manage_credentials"
}

export const loadStatus = async () => {
  const status = await api("GET /trading/status", { query: { account: account() } })
  const box = byId("halt-state")
  box.textContent = status.halted ? "HALTED" : "running"
  box.className = status.halted ? "halted" : "running"
  byId("status-line").textContent =
    `open orders ${status.open_orders} · waiting parents ${status.waiting_parents} · journal seq ${status.journal_seq}`
}

const halt = async () => {
  const reason = byId<HTMLInputElement>("halt-reason").value.trim() || "halted from the dashboard"
  try {
    const answer = await api("POST /trading/halt", {
      query: { account: account() },
      body: {
        reason,
        scope: byId<HTMLSelectElement>("halt-scope").value,
        policy: byId<HTMLSelectElement>("halt-policy").value as "cancel" | "hold"
      }
    })
    say("halt-message", `halted (${answer.policy}, scope ${answer.scope}); ${answer.canceled} order(s) canceled`)
  } catch (error) {
    say("halt-message", describe(error), true)
  }
  changed()
}

const resume = async () => {
  try {
    await api("POST /trading/resume", { query: { account: account() } })
    say("halt-message", "resumed")
  } catch (error) {
    say("halt-message", describe(error), true)
  }
  changed()
}

const isInt = (schema: any) => JSON.stringify(schema).includes("#/components/schemas/Int")

export const loadRisk = async () => {
  const risk = await api("GET /trading/risk", { query: { account: account() } })
  const disabled = byId<HTMLButtonElement>("risk-save").disabled
  fill(
    byId("risk-fields"),
    Object.entries(risk.rules as Record<string, unknown>).map(([name, value]) =>
      h(
        "div",
        { class: "field", "data-field": name },
        h("label", { for: `risk-${name}` }, name),
        typeof value === "boolean"
          ? h("input", { id: `risk-${name}`, name, type: "checkbox", checked: value, disabled, "data-kind": "boolean" })
          : h("input", {
              id: `risk-${name}`,
              name,
              type: "text",
              value: value === null ? "" : String(value),
              placeholder: "no limit",
              disabled,
              "data-kind": isInt(ruleSchemas[name]) ? "int" : "decimal"
            }),
        h("small", { class: "hint" }, ruleSchemas[name]?.description ?? ""),
        h("span", { class: "field-error" })
      )
    )
  )
  byId("risk-version").textContent =
    `version ${risk.version}${risk.updated_by === null ? "" : ` by ${risk.updated_by}`}`
}

const saveRisk = async () => {
  const rules: Record<string, unknown> = {}
  for (const input of byId("risk-fields").querySelectorAll<HTMLInputElement>("input[name]")) {
    const kind = input.getAttribute("data-kind")
    const text = input.value.trim()
    rules[input.name] = kind === "boolean" ? input.checked : text === "" ? null : kind === "int" ? Number(text) : text
  }
  for (const slot of byId("risk-fields").querySelectorAll(".field-error")) slot.textContent = ""
  try {
    await api("PUT /trading/risk", { query: { account: account() }, body: rules as Schemas["RiskRules"] })
    say("risk-message", "saved")
    await loadRisk()
  } catch (error: any) {
    say("risk-message", describe(error), true)
    for (const e of error?.errors ?? []) {
      const slot = byId("risk-fields").querySelector(
        `[data-field="${CSS.escape(String(e.field).split(".")[0] ?? "")}"] .field-error`
      )
      if (slot !== null) slot.textContent = e.message
    }
  }
}
