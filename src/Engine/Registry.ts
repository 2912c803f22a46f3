/** The complex order types the engine holds out of the box, each one registration: name, params, checks, core. */
import * as Bracket from "./Bracket.ts"
import * as Iceberg from "./Iceberg.ts"
import * as Oco from "./Oco.ts"
import type { OrderType, Registry } from "./OrderType.ts"
import { registryOf } from "./OrderType.ts"
import * as Peg from "./Peg.ts"
import * as SmartTaker from "./SmartTaker.ts"
import * as Stop from "./Stop.ts"
import * as Trailing from "./Trailing.ts"
import * as Twap from "./Twap.ts"

/** The built-in types, in the order the API document lists them. */
export const ORDER_TYPES = [
  { type: "stop_market", params: Stop.Params, validate: Stop.validateStopMarket, core: Stop.stopMarket },
  { type: "stop_limit", params: Stop.Params, validate: Stop.validateStopLimit, core: Stop.stopLimit },
  { type: "trailing_stop", params: Trailing.Params, validate: Trailing.validate, core: Trailing.core },
  { type: "iceberg", params: Iceberg.Params, validate: Iceberg.validate, core: Iceberg.core, postOnly: true },
  { type: "oco", params: Oco.Params, validate: Oco.validate, core: Oco.core },
  {
    type: "bracket",
    params: Bracket.Params,
    validate: Bracket.validate,
    core: Bracket.core,
    counts: Bracket.counts,
    closesWhenFilled: false
  },
  { type: "twap", params: Twap.Params, validate: Twap.validate, core: Twap.core, postOnly: true },
  { type: "peg", params: Peg.Params, validate: Peg.validate, core: Peg.core, postOnly: true },
  { type: "smart_taker", params: SmartTaker.Params, validate: SmartTaker.validate, core: SmartTaker.core }
] as const satisfies ReadonlyArray<OrderType>

type Names<T> = { readonly [K in keyof T]: T[K] extends { readonly type: infer N } ? N : never }

/** The names of the built-in types. */
export const COMPLEX_TYPES = ORDER_TYPES.map((t) => t.type) as unknown as Names<typeof ORDER_TYPES>
export type ComplexType = (typeof COMPLEX_TYPES)[number]

/** The built-in types by name. */
export const REGISTRY: Registry & Readonly<Record<ComplexType, OrderType>> = registryOf(ORDER_TYPES) as never
