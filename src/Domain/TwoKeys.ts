/**
 * Ids under two keys (an account and a client order id, a venue and its order id), with no key string made per entry
 * or per lookup: the inner keys are the orders' own strings.
 */
export class TwoKeys {
  private readonly outer = new Map<string, Map<string, string>>()
  get(a: string, b: string): string | undefined {
    return this.outer.get(a)?.get(b)
  }
  set(a: string, b: string, id: string): void {
    let inner = this.outer.get(a)
    if (inner === undefined) this.outer.set(a, (inner = new Map()))
    inner.set(b, id)
  }
  delete(a: string, b: string): void {
    const inner = this.outer.get(a)
    if (inner === undefined) return
    inner.delete(b)
    if (inner.size === 0) this.outer.delete(a)
  }
}
