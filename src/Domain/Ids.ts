/** Ids of venues, markets and accounts: branded strings, each taken apart only here. */
import type { Brand } from "effect"

/** A venue's id (`sim`, `kalshi`, `polymarket`, `bucket` for a bucket's pseudo-market). */
export type VenueId = string & Brand.Brand<"VenueId">
/** `<venue>:<native_id>`, both parts non-empty. */
export type MarketId = string & Brand.Brand<"MarketId">
/** `<venue>:<name>`, both parts non-empty (`sim:default`, `kalshi:paper`). */
export type AccountId = string & Brand.Brand<"AccountId">

/** A market id taken apart. */
export interface MarketParts {
  readonly venue: VenueId
  readonly native: string
}

/** An account id taken apart. */
export interface AccountParts {
  readonly venue: VenueId
  readonly name: string
}

/** Where `<head>:<tail>` is cut: the first separator when both sides are non-empty, else -1. */
const cut = (text: string): number => {
  const at = text.indexOf(":")
  return at > 0 && at < text.length - 1 ? at : -1
}

/** The market id of this text, or undefined when it is not `<venue>:<native_id>`. */
export const asMarketId = (text: string): MarketId | undefined => (cut(text) > 0 ? (text as MarketId) : undefined)

/** The parts of a market id `<venue>:<native_id>`, or undefined when the text is not one. */
export const parseMarketId = (text: string): MarketParts | undefined => {
  const at = cut(text)
  return at < 0 ? undefined : { venue: text.slice(0, at) as VenueId, native: text.slice(at + 1) }
}

/** The market id of a venue's native id. */
export const makeMarketId = (venue: string, native: string): MarketId => `${venue}:${native}` as MarketId

/** The venue of a market or account id. */
export const venueOf = (id: MarketId | AccountId): VenueId => id.slice(0, id.indexOf(":")) as VenueId

/** The venue's own id of a market (`<native_id>` of `<venue>:<native_id>`). */
export const nativeOf = (id: MarketId): string => id.slice(id.indexOf(":") + 1)

/**
 * The venue part of a text that may be a market or account id, or undefined when it is none: for messages and
 * labels about input that is not checked yet.
 */
export const venuePrefix = (text: string): string | undefined => {
  const at = cut(text)
  return at < 0 ? undefined : text.slice(0, at)
}

/**
 * A market path segment of one venue: `<venue>:<native_id>` or the bare native id. The native id, or the venue the
 * id names when it is another's.
 */
export const nativeIn = (
  venue: string,
  text: string
): { readonly native: string } | { readonly otherVenue: string } => {
  const at = text.indexOf(":")
  if (at < 0) return { native: text }
  const prefix = text.slice(0, at)
  return prefix === venue ? { native: text.slice(at + 1) } : { otherVenue: prefix }
}

/** The parts of an account id `<venue>:<name>`, or undefined when the text is not one. */
export const parseAccountId = (text: string): AccountParts | undefined => {
  const at = cut(text)
  return at < 0 ? undefined : { venue: text.slice(0, at) as VenueId, name: text.slice(at + 1) }
}

/** Whether an account id `<venue>:<name>` names `name` (as `parseAccountId(text)?.name === name`, with no copy made). */
export const accountNamed = (text: string, name: string): boolean => {
  const at = cut(text)
  return at > 0 && text.length - at - 1 === name.length && text.startsWith(name, at + 1)
}

/** The account id of a venue's account name. */
export const makeAccountId = (venue: string, name: string): AccountId => `${venue}:${name}` as AccountId
