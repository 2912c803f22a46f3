/** A small metrics registry: counters, gauges and histograms with labels, rendered in Prometheus' text format. */

type Kind = "counter" | "gauge" | "histogram"

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL = /^[a-zA-Z_][a-zA-Z0-9_]*$/

/** A label value as the text format quotes it: backslash, double quote and newline escaped. */
const quote = (value: string) => `"${value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`

/** A sample value: integers as they are, `+Inf`, `-Inf` and `NaN` by name. */
export const formatValue = (n: number): string =>
  Number.isNaN(n) ? "NaN" : n === Infinity ? "+Inf" : n === -Infinity ? "-Inf" : String(n)

const labelText = (names: ReadonlyArray<string>, values: ReadonlyArray<string>, extra?: string): string => {
  const parts: Array<string> = []
  for (let i = 0; i < names.length; i++) parts.push(`${names[i]}=${quote(values[i] ?? "")}`)
  if (extra !== undefined) parts.push(extra)
  return parts.length === 0 ? "" : `{${parts.join(",")}}`
}

abstract class Family<S> {
  protected readonly series = new Map<string, { readonly labels: ReadonlyArray<string>; readonly value: S }>()
  constructor(
    readonly name: string,
    readonly help: string,
    readonly kind: Kind,
    readonly labelNames: ReadonlyArray<string>
  ) {
    if (!NAME.test(name)) throw new Error(`bad metric name '${name}'`)
    for (const l of labelNames) if (!LABEL.test(l) || l === "le") throw new Error(`bad label name '${l}'`)
  }
  protected abstract fresh(): S
  protected at(labels: ReadonlyArray<string>): S {
    const key = labels.length === 0 ? "" : labels.length === 1 ? labels[0]! : labels.join("\u0001")
    const found = this.series.get(key)
    if (found !== undefined) return found.value
    if (labels.length !== this.labelNames.length) {
      throw new Error(`${this.name} takes ${this.labelNames.length} labels, got ${labels.length}`)
    }
    const value = this.fresh()
    this.series.set(key, { labels: [...labels], value })
    return value
  }
  /** Forgets every series (a gauge filled afresh at each scrape). */
  clear(): void {
    this.series.clear()
  }
  protected abstract lines(labels: ReadonlyArray<string>, value: S, out: Array<string>): void
  render(out: Array<string>): void {
    out.push(`# HELP ${this.name} ${this.help.replace(/\\/g, "\\\\").replace(/\n/g, "\\n")}`)
    out.push(`# TYPE ${this.name} ${this.kind}`)
    for (const { labels, value } of this.series.values()) this.lines(labels, value, out)
  }
}

/** A count that only goes up. */
export class Counter extends Family<{ n: number }> {
  constructor(name: string, help: string, labelNames: ReadonlyArray<string>) {
    super(name, help, "counter", labelNames)
  }
  protected fresh() {
    return { n: 0 }
  }
  inc(labels: ReadonlyArray<string> = [], by = 1): void {
    this.at(labels).n += by
  }
  /** Sets the count to a total kept elsewhere (a venue's own reconnect count), read at scrape time. */
  setTotal(labels: ReadonlyArray<string>, total: number): void {
    this.at(labels).n = total
  }
  get(labels: ReadonlyArray<string> = []): number {
    return this.at(labels).n
  }
  protected lines(labels: ReadonlyArray<string>, value: { n: number }, out: Array<string>) {
    out.push(`${this.name}${labelText(this.labelNames, labels)} ${formatValue(value.n)}`)
  }
}

/** A value that goes up and down. */
export class Gauge extends Family<{ n: number }> {
  constructor(name: string, help: string, labelNames: ReadonlyArray<string>) {
    super(name, help, "gauge", labelNames)
  }
  protected fresh() {
    return { n: 0 }
  }
  set(labels: ReadonlyArray<string>, value: number): void {
    this.at(labels).n = value
  }
  inc(labels: ReadonlyArray<string> = [], by = 1): void {
    this.at(labels).n += by
  }
  get(labels: ReadonlyArray<string> = []): number {
    return this.at(labels).n
  }
  protected lines(labels: ReadonlyArray<string>, value: { n: number }, out: Array<string>) {
    out.push(`${this.name}${labelText(this.labelNames, labels)} ${formatValue(value.n)}`)
  }
}

interface Buckets {
  readonly counts: Array<number>
  sum: number
  count: number
}

/** Observations counted into buckets by upper bound, with their sum and count. */
export class Histogram extends Family<Buckets> {
  readonly bounds: ReadonlyArray<number>
  constructor(name: string, help: string, labelNames: ReadonlyArray<string>, bounds: ReadonlyArray<number>) {
    super(name, help, "histogram", labelNames)
    this.bounds = [...bounds].sort((a, b) => a - b)
  }
  protected fresh(): Buckets {
    return { counts: this.bounds.map(() => 0), sum: 0, count: 0 }
  }
  observe(labels: ReadonlyArray<string>, value: number): void {
    const b = this.at(labels)
    const bounds = this.bounds
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]!) {
        b.counts[i]!++
        break
      }
    }
    b.sum += value
    b.count++
  }
  /** How many observations a series holds. */
  count(labels: ReadonlyArray<string> = []): number {
    return this.at(labels).count
  }
  protected lines(labels: ReadonlyArray<string>, b: Buckets, out: Array<string>) {
    let cumulative = 0
    for (let i = 0; i < this.bounds.length; i++) {
      cumulative += b.counts[i]!
      const le = `le=${quote(formatValue(this.bounds[i]!))}`
      out.push(`${this.name}_bucket${labelText(this.labelNames, labels, le)} ${cumulative}`)
    }
    out.push(`${this.name}_bucket${labelText(this.labelNames, labels, 'le="+Inf"')} ${b.count}`)
    out.push(`${this.name}_sum${labelText(this.labelNames, labels)} ${formatValue(b.sum)}`)
    out.push(`${this.name}_count${labelText(this.labelNames, labels)} ${b.count}`)
  }
}

/** Latency bounds in seconds, from 1 ms to 10 s. */
export const LATENCY_BUCKETS: ReadonlyArray<number> = [
  0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10
]

/** The families of one process, in the order they were made. */
export class Registry {
  private readonly families: Array<Family<unknown>> = []
  private add<F extends Family<any>>(family: F): F {
    if (this.families.some((f) => f.name === family.name)) throw new Error(`metric ${family.name} exists already`)
    this.families.push(family)
    return family
  }
  counter(name: string, help: string, labelNames: ReadonlyArray<string> = []): Counter {
    return this.add(new Counter(name, help, labelNames))
  }
  gauge(name: string, help: string, labelNames: ReadonlyArray<string> = []): Gauge {
    return this.add(new Gauge(name, help, labelNames))
  }
  histogram(
    name: string,
    help: string,
    labelNames: ReadonlyArray<string> = [],
    bounds: ReadonlyArray<number> = LATENCY_BUCKETS
  ): Histogram {
    return this.add(new Histogram(name, help, labelNames, bounds))
  }
  /** Every family in the text exposition format (version 0.0.4), ending with a newline. */
  render(): string {
    const out: Array<string> = []
    for (const f of this.families) f.render(out)
    return out.join("\n") + "\n"
  }
}

/** The content type of the text format. */
export const CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
