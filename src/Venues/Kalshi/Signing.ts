/** Kalshi's request signature: RSA-PSS over `timestamp_ms + METHOD + path`, SHA-256 with MGF1 SHA-256. */
import { constants, createPrivateKey, createPublicKey, sign, verify, type KeyObject } from "node:crypto"

/** The path every signed route starts with; the signature covers it. */
export const API_PREFIX = "/trade-api/v2"

/** The exact text Kalshi signs: the ms timestamp, the upper-case method and the full path without its query. */
export const signingMessage = (timestampMs: number, method: string, path: string): string => {
  const q = path.indexOf("?")
  return `${timestampMs}${method.toUpperCase()}${q === -1 ? path : path.slice(0, q)}`
}

const PSS = { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST } as const

/** Signs the message with the account's private key; base64, as the `KALSHI-ACCESS-SIGNATURE` header wants. */
export const signMessage = (key: KeyObject, message: string): string =>
  sign("sha256", Buffer.from(message, "utf8"), { key, ...PSS }).toString("base64")

/** Checks a signature with the public key (what the venue does; the fake exchange of the tests does it too). */
export const verifyMessage = (key: KeyObject, message: string, signature: string): boolean =>
  verify("sha256", Buffer.from(message, "utf8"), { key, ...PSS }, Buffer.from(signature, "base64"))

/** A private key from PEM text (PKCS#1 or PKCS#8). Throws on anything else. */
export const privateKeyFromPem = (pem: string): KeyObject => createPrivateKey({ key: pem, format: "pem" })

export const publicKeyOf = (key: KeyObject): KeyObject => createPublicKey(key)

/** The three headers of a signed request. */
export const authHeaders = (
  keyId: string,
  key: KeyObject,
  timestampMs: number,
  method: string,
  path: string
): Record<string, string> => ({
  "KALSHI-ACCESS-KEY": keyId,
  "KALSHI-ACCESS-TIMESTAMP": String(timestampMs),
  "KALSHI-ACCESS-SIGNATURE": signMessage(key, signingMessage(timestampMs, method, path))
})
