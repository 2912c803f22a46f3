/** Every complex order type the engine holds: its params schema, its checks and its decision core. */
import * as Bracket from "./Bracket.ts"
import type { Registry } from "./Engine.ts"
import * as Iceberg from "./Iceberg.ts"
import * as Oco from "./Oco.ts"
import * as Peg from "./Peg.ts"
import * as SmartTaker from "./SmartTaker.ts"
import * as Stop from "./Stop.ts"
import * as Trailing from "./Trailing.ts"
import * as Twap from "./Twap.ts"

/** Every type's params schema, for the API document: each refuses unknown keys and shows its bounds. */
export const PARAMS_SCHEMAS = [
  Stop.Params,
  Trailing.Params,
  Iceberg.Params,
  Oco.Params,
  Bracket.Params,
  Twap.Params,
  Peg.Params,
  SmartTaker.Params
] as const

export const REGISTRY: Registry = {
  stop_market: { params: Stop.Params, validate: Stop.validateStopMarket, core: Stop.stopMarket },
  stop_limit: { params: Stop.Params, validate: Stop.validateStopLimit, core: Stop.stopLimit },
  trailing_stop: { params: Trailing.Params, validate: Trailing.validate, core: Trailing.core },
  iceberg: { params: Iceberg.Params, validate: Iceberg.validate, core: Iceberg.core },
  oco: { params: Oco.Params, validate: Oco.validate, core: Oco.core },
  bracket: { params: Bracket.Params, validate: Bracket.validate, core: Bracket.core, counts: Bracket.counts },
  twap: { params: Twap.Params, validate: Twap.validate, core: Twap.core },
  peg: { params: Peg.Params, validate: Peg.validate, core: Peg.core },
  smart_taker: { params: SmartTaker.Params, validate: SmartTaker.validate, core: SmartTaker.core }
}
