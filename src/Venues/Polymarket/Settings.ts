/** Polymarket's settings: hosts, chain, key and API credentials, timings; and the account they name. */
import { Duration } from "effect"
import type { Address } from "viem"
import { getAddress } from "viem"
import { DEFAULT_HOSTS, type Hosts, type Identity } from "./Rest.ts"
import { type SignatureType, signerOf } from "./Signing.ts"

/** The venue's settings, read from the environment by {@link configFromEnv}. */
export interface PolymarketConfig {
  readonly hosts: Hosts
  readonly chainId: number
  readonly privateKey: string | undefined
  readonly funder: string | undefined
  readonly signatureType: SignatureType
  readonly apiKey: string | undefined
  readonly apiSecret: string | undefined
  readonly apiPassphrase: string | undefined
  readonly timeout: Duration.DurationInput
  /** How long the catalog is kept before Gamma is asked again. */
  readonly catalogTtl: Duration.DurationInput
  /** At most this many Gamma pages of 500 are read for the catalog. */
  readonly catalogPages: number
  /** How often the heartbeat is sent while an order rests (the venue cancels after about 10 s without one). */
  readonly heartbeatEvery: Duration.DurationInput
  /** How often a channel is PINGed, and how long it may stay silent (no message, no PONG) before it is reopened. */
  readonly pingEvery: Duration.DurationInput
  readonly staleAfter: Duration.DurationInput
}

const positiveInt = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number): number => {
  const text = env[name]
  if (text === undefined || text === "") return fallback
  if (!/^[1-9]\d*$/.test(text)) throw new Error(`${name} must be a positive whole number`)
  return Number(text)
}

/** Reads `POLYMARKET_*` settings; a malformed one is an error naming it, never a silent default. */
export const configFromEnv = (env: Readonly<Record<string, string | undefined>>): PolymarketConfig => {
  const chain = env["POLYMARKET_CHAIN_ID"] ?? "137"
  if (chain !== "137" && chain !== "80002") throw new Error("POLYMARKET_CHAIN_ID must be 137 or 80002")
  // a deposit wallet (type 3) is how new accounts trade; a bare key with no funder address can only be an EOA
  const fundedBy = env["POLYMARKET_FUNDER"]
  const type = env["POLYMARKET_SIGNATURE_TYPE"] || (fundedBy !== undefined && fundedBy !== "" ? "3" : "0")
  if (!/^[0-3]$/.test(type)) throw new Error("POLYMARKET_SIGNATURE_TYPE must be 0, 1, 2 or 3")
  if (type !== "0" && (fundedBy === undefined || fundedBy === "") && env["POLYMARKET_PRIVATE_KEY"]) {
    throw new Error(`POLYMARKET_SIGNATURE_TYPE=${type} needs POLYMARKET_FUNDER, the wallet's address`)
  }
  const key = env["POLYMARKET_PRIVATE_KEY"]
  if (key !== undefined && key !== "" && !/^(0x)?[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error("POLYMARKET_PRIVATE_KEY must be 32 bytes in hex")
  }
  const nonEmpty = (name: string) => (env[name] === undefined || env[name] === "" ? undefined : env[name])
  return {
    hosts: {
      clob: nonEmpty("POLYMARKET_CLOB_URL") ?? DEFAULT_HOSTS.clob,
      gamma: nonEmpty("POLYMARKET_GAMMA_URL") ?? DEFAULT_HOSTS.gamma,
      data: nonEmpty("POLYMARKET_DATA_URL") ?? DEFAULT_HOSTS.data,
      ws: nonEmpty("POLYMARKET_WS_URL") ?? DEFAULT_HOSTS.ws
    },
    chainId: Number(chain),
    privateKey: nonEmpty("POLYMARKET_PRIVATE_KEY"),
    funder: nonEmpty("POLYMARKET_FUNDER"),
    signatureType: Number(type) as SignatureType,
    apiKey: nonEmpty("POLYMARKET_API_KEY"),
    apiSecret: nonEmpty("POLYMARKET_API_SECRET"),
    apiPassphrase: nonEmpty("POLYMARKET_API_PASSPHRASE"),
    timeout: Duration.seconds(10),
    catalogTtl: Duration.minutes(5),
    catalogPages: 20,
    heartbeatEvery: Duration.millis(positiveInt(env, "POLYMARKET_HEARTBEAT_MS", 5000)),
    pingEvery: Duration.millis(positiveInt(env, "POLYMARKET_PING_MS", 10_000)),
    staleAfter: Duration.millis(positiveInt(env, "POLYMARKET_STALE_MS", 20_000))
  }
}

/** The account the settings name: the signer with its L2 credentials when given, and the wallet that funds orders. */
export interface PolymarketAccount {
  readonly identity: Identity | undefined
  readonly funder: Address | undefined
}

/** The account of the settings; without a private key there is none (public data only). */
export const accountOf = (config: PolymarketConfig): PolymarketAccount => {
  const signer = config.privateKey === undefined ? undefined : signerOf(config.privateKey)
  const identity: Identity | undefined =
    signer === undefined
      ? undefined
      : {
          signer,
          chainId: config.chainId,
          creds:
            config.apiKey !== undefined && config.apiSecret !== undefined && config.apiPassphrase !== undefined
              ? { key: config.apiKey, secret: config.apiSecret, passphrase: config.apiPassphrase }
              : undefined
        }
  const funder: Address | undefined =
    signer === undefined ? undefined : config.funder !== undefined ? getAddress(config.funder) : signer.address
  return { identity, funder }
}
