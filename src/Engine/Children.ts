/** What several cores share: the params' decimal strings, and the bookkeeping of the children they sent. */
import { Schema } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Input } from "./Core.ts"

/** A decimal param as the wire carries it: "0.05", "10". */
export const Decimal = Schema.String.pipe(Schema.pattern(/^\d+(\.\d{1,6})?$/))

/** A child as a core tracks it: what it was sent for, what filled, and its final filled once it ended. */
export interface Kid {
  readonly child: number
  readonly size: F.Fixed
  filled: F.Fixed
  done: boolean
  final: F.Fixed
}

export interface KidBook<K extends Kid> {
  nextChild: number
  filled: F.Fixed
  seen: Array<string>
  kids: Array<K>
}

/** What a child may still fill: its size (or final filled, once it ended) less what was seen to fill. */
export const openOf = (k: Kid): F.Fixed => F.max(F.ZERO, F.sub(k.done ? k.final : k.size, k.filled))

/** Forgets children that ended and whose every fill has been seen. */
export const prune = <K extends Kid>(state: KidBook<K>) => {
  state.kids = state.kids.filter((k) => !k.done || k.filled < k.final)
}

/** Counts a fill once (by its id); answers whether it was new. */
export const recordFill = <K extends Kid>(
  state: KidBook<K>,
  input: Input & { readonly _tag: "ChildFill" }
): boolean => {
  if (input.child < 1 || input.child >= state.nextChild || state.seen.includes(input.fillId)) return false
  state.seen.push(input.fillId)
  state.filled = F.add(state.filled, input.amount)
  const kid = state.kids.find((k) => k.child === input.child)
  if (kid !== undefined) kid.filled = F.add(kid.filled, input.amount)
  return true
}

/** A child ended: it is done, and its final filled is the larger of what was seen and what the venue reported. */
export const markDone = <K extends Kid>(
  state: KidBook<K>,
  input: Input & { readonly _tag: "ChildDone" }
): K | undefined => {
  const kid = state.kids.find((k) => k.child === input.child)
  if (kid !== undefined) {
    kid.done = true
    kid.final = F.max(kid.filled, input.filled)
  }
  return kid
}
