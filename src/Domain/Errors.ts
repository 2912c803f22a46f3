/** The one error that crosses the wire, and its body `{error: {code, message, details}}`. */
import { Schema } from "effect"

export const ErrorCode = Schema.Literal(
  "validation_error",
  "unknown_venue",
  "order_rejected",
  "insufficient_funds",
  "unauthorized",
  "forbidden",
  "market_not_found",
  "not_found",
  "risk_rejected",
  "rate_limit_exceeded",
  "not_supported",
  "venue_error",
  "venue_timeout",
  "result_too_large",
  "internal_error"
)
export type ErrorCode = typeof ErrorCode.Type

export interface FieldError {
  readonly field: string
  readonly message: string
}

export interface ErrorDetails {
  readonly venue: string | null
  readonly retryable: boolean
  readonly [key: string]: unknown
}

/**
 * A refusal with its HTTP status; rendered by the server as the contract's error body. It is an answer, not a fault:
 * it carries no stack trace. Capturing one cost tens of µs a refusal (through the Effect error classes under it), paid
 * by every refused order and every refused child of a parent, and never read.
 */
export class ApiError extends Schema.TaggedError<ApiError>()("ApiError", {
  status: Schema.Number,
  code: ErrorCode,
  message: Schema.String,
  details: Schema.Record({ key: Schema.String, value: Schema.Unknown })
}) {
  constructor(
    props: {
      readonly status: number
      readonly code: ErrorCode
      readonly message: string
      readonly details: { readonly [key: string]: unknown }
    },
    options?: Schema.MakeOptions
  ) {
    const limit = Error.stackTraceLimit
    Error.stackTraceLimit = 0
    try {
      super(props, options)
    } finally {
      Error.stackTraceLimit = limit
    }
  }

  get body(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        details: { venue: null, retryable: false, ...this.details } as ErrorDetails
      }
    }
  }

  static validation(errors: ReadonlyArray<FieldError>, message?: string, status = 400): ApiError {
    return new ApiError({
      status,
      code: "validation_error",
      message: message ?? errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join("; "),
      details: { venue: null, retryable: false, errors }
    })
  }

  static field(field: string, message: string): ApiError {
    return ApiError.validation([{ field, message }])
  }

  static unknownVenue(venue: string, known: ReadonlyArray<string>): ApiError {
    return new ApiError({
      status: 400,
      code: "unknown_venue",
      message: `unknown venue '${venue}'; known venues: ${known.join(", ")}`,
      details: { venue: null, retryable: false, known }
    })
  }

  static marketNotFound(venue: string, marketId: string): ApiError {
    return new ApiError({
      status: 404,
      code: "market_not_found",
      message: `no market '${marketId}' on venue '${venue}'`,
      details: { venue, retryable: false, market_id: marketId }
    })
  }

  static notFound(message: string): ApiError {
    return new ApiError({ status: 404, code: "not_found", message, details: { venue: null, retryable: false } })
  }

  static unauthorized(message: string): ApiError {
    return new ApiError({ status: 401, code: "unauthorized", message, details: { venue: null, retryable: false } })
  }

  static forbidden(permission: string, account: string): ApiError {
    return new ApiError({
      status: 403,
      code: "forbidden",
      message: `this token lacks the '${permission}' permission on account '${account}'`,
      details: { venue: null, retryable: false, permission, account }
    })
  }

  static internal(): ApiError {
    return new ApiError({
      status: 500,
      code: "internal_error",
      message: "internal error; the cause is in the server log",
      details: { venue: null, retryable: false }
    })
  }
}

const Details = Schema.Struct(
  {
    venue: Schema.NullOr(Schema.String),
    retryable: Schema.Boolean,
    errors: Schema.optional(Schema.Array(Schema.Struct({ field: Schema.String, message: Schema.String }))),
    rule: Schema.optional(Schema.String),
    permission: Schema.optional(Schema.String),
    retry_after: Schema.optional(Schema.Number),
    reason: Schema.optional(Schema.String)
  },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)

/** The wire body of every non-2xx answer. */
export const ErrorBody = Schema.Struct({
  error: Schema.Struct({ code: ErrorCode, message: Schema.String, details: Details })
}).annotations({ identifier: "ErrorBody", description: "The body of every non-2xx answer" })
export type ErrorBody = typeof ErrorBody.Type

/** `ApiError` as it travels: its encoded side is the error body, so the OpenAPI document shows the real shape. */
export const ApiErrorWire = Schema.transform(ErrorBody, Schema.instanceOf(ApiError), {
  strict: true,
  decode: (body, _i) =>
    new ApiError({ status: 0, code: body.error.code, message: body.error.message, details: body.error.details }),
  encode: (error) => error.body
})
