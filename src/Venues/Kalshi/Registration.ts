/** Kalshi as the server registers it: its settings, its doctor probe, and its builder (its code loaded when built). */
import { Effect } from "effect"
import { baseUrl, lazyModule, type VenueRegistration } from "../Registration.ts"
import type { KalshiConfig } from "./Venue.ts"

const kalshiVenue = lazyModule(() => import("./Venue.ts"))

/** `kalshi`: market data without credentials, trading on `kalshi:default` with an API key. */
export const kalshiRegistration: VenueRegistration<KalshiConfig> = {
  id: "kalshi",
  description: "Kalshi: market data without credentials, trading on kalshi:default with an API key",
  settings: {
    variables: [
      "KALSHI_API_KEY_ID",
      "KALSHI_PRIVATE_KEY_PATH",
      "KALSHI_PRIVATE_KEY",
      "KALSHI_ENV",
      "KALSHI_API_URL",
      "KALSHI_WS_URL",
      "KALSHI_READ_BUCKET",
      "KALSHI_READ_REFILL",
      "KALSHI_WRITE_BUCKET",
      "KALSHI_WRITE_REFILL",
      "KALSHI_TIMEOUT_MS",
      "KALSHI_STREAM_IDLE_MS",
      "KALSHI_FEE_TTL_MS",
      "KALSHI_USE_YES_PRICE"
    ],
    credentials: [["KALSHI_API_KEY_ID"], ["KALSHI_PRIVATE_KEY_PATH", "KALSHI_PRIVATE_KEY"]],
    read: (env) => Effect.flatMap(kalshiVenue, (m) => m.configFromEnv(env))
  },
  doctor: {
    // The host `serve` trades on: KALSHI_API_URL, else the endpoint of KALSHI_ENV.
    url: (env) =>
      Effect.map(
        kalshiVenue,
        (m) =>
          `${baseUrl(env["KALSHI_API_URL"], m.ENDPOINTS[env["KALSHI_ENV"]?.trim() === "demo" ? "demo" : "prod"].api)}/exchange/status`
      )
  },
  build: (config) => Effect.flatMap(kalshiVenue, (m) => m.makeKalshiVenue(config))
}
