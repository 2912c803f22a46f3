/**
 * The HTTP stack alone, for `server.orders_per_s`: `POST /trading/orders` on a minimal `HttpApi` server, with the
 * route's own payload and answer schemas and a bearer-token middleware, on the same Node listener `serve` uses. The
 * handler answers an order made from the request without a desk, a store or a venue, so what it costs is what the
 * stack costs a request. Run as a child process: `bin/run-ts.js scripts/bench/minimal-server.ts <port> <token>`.
 */
import {
  HttpApi,
  HttpApiBuilder,
  HttpApiEndpoint,
  HttpApiGroup,
  HttpApiMiddleware,
  HttpApiSecurity,
  HttpServerResponse
} from "@effect/platform"
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Context, Effect, Layer, Redacted, Schema } from "effect"
import { createServer } from "node:http"
import { OrderRecord } from "../../src/Http/Desk/Api.ts"
import { PlaceOrder } from "../../src/Orders.ts"

class Caller extends Context.Tag("bench/Caller")<Caller, string>() {}

class Unauthorized extends Schema.TaggedError<Unauthorized>()(
  "Unauthorized",
  { message: Schema.String },
  { status: 401 }
) {}

class Bearer extends HttpApiMiddleware.Tag<Bearer>()("bench/Bearer", {
  failure: Unauthorized,
  provides: Caller,
  security: { bearer: HttpApiSecurity.bearer }
}) {}

const Orders = HttpApiGroup.make("orders")
  .add(HttpApiEndpoint.post("createOrder", "/orders").setPayload(PlaceOrder).addSuccess(OrderRecord, { status: 201 }))
  .middleware(Bearer)
  .prefix("/trading")

const MinimalApi = HttpApi.make("minimal").add(Orders)

const [port, token] = process.argv.slice(2)

const BearerLive = Layer.succeed(Bearer, {
  bearer: (given) =>
    Redacted.value(given) === token
      ? Effect.succeed("owner")
      : Effect.fail(new Unauthorized({ message: "unknown access token" }))
})

let n = 0
const OrdersLive = HttpApiBuilder.group(MinimalApi, "orders", (handlers) =>
  handlers.handle("createOrder", ({ payload }) =>
    Effect.map(Caller, (caller) => {
      n += 1
      const now = Date.now()
      const id = `ord_${String(n).padStart(6, "0")}`
      // The wire form, sent as it is (as `serve` sends its rendered order).
      return HttpServerResponse.unsafeJson(
        {
          id,
          client_order_id: payload.client_order_id ?? id,
          venue: "sim",
          account: { venue: "sim", name: "default", subaccount: null },
          market_id: payload.market_id,
          side: payload.side,
          type: payload.type,
          time_in_force: "gtc",
          status: "open",
          held_by: "venue",
          price: payload.price ?? null,
          stop_price: null,
          amount: payload.amount,
          filled: "0",
          remaining: payload.amount,
          average_price: null,
          cost: "0",
          fee: "0",
          fee_currency: "USD",
          last_fill_price: null,
          last_fill_amount: null,
          post_only: false,
          reduce_only: false,
          expires_at: null,
          created_at: now,
          updated_at: now,
          parent_id: null,
          queue_priority_preserved: null,
          book: "",
          trader: "",
          tags: {},
          info: { placed_by: caller }
        },
        { status: 201 }
      )
    })
  )
)

const ApiLive = HttpApiBuilder.api(MinimalApi).pipe(Layer.provide(OrdersLive), Layer.provide(BearerLive))

HttpApiBuilder.serve().pipe(
  Layer.provide(ApiLive),
  Layer.provide(NodeHttpServer.layer(createServer, { port: Number(port), host: "127.0.0.1" })),
  Layer.launch,
  NodeRuntime.runMain
)
