/** Polymarket as the server registers it: its settings, its doctor checks, and its builder (loaded when built). */
import { Effect } from "effect"
import { baseUrl, lazyModule, readOrFail, type SettingsNote, type VenueRegistration } from "../Registration.ts"
import type { PolymarketConfig } from "./Venue.ts"

const polymarketVenue = lazyModule(() => import("./Venue.ts"))
const polymarketRest = lazyModule(() => import("./Rest.ts"))

/**
 * Which signature type the settings sign with, and whether the account can trade with it: new accounts trade
 * through a deposit wallet (type 3, the default once `POLYMARKET_FUNDER` is set); a bare key signs as an EOA, which
 * the venue refuses for them ("maker address not allowed, please use the deposit wallet flow").
 */
export const polymarketAccount = (env: Readonly<Record<string, string | undefined>>): SettingsNote | undefined => {
  if ((env["POLYMARKET_PRIVATE_KEY"] ?? "") === "") return undefined
  const funder = env["POLYMARKET_FUNDER"] ?? ""
  const type = env["POLYMARKET_SIGNATURE_TYPE"] || (funder === "" ? "0" : "3")
  const names: Record<string, string> = { "0": "EOA", "1": "proxy wallet", "2": "Gnosis Safe", "3": "deposit wallet" }
  if (names[type] === undefined) return { status: "fail", detail: "POLYMARKET_SIGNATURE_TYPE must be 0, 1, 2 or 3" }
  if (type !== "0" && funder === "") {
    return {
      status: "fail",
      detail: `signature type ${type} (${names[type]}) needs POLYMARKET_FUNDER, the wallet's address`
    }
  }
  if (type === "0") {
    return {
      status: "warn",
      detail:
        "signs as a bare EOA (type 0): accounts opened through the deposit-wallet flow need type 3 — set POLYMARKET_FUNDER to the deposit wallet's address (type 3 is then the default)"
    }
  }
  return { status: "ok", detail: `signs as a ${names[type]} (type ${type}) for ${funder}` }
}

/** `polymarket`: market data without credentials, trading on `polymarket:default` with a wallet key. */
export const polymarketRegistration: VenueRegistration<PolymarketConfig> = {
  id: "polymarket",
  description: "Polymarket: market data without credentials, trading on polymarket:default with a wallet key",
  settings: {
    variables: [
      "POLYMARKET_PRIVATE_KEY",
      "POLYMARKET_FUNDER",
      "POLYMARKET_SIGNATURE_TYPE",
      "POLYMARKET_API_KEY",
      "POLYMARKET_API_SECRET",
      "POLYMARKET_API_PASSPHRASE",
      "POLYMARKET_CHAIN_ID",
      "POLYMARKET_CLOB_URL",
      "POLYMARKET_GAMMA_URL",
      "POLYMARKET_DATA_URL",
      "POLYMARKET_WS_URL",
      "POLYMARKET_HEARTBEAT_MS",
      "POLYMARKET_PING_MS",
      "POLYMARKET_STALE_MS"
    ],
    credentials: [["POLYMARKET_PRIVATE_KEY"]],
    read: (env) => Effect.flatMap(polymarketVenue, (m) => readOrFail(() => m.configFromEnv(env)))
  },
  doctor: {
    url: (env) =>
      Effect.map(polymarketRest, (m) => `${baseUrl(env["POLYMARKET_CLOB_URL"], m.DEFAULT_HOSTS.clob)}/time`),
    account: polymarketAccount
  },
  build: (config) => Effect.flatMap(polymarketVenue, (m) => m.makePolymarketVenue(config))
}
