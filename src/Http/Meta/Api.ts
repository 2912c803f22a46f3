/** The server's own routes: its name and links, and a health check. */
import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"

export const RootRecord = Schema.Struct({
  name: Schema.String,
  version: Schema.String,
  links: Schema.Record({ key: Schema.String, value: Schema.String })
})

export const HealthRecord = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  time: Schema.Int,
  venues: Schema.Array(Schema.String)
})

export const MetaApi = HttpApiGroup.make("meta")
  .add(HttpApiEndpoint.get("root", "/").addSuccess(RootRecord))
  .add(HttpApiEndpoint.get("health", "/health").addSuccess(HealthRecord))
