/** A few DOM helpers: build elements, find them, replace a container's children. */

type Child = Node | string | number | null | undefined | false
type Attrs = Record<string, string | number | boolean | null | undefined | ((event: any) => void)>

/** An element with attributes (`on…` names take listeners; `false`/`null` leave the attribute out) and children. */
export const h = <K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElementTagNameMap[K] => {
  const el = document.createElement(tag)
  for (const [name, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue
    if (typeof value === "function") el.addEventListener(name.slice(2), value)
    else if (name === "value" && "value" in el) (el as HTMLInputElement).value = String(value)
    else el.setAttribute(name, value === true ? "" : String(value))
  }
  append(el, children)
  return el
}

const append = (el: Element, children: ReadonlyArray<Child | ReadonlyArray<Child>>) => {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue
    el.append(typeof child === "object" ? child : String(child))
  }
}

/** The element with this id; a missing one is a bug in the page. */
export const byId = <T extends HTMLElement = HTMLElement>(id: string): T => {
  const el = document.getElementById(id)
  if (el === null) throw new Error(`the page has no #${id}`)
  return el as T
}

/** Replaces the children of `el`. */
export const fill = (el: Element, ...children: ReadonlyArray<Child | ReadonlyArray<Child>>) => {
  el.replaceChildren()
  append(el, children)
}

/** A table with a header row and body rows. */
export const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<HTMLTableRowElement>, empty = "none") =>
  h(
    "table",
    {},
    h("thead", {}, h("tr", {}, ...head.map((c) => h("th", {}, c)))),
    h("tbody", {}, rows.length > 0 ? rows : h("tr", { class: "empty" }, h("td", { colspan: head.length }, empty)))
  )

export const time = (ms: number) => new Date(ms).toLocaleTimeString([], { hour12: false })

/** The first characters of an id, enough to tell orders apart on screen. */
export const short = (id: string) => (id.length > 10 ? id.slice(0, 10) : id)
