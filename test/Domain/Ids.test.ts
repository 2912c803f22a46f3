import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  accountNamed,
  asMarketId,
  makeAccountId,
  makeMarketId,
  nativeIn,
  nativeOf,
  parseAccountId,
  parseMarketId,
  venueOf,
  venuePrefix
} from "../../src/Domain/Ids.ts"

const venue = fc.stringMatching(/^[a-z][a-z0-9_-]{0,11}$/)
/** A native id: anything non-empty, colons included (only the first colon of an id separates). */
const native = fc.string({ minLength: 1, maxLength: 40 })

const MALFORMED = ["", "sim", ":", ":x", "sim:", "::"]

describe("market ids", () => {
  it.prop("a made id parses back to its venue and native id", [venue, native], ([v, n]) => {
    const id = makeMarketId(v, n)
    assert.deepStrictEqual(parseMarketId(id), { venue: v, native: n })
    assert.strictEqual(asMarketId(id), id)
    assert.strictEqual(venueOf(id), v)
    assert.strictEqual(nativeOf(id), n)
    assert.strictEqual(venuePrefix(id), v)
  })

  it.prop("a text parses only when both sides of its first colon are non-empty", [fc.string()], ([text]) => {
    const at = text.indexOf(":")
    const parts = parseMarketId(text)
    if (at <= 0 || at === text.length - 1) {
      assert.isUndefined(parts)
      assert.isUndefined(asMarketId(text))
      assert.isUndefined(venuePrefix(text))
    } else {
      assert.isDefined(parts)
      assert.strictEqual(makeMarketId(parts!.venue, parts!.native), text)
    }
  })

  it("refuses malformed ids", () => {
    for (const bad of MALFORMED) {
      assert.isUndefined(parseMarketId(bad), bad)
      assert.isUndefined(asMarketId(bad), bad)
      assert.isUndefined(parseAccountId(bad), bad)
    }
  })

  it("a path segment of one venue takes the full id or the bare native id, and names another venue's", () => {
    assert.deepStrictEqual(nativeIn("sim", "sim:ABC"), { native: "ABC" })
    assert.deepStrictEqual(nativeIn("sim", "ABC"), { native: "ABC" })
    assert.deepStrictEqual(nativeIn("sim", "kalshi:ABC"), { otherVenue: "kalshi" })
    assert.deepStrictEqual(nativeIn("polymarket", "polymarket:0x1:2"), { native: "0x1:2" })
  })
})

describe("account ids", () => {
  it.prop("a made account parses back to its venue and name", [venue, native], ([v, n]) => {
    const id = makeAccountId(v, n)
    assert.deepStrictEqual(parseAccountId(id), { venue: v, name: n })
    assert.strictEqual(venueOf(id), v)
  })

  it.prop(
    "an account names a name exactly when its parsed name is that name",
    [
      fc.oneof(
        fc.string(),
        fc.tuple(venue, native).map(([v, n]) => makeAccountId(v, n))
      ),
      fc.oneof(native, fc.constant("paper"))
    ],
    ([text, name]) => {
      assert.strictEqual(accountNamed(text, name), parseAccountId(text)?.name === name)
      const made = makeAccountId("sim", name)
      assert.isTrue(accountNamed(made, name))
      assert.isFalse(accountNamed(`${made}x`, name))
    }
  )
})
