/** Polymarket's trading session: the account's L2 credentials (derived once when not given) and the exchange version. */
import { Effect, Schema } from "effect"
import { fail, type PolymarketRest } from "./Rest.ts"
import type { PolymarketAccount, PolymarketConfig } from "./Settings.ts"
import { exchangeFor } from "./Signing.ts"
import type { PolymarketMarket } from "./Wire.ts"

const CredsAnswer = Schema.Struct({ apiKey: Schema.String, secret: Schema.String, passphrase: Schema.String })
const VersionAnswer = Schema.Struct({ version: Schema.Number })

/** What the session needs: the REST client, the settings and the account. */
export interface SessionDeps {
  readonly rest: PolymarketRest
  readonly config: PolymarketConfig
  readonly account: PolymarketAccount
}

/** Builds the session of one account: its credentials and the exchange version, each read once and kept. */
export const makeSession = ({ rest, config, account }: SessionDeps) => {
  const { identity } = account

  const ensureCreds = Effect.gen(function* () {
    if (identity === undefined) return yield* fail("not_supported", "trading needs POLYMARKET_PRIVATE_KEY")
    if (identity.creds !== undefined) return identity.creds
    const answer = yield* rest
      .json({ family: "clob", host: "clob", method: "GET", path: "/auth/derive-api-key", auth: "l1" }, CredsAnswer)
      .pipe(
        Effect.orElse(() =>
          rest.json({ family: "clob", host: "clob", method: "POST", path: "/auth/api-key", auth: "l1" }, CredsAnswer)
        )
      )
    identity.creds = { key: answer.apiKey, secret: answer.secret, passphrase: answer.passphrase }
    return identity.creds
  })

  /** The exchange version `/version` last reported: read again whenever the venue answers `order_version_mismatch`. */
  let exchangeVersion: number | undefined
  const readVersion = Effect.gen(function* () {
    const v = yield* rest.json({ family: "clob", host: "clob", method: "GET", path: "/version" }, VersionAnswer)
    exchangeVersion = v.version
    return v.version
  })
  const version = Effect.suspend(() => (exchangeVersion === undefined ? readVersion : Effect.succeed(exchangeVersion)))
  /** A market of the venue's second protocol trades on the version-3 exchange whatever `/version` says. */
  const exchangeOf = (m: PolymarketMarket, v: number) =>
    exchangeFor(config.chainId, m.protocol === 2 ? 3 : v, m.negRisk)

  return { ensureCreds, version, readVersion, exchangeOf }
}

/** The trading session of one Polymarket account. */
export type Session = ReturnType<typeof makeSession>
