/** The Kalshi signature: the exact message, RSA-PSS with SHA-256 and a digest-length salt, verified with the public key. */
import { constants, generateKeyPairSync, verify } from "node:crypto"
import { describe, expect, it } from "vitest"
import * as S from "../../../src/Venues/Kalshi/Signing.ts"

const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 })

describe("Kalshi signing", () => {
  it("signs timestamp + METHOD + full path, without the query", () => {
    expect(S.signingMessage(1789655009700, "post", "/trade-api/v2/portfolio/events/orders")).toBe(
      "1789655009700POST/trade-api/v2/portfolio/events/orders"
    )
    expect(S.signingMessage(1, "GET", "/trade-api/v2/portfolio/orders?status=resting&limit=5")).toBe(
      "1GET/trade-api/v2/portfolio/orders"
    )
  })

  it("the headers carry the key id, the timestamp and a PSS signature the public key verifies", () => {
    const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString()
    const key = S.privateKeyFromPem(pem)
    const h = S.authHeaders("key-1", key, 1789655009700, "DELETE", "/trade-api/v2/portfolio/events/orders/abc?x=1")
    expect(h["KALSHI-ACCESS-KEY"]).toBe("key-1")
    expect(h["KALSHI-ACCESS-TIMESTAMP"]).toBe("1789655009700")
    const message = "1789655009700DELETE/trade-api/v2/portfolio/events/orders/abc"
    const signature = Buffer.from(h["KALSHI-ACCESS-SIGNATURE"]!, "base64")
    // PSS with the salt as long as the SHA-256 digest, checked independently of the module under test
    expect(
      verify(
        "sha256",
        Buffer.from(message),
        { key: publicKey, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 },
        signature
      )
    ).toBe(true)
    expect(S.verifyMessage(S.publicKeyOf(key), message, h["KALSHI-ACCESS-SIGNATURE"]!)).toBe(true)
    // another message, or PKCS#1 v1.5 padding, does not verify
    expect(S.verifyMessage(publicKey, message + "x", h["KALSHI-ACCESS-SIGNATURE"]!)).toBe(false)
    expect(verify("sha256", Buffer.from(message), publicKey, signature)).toBe(false)
  })

  it("a PKCS#1 PEM loads too", () => {
    const pem = privateKey.export({ type: "pkcs1", format: "pem" }).toString()
    const sig = S.signMessage(S.privateKeyFromPem(pem), "m")
    expect(S.verifyMessage(publicKey, "m", sig)).toBe(true)
  })
})
