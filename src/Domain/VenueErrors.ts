/** Venue failures as the API answers them: each kind of refusal or failure maps to the contract's status and code. */
import { ApiError } from "./Errors.ts"

/** What a venue reports when it did not do what was asked (the gateway's `VenueError` has this shape). */
export interface VenueFailure {
  readonly venue: string
  readonly kind:
    "rejected" | "insufficient_funds" | "rate_limited" | "timeout" | "unavailable" | "not_supported" | "market_closed"
  readonly reason: string
  readonly retryAfterS?: number | undefined
}

/** The contract's answer to a venue's refusal or failure. */
export const fromVenueError = (e: VenueFailure): ApiError => {
  const base = { venue: e.venue, reason: e.reason }
  switch (e.kind) {
    case "rejected":
      // a price off the venue's tick is the caller's to fix, as an off-grid price is on every venue
      if (e.reason.startsWith("INVALID_ORDER_MIN_TICK_SIZE")) {
        return new ApiError({
          status: 400,
          code: "validation_error",
          message: `${e.venue} refused the price: ${e.reason}`,
          details: { ...base, retryable: false, errors: [{ field: "price", message: e.reason }] }
        })
      }
      return new ApiError({
        status: 400,
        code: "order_rejected",
        message: `${e.venue} refused the order: ${e.reason}`,
        details: { ...base, retryable: false }
      })
    case "insufficient_funds":
      return new ApiError({
        status: 400,
        code: "insufficient_funds",
        message: `${e.venue} refused the order: ${e.reason}`,
        details: { ...base, retryable: false }
      })
    case "market_closed":
      return new ApiError({
        status: 409,
        code: "risk_rejected",
        message: `${e.venue} has halted this market: ${e.reason}`,
        details: { ...base, retryable: false, rule: "market_halted" }
      })
    case "rate_limited":
      return new ApiError({
        status: 429,
        code: "rate_limit_exceeded",
        message: `${e.venue} rate limit passed: ${e.reason}`,
        details: { ...base, retryable: true, ...(e.retryAfterS === undefined ? {} : { retry_after: e.retryAfterS }) }
      })
    case "timeout":
      return new ApiError({
        status: 504,
        code: "venue_timeout",
        message: `${e.venue} did not answer: ${e.reason}`,
        details: { ...base, retryable: true }
      })
    case "unavailable":
      return new ApiError({
        status: 502,
        code: "venue_error",
        message: `${e.venue} failed the request: ${e.reason}`,
        // A venue that says when to come back (a 503 in cancel-only mode) is passed through, as a 429's is.
        details: { ...base, retryable: true, ...(e.retryAfterS === undefined ? {} : { retry_after: e.retryAfterS }) }
      })
    case "not_supported":
      return new ApiError({
        status: 501,
        code: "not_supported",
        message: `${e.venue} does not support this: ${e.reason}`,
        details: { ...base, retryable: false }
      })
  }
}
