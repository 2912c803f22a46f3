/** A small seeded random source (sfc32 seeded through splitmix32); the only randomness the engine and the sim use. */

const splitmix32 = (state: number): [number, number] => {
  const next = (state + 0x9e3779b9) | 0
  let z = next
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b)
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35)
  return [next, (z ^ (z >>> 16)) >>> 0]
}

const hashLabel = (label: string): number => {
  let h = 0x811c9dc5
  for (let i = 0; i < label.length; i++) {
    h ^= label.charCodeAt(i)
    h = Math.imul(h, 0x01000193)
  }
  return h >>> 0
}

/** Deterministic generator: the same seed gives the same sequence on every machine. */
export class SeededRandom {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    let s = seed | 0
    const out: Array<number> = []
    for (let i = 0; i < 4; i++) {
      const [next, value] = splitmix32(s)
      s = next
      out.push(value)
    }
    this.a = out[0]!
    this.b = out[1]!
    this.c = out[2]!
    this.d = out[3]!
    for (let i = 0; i < 12; i++) this.nextU32()
  }

  /** A generator for a named sub-stream, independent of how much of this one was drawn. */
  static derive(seed: number, label: string): SeededRandom {
    return new SeededRandom((seed ^ hashLabel(label)) | 0)
  }

  nextU32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0
    this.d = (this.d + 1) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** Uniform in [0, 1). */
  nextFloat(): number {
    return this.nextU32() / 4294967296
  }

  /** Uniform integer in [lo, hi] inclusive. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.nextFloat() * (hi - lo + 1))
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.nextFloat() < p
  }

  pick<A>(items: ReadonlyArray<A>): A {
    if (items.length === 0) throw new RangeError("pick from an empty list")
    return items[this.int(0, items.length - 1)]!
  }

  /** The generator's whole state, to persist and restore it exactly. */
  snapshot(): [number, number, number, number] {
    return [this.a, this.b, this.c, this.d]
  }

  static restore(state: readonly [number, number, number, number]): SeededRandom {
    const r = new SeededRandom(0)
    r.a = state[0] | 0
    r.b = state[1] | 0
    r.c = state[2] | 0
    r.d = state[3] | 0
    return r
  }
}
