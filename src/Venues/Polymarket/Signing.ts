/** Polymarket's signatures: L1 ClobAuth (EIP-712), L2 HMAC headers, and EIP-712 orders for the CLOB's exchange. */
import { createHmac } from "node:crypto"
import {
  type Address,
  concat,
  encodeAbiParameters,
  getAddress,
  type Hex,
  hashTypedData,
  hexToBytes,
  keccak256,
  type LocalAccount,
  recoverTypedDataAddress,
  toHex
} from "viem"
import { privateKeyToAccount } from "viem/accounts"
import * as F from "../../Domain/Fixed.ts"

/** `0` EOA, `1` proxy (email/Magic), `2` Gnosis Safe, `3` deposit wallet (ERC-1271, ERC-7739 wrapped signature). */
export type SignatureType = 0 | 1 | 2 | 3

/** The L2 credentials the CLOB hands out for a signer. */
export interface ApiCredentials {
  readonly key: string
  /** Base64 (URL-safe or standard). */
  readonly secret: string
  readonly passphrase: string
}

export const ZERO_ADDRESS: Address = "0x0000000000000000000000000000000000000000"
export const ZERO_BYTES32: Hex = "0x0000000000000000000000000000000000000000000000000000000000000000"

/** The signer behind `POLYMARKET_PRIVATE_KEY`. */
export const signerOf = (privateKey: string): LocalAccount =>
  privateKeyToAccount((privateKey.startsWith("0x") ? privateKey : `0x${privateKey}`) as Hex)

// ---------------------------------------------------------------------------------------------- L2: HMAC headers

/**
 * The L2 signature: HMAC-SHA256 keyed by the base64-decoded secret over `timestamp + METHOD + path + body` (body
 * left out when there is none), in URL-safe base64 with its padding kept.
 */
export const hmacSignature = (
  secret: string,
  timestamp: number | string,
  method: string,
  path: string,
  body?: string | null
): string => {
  const key = Buffer.from(secret.replace(/-/g, "+").replace(/_/g, "/"), "base64")
  const message = `${timestamp}${method}${path}${body ?? ""}`
  return createHmac("sha256", key).update(message).digest("base64").replace(/\+/g, "-").replace(/\//g, "_")
}

/** The five headers of an authenticated (L2) CLOB call. `address` is the signer's address. */
export const l2Headers = (
  creds: ApiCredentials,
  address: string,
  timestamp: number,
  method: string,
  path: string,
  body?: string | null
): Record<string, string> => ({
  POLY_ADDRESS: address,
  POLY_SIGNATURE: hmacSignature(creds.secret, timestamp, method, path, body),
  POLY_TIMESTAMP: String(timestamp),
  POLY_API_KEY: creds.key,
  POLY_PASSPHRASE: creds.passphrase
})

// ---------------------------------------------------------------------------------------------- L1: ClobAuth

export const CLOB_AUTH_MESSAGE = "This message attests that I control the given wallet"

const CLOB_AUTH_TYPES = {
  ClobAuth: [
    { name: "address", type: "address" },
    { name: "timestamp", type: "string" },
    { name: "nonce", type: "uint256" },
    { name: "message", type: "string" }
  ]
} as const

const clobAuthTypedData = (address: Address, chainId: number, timestamp: number, nonce: number) => ({
  domain: { name: "ClobAuthDomain", version: "1", chainId },
  types: CLOB_AUTH_TYPES,
  primaryType: "ClobAuth" as const,
  message: { address, timestamp: String(timestamp), nonce: BigInt(nonce), message: CLOB_AUTH_MESSAGE }
})

/** The L1 signature that proves control of the signer, used to create or derive L2 credentials. */
export const clobAuthSignature = (
  signer: LocalAccount,
  chainId: number,
  timestamp: number,
  nonce: number
): Promise<Hex> => signer.signTypedData(clobAuthTypedData(signer.address, chainId, timestamp, nonce))

/** The four headers of an L1 call (`POST /auth/api-key`, `GET /auth/derive-api-key`). */
export const l1Headers = async (
  signer: LocalAccount,
  chainId: number,
  timestamp: number,
  nonce: number
): Promise<Record<string, string>> => ({
  POLY_ADDRESS: signer.address,
  POLY_SIGNATURE: await clobAuthSignature(signer, chainId, timestamp, nonce),
  POLY_TIMESTAMP: String(timestamp),
  POLY_NONCE: String(nonce)
})

/** Who signed an L1 header set: what a server checks. */
export const recoverClobAuth = (
  address: Address,
  chainId: number,
  timestamp: number,
  nonce: number,
  signature: Hex
): Promise<Address> => recoverTypedDataAddress({ ...clobAuthTypedData(address, chainId, timestamp, nonce), signature })

// ---------------------------------------------------------------------------------------------- orders: exchanges

/** The exchange contract an order is signed for: its EIP-712 domain version and address. */
export interface Exchange {
  readonly version: 1 | 2 | 3
  readonly chainId: number
  readonly address: Address
}

/** Known exchange addresses by chain, CLOB exchange version and neg-risk. */
const EXCHANGES: Record<
  number,
  Partial<Record<1 | 2 | 3, { readonly standard?: Address; readonly negRisk?: Address }>>
> = {
  137: {
    1: {
      standard: "0x4bFb41d5B3570DeFd03C39a9A4D8dE6Bd8B8982E",
      negRisk: "0xC5d563A36AE78145C45a50134d48A1215220f80a"
    },
    2: {
      standard: "0xE111180000d2663C0091e4f400237545B87B996B",
      negRisk: "0xe2222d279d744050d28e00520010520000310F59"
    },
    // one version-3 exchange serves standard and neg-risk markets alike
    3: { standard: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa", negRisk: "0xe3333700cA9d93003F00f0F71f8515005F6c00Aa" }
  },
  80002: {
    1: {
      standard: "0xdFE02Eb6733538f8Ea35D585af8DE5958AD99E40",
      negRisk: "0xC5d563A36AE78145C45a50134d48A1215220f80a"
    },
    2: {
      standard: "0xE111180000d2663C0091e4f400237545B87B996B",
      negRisk: "0xe2222d279d744050d28e00520010520000310F59"
    },
    3: { standard: "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D", negRisk: "0x9fE6e61422AdB6F610d8597F9684b16912D50C3D" }
  }
}

/** The exchange for a chain, the version `GET /version` reports, and the market's neg-risk flag; undefined if unknown. */
export const exchangeFor = (chainId: number, version: number, negRisk: boolean): Exchange | undefined => {
  if (version !== 1 && version !== 2 && version !== 3) return undefined
  const entry = EXCHANGES[chainId]?.[version]
  const address = negRisk ? entry?.negRisk : entry?.standard
  return address === undefined ? undefined : { version, chainId, address }
}

const exchangeDomain = (x: Exchange) => ({
  name: "Polymarket CTF Exchange",
  version: String(x.version),
  chainId: x.chainId,
  verifyingContract: x.address
})

const ORDER_V1_FIELDS = [
  { name: "salt", type: "uint256" },
  { name: "maker", type: "address" },
  { name: "signer", type: "address" },
  { name: "taker", type: "address" },
  { name: "tokenId", type: "uint256" },
  { name: "makerAmount", type: "uint256" },
  { name: "takerAmount", type: "uint256" },
  { name: "expiration", type: "uint256" },
  { name: "nonce", type: "uint256" },
  { name: "feeRateBps", type: "uint256" },
  { name: "side", type: "uint8" },
  { name: "signatureType", type: "uint8" }
] as const

const ORDER_V2_FIELDS = [
  { name: "salt", type: "uint256" },
  { name: "maker", type: "address" },
  { name: "signer", type: "address" },
  { name: "tokenId", type: "uint256" },
  { name: "makerAmount", type: "uint256" },
  { name: "takerAmount", type: "uint256" },
  { name: "side", type: "uint8" },
  { name: "signatureType", type: "uint8" },
  { name: "timestamp", type: "uint256" },
  { name: "metadata", type: "bytes32" },
  { name: "builder", type: "bytes32" }
] as const

/** The V2 order's EIP-712 type string, which a deposit wallet's wrapped signature carries. */
export const ORDER_V2_TYPE =
  "Order(uint256 salt,address maker,address signer,uint256 tokenId,uint256 makerAmount,uint256 takerAmount,uint8 side,uint8 signatureType,uint256 timestamp,bytes32 metadata,bytes32 builder)"

/** The V2/V3 order as EIP-712 signs it. */
const v2Message = (o: Order) => ({
  salt: o.salt,
  maker: o.maker,
  signer: o.signer,
  tokenId: BigInt(o.tokenId),
  makerAmount: o.makerAmount,
  takerAmount: o.takerAmount,
  side: sideNum(o),
  signatureType: o.signatureType,
  timestamp: o.timestamp,
  metadata: o.metadata,
  builder: o.builder
})

/** An order as signed. Amounts are integer millionths (USDC and shares both have six decimals). */
export interface Order {
  readonly salt: bigint
  readonly maker: Address
  readonly signer: Address
  readonly tokenId: string
  readonly makerAmount: bigint
  readonly takerAmount: bigint
  readonly side: "BUY" | "SELL"
  readonly signatureType: SignatureType
  /** V2/V3: creation time in ms; V1: unused. */
  readonly timestamp: bigint
  readonly metadata: Hex
  readonly builder: Hex
  /** V1: unix seconds, 0 = none; V2/V3: carried in the request body, not signed. */
  readonly expiration: bigint
  /** V1 only. */
  readonly taker: Address
  readonly nonce: bigint
  readonly feeRateBps: bigint
}

const sideNum = (o: Order): number => (o.side === "BUY" ? 0 : 1)

const orderTypedData = (x: Exchange, o: Order) =>
  x.version === 1
    ? {
        domain: exchangeDomain(x),
        types: { Order: ORDER_V1_FIELDS },
        primaryType: "Order" as const,
        message: {
          salt: o.salt,
          maker: o.maker,
          signer: o.signer,
          taker: o.taker,
          tokenId: BigInt(o.tokenId),
          makerAmount: o.makerAmount,
          takerAmount: o.takerAmount,
          expiration: o.expiration,
          nonce: o.nonce,
          feeRateBps: o.feeRateBps,
          side: sideNum(o),
          signatureType: o.signatureType
        }
      }
    : {
        domain: exchangeDomain(x),
        types: { Order: ORDER_V2_FIELDS },
        primaryType: "Order" as const,
        message: v2Message(o)
      }

/**
 * The order's EIP-712 hash on this exchange (the id the CLOB gives it, and what its signature signs). A V2/V3 order's
 * is put together from its struct hash and the exchange's domain separator (computed once per exchange), as EIP-712
 * defines it; the signing vectors check it against the typed-data path, which a V1 order still takes.
 */
export const orderHash = (x: Exchange, o: Order): Hex =>
  x.version === 1
    ? hashTypedData(orderTypedData(x, o) as never)
    : keccak256(concat(["0x1901", separatorOf(x), contentsHash(o)]))

/** ERC-7739 `TypedDataSign` of a deposit wallet: the order nested in the wallet's own domain fields. */
const typedDataSign = (x: Exchange, o: Order) => ({
  domain: exchangeDomain(x),
  types: {
    TypedDataSign: [
      { name: "contents", type: "Order" },
      { name: "name", type: "string" },
      { name: "version", type: "string" },
      { name: "chainId", type: "uint256" },
      { name: "verifyingContract", type: "address" },
      { name: "salt", type: "bytes32" }
    ],
    Order: ORDER_V2_FIELDS
  },
  primaryType: "TypedDataSign" as const,
  message: {
    contents: v2Message(o),
    name: "DepositWallet",
    version: "1",
    chainId: BigInt(x.chainId),
    verifyingContract: o.signer,
    salt: ZERO_BYTES32
  }
})

/** Each exchange's domain separator, by version, chain and address. */
const separators = new Map<string, Hex>()
const separatorOf = (x: Exchange): Hex => {
  const key = `${x.version}:${x.chainId}:${x.address}`
  let separator = separators.get(key)
  if (separator === undefined) separators.set(key, (separator = domainSeparator(x)))
  return separator
}

/** The V2 order's type hash. */
const ORDER_V2_TYPE_HASH = keccak256(toHex(ORDER_V2_TYPE))

const domainSeparator = (x: Exchange): Hex =>
  keccak256(
    encodeAbiParameters(
      [{ type: "bytes32" }, { type: "bytes32" }, { type: "bytes32" }, { type: "uint256" }, { type: "address" }],
      [
        keccak256(toHex("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")),
        keccak256(toHex("Polymarket CTF Exchange")),
        keccak256(toHex(String(x.version))),
        BigInt(x.chainId),
        x.address
      ]
    )
  )

const contentsHash = (o: Order): Hex => keccak256(contentsEncoding(o))

const contentsEncoding = (o: Order): Hex =>
  encodeAbiParameters(
    [
      { type: "bytes32" },
      { type: "uint256" },
      { type: "address" },
      { type: "address" },
      { type: "uint256" },
      { type: "uint256" },
      { type: "uint256" },
      { type: "uint8" },
      { type: "uint8" },
      { type: "uint256" },
      { type: "bytes32" },
      { type: "bytes32" }
    ],
    [
      ORDER_V2_TYPE_HASH,
      o.salt,
      o.maker,
      o.signer,
      BigInt(o.tokenId),
      o.makerAmount,
      o.takerAmount,
      sideNum(o),
      o.signatureType,
      o.timestamp,
      o.metadata,
      o.builder
    ]
  )

/**
 * The creation time (ms, within `from`..`to`) at which a V2/V3 order with every other field of `o` has the hash
 * `id`, if one does: how an order whose hash was not kept is recognized again from what it was asked to be.
 */
export const timestampOf = (x: Exchange, o: Order, id: string, from: number, to: number): number | undefined => {
  if (x.version === 1 || !/^0x[0-9a-fA-F]{64}$/.test(id)) return undefined
  const contents = hexToBytes(contentsEncoding({ ...o, timestamp: 0n }))
  const digest = new Uint8Array(66)
  digest.set(hexToBytes(concat(["0x1901", separatorOf(x)])), 0)
  const target = hexToBytes(id as Hex)
  // the timestamp is the tenth 32-byte word of the encoding
  const at = 9 * 32
  for (let ts = Math.max(0, from); ts <= to; ts++) {
    contents.fill(0, at, at + 32)
    for (let i = at + 31, v = ts; v > 0; i--, v = Math.floor(v / 256)) contents[i] = v % 256
    digest.set(keccak256(contents, "bytes"), 34)
    const hash = keccak256(digest, "bytes")
    let same = true
    for (let i = 0; i < 32 && same; i++) same = hash[i] === target[i]
    if (same) return ts
  }
  return undefined
}

/**
 * Signs an order for the exchange. Types 0–2 sign the order itself; a deposit wallet (type 3, V2/V3 only) signs
 * the ERC-7739 `TypedDataSign` and sends `signature ‖ domainSeparator ‖ contentsHash ‖ typeString ‖ uint16 length`.
 */
export const signOrder = async (signer: LocalAccount, x: Exchange, o: Order): Promise<Hex> => {
  if (o.signatureType !== 3) {
    // The same digest the typed-data path signs, without building and checking the typed data again each time.
    return x.version === 1 || signer.sign === undefined
      ? signer.signTypedData(orderTypedData(x, o) as never)
      : signer.sign({ hash: orderHash(x, o) })
  }
  if (x.version === 1) throw new Error("deposit wallets sign only for exchange version 2 or later")
  const inner = await signer.signTypedData(typedDataSign(x, o))
  const length = ORDER_V2_TYPE.length.toString(16).padStart(4, "0")
  return `0x${inner.slice(2)}${separatorOf(x).slice(2)}${contentsHash(o).slice(2)}${toHex(ORDER_V2_TYPE).slice(2)}${length}`
}

/** The externally owned address that signed an order (for a deposit wallet, the owner behind the wrapped signature). */
export const recoverOrderSigner = async (x: Exchange, o: Order, signature: Hex): Promise<Address> => {
  if (o.signatureType !== 3) return recoverTypedDataAddress({ ...(orderTypedData(x, o) as object), signature } as never)
  const inner = `0x${signature.slice(2, 132)}` as Hex
  return recoverTypedDataAddress({ ...typedDataSign(x, o), signature: inner })
}

// ---------------------------------------------------------------------------------------------- orders: amounts

/** Price, size and amount decimals the CLOB accepts for each tick. */
const TICK_DECIMALS: Record<string, { readonly price: number; readonly amount: number }> = {
  "0.1": { price: 1, amount: 3 },
  "0.05": { price: 2, amount: 4 },
  "0.01": { price: 2, amount: 4 },
  "0.005": { price: 3, amount: 5 },
  "0.0025": { price: 4, amount: 6 },
  "0.001": { price: 3, amount: 5 },
  "0.0001": { price: 4, amount: 6 }
}

/** Sizes go in hundredths of a share. */
export const SIZE_STEP = F.of("0.01")

/**
 * Maker and taker amounts in millionths for `side` of `size` shares at `price`: a BUY gives USDC (price × size) for
 * shares, a SELL gives shares for USDC. The price must be on the tick; the size is cut down to hundredths and the
 * USDC amount rounded down to the tick's amount decimals (exact for every size on the grid).
 */
export const orderAmounts = (
  side: "BUY" | "SELL",
  price: F.Fixed,
  size: F.Fixed,
  tick: F.Fixed
): { readonly makerAmount: bigint; readonly takerAmount: bigint } => {
  const decimals = TICK_DECIMALS[F.format(tick)]
  if (decimals === undefined) throw new RangeError(`unknown tick size ${F.format(tick)}`)
  if (!F.isMultipleOf(price, tick) || price <= 0 || price >= F.ONE) {
    throw new RangeError(`price ${F.format(price)} is not on the ${F.format(tick)} grid`)
  }
  const shares = F.roundTo(size, SIZE_STEP, "down")
  const usdc = F.roundTo(F.mul(price, shares, "down"), (10 ** (6 - decimals.amount)) as F.Fixed, "down")
  return side === "BUY"
    ? { makerAmount: BigInt(usdc), takerAmount: BigInt(shares) }
    : { makerAmount: BigInt(shares), takerAmount: BigInt(usdc) }
}

/** A market (FOK/FAK) BUY's USDC amount has at most 2 decimals and its share amount at most 4, whatever the tick. */
export const MARKET_BUY_USDC_STEP = F.of("0.01")
export const MARKET_BUY_SHARES_STEP = F.of("0.0001")

/**
 * Amounts of an order the CLOB treats as a market order (FOK, FAK): a BUY spends at most `price × size` USDC cut to
 * cents, for at least that USDC over `price` shares rounded up to 4 decimals (so the worst price stays within
 * `price` and the shares never exceed `size`); a SELL is sized as a limit order.
 */
export const marketOrderAmounts = (
  side: "BUY" | "SELL",
  price: F.Fixed,
  size: F.Fixed,
  tick: F.Fixed
): { readonly makerAmount: bigint; readonly takerAmount: bigint } => {
  if (side === "SELL") return orderAmounts(side, price, size, tick)
  if (price <= 0 || price >= F.ONE) throw new RangeError(`price ${F.format(price)} is outside (0, 1)`)
  const shares = F.roundTo(size, SIZE_STEP, "down")
  const usdc = F.roundTo(F.mul(price, shares, "down"), MARKET_BUY_USDC_STEP, "down")
  const taking = F.min(F.roundTo(F.div(usdc, price, "up"), MARKET_BUY_SHARES_STEP, "up"), shares)
  return { makerAmount: BigInt(usdc), takerAmount: BigInt(taking) }
}

/**
 * The salt of the order placed for a client order id: the first six bytes of its keccak-256, so that the order's
 * hash (its venue id) can be computed again from the request alone. The desk's client ids never repeat.
 */
export const saltOf = (clientOrderId: string): bigint => BigInt(keccak256(toHex(clientOrderId)).slice(0, 14))

/** The order as the CLOB's `POST /order` body wants it: decimal strings for amounts, the signature attached. */
export const orderJson = (o: Order, signature: Hex, exchangeVersion: number): Record<string, unknown> =>
  exchangeVersion === 1
    ? {
        salt: Number(o.salt),
        maker: o.maker,
        signer: o.signer,
        taker: o.taker,
        tokenId: o.tokenId,
        makerAmount: String(o.makerAmount),
        takerAmount: String(o.takerAmount),
        expiration: String(o.expiration),
        nonce: String(o.nonce),
        feeRateBps: String(o.feeRateBps),
        side: o.side,
        signatureType: o.signatureType,
        signature
      }
    : {
        salt: Number(o.salt),
        maker: o.maker,
        signer: o.signer,
        tokenId: o.tokenId,
        makerAmount: String(o.makerAmount),
        takerAmount: String(o.takerAmount),
        side: o.side,
        signatureType: o.signatureType,
        timestamp: String(o.timestamp),
        expiration: String(o.expiration),
        metadata: o.metadata,
        builder: o.builder,
        signature
      }

/** Reads the order back from a `POST /order` body's `order` field (what a server does before checking it). */
export const orderFromJson = (j: Record<string, unknown>): Order => {
  const big = (k: string, d = "0"): bigint => BigInt(String(j[k] ?? d))
  const hex = (k: string, d: Hex): Hex => (typeof j[k] === "string" ? (j[k] as Hex) : d)
  return {
    salt: big("salt"),
    maker: getAddress(String(j["maker"])),
    signer: getAddress(String(j["signer"])),
    taker: typeof j["taker"] === "string" ? getAddress(j["taker"]) : ZERO_ADDRESS,
    tokenId: String(j["tokenId"]),
    makerAmount: big("makerAmount"),
    takerAmount: big("takerAmount"),
    side: j["side"] === "SELL" ? "SELL" : "BUY",
    signatureType: Number(j["signatureType"] ?? 0) as SignatureType,
    timestamp: big("timestamp"),
    metadata: hex("metadata", ZERO_BYTES32),
    builder: hex("builder", ZERO_BYTES32),
    expiration: big("expiration"),
    nonce: big("nonce"),
    feeRateBps: big("feeRateBps")
  }
}
