/** Secrets never reach a log line: tokens in query strings, credential headers and token-shaped text are masked. */

const MASK = "[redacted]"

/** Query parameters that carry a credential (`?key=` is how browsers pass the token to the events socket). */
const SECRET_PARAM = /([?&;](?:key|token|access_token|api_key|apikey|secret|password)=)[^&#;\s"']*/gi
/** A credential header written out as text, such as `authorization: Bearer …` or `"x-api-key":"…"`. */
const SECRET_HEADER = /((?:authorization|x-api-key|cookie)["']?\s*[:=]\s*["']?)(?:bearer\s+|basic\s+)?[^\s"',}]+/gi
/** `Bearer <anything>` wherever it stands. */
const BEARER = /(\bbearer\s+)[^\s"',}]+/gi
/** A token of ours: `cb_<8-character prefix>_<secret>`. The prefix names the token and is no secret; the rest is. */
const TOKEN_SHAPED = /\bcb_([A-Za-z0-9]{8})_[A-Za-z0-9_-]+/g
/** Something that starts like one of our tokens but is malformed: masked whole. */
const TOKEN_LIKE = /\bcb_[A-Za-z0-9_-]{12,}/g

/** The text with every secret it carries masked; the rest left as it was. */
export const redact = (text: string): string =>
  text
    .replace(SECRET_PARAM, `$1${MASK}`)
    .replace(SECRET_HEADER, `$1${MASK}`)
    .replace(BEARER, `$1${MASK}`)
    .replace(TOKEN_SHAPED, `cb_$1_${MASK}`)
    .replace(TOKEN_LIKE, `cb_${MASK}`)
