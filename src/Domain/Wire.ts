/** Wire schemas shared by the API and the layers below it: decimals as strings, ms times, bounded text, tags. */
import { Schema } from "effect"

/** A decimal carried as a JSON string, such as "0.35". */
export const DecimalString = Schema.String.pipe(
  Schema.pattern(/^-?\d+(\.\d+)?$/),
  Schema.annotations({ identifier: "Decimal", description: 'A decimal carried as a string, e.g. "0.35"' })
)

export const Millis = Schema.Int.annotations({ description: "ms since epoch" })

/** A JSON body's own keys only: another key is a 422 naming it (nested records such as `tags` and `params` excepted). */
export const strict = { parseOptions: { onExcessProperty: "error" } } as const

/** A string of at most `max` characters. */
export const Text = (max: number) => Schema.String.pipe(Schema.maxLength(max))

/**
 * An account in a body: `"<venue>:<name>"`, or the object an Order record carries (`{venue, name, subaccount}`), which
 * clients written for the interface send back. Decodes to `"<venue>:<name>"`.
 */
export const AccountInput = Schema.transform(
  Schema.Union(
    Text(200),
    Schema.Struct({
      venue: Text(100),
      name: Text(100),
      subaccount: Schema.optional(
        Schema.Null.annotations({ message: () => "accounts here have no subaccount: send null or leave it out" })
      )
    }).annotations(strict)
  ),
  Schema.String,
  {
    strict: true,
    decode: (account) => (typeof account === "string" ? account : `${account.venue}:${account.name}`),
    encode: (account) => account
  }
).annotations({
  description: '`"<venue>:<name>"`, or `{venue, name, subaccount: null}` as an Order record carries it'
})

/** How deep a caller's `tags` map may nest, how many keys it may have and how large it may be as JSON. */
export const TAGS_MAX_KEYS = 32
export const TAGS_MAX_DEPTH = 3
export const TAGS_MAX_BYTES = 4096

const depthOf = (value: unknown, limit: number): number => {
  let deepest = 0
  const stack: Array<[unknown, number]> = [[value, 0]]
  while (stack.length > 0) {
    const [v, d] = stack.pop()!
    if (typeof v !== "object" || v === null) continue
    if (d + 1 > deepest) deepest = d + 1
    if (deepest > limit) return deepest
    for (const child of Object.values(v)) stack.push([child, d + 1])
  }
  return deepest
}

/** The caller's `tags`: a small map of labels, nested at most `TAGS_MAX_DEPTH` deep. */
export const Tags = Schema.Record({ key: Text(64), value: Schema.Unknown }).pipe(
  Schema.filter((tags) => {
    if (Object.keys(tags).length > TAGS_MAX_KEYS) return `at most ${TAGS_MAX_KEYS} keys`
    if (depthOf(tags, TAGS_MAX_DEPTH) > TAGS_MAX_DEPTH) return `nested at most ${TAGS_MAX_DEPTH} levels deep`
    if (Buffer.byteLength(JSON.stringify(tags)) > TAGS_MAX_BYTES) return `at most ${TAGS_MAX_BYTES} bytes as JSON`
    return true
  }),
  Schema.annotations({
    description: `Caller's labels: at most ${TAGS_MAX_KEYS} keys, ${TAGS_MAX_DEPTH} levels, ${TAGS_MAX_BYTES} bytes as JSON`
  })
)
