/** What several cores share: the params' decimal strings, and the bookkeeping of the children they sent. */
import { Schema } from "effect"
import * as F from "../Domain/Fixed.ts"
import type { Input } from "./Core.ts"

/** A decimal param as the wire carries it: "0.05", "10" (at most 15 whole digits, as money parses). */
export const Decimal = Schema.String.pipe(Schema.pattern(/^\d{1,15}(\.\d{1,6})?$/))

/** One day in seconds: the longest delay, stay or interval a param may ask for. */
export const MAX_DELAY_S = 86_400

/** Thirty days in seconds: the longest window or lifetime a param may ask for. */
export const MAX_WINDOW_S = 30 * MAX_DELAY_S

/** Seconds from 0 (or, with `positive`, above 0) up to `max`, with at most millisecond precision. */
export const Seconds = (max: number, positive: boolean) =>
  Schema.Number.pipe(positive ? Schema.positive() : Schema.nonNegative(), Schema.lessThanOrEqualTo(max)).annotations({
    description: `Seconds, ${positive ? "above 0" : "0 or more"} and at most ${max}`
  })

/**
 * A params object that refuses keys it does not name, so a misspelt field is an error and not a silent default;
 * `identifier` names it in the OpenAPI document.
 */
export const strict = <S extends Schema.Schema.Any>(schema: S, identifier?: string): S =>
  schema.annotations({
    parseOptions: { onExcessProperty: "error" },
    ...(identifier === undefined ? {} : { identifier })
  }) as S

/**
 * A child as a core tracks it: what it was sent for, what filled, its final filled once it ended, and the ids of the
 * fills seen on it (kept only while the child can still report one, so a core's state follows its live children).
 */
export interface Kid {
  readonly child: number
  readonly size: F.Fixed
  filled: F.Fixed
  done: boolean
  final: F.Fixed
  seen: Array<string>
}

export interface KidBook<K extends Kid> {
  nextChild: number
  filled: F.Fixed
  kids: Array<K>
}

/** A child just sent: nothing filled, nothing seen. */
export const newKid = (child: number, size: F.Fixed): Kid => ({
  child,
  size,
  filled: F.ZERO,
  done: false,
  final: F.ZERO,
  seen: []
})

/** What a child may still fill: its size (or final filled, once it ended) less what was seen to fill. */
export const openOf = (k: Kid): F.Fixed => F.max(F.ZERO, F.sub(k.done ? k.final : k.size, k.filled))

/** Forgets children that ended and whose every fill has been seen, with the ids of their fills. */
export const prune = <K extends Kid>(state: KidBook<K>) => {
  state.kids = state.kids.filter((k) => !k.done || k.filled < k.final)
}

/**
 * Counts a fill once (by its id); answers whether it was new. A child no longer tracked ended with every fill it
 * reported already counted, so a fill naming it again is a repeat.
 */
export const recordFill = <K extends Kid>(
  state: KidBook<K>,
  input: Input & { readonly _tag: "ChildFill" }
): boolean => {
  const kid = state.kids.find((k) => k.child === input.child)
  if (kid === undefined || kid.seen.includes(input.fillId)) return false
  kid.seen.push(input.fillId)
  kid.filled = F.add(kid.filled, input.amount)
  state.filled = F.add(state.filled, input.amount)
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
