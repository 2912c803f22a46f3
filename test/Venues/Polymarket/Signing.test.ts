/** Every Polymarket signing vector in the fixtures reproduces: HMAC, ClobAuth, orders (V1, V2, deposit wallets), amounts. */
import { existsSync, readFileSync } from "node:fs"
import { fileURLToPath } from "node:url"
import { getAddress, type Hex } from "viem"
import { describe, expect, it } from "vitest"
import fc from "fast-check"
import * as F from "../../../src/Domain/Fixed.ts"
import { nearestTicks } from "../../../src/Domain/OrderRequest.ts"
import {
  clobAuthSignature,
  exchangeFor,
  hmacSignature,
  type Order,
  orderAmounts,
  orderFromJson,
  orderHash,
  orderJson,
  recoverClobAuth,
  recoverOrderSigner,
  signerOf,
  signOrder,
  timestampOf,
  ZERO_ADDRESS,
  ZERO_BYTES32
} from "../../../src/Venues/Polymarket/Signing.ts"

const FIXTURES = new URL("../../../../shared/fixtures/", import.meta.url)
const RECORDED = new URL("recorded/polymarket/rest/signing_vectors.json", FIXTURES)
const SPEC = new URL("specs/polymarket/signing_vectors_v2.json", FIXTURES)
const haveShared = existsSync(fileURLToPath(RECORDED)) && existsSync(fileURLToPath(SPEC))
const load = (u: URL): any => JSON.parse(readFileSync(u, "utf8"))

interface RecordedOrder {
  signature_type: 0 | 1 | 2 | 3
  neg_risk: boolean
  side: "BUY" | "SELL"
  maker: string
  signer: string
  token_id: string
  maker_amount: number
  taker_amount: number
  salt: number
  timestamp: number
  builder: Hex
  expiration: string
  signature: Hex
  hash: Hex
}

const recordedOrder = (o: RecordedOrder): Order => ({
  salt: BigInt(o.salt),
  maker: getAddress(o.maker),
  signer: getAddress(o.signer),
  tokenId: o.token_id,
  makerAmount: BigInt(o.maker_amount),
  takerAmount: BigInt(o.taker_amount),
  side: o.side,
  signatureType: o.signature_type,
  timestamp: BigInt(o.timestamp),
  metadata: ZERO_BYTES32,
  builder: o.builder,
  expiration: BigInt(o.expiration),
  taker: ZERO_ADDRESS,
  nonce: 0n,
  feeRateBps: 0n
})

describe.skipIf(!haveShared)(
  haveShared ? "Polymarket signing vectors" : "Polymarket signing vectors — SKIPPED: ../shared/fixtures is absent",
  () => {
    const recorded = haveShared ? load(RECORDED) : undefined
    const spec = haveShared ? load(SPEC) : undefined

    it("the test key is the recorded address", () => {
      expect(signerOf(recorded.private_key).address).toBe(recorded.address)
      expect(signerOf(recorded.private_key.slice(2)).address).toBe(recorded.address)
    })

    it("every HMAC case: URL-safe base64 over timestamp + method + path + body", () => {
      const cases = [
        ...recorded.hmac.map((h: any) => [h.secret, h.timestamp, h.method, h.path, h.body, h.signature]),
        ...spec.hmac.map((h: any) => [h.secret, h.timestamp, h.method, h.request_path, h.body, h.expected_signature])
      ]
      expect(cases).toHaveLength(5)
      for (const [secret, ts, method, path, body, expected] of cases) {
        expect(hmacSignature(secret, ts, method, path, body)).toBe(expected)
      }
    })

    it("every L1 ClobAuth signature (the recorded ones on chain 137, the client's on 80002)", async () => {
      const signer = signerOf(recorded.private_key)
      for (const l of recorded.l1) {
        expect(await clobAuthSignature(signer, 137, l.timestamp, l.nonce)).toBe(l.signature)
        expect(await recoverClobAuth(signer.address, 137, l.timestamp, l.nonce, l.signature)).toBe(signer.address)
      }
      for (const c of spec.eip712_clob_auth) {
        const s = signerOf(c.private_key)
        expect(await clobAuthSignature(s, c.chain_id, c.timestamp, c.nonce)).toBe(c.expected_signature)
      }
    })

    it("all 16 recorded orders: hash and signature on the V2 exchanges of chain 137, deposit wallets wrapped", async () => {
      const signer = signerOf(recorded.private_key)
      expect(recorded.orders).toHaveLength(16)
      for (const o of recorded.orders as Array<RecordedOrder>) {
        const x = exchangeFor(137, 2, o.neg_risk)!
        const order = recordedOrder(o)
        expect(orderHash(x, order)).toBe(o.hash)
        expect(await signOrder(signer, x, order)).toBe(o.signature)
        expect(await recoverOrderSigner(x, order, o.signature)).toBe(signer.address)
      }
      const wrapped = (recorded.orders as Array<RecordedOrder>).filter((o) => o.signature_type === 3)
      expect(wrapped.every((o) => (o.signature.length - 2) / 2 === 317)).toBe(true)
    })

    it("the client's V1 orders on the CTF and neg-risk exchanges of chain 80002", async () => {
      for (const c of spec.order_v1) {
        const x = exchangeFor(80002, 1, c.domain.verifyingContract !== "0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40")!
        expect(x.address).toBe(c.domain.verifyingContract)
        const o = c.order
        const order: Order = {
          salt: BigInt(o.salt),
          maker: o.maker,
          signer: o.signer,
          taker: o.taker,
          tokenId: o.tokenId,
          makerAmount: BigInt(o.makerAmount),
          takerAmount: BigInt(o.takerAmount),
          expiration: BigInt(o.expiration),
          nonce: BigInt(o.nonce),
          feeRateBps: BigInt(o.feeRateBps),
          side: o.side,
          signatureType: o.signatureType,
          timestamp: 0n,
          metadata: ZERO_BYTES32,
          builder: ZERO_BYTES32
        }
        expect(orderHash(x, order)).toBe(c.expected_hash)
        expect(await signOrder(signerOf(c.private_key), x, order)).toBe(c.expected_signature)
      }
    })

    it("the V2 and V3 exchange domains of chain 80002", () => {
      const d = spec.order_v2_v3_domains[0]
      expect(exchangeFor(80002, 2, false)).toEqual({
        version: 2,
        chainId: 80002,
        address: d.expected_domain_v2.verifyingContract
      })
      expect(exchangeFor(80002, 3, false)).toEqual({
        version: 3,
        chainId: 80002,
        address: d.expected_domain_v3.verifyingContract
      })
      expect(exchangeFor(137, 9, false)).toBeUndefined()
    })

    it("all 1140 amount cases: maker and taker amounts in millionths for each tick", () => {
      expect(recorded.amounts).toHaveLength(1140)
      for (const a of recorded.amounts) {
        const got = orderAmounts(a.side, F.of(a.price), F.of(a.size), F.of(a.tick))
        expect([a.tick, a.price, a.size, a.side, Number(got.makerAmount), Number(got.takerAmount)]).toEqual([
          a.tick,
          a.price,
          a.size,
          a.side,
          a.maker,
          a.taker
        ])
      }
    })

    it("an order survives the trip through the POST /order body with its signer recoverable", async () => {
      const signer = signerOf(recorded.private_key)
      const o = (recorded.orders as Array<RecordedOrder>)[2]!
      const x = exchangeFor(137, 2, o.neg_risk)!
      const body = JSON.parse(JSON.stringify(orderJson(recordedOrder(o), o.signature, 2)))
      const back = orderFromJson(body)
      expect(orderHash(x, back)).toBe(o.hash)
      expect(await recoverOrderSigner(x, back, body.signature)).toBe(signer.address)
    })
  }
)

describe("order amounts", () => {
  const ticks = ["0.1", "0.01", "0.001", "0.0001"].map(F.of)

  it("a BUY pays exactly price × size for the shares, and a SELL is its mirror", () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ticks),
        fc.integer({ min: 1, max: 9999 }),
        fc.integer({ min: 1, max: 1_000_000 }),
        (tick, steps, hundredths) => {
          const maxSteps = Math.round(F.ONE / tick) - 1
          const price = (((steps - 1) % maxSteps) + 1) * tick
          const size = hundredths * 10_000
          const buy = orderAmounts("BUY", price as F.Fixed, size as F.Fixed, tick)
          const sell = orderAmounts("SELL", price as F.Fixed, size as F.Fixed, tick)
          expect(buy.takerAmount).toBe(BigInt(size))
          expect(buy.makerAmount * 1_000_000n).toBe(BigInt(price) * BigInt(size))
          expect([sell.makerAmount, sell.takerAmount]).toEqual([buy.takerAmount, buy.makerAmount])
        }
      )
    )
  })

  it("a size is cut to hundredths; a price off the grid is refused, with the two nearest valid prices", () => {
    expect(orderAmounts("BUY", F.of("0.5"), F.of("10.129"), F.of("0.01"))).toEqual({
      makerAmount: 5_060_000n,
      takerAmount: 10_120_000n
    })
    expect(() => orderAmounts("BUY", F.of("0.505"), F.of("10"), F.of("0.01"))).toThrow(/grid/)
    expect(nearestTicks(F.of("0.505"), F.of("0.01"))).toEqual([F.of("0.5"), F.of("0.51")])
    expect(nearestTicks(F.of("0.995"), F.of("0.01"))).toEqual([F.of("0.99"), F.of("0.99")])
  })

  it("a signature by another key does not recover to the signer", async () => {
    const a = signerOf("0x" + "11".repeat(32))
    const b = signerOf("0x" + "22".repeat(32))
    const x = exchangeFor(137, 2, false)!
    const order: Order = {
      salt: 1n,
      maker: a.address,
      signer: a.address,
      tokenId: "1",
      makerAmount: 1n,
      takerAmount: 2n,
      side: "BUY",
      signatureType: 0,
      timestamp: 1n,
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
      expiration: 0n,
      taker: ZERO_ADDRESS,
      nonce: 0n,
      feeRateBps: 0n
    }
    expect(await recoverOrderSigner(x, order, await signOrder(b, x, order))).toBe(b.address)
    expect(await recoverOrderSigner(x, order, await signOrder(a, x, order))).toBe(a.address)
  })
})

describe("an order found again by its hash", () => {
  it("timestampOf finds the creation time that gives the hash, and none for another salt", () => {
    const x = exchangeFor(137, 3, false)!
    const o: Order = {
      salt: 42n,
      maker: getAddress("0x" + "11".repeat(20)),
      signer: getAddress("0x" + "11".repeat(20)),
      tokenId: "1234",
      makerAmount: 5_000_000n,
      takerAmount: 10_000_000n,
      side: "BUY",
      signatureType: 3,
      timestamp: 1_800_000_000_123n,
      metadata: ZERO_BYTES32,
      builder: ZERO_BYTES32,
      expiration: 0n,
      taker: ZERO_ADDRESS,
      nonce: 0n,
      feeRateBps: 0n
    }
    const id = orderHash(x, o)
    expect(timestampOf(x, { ...o, timestamp: 0n }, id, 1_800_000_000_000 - 2000, 1_800_000_000_000 + 2000)).toBe(
      1_800_000_000_123
    )
    expect(timestampOf(x, { ...o, salt: 43n }, id, 1_800_000_000_000, 1_800_000_000_200)).toBeUndefined()
  })
})
