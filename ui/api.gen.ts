// Generated from the server's OpenAPI document by scripts/ui-api.ts (`npm run openapi:snapshot`): do not edit.

/** Every schema of the API, by its name in the document. */
export interface Schemas {
  readonly Account: {
    readonly account: string
    readonly venue: string
    readonly name: string
    readonly permissions: ReadonlyArray<"view" | "trade" | "manage_credentials" | "manage_members">
  }
  readonly AuditEntry: {
    readonly id: Schemas["Int"]
    readonly ts: number
    readonly actor: { readonly user: string; readonly user_id: string; readonly token_id: string | null }
    readonly request: { readonly method: string; readonly path: string }
    readonly action: string
    readonly subject: string
    readonly before: unknown
    readonly after: unknown
  }
  readonly Balance: {
    readonly account: string
    readonly currency: string
    readonly cash: Schemas["Decimal"] | null
    readonly locked: Schemas["Decimal"] | null
    readonly available: Schemas["Decimal"] | null
  }
  readonly Book: {
    readonly market_id: string
    readonly side: "yes" | "no"
    readonly ts: number
    readonly bids: ReadonlyArray<Schemas["BookLevel"]>
    readonly asks: ReadonlyArray<Schemas["BookLevel"]>
    readonly best_bid: Schemas["Decimal"] | null
    readonly best_ask: Schemas["Decimal"] | null
    readonly mid: Schemas["Decimal"] | null
  }
  readonly BookLevel: { readonly price: Schemas["Decimal"]; readonly size: Schemas["Decimal"] }
  readonly BracketParams: {
    readonly entry?: { readonly type?: "limit"; readonly price: string }
    readonly take_profit: { readonly price: string }
    readonly stop_loss: {
      readonly stop_price: string
      readonly price?: string
      readonly trigger_source?: "touch" | "mid" | "last"
      readonly protection?: string
      readonly max_slippage?: string
    }
  }
  readonly Bucket: {
    readonly id: string
    readonly name: string
    readonly book: string
    readonly status: "active" | "archived"
    readonly members: ReadonlyArray<{
      readonly market_id: string
      readonly flip: boolean
      readonly account: string
      readonly title: string
    }>
    readonly created_at: number
    readonly created_by: string
    readonly archived_at: number | null
    readonly archived_by: string | null
  }
  readonly BucketParams: {
    readonly min_stay_s?: number
    readonly interval_s?: number
    readonly min_amount?: string
    readonly max_rounds?: Schemas["Int"]
    readonly max_age_s?: number
  }
  readonly BucketPosition: {
    readonly bucket_id: string
    readonly contracts: string
    readonly fees: Schemas["Decimal"]
    readonly members: ReadonlyArray<{
      readonly market_id: string
      readonly account: string
      readonly flip: boolean
      readonly contracts: string
      readonly bucket_contracts: string
      readonly average_price: Schemas["Decimal"] | null
      readonly realized_pnl: Schemas["Decimal"]
      readonly fees: Schemas["Decimal"]
    }>
  }
  readonly Decimal: string
  readonly ErrorBody: {
    readonly error: {
      readonly code:
        | "validation_error"
        | "unknown_venue"
        | "order_rejected"
        | "insufficient_funds"
        | "unauthorized"
        | "forbidden"
        | "market_not_found"
        | "not_found"
        | "risk_rejected"
        | "rate_limit_exceeded"
        | "not_supported"
        | "venue_error"
        | "venue_timeout"
        | "result_too_large"
        | "internal_error"
      readonly message: string
      readonly details: {
        readonly venue: string | null
        readonly retryable: boolean
        readonly errors?: ReadonlyArray<{ readonly field: string; readonly message: string }>
        readonly rule?: string
        readonly permission?: string
        readonly retry_after?: number
        readonly reason?: string
      } & { readonly [key: string]: unknown }
    }
  }
  readonly FairValues: {
    readonly values: { readonly [key: string]: { readonly value: Schemas["Decimal"]; readonly updated_at: number } }
  }
  readonly Fill: {
    readonly id: string
    readonly order_id: string
    readonly client_order_id: string
    readonly parent_id: string | null
    readonly account: string
    readonly market_id: string
    readonly side: "buy" | "sell"
    readonly price: Schemas["Decimal"]
    readonly amount: Schemas["Decimal"]
    readonly fee: Schemas["Decimal"]
    readonly liquidity: "maker" | "taker"
    readonly trade_id: string
    readonly book: string
    readonly ts: number
  }
  readonly Grant: {
    readonly user: string
    readonly user_id: string
    readonly account: string
    readonly permission: "view" | "trade" | "manage_credentials" | "manage_members"
    readonly created_at: number
  }
  readonly Halt: {
    readonly halted: boolean
    readonly reason: string | null
    readonly scope: string | null
    readonly policy: ("cancel" | "hold") | null
    readonly at: number | null
    readonly by: string | null
    readonly canceled: Schemas["Int"]
  }
  readonly Heartbeat: {
    readonly active: boolean
    readonly state: "ok" | "failing"
    readonly last_ok_at: number | null
    readonly last_error: string | null
    readonly last_error_at: number | null
  }
  readonly IcebergParams: {
    readonly display: string
    readonly reload_delay_s?: number
    readonly jitter_s?: number
    readonly follow?: boolean
  }
  readonly Int: number
  readonly Market: {
    readonly id: string
    readonly venue: string
    readonly native_id: string
    readonly event_id: string
    readonly title: string
    readonly subtitle: string
    readonly category: string
    readonly status: "open" | "closed" | "settled"
    readonly open_time: number
    readonly close_time: number
    readonly tick_size: Schemas["Decimal"]
    readonly lot_size: Schemas["Decimal"]
    readonly best_bid: Schemas["Decimal"] | null
    readonly best_ask: Schemas["Decimal"] | null
    readonly last_price: Schemas["Decimal"] | null
    readonly result: ("yes" | "no") | null
  }
  readonly MatchDoubt: {
    readonly dimension: string
    readonly status: "differs" | "unread" | "close"
    readonly reason: string
  }
  readonly MatchResult: {
    readonly anchor: string
    readonly event_id: string
    readonly verdict?: "matched" | "uncertain" | "none"
    readonly matched: {
      readonly id: string
      readonly venue: string
      readonly side_map: { readonly yes: "yes" | "no"; readonly no: "yes" | "no" }
    } | null
    readonly candidate?: {
      readonly id: string
      readonly venue: string
      readonly side_map: { readonly yes: "yes" | "no"; readonly no: "yes" | "no" }
      readonly score?: number
    } | null
    readonly reasons?: ReadonlyArray<Schemas["MatchDoubt"]>
    readonly explain?: unknown
  }
  readonly Me: {
    readonly user_id: string
    readonly name: string
    readonly token_id: string
    readonly accounts: ReadonlyArray<{
      readonly account: string
      readonly permissions: ReadonlyArray<"view" | "trade" | "manage_credentials" | "manage_members">
    }>
  }
  readonly OcoLeg: {
    readonly side: "buy" | "sell"
    readonly type: "limit" | "stop_market" | "stop_limit"
    readonly price?: string
    readonly market_id?: string
    readonly amount?: string
    readonly stop_price?: string
    readonly reduce_only?: boolean
    readonly post_only?: boolean
    readonly trigger_source?: "touch" | "mid" | "last"
    readonly protection?: string
    readonly max_slippage?: string
  }
  readonly OcoParams: { readonly legs: ReadonlyArray<Schemas["OcoLeg"]> }
  readonly Order: {
    readonly id: string
    readonly client_order_id: string
    readonly venue: string
    readonly account: { readonly venue: string; readonly name: string; readonly subaccount: string | null }
    readonly market_id: string
    readonly side: "buy" | "sell"
    readonly type:
      | "limit"
      | "market"
      | "stop_market"
      | "stop_limit"
      | "trailing_stop"
      | "iceberg"
      | "oco"
      | "bracket"
      | "twap"
      | "peg"
      | "smart_taker"
    readonly time_in_force: "gtc" | "gtd" | "ioc" | "fok"
    readonly status:
      "pending" | "open" | "pending_cancel" | "closed" | "canceled" | "rejected" | "expired" | "waiting" | "triggered"
    readonly held_by: "venue" | "engine"
    readonly price: Schemas["Decimal"] | null
    readonly stop_price: Schemas["Decimal"] | null
    readonly amount: Schemas["Decimal"]
    readonly filled: Schemas["Decimal"]
    readonly remaining: Schemas["Decimal"]
    readonly average_price: Schemas["Decimal"] | null
    readonly cost: Schemas["Decimal"] | null
    readonly fee: Schemas["Decimal"] | null
    readonly fee_currency: string
    readonly last_fill_price: Schemas["Decimal"] | null
    readonly last_fill_amount: Schemas["Decimal"] | null
    readonly post_only: boolean
    readonly reduce_only: boolean
    readonly expires_at: number | null
    readonly created_at: number
    readonly updated_at: number
    readonly parent_id: string | null
    readonly queue_priority_preserved: boolean | null
    readonly book: string
    readonly trader: string
    readonly tags: { readonly [key: string]: unknown }
    readonly info: { readonly [key: string]: unknown }
  }
  readonly PegParams: {
    readonly reference?: "near" | "far" | "mid"
    readonly offset?: string
    readonly min_stay_s?: number
    readonly level_cap?: Schemas["Int"]
    readonly min_price?: string
    readonly max_price?: string
  }
  readonly PlaceOrder: {
    readonly market_id: string
    readonly side: "buy" | "sell"
    readonly amount: Schemas["Decimal"]
    readonly type:
      | "limit"
      | "market"
      | "stop_market"
      | "stop_limit"
      | "trailing_stop"
      | "iceberg"
      | "oco"
      | "bracket"
      | "twap"
      | "peg"
      | "smart_taker"
    readonly price?: string
    readonly stop_price?: Schemas["Decimal"]
    readonly time_in_force?: "gtc" | "gtd" | "ioc" | "fok"
    readonly expires_at?: number
    readonly post_only?: boolean
    readonly reduce_only?: boolean
    readonly client_order_id?: string
    readonly account?: string | { readonly venue: string; readonly name: string; readonly subaccount?: null }
    readonly book?: string
    readonly trader?: string
    readonly tags?: { readonly [key: string]: unknown }
    readonly notes?: string
    readonly params?: { readonly [key: string]: unknown }
  }
  readonly Pnl: {
    readonly level: "market" | "book" | "account"
    readonly key: string
    readonly realized: Schemas["Decimal"]
    readonly unrealized: Schemas["Decimal"] | null
    readonly fees: Schemas["Decimal"]
    readonly net: Schemas["Decimal"] | null
    readonly settled: string
  }
  readonly Position: {
    readonly account: string
    readonly market_id: string
    readonly contracts: string
    readonly side: ("yes" | "no") | null
    readonly average_price: Schemas["Decimal"] | null
    readonly mark: Schemas["Decimal"] | null
    readonly mark_source: ("fair_value" | "mid") | null
    readonly realized_pnl: Schemas["Decimal"]
    readonly unrealized_pnl: Schemas["Decimal"] | null
    readonly fees: Schemas["Decimal"]
    readonly settled: {
      readonly payout: string
      readonly contracts: string
      readonly realized_pnl: string
      readonly ts: number
      readonly redeemable: boolean
      readonly redeemable_amount: string
      readonly redeemed_at: number | null
    } | null
  }
  readonly Risk: {
    readonly version: Schemas["Int"]
    readonly updated_at: number | null
    readonly updated_by: string | null
    readonly rules: Schemas["RiskRules"]
  }
  readonly RiskRules: {
    readonly kill_switch: boolean
    readonly max_order_contracts: string | null
    readonly max_order_notional: string | null
    readonly price_collar: string | null
    readonly max_open_orders: Schemas["Int"] | null
    readonly max_position_contracts: string | null
    readonly max_orders_per_minute: Schemas["Int"] | null
    readonly daily_loss_limit: string | null
  }
  readonly SmartTakerParams: {
    readonly clip?: string
    readonly interval_s?: number
    readonly limit?: string
    readonly max_slippage?: string
    readonly expires_s?: number
  }
  readonly Status: {
    readonly running: boolean
    readonly halted: boolean
    readonly open_orders: Schemas["Int"]
    readonly waiting_parents: Schemas["Int"]
    readonly journal_seq: Schemas["Int"]
    readonly venues: ReadonlyArray<string>
    readonly heartbeats: { readonly [key: string]: Schemas["Heartbeat"] }
    readonly venue_state: { readonly [key: string]: Schemas["VenueState"] }
    readonly time: number
  }
  readonly StopParams: {
    readonly trigger_source?: "touch" | "mid" | "last"
    readonly protection?: string
    readonly max_slippage?: string
  }
  readonly Stream: {
    readonly channel: string
    readonly state: "live" | "stale" | "connecting" | "down"
    readonly last_message_at: number | null
    readonly last_message_age_ms: number | null
    readonly reconnects: Schemas["Int"]
  }
  readonly Token: {
    readonly id: string
    readonly user: string
    readonly user_id: string
    readonly name: string
    readonly prefix: string
    readonly created_at: number
    readonly last_used_at: number | null
    readonly revoked_at: number | null
  }
  readonly Trade: {
    readonly id: string
    readonly market_id: string
    readonly ts: number
    readonly price: Schemas["Decimal"]
    readonly amount: Schemas["Decimal"]
    readonly taker_side: "buy" | "sell"
  }
  readonly TrailingStopParams: {
    readonly trail?: string
    readonly trail_percent?: string
    readonly trigger_source?: "touch" | "mid" | "last"
    readonly protection?: string
    readonly max_slippage?: string
  }
  readonly TwapParams: {
    readonly window_s: number
    readonly slices: Schemas["Int"]
    readonly style?: "limit" | "taker"
    readonly limit?: string
    readonly finish?: "complete" | "stop"
  }
  readonly Venue: {
    readonly id: string
    readonly name: string
    readonly book_model: string
    readonly has: {
      readonly fetch_markets: boolean | "partial"
      readonly search: boolean | "partial"
      readonly fetch_order_book: boolean | "partial"
      readonly fetch_trades: boolean | "partial"
      readonly watch_order_book: boolean | "partial"
      readonly create_order: boolean | "partial"
      readonly cancel_order: boolean | "partial"
      readonly cancel_all_orders: boolean | "partial"
      readonly edit_order: boolean | "partial"
      readonly fetch_orders: boolean | "partial"
      readonly fetch_my_trades: boolean | "partial"
      readonly fetch_positions: boolean | "partial"
      readonly fetch_balance: boolean | "partial"
      readonly post_only: boolean | "partial"
      readonly reduce_only: boolean | "partial"
      readonly ioc: boolean | "partial"
      readonly fok: boolean | "partial"
      readonly market_order: boolean | "partial"
    }
  }
  readonly VenueState: {
    readonly streams: ReadonlyArray<Schemas["Stream"]>
    readonly in_flight: Schemas["Int"]
    readonly unknown_orders: Schemas["Int"]
    readonly queued: Schemas["Int"]
    readonly last_reconcile_at: number | null
    readonly last_reconcile_error: string | null
    readonly drift: ReadonlyArray<{ readonly [key: string]: unknown }>
    readonly drift_total: Schemas["Int"]
  }
}

/** Every route of the API by method and path: its path and query parameters, its body and its answer. */
export interface Routes {
  readonly "GET /": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: {
      readonly name: string
      readonly version: string
      readonly links: { readonly [key: string]: string }
    }
  }
  readonly "GET /health": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: {
      readonly status: "ok"
      readonly version: string
      readonly time: Schemas["Int"]
      readonly venues: ReadonlyArray<string>
    }
  }
  readonly "GET /metrics": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: void
  }
  readonly "GET /trading/accounts": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Account"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/audit": {
    readonly path: Record<string, never>
    readonly query: {
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["AuditEntry"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/balances": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Balance"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/buckets": {
    readonly path: Record<string, never>
    readonly query: {
      readonly status?: "active" | "archived" | "all" | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Bucket"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "POST /trading/buckets": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: {
      readonly name: string
      readonly book?: string
      readonly members: ReadonlyArray<{
        readonly market_id: string
        readonly flip?: boolean
        readonly account?: string
      }>
    }
    readonly answer: {
      readonly id: string
      readonly name: string
      readonly book: string
      readonly status: "active" | "archived"
      readonly members: ReadonlyArray<{
        readonly market_id: string
        readonly flip: boolean
        readonly account: string
        readonly title: string
      }>
      readonly created_at: number
      readonly created_by: string
      readonly archived_at: number | null
      readonly archived_by: string | null
    }
  }
  readonly "POST /trading/buckets/from-match": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: { readonly market_id: string; readonly name?: string; readonly book?: string }
    readonly answer: {
      readonly id: string
      readonly name: string
      readonly book: string
      readonly status: "active" | "archived"
      readonly members: ReadonlyArray<{
        readonly market_id: string
        readonly flip: boolean
        readonly account: string
        readonly title: string
      }>
      readonly created_at: number
      readonly created_by: string
      readonly archived_at: number | null
      readonly archived_by: string | null
    }
  }
  readonly "GET /trading/buckets/{id}": {
    readonly path: { readonly id: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Bucket"]
  }
  readonly "DELETE /trading/buckets/{id}": {
    readonly path: { readonly id: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Bucket"]
  }
  readonly "GET /trading/buckets/{id}/orders": {
    readonly path: { readonly id: string }
    readonly query: {
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Order"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/buckets/{id}/position": {
    readonly path: { readonly id: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["BucketPosition"]
  }
  readonly "GET /trading/fair-values": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["FairValues"]
  }
  readonly "PUT /trading/fair-values": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: { readonly values: { readonly [key: string]: Schemas["Decimal"] | null } }
    readonly answer: Schemas["FairValues"]
  }
  readonly "GET /trading/fills": {
    readonly path: Record<string, never>
    readonly query: {
      readonly since?: string | number | boolean | undefined
      readonly market_id?: string | number | boolean | undefined
      readonly order_id?: string | number | boolean | undefined
      readonly account?: string | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Fill"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/grants": {
    readonly path: Record<string, never>
    readonly query: {
      readonly user?: string | number | boolean | undefined
      readonly account?: string | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Grant"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "POST /trading/grants": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: {
      readonly user: string
      readonly account: string | { readonly venue: string; readonly name: string; readonly subaccount?: null }
      readonly permission: "view" | "trade" | "manage_credentials" | "manage_members"
    }
    readonly answer: {
      readonly user: string
      readonly user_id: string
      readonly account: string
      readonly permission: "view" | "trade" | "manage_credentials" | "manage_members"
      readonly created_at: number
    }
  }
  readonly "DELETE /trading/grants": {
    readonly path: Record<string, never>
    readonly query: {
      readonly user: string | number | boolean | undefined
      readonly account: string | number | boolean | undefined
      readonly permission: "view" | "trade" | "manage_credentials" | "manage_members" | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: Schemas["Grant"]
  }
  readonly "POST /trading/halt": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: { readonly reason: string; readonly scope?: string; readonly policy?: "cancel" | "hold" }
    readonly answer: Schemas["Halt"]
  }
  readonly "GET /trading/keys": {
    readonly path: Record<string, never>
    readonly query: {
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Token"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "POST /trading/keys": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: { readonly user?: string; readonly name?: string }
    readonly answer: {
      readonly id: string
      readonly user: string
      readonly user_id: string
      readonly name: string
      readonly prefix: string
      readonly created_at: number
      readonly last_used_at: number | null
      readonly revoked_at: number | null
      readonly token: string
    }
  }
  readonly "DELETE /trading/keys/{id}": {
    readonly path: { readonly id: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Token"]
  }
  readonly "GET /trading/me": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Me"]
  }
  readonly "GET /trading/orders": {
    readonly path: Record<string, never>
    readonly query: {
      readonly status?: string | number | boolean | undefined
      readonly venue?: string | number | boolean | undefined
      readonly market_id?: string | number | boolean | undefined
      readonly parent_id?: string | number | boolean | undefined
      readonly book?: string | number | boolean | undefined
      readonly account?: string | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Order"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "POST /trading/orders": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: Schemas["PlaceOrder"]
    readonly answer: {
      readonly id: string
      readonly client_order_id: string
      readonly venue: string
      readonly account: { readonly venue: string; readonly name: string; readonly subaccount: string | null }
      readonly market_id: string
      readonly side: "buy" | "sell"
      readonly type:
        | "limit"
        | "market"
        | "stop_market"
        | "stop_limit"
        | "trailing_stop"
        | "iceberg"
        | "oco"
        | "bracket"
        | "twap"
        | "peg"
        | "smart_taker"
      readonly time_in_force: "gtc" | "gtd" | "ioc" | "fok"
      readonly status:
        "pending" | "open" | "pending_cancel" | "closed" | "canceled" | "rejected" | "expired" | "waiting" | "triggered"
      readonly held_by: "venue" | "engine"
      readonly price: Schemas["Decimal"] | null
      readonly stop_price: Schemas["Decimal"] | null
      readonly amount: Schemas["Decimal"]
      readonly filled: Schemas["Decimal"]
      readonly remaining: Schemas["Decimal"]
      readonly average_price: Schemas["Decimal"] | null
      readonly cost: Schemas["Decimal"] | null
      readonly fee: Schemas["Decimal"] | null
      readonly fee_currency: string
      readonly last_fill_price: Schemas["Decimal"] | null
      readonly last_fill_amount: Schemas["Decimal"] | null
      readonly post_only: boolean
      readonly reduce_only: boolean
      readonly expires_at: number | null
      readonly created_at: number
      readonly updated_at: number
      readonly parent_id: string | null
      readonly queue_priority_preserved: boolean | null
      readonly book: string
      readonly trader: string
      readonly tags: { readonly [key: string]: unknown }
      readonly info: { readonly [key: string]: unknown }
    }
  }
  readonly "DELETE /trading/orders": {
    readonly path: Record<string, never>
    readonly query: {
      readonly venue?: string | number | boolean | undefined
      readonly market_id?: string | number | boolean | undefined
      readonly book?: string | number | boolean | undefined
      readonly account?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: { readonly canceled: Schemas["Int"] }
  }
  readonly "GET /trading/orders/{id}": {
    readonly path: { readonly id: string }
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["Order"]
  }
  readonly "PATCH /trading/orders/{id}": {
    readonly path: { readonly id: string }
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: {
      readonly price?: Schemas["Decimal"]
      readonly amount?: Schemas["Decimal"]
      readonly expires_at?: number
    }
    readonly answer: Schemas["Order"]
  }
  readonly "DELETE /trading/orders/{id}": {
    readonly path: { readonly id: string }
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["Order"]
  }
  readonly "GET /trading/pnl": {
    readonly path: Record<string, never>
    readonly query: {
      readonly level?: "market" | "book" | "account" | number | boolean | undefined
      readonly account?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Pnl"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /trading/positions": {
    readonly path: Record<string, never>
    readonly query: {
      readonly account?: string | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Position"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "POST /trading/resume": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["Halt"]
  }
  readonly "GET /trading/risk": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["Risk"]
  }
  readonly "PUT /trading/risk": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: {
      readonly kill_switch: boolean
      readonly max_order_contracts: string | null
      readonly max_order_notional: string | null
      readonly price_collar: string | null
      readonly max_open_orders: Schemas["Int"] | null
      readonly max_position_contracts: string | null
      readonly max_orders_per_minute: Schemas["Int"] | null
      readonly daily_loss_limit: string | null
    }
    readonly answer: Schemas["Risk"]
  }
  readonly "GET /trading/status": {
    readonly path: Record<string, never>
    readonly query: { readonly account?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["Status"]
  }
  readonly "GET /trading/ws/events": {
    readonly path: Record<string, never>
    readonly query: {
      readonly since?: number | number | boolean | undefined
      readonly kinds?: string | number | boolean | undefined
      readonly key?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: void
  }
  readonly "GET /venues": {
    readonly path: Record<string, never>
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Venue"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /venues/{venue}": {
    readonly path: { readonly venue: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Venue"]
  }
  readonly "GET /venues/{venue}/markets": {
    readonly path: { readonly venue: string }
    readonly query: {
      readonly search?: string | number | boolean | undefined
      readonly query?: string | number | boolean | undefined
      readonly status?: "open" | "closed" | "settled" | "all" | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Market"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /venues/{venue}/markets/{market_id}": {
    readonly path: { readonly venue: string; readonly market_id: string }
    readonly query: Record<string, never>
    readonly body: undefined
    readonly answer: Schemas["Market"]
  }
  readonly "GET /venues/{venue}/markets/{market_id}/book": {
    readonly path: { readonly venue: string; readonly market_id: string }
    readonly query: {
      readonly side?: "yes" | "no" | number | boolean | undefined
      readonly depth?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: Schemas["Book"]
  }
  readonly "GET /venues/{venue}/markets/{market_id}/match": {
    readonly path: { readonly venue: string; readonly market_id: string }
    readonly query: { readonly venue?: string | number | boolean | undefined }
    readonly body: undefined
    readonly answer: Schemas["MatchResult"]
  }
  readonly "GET /venues/{venue}/markets/{market_id}/trades": {
    readonly path: { readonly venue: string; readonly market_id: string }
    readonly query: {
      readonly since?: string | number | boolean | undefined
      readonly limit?: string | number | boolean | undefined
      readonly cursor?: string | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: {
      readonly data: ReadonlyArray<Schemas["Trade"]>
      readonly next_cursor: string | null
      readonly count: Schemas["Int"]
    }
  }
  readonly "GET /ws/markets": {
    readonly path: Record<string, never>
    readonly query: {
      readonly ids: string | number | boolean | undefined
      readonly depth?: number | number | boolean | undefined
    }
    readonly body: undefined
    readonly answer: void
  }
}
