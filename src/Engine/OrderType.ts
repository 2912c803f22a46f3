/** An order type the engine holds, as one registration: its name, its params, its checks, its core, its particulars. */
import type { Schema } from "effect"
import type { FieldError } from "../Domain/Errors.ts"
import type { Core, ParentSpec } from "./Core.ts"

/**
 * Everything the engine, the API and its document know of one complex order type. The driver reads nothing else of a
 * type: a new one is a value of this shape passed to `Engine.layer` (the built-in ones are `ORDER_TYPES`).
 */
export interface OrderType<P = any, S = any> {
  /** The `type` of the request and of the parent's record. */
  readonly type: string
  /** The `params` as the wire carries them; unknown keys refused (`strict`), numbers bounded, defaults annotated. */
  readonly params: Schema.Schema<any, any, never>
  /** Checks the decoded params against the parent (its grid, lot, amount, price): its typed params, or its errors. */
  readonly validate: (
    spec: ParentSpec,
    params: any
  ) => { readonly params: P } | { readonly errors: ReadonlyArray<FieldError> }
  /** The decision core. */
  readonly core: Core<P, S>
  /** Which children's fills make the parent's `filled` (default: all of them). */
  readonly counts?: (role: string, params: P) => boolean
  /** Whether the parent may ask for `post_only`, passed to the children that rest (default: no, a 400). */
  readonly postOnly?: boolean
  /** Whether the parent is closed once `filled` reaches its amount (default yes; a bracket's exits still work then). */
  readonly closesWhenFilled?: boolean
  /** The `type` its record shows, when not its own (a bucket order is the `market` order its client sent). */
  readonly shownAs?: string
}

/** Order types by name, as the driver looks them up. */
export type Registry = Readonly<Record<string, OrderType>>

/** The registry of these types, in their order. */
export const registryOf = (types: ReadonlyArray<OrderType>): Registry =>
  Object.fromEntries(types.map((t) => [t.type, t]))
