/**
 * The strategy API of `crossbook backtest`. A strategy is a module whose default export is a `Strategy`, or a
 * function answering a fresh one (so its state starts anew on every run).
 * Hooks are synchronous: they read the context (book, position, P&L) as it is at that moment and ask for orders
 * with `ctx.place` and `ctx.cancel`; the backtester sends those, in order, through the same engine and desk as the
 * server, right after the hook returns. Fills come back through `onFill`.
 */

export { parseMarketId } from "../src/Domain/Ids.ts"

/** A best bid and ask as decimal strings (YES prices), null when that side is empty. */
export interface Touch {
  readonly bestBid: string | null
  readonly bestAsk: string | null
}

export interface StrategyFill {
  readonly orderId: string
  readonly clientOrderId: string
  /** The strategy's own order (its client id) this fill belongs to; a child's fill names its parent's. */
  readonly strategyOrder: string
  readonly marketId: string
  readonly side: "buy" | "sell"
  readonly price: string
  readonly amount: string
  readonly fee: string
  readonly ts: number
}

export interface StrategyTrade {
  readonly marketId: string
  readonly price: string
  readonly amount: string
  readonly takerSide: "buy" | "sell"
  readonly ts: number
}

/** An order as `POST /trading/orders` takes it: plain (`limit`, `market`) or complex, with `params`. */
export interface StrategyOrder {
  readonly market_id: string
  readonly side: "buy" | "sell"
  readonly type: string
  readonly amount: string
  readonly price?: string
  readonly stop_price?: string
  readonly time_in_force?: "gtc" | "gtd" | "ioc" | "fok"
  readonly expires_at?: number
  readonly post_only?: boolean
  readonly reduce_only?: boolean
  readonly params?: Readonly<Record<string, unknown>>
}

export interface StrategyContext {
  /** Simulated time, ms since epoch. */
  readonly now: number
  /** Market ids on the tape. */
  readonly markets: ReadonlyArray<string>
  readonly touch: (marketId: string) => Touch
  /** Net YES contracts held (negative: NO), and the average price paid. */
  readonly position: (marketId: string) => { readonly contracts: string; readonly averagePrice: string | null }
  /** Account P&L now: realized, unrealized at mid (null when some position has no mark), fees, cash. */
  readonly pnl: () => {
    readonly realized: string
    readonly unrealized: string | null
    readonly fees: string
    readonly cash: string
  }
  /**
   * Makes a bucket of markets on the tape's venues (`flip`: that market's YES is the bucket's NO); answers its market
   * id, `bucket:<id>`, for `market` orders routed across the members (`price` is the worst price in bucket terms).
   */
  readonly bucket: (spec: {
    readonly name: string
    readonly members: ReadonlyArray<{ readonly market_id: string; readonly flip?: boolean }>
  }) => string
  /** Asks for an order; answers its client order id (`s-<n>`), which `cancel` takes. */
  readonly place: (order: StrategyOrder) => string
  readonly cancel: (clientOrderId: string) => void
  /** The status of one of the strategy's orders (`open`, `waiting`, `triggered`, `closed`, …); null before it is sent or when refused. */
  readonly status: (clientOrderId: string) => string | null
  /** Calls `onTimer(ctx, name)` after `afterMs` of simulated time. */
  readonly setTimer: (afterMs: number, name: string) => void
  /** A line in the backtest's log. */
  readonly log: (message: string) => void
}

export interface Strategy {
  readonly name?: string
  readonly onStart?: (ctx: StrategyContext) => void
  readonly onBook?: (ctx: StrategyContext, marketId: string) => void
  readonly onTrade?: (ctx: StrategyContext, trade: StrategyTrade) => void
  readonly onFill?: (ctx: StrategyContext, fill: StrategyFill) => void
  readonly onTimer?: (ctx: StrategyContext, name: string) => void
}

/** A strategy's parameters, as a sweep's grid sets them: names to JSON values. */
export type StrategyParams = Readonly<Record<string, unknown>>

/**
 * A strategy module's default export: the strategy, or a function that makes a fresh one from its parameters (a
 * function that takes none ignores them). A module may also export `params`, its parameters' defaults: a sweep then
 * refuses a name it does not list.
 */
export type StrategyExport = Strategy | ((params: StrategyParams) => Strategy)

export const strategyOf = (exported: StrategyExport, params: StrategyParams = {}): Strategy =>
  typeof exported === "function" ? exported(params) : exported

const HOOKS = ["onStart", "onBook", "onTrade", "onFill", "onTimer"] as const

const describe = (value: unknown): string =>
  value === null
    ? "null"
    : Array.isArray(value)
      ? "an array"
      : typeof value === "object"
        ? "an object"
        : `a ${typeof value}`

/**
 * The strategy a loaded module exports, checked: its default export (or `strategy`) must be a `Strategy` (an object
 * whose hooks are functions, at least one of them) or a function answering one. A CommonJS module's exports object is
 * looked through. Answers the reason in words when it is not.
 */
export const strategyFromModule = (
  module: Readonly<Record<string, unknown>>,
  params: StrategyParams = {}
): { readonly strategy: Strategy } | { readonly error: string } => {
  let exported: unknown = module["default"] ?? module["strategy"]
  if (typeof exported === "object" && exported !== null) {
    const inner = exported as Record<string, unknown>
    if (!HOOKS.some((hook) => hook in inner) && ("default" in inner || "strategy" in inner)) {
      exported = inner["default"] ?? inner["strategy"]
    }
  }
  if (exported === undefined) return { error: "it has no default export (export default a Strategy)" }
  let strategy: unknown = exported
  if (typeof exported !== "function" && Object.keys(params).length > 0) {
    return {
      error: "its default export is a strategy object, which takes no params: export a function (params) => Strategy"
    }
  }
  if (typeof exported === "function") {
    try {
      strategy = (exported as (params: StrategyParams) => unknown)(params)
    } catch (error) {
      return {
        error: `its default export threw when called (${error instanceof Error ? error.message : String(error)})`
      }
    }
  }
  if (typeof strategy !== "object" || strategy === null || Array.isArray(strategy)) {
    return {
      error: `its default export is ${describe(strategy)}, not a Strategy (an object with hooks such as onBook) or a function returning one`
    }
  }
  const record = strategy as Record<string, unknown>
  const notFunctions = HOOKS.filter((hook) => record[hook] !== undefined && typeof record[hook] !== "function")
  if (notFunctions.length > 0) return { error: `its ${notFunctions.join(", ")} must be functions` }
  if (!HOOKS.some((hook) => typeof record[hook] === "function")) {
    return { error: `its strategy has none of the hooks ${HOOKS.join(", ")}, so it would never trade` }
  }
  if (record["name"] !== undefined && typeof record["name"] !== "string") return { error: "its name must be a string" }
  return { strategy: strategy as Strategy }
}

/**
 * The parameters a module declares (its `params` export: names to defaults), or undefined when it declares none. A
 * CommonJS module's exports object is looked through.
 */
export const declaredParams = (module: Readonly<Record<string, unknown>>): StrategyParams | undefined => {
  const inner = module["default"]
  const declared =
    module["params"] ??
    (typeof inner === "object" && inner !== null ? (inner as Record<string, unknown>)["params"] : undefined)
  return typeof declared === "object" && declared !== null && !Array.isArray(declared)
    ? (declared as StrategyParams)
    : undefined
}
