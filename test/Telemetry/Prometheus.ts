/** A strict reader of Prometheus' text format (0.0.4), for tests: it throws on anything the format does not allow. */

export interface Sample {
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

export interface MetricFamily {
  readonly name: string
  readonly type: "counter" | "gauge" | "histogram" | "summary" | "untyped"
  readonly help: string | undefined
  readonly samples: Array<Sample>
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*/

const parseValue = (text: string, line: number): number => {
  if (text === "+Inf") return Infinity
  if (text === "-Inf") return -Infinity
  if (text === "NaN") return NaN
  if (!/^[-+]?(\d+\.?\d*([eE][-+]?\d+)?|\.\d+([eE][-+]?\d+)?)$/.test(text)) {
    throw new Error(`line ${line}: '${text}' is not a number`)
  }
  return Number(text)
}

/** The sample's family: a histogram's `_bucket`, `_sum` and `_count` belong to the histogram's name. */
const familyOf = (name: string, families: Map<string, MetricFamily>): MetricFamily | undefined => {
  const direct = families.get(name)
  if (direct !== undefined) return direct
  for (const suffix of ["_bucket", "_sum", "_count"]) {
    if (!name.endsWith(suffix)) continue
    const f = families.get(name.slice(0, -suffix.length))
    if (f !== undefined && (f.type === "histogram" || (f.type === "summary" && suffix !== "_bucket"))) return f
  }
  return undefined
}

/** Reads an exposition: every family with its samples, checked line by line and then as a whole. */
export const parsePrometheus = (text: string): Map<string, MetricFamily> => {
  if (!text.endsWith("\n")) throw new Error("the exposition must end with a newline")
  const families = new Map<string, MetricFamily>()
  const seen = new Set<string>()
  const closed = new Set<string>()
  let current: string | undefined
  const lines = text.slice(0, -1).split("\n")
  lines.forEach((raw, i) => {
    const n = i + 1
    if (raw.trim() === "") return
    if (raw.startsWith("#")) {
      const m = /^# (HELP|TYPE) ([^ ]+) ?(.*)$/.exec(raw)
      if (m === null) return // a comment
      const [, what, name, rest] = m as unknown as [string, string, string, string]
      if (!NAME.test(name) || NAME.exec(name)![0] !== name) throw new Error(`line ${n}: bad name '${name}'`)
      if (closed.has(name)) throw new Error(`line ${n}: ${name} appears again after other families`)
      let family = families.get(name)
      if (what === "TYPE") {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) {
          throw new Error(`line ${n}: bad type '${rest}'`)
        }
        if (family !== undefined && family.samples.length > 0) throw new Error(`line ${n}: TYPE after samples`)
        if (family !== undefined && family.type !== "untyped") throw new Error(`line ${n}: second TYPE of ${name}`)
        family = { name, type: rest as MetricFamily["type"], help: family?.help, samples: [] }
      } else {
        if (family?.help !== undefined) throw new Error(`line ${n}: second HELP of ${name}`)
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ""))) throw new Error(`line ${n}: bad escape in HELP`)
        family = { name, type: family?.type ?? "untyped", help: rest, samples: family?.samples ?? [] }
      }
      families.set(name, family)
      if (current !== undefined && current !== name) closed.add(current)
      current = name
      return
    }
    // A sample: name, optional labels, value, optional timestamp.
    let rest = raw
    const nameMatch = NAME.exec(rest)
    if (nameMatch === null) throw new Error(`line ${n}: no metric name in '${raw}'`)
    const name = nameMatch[0]
    rest = rest.slice(name.length)
    const labels: Record<string, string> = {}
    if (rest.startsWith("{")) {
      rest = rest.slice(1)
      for (;;) {
        if (rest.startsWith("}")) {
          rest = rest.slice(1)
          break
        }
        const label = LABEL.exec(rest)
        if (label === null) throw new Error(`line ${n}: bad label in '${raw}'`)
        rest = rest.slice(label[0].length)
        if (!rest.startsWith('="')) throw new Error(`line ${n}: expected =" after ${label[0]}`)
        rest = rest.slice(2)
        let value = ""
        for (;;) {
          const c = rest[0]
          if (c === undefined) throw new Error(`line ${n}: unterminated label value`)
          rest = rest.slice(1)
          if (c === '"') break
          if (c === "\\") {
            const e = rest[0]
            rest = rest.slice(1)
            if (e === "\\") value += "\\"
            else if (e === '"') value += '"'
            else if (e === "n") value += "\n"
            else throw new Error(`line ${n}: bad escape \\${e ?? ""}`)
          } else value += c
        }
        if (label[0] in labels) throw new Error(`line ${n}: label ${label[0]} twice`)
        labels[label[0]] = value
        if (rest.startsWith(",")) rest = rest.slice(1)
        else if (!rest.startsWith("}")) throw new Error(`line ${n}: expected , or } in '${raw}'`)
      }
    }
    if (!rest.startsWith(" ")) throw new Error(`line ${n}: expected a space before the value in '${raw}'`)
    const parts = rest.trim().split(/ +/)
    if (parts.length < 1 || parts.length > 2) throw new Error(`line ${n}: bad value part '${rest}'`)
    const value = parseValue(parts[0]!, n)
    if (parts.length === 2 && !/^-?\d+$/.test(parts[1]!)) throw new Error(`line ${n}: bad timestamp`)
    let family = familyOf(name, families)
    if (family === undefined) {
      if (closed.has(name) || seen.has(name)) throw new Error(`line ${n}: ${name} is not contiguous`)
      family = { name, type: "untyped", help: undefined, samples: [] }
      families.set(name, family)
    }
    if (closed.has(family.name)) throw new Error(`line ${n}: ${family.name} is not contiguous`)
    if (current !== undefined && current !== family.name) closed.add(current)
    current = family.name
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`
    if (seen.has(key)) throw new Error(`line ${n}: duplicate series ${key}`)
    seen.add(key)
    if (family.type === "histogram" && name === `${family.name}_bucket` && labels["le"] === undefined) {
      throw new Error(`line ${n}: a bucket without le`)
    }
    if (family.type === "counter" && (value < 0 || Number.isNaN(value))) {
      throw new Error(`line ${n}: a counter cannot be ${value}`)
    }
    family.samples.push({ name, labels, value })
  })
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f)
  return families
}

const seriesKey = (labels: Readonly<Record<string, string>>) =>
  JSON.stringify(
    Object.entries(labels)
      .filter(([k]) => k !== "le")
      .sort()
  )

/** Buckets cumulative and ending in `+Inf`, which equals `_count`; `_sum` present. */
const checkHistogram = (f: MetricFamily) => {
  const groups = new Map<string, { buckets: Array<[number, number]>; sum?: number; count?: number }>()
  for (const s of f.samples) {
    const key = seriesKey(s.labels)
    const g = groups.get(key) ?? { buckets: [] }
    groups.set(key, g)
    if (s.name.endsWith("_bucket")) g.buckets.push([parseValue(s.labels["le"]!, 0), s.value])
    else if (s.name.endsWith("_sum")) g.sum = s.value
    else if (s.name.endsWith("_count")) g.count = s.value
    else throw new Error(`${f.name}: sample ${s.name} in a histogram`)
  }
  for (const [key, g] of groups) {
    if (g.sum === undefined || g.count === undefined) throw new Error(`${f.name}${key}: no _sum or _count`)
    const last = g.buckets[g.buckets.length - 1]
    if (last === undefined || last[0] !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket last`)
    if (last[1] !== g.count) throw new Error(`${f.name}${key}: +Inf bucket ${last[1]} != count ${g.count}`)
    for (let i = 1; i < g.buckets.length; i++) {
      if (g.buckets[i]![0] <= g.buckets[i - 1]![0]) throw new Error(`${f.name}${key}: bounds not increasing`)
      if (g.buckets[i]![1] < g.buckets[i - 1]![1]) throw new Error(`${f.name}${key}: buckets not cumulative`)
    }
  }
}

/** The value of one sample, found by its name and labels (0 when absent). */
export const sampleValue = (
  families: Map<string, MetricFamily>,
  name: string,
  labels: Readonly<Record<string, string>> = {}
): number => {
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name !== name) continue
      if (Object.entries(labels).every(([k, v]) => s.labels[k] === v)) return s.value
    }
  }
  return 0
}
