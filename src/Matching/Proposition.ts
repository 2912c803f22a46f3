/**
 * The proposition parser: from a market's title, outcome label, rules and grouping, the question it asks —
 * subject, comparator and threshold or bracket with units, date or period, settlement source. Pure and
 * deterministic: regular expressions over the grammar of prediction-market questions, no model, no network.
 */
import { ASSETS, isKey, normalize, PRICED, rewrite, words } from "./Text.ts"

/** A market as the matcher reads it: the catalog record of any venue. */
export interface Listing {
  readonly venue: string
  readonly nativeId: string
  readonly title: string
  /** The label of the YES outcome when it is not plain "Yes" (a candidate, a band, "Up"). */
  readonly yesLabel?: string | undefined
  readonly rules?: string | undefined
  /** ms since epoch. */
  readonly closeTime?: number | undefined
  readonly eventId?: string | undefined
}

/** `reach` and `dip`: the value touches the level at any time in the period, not where it stands at its end. */
export type Comparator = "gt" | "ge" | "lt" | "le" | "between" | "eq" | "reach" | "dip"

/**
 * A threshold or a bracket, in its unit, as a canonical decimal string ("3.9", "250000000000"): read exactly through
 * integer millionths, so two writings of one number compare equal.
 */
export interface Quantity {
  readonly comparator: Comparator
  readonly low: string
  /** The upper end of a bracket. */
  readonly high?: string
  /** `%`, `$`, `bps`, `deg`, or `` when the text names no unit. */
  readonly unit: string
  /** Decimal places the threshold is written with (the most of its two ends). */
  readonly decimals: number
}

/** When the proposition is decided. Days are `MM-DD` with an optional `YYYY-` in front; deadlines exclusive. */
export interface When {
  readonly day?: string
  readonly month?: string
  readonly deadline?: string
  readonly years: ReadonlyArray<string>
  /** Relative or non-calendar periods: `first100days`, `firstyear`, `fy2025`, `q4-2024`. */
  readonly periods: ReadonlyArray<string>
}

/** True when a `When` names any time at all. */
export const hasTime = (w: When): boolean =>
  w.day !== undefined || w.month !== undefined || w.deadline !== undefined || w.years.length > 0 || w.periods.length > 0

export type Kind = "updown" | "price" | "measure" | "event" | "h2h"

export interface Proposition {
  readonly kind: Kind
  /** Canonical content tokens: who or what the question is about. */
  readonly subject: ReadonlyArray<string>
  /** Competition, contest and outcome tokens (`k_…`), which must agree exactly. */
  readonly keys: ReadonlyArray<string>
  readonly quantity: Quantity | null
  readonly when: When
  /** Settlement sources the title names. */
  readonly source: ReadonlyArray<string>
  /** For head-to-head markets: the tokens of the two sides, and of the side YES stands for. */
  readonly sides?: readonly [ReadonlyArray<string>, ReadonlyArray<string>]
  readonly winner?: 0 | 1
  /** What the rules text says, compared for the `rules` verdict. */
  readonly rules: {
    readonly present: boolean
    readonly source: ReadonlyArray<string>
    /** The times the rules name (their condition's, else the first in the text). */
    readonly when: When | null
    readonly quantity: Quantity | null
    /**
     * The deadline of the rules' condition (exclusive `YYYY-MM-DD` or `MM-DD`): the condition's own when the text
     * has one ("…, then the market resolves to Yes", "resolve to Yes if …"), else the first the text names.
     */
    readonly deadline?: string | undefined
    /** What counts, as the rules bound it: `election` (the winner of a vote), `succession` (whoever holds it next, interim included), `no_interim`, `interim`. */
    readonly scope: ReadonlyArray<string>
  }
  /**
   * The step of the figure a threshold is read against (`"0.1"`, `"1"`), when it is known: stated by the rules
   * ("rounded to one decimal place"), a whole count, or a figure published to a fixed precision.
   */
  readonly step?: string | undefined
}

const MONTHS = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
const MONTH =
  "(jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\\.?"
const monthNumber = (name: string) => String(MONTHS.indexOf(name.slice(0, 3)) + 1).padStart(2, "0")
const DAYS_IN = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** The day after `MM-DD` (with an optional year), for deadlines written inclusively ("by Dec 31, 2025"). */
const nextDay = (year: string | undefined, month: string, day: number): string => {
  const m = Number(month)
  let y = year === undefined ? undefined : Number(year)
  let d = day + 1
  let mm = m
  const leap = y !== undefined && (y % 4 !== 0 || (y % 100 === 0 && y % 400 !== 0))
  const days = m === 2 && leap ? 28 : DAYS_IN[m - 1]!
  if (d > days) {
    d = 1
    mm += 1
    if (mm > 12) {
      mm = 1
      if (y !== undefined) y += 1
    }
  }
  return `${y === undefined ? "" : `${y}-`}${String(mm).padStart(2, "0")}-${String(d).padStart(2, "0")}`
}
const dayOf = (year: string | undefined, month: string, day: number) =>
  `${year === undefined ? "" : `${year}-`}${month}-${String(day).padStart(2, "0")}`

const MONTH_HINT = /\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)/

const DATE_RE = new RegExp(
  `\\b(by|before|through|until|thru|no later than|prior to|on|as of|after|at)?\\s*(?:the end of )?${MONTH}(?:\\s+(\\d{1,2})(?:st|nd|rd|th)?)?(?:,?\\s+(\\d{4}))?\\b`,
  "g"
)

/** "between January 15 and December 31, 2025": a window whose end is the deadline. */
const BETWEEN_DATES = new RegExp(`\\bbetween (${MONTH}(?:\\s+\\d{1,2})?(?:,?\\s+\\d{4})?) and (?=${MONTH})`, "g")

interface Extracted {
  day?: string
  month?: string
  deadline?: string
  years: Array<string>
  periods: Array<string>
  found: boolean
}

/** Pulls dates, deadlines and periods out of a text; answers what it found and the text without them. */
const extractWhen = (text: string): { when: Extracted; rest: string } => {
  const when: Extracted = { years: [], periods: [], found: false }
  const digits = /\d/.test(text)
  if (!digits && !MONTH_HINT.test(text) && !text.includes("fiscal") && !text.includes("first year"))
    return { when, rest: text }
  let rest = text
    .replace(/\b\d{1,2}(?::\d{2})?\s?(?:am|pm)\b(?:\s?(?:et|est|edt|utc|pt))?/g, " ")
    // "on or before D" and "by 11:59 PM on D" are deadlines; "between D1 and D2" ends with D2
    .replace(/\bon or before\b/g, "by")
    .replace(/\b(by|before)\s+,?\s*on\b/g, "$1")
    .replace(BETWEEN_DATES, "from $1 through ")
    .replace(/\bfirst (\d+) days\b/g, (_m, n: string) => {
      when.periods.push(`first${n}days`)
      return " "
    })
    .replace(/\b(?:first|1st) year\b/g, () => {
      when.periods.push("firstyear")
      return " "
    })
    .replace(
      /\b(?:(\d{4}) fiscal year|fiscal year (\d{4})|fy ?(\d{4}))\b/g,
      (_m, a?: string, b?: string, c?: string) => {
        when.periods.push(`fy${a ?? b ?? c}`)
        return " "
      }
    )
    .replace(/\bfiscal year\b/g, () => {
      when.periods.push("fy")
      return " "
    })
    .replace(/\bq([1-4])\s+(\d{4})\b/g, (_m, q: string, y: string) => {
      when.periods.push(`q${q}-${y}`)
      return " "
    })
  rest = rest.replace(DATE_RE, (match, prefix: string | undefined, name: string, d?: string, y?: string) => {
    // "may" is a month only next to a day, a year or a preposition of time
    if (name === "may" && d === undefined && y === undefined && prefix === undefined) return match
    if ((name === "march" || name === "mar") && d === undefined && y === undefined && prefix === undefined) return match
    const month = monthNumber(name)
    const day = d === undefined ? undefined : Number(d)
    if (day !== undefined && (day < 1 || day > 31)) return match
    if (prefix === "before" || prefix === "prior to") {
      when.deadline ??= day === undefined ? `${y === undefined ? "" : `${y}-`}${month}-01` : dayOf(y, month, day)
    } else if (
      prefix === "by" ||
      prefix === "through" ||
      prefix === "until" ||
      prefix === "thru" ||
      prefix === "no later than"
    ) {
      if (day !== undefined) when.deadline ??= nextDay(y, month, day)
      else when.deadline ??= nextDay(y, month, Number(month) === 2 ? 29 : DAYS_IN[Number(month) - 1]!)
    } else if (day !== undefined) {
      when.day ??= dayOf(y, month, day)
    } else {
      when.month ??= month
      if (y !== undefined) when.years.push(y)
    }
    when.found = true
    return " "
  })
  rest = rest
    .replace(/\b(?:in|during) (20\d\d) or (20\d\d)\b/g, (_m, y1: string, y2: string) => {
      when.deadline ??= `${Math.max(Number(y1), Number(y2)) + 1}-01-01`
      when.years.push(y1, y2)
      when.found = true
      return " "
    })
    .replace(
      /\b((?:before|by|until) (?:the )?end of|before|by|in|during|through)\s+(20\d\d)\b/g,
      (_m, p: string, y: string) => {
        when.deadline ??= p === "before" ? `${y}-01-01` : `${Number(y) + 1}-01-01`
        if (p !== "before") when.years.push(y)
        when.found = true
        return " "
      }
    )
    .replace(/\b(20\d\d)\b/g, (_m, y: string) => {
      when.years.push(y)
      when.found = true
      return " "
    })
  if (when.periods.length > 0) when.found = true
  return { when, rest }
}

const NUM = String.raw`(?<![a-z\d.,])(\$\s?)?(\d[\d,]*(?:\.\d+)?|\.\d+)(?:\s?(k|m|b|bn|t|thousand|million|billion|trillion)\b)?(?:\s?(%|percent\b|bps\b|basis points\b|°\s?f?\b|°|degrees\b|usd\b(?:\/bbl)?|dollars\b|cents\b))?`
const numberRe = new RegExp(NUM)
const SCALE: Readonly<Record<string, bigint>> = {
  k: 1_000n,
  thousand: 1_000n,
  m: 1_000_000n,
  million: 1_000_000n,
  b: 1_000_000_000n,
  bn: 1_000_000_000n,
  billion: 1_000_000_000n,
  t: 1_000_000_000_000n,
  trillion: 1_000_000_000_000n
}

/** Integer millionths as a canonical decimal string: no exponent, no trailing zeros. */
export const decimal = (v: bigint): string => {
  const whole = v / 1_000_000n
  const frac = (v % 1_000_000n).toString().padStart(6, "0").replace(/0+$/, "")
  return frac === "" ? whole.toString() : `${whole}.${frac}`
}

/** A decimal as integer millionths, exact (no binary floating point). */
export const millionths = (digits: string, scale: bigint): bigint => {
  const [whole = "0", frac = ""] = digits.replace(/,/g, "").split(".")
  const f = (frac + "000000").slice(0, 6)
  return (BigInt(whole === "" ? "0" : whole) * 1_000_000n + BigInt(f)) * scale
}

interface Num {
  readonly value: bigint
  readonly unit: string
  readonly decimals: number
}

const readNumber = (text: string): Num | undefined => {
  const m = numberRe.exec(text)
  if (m === null) return undefined
  const [, dollar, digits, scale, unitWord] = m
  let unit = ""
  if (dollar !== undefined || unitWord === "usd" || unitWord === "usd/bbl" || unitWord === "dollars") unit = "$"
  else if (unitWord === "%" || unitWord === "percent") unit = "%"
  else if (unitWord === "bps" || unitWord === "basis points") unit = "bps"
  else if (unitWord !== undefined && (unitWord.startsWith("°") || unitWord === "degrees")) unit = "deg"
  else if (unitWord === "cents") unit = "cents"
  const decimals = scale === undefined ? (digits!.split(".")[1]?.length ?? 0) : 0
  return { value: millionths(digits!, scale === undefined ? 1n : SCALE[scale]!), unit, decimals }
}

const CMP: ReadonlyArray<readonly [RegExp, Comparator]> = [
  [new RegExp(`\\bbetween (${NUM}) (?:and|to|-) (${NUM})`), "between"],
  [new RegExp(`\\b(?:reach(?:es)?|hits?|touch(?:es)?|climbs? to|rises? to)\\s(?:at least )?(${NUM})`), "reach"],
  [
    new RegExp(`\\b(?:dips? (?:to|below)|falls? (?:to|below)|drops? (?:to|below)|sinks? (?:to|below))\\s(${NUM})`),
    "dip"
  ],
  [
    new RegExp(
      `(?:less than or equal to|equal to or (?:less|lower|fewer) than|at or (?:below|under|less than|lower than)|at most|no more than|not more than|no higher than|≤|<=)\\s?(${NUM})`
    ),
    "le"
  ],
  [
    new RegExp(
      `(?:greater than or equal to|more than or equal to|equal to or (?:greater|more|higher) than|at or (?:above|over|more than|higher than)|no lower than)\\s?(${NUM})`
    ),
    "ge"
  ],
  [new RegExp(`(${NUM}) or (?:less|below|lower|fewer|under)\\b`), "le"],
  [new RegExp(`(?:greater than or equal to|at least|no less than|not less than|≥|>=)\\s?(${NUM})`), "ge"],
  [new RegExp(`(${NUM}) or (?:more|above|higher|greater|over)\\b`), "ge"],
  [new RegExp(`(${NUM})\\s?\\+`), "ge"],
  [new RegExp(`(?:above|more than|greater than|over|higher than|exceeds?|exceeding|>)\\s?(${NUM})`), "gt"],
  [new RegExp(`(?:below|less than|under|lower than|fewer than|<)\\s?(${NUM})`), "lt"],
  [new RegExp(`(${NUM})\\s?(?:-|to)\\s?(${NUM})`), "between"],
  [new RegExp(`\\bby (${NUM})`), "eq"],
  [new RegExp(`(?<=\\bk_(?:cut|hike)\\s+)(${NUM})`), "eq"]
]

/** The first comparator with its number(s) in a text, and the text without that phrase. */
const extractQuantity = (text: string): { quantity: Quantity | null; rest: string } => {
  if (!/\d/.test(text)) return { quantity: null, rest: text }
  for (const [re, comparator] of CMP) {
    const m = re.exec(text)
    if (m === null) continue
    const phrase = m[0]
    const nums: Array<Num> = []
    let scan = phrase
    for (;;) {
      const n = readNumber(scan)
      if (n === undefined) break
      nums.push(n)
      const at = numberRe.exec(scan)!
      scan = scan.slice(at.index + at[0].length)
    }
    if (nums.length === 0) continue
    if (comparator === "eq" && nums[0]!.unit !== "bps" && nums[0]!.unit !== "%") continue
    const rest = text.slice(0, m.index) + " " + text.slice(m.index + phrase.length)
    if (comparator === "between") {
      const [a, b] = nums
      if (a === undefined || b === undefined || b.value <= a.value) continue
      const unit = a.unit || b.unit
      const decimals = Math.max(a.decimals, b.decimals)
      return { quantity: { comparator, low: decimal(a.value), high: decimal(b.value), unit, decimals }, rest }
    }
    const n = nums[0]!
    return { quantity: { comparator, low: decimal(n.value), unit: n.unit, decimals: n.decimals }, rest }
  }
  return { quantity: null, rest: text }
}

/** Settlement sources by the ways questions and rules name them. */
const SOURCES: ReadonlyArray<readonly [RegExp, string]> = [
  [/\b538\b|\bfivethirtyeight\b/, "538"],
  [/\bbureau of labor statistics\b|\bbls\b/, "bls"],
  [/\bbureau of economic analysis\b|\bbea\b/, "bea"],
  [/\bnber\b|\bnational bureau of economic research\b/, "nber"],
  [/\brotten tomatoes\b|\btomatometer\b/, "rottentomatoes"],
  [/\bcf benchmarks\b|\bbrti\b|\bcf bitcoin\b/, "cfbenchmarks"],
  [/\bbinance\b/, "binance"],
  [/\bchainlink\b/, "chainlink"],
  [/\bcoinbase\b/, "coinbase"],
  [/\bcoingecko\b/, "coingecko"],
  [/\bcoinmarketcap\b/, "coinmarketcap"],
  [/\bnational weather service\b|\bnws\b|\bnoaa\b/, "nws"],
  [/\bassociated press\b|\bap\b(?= (?:calls?|projects?))/, "ap"],
  [/\bfred\b|\bst\.? louis fed/, "fred"],
  [/\bnymex\b|\bcme\b/, "cme"],
  [/\bice annual report\b|\bimmigration and customs enforcement\b/, "ice"],
  [/\bfaa\b/, "faa"],
  [/\bsilver bulletin\b/, "silverbulletin"],
  [/\brealclearpolitics\b|\brcp\b/, "rcp"]
]
const sourcesOf = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const [re, name] of SOURCES) if (re.test(text)) out.push(name)
  return out
}

/** The condition of a rules text: Kalshi's "If …, then the market resolves to Yes", or "resolve to Yes if …". */
const ruleClause = (rules: string): string | undefined => {
  const kalshi = /^\s*if (.+?),? then the market resolves to yes/.exec(rules)
  if (kalshi !== null) return kalshi[1]
  const other = /resolve to '?yes'? ?,? if (.+?)(?:\.\s|\. ?$|$)/.exec(rules.replace(/["\u201c\u201d]/g, "'"))
  return other?.[1]
}

/**
 * What counts toward YES where an office changes hands: the winner of an election, or whoever holds it next
 * (an interim or acting holder included unless the rules exclude one).
 */
const scopeOf = (title: string, rules: string): Array<string> => {
  const text = `${title} ${rules}`
  const out: Array<string> = []
  const interim = /\b(?:interim|acting|caretaker)\b/.exec(text)
  if (interim !== null) {
    const near = text.slice(Math.max(0, interim.index - 80), interim.index + 120)
    const excluded = /\b(?:not|never|no|excluding|excludes?|except)\b/.test(near)
    out.push(excluded ? "no_interim" : "interim")
  }
  const election =
    /\b(?:following|after) the (?:[a-z]+ )?elections?\b|\bwins? (?:the |this )?(?:[a-z0-9]+ ){0,3}elections?\b|\bwinner of the (?:[a-z0-9]+ ){0,3}elections?\b|\belected\b|\belection winner\b/.test(
      text
    )
  if (election) out.push("election")
  else if (
    /\bnext (?:[a-z]+ ){0,2}(?:prime minister|president|leader|chancellor|premier|pope|ceo|chair(?:man)?|governor|mayor|speaker|head|secretary[- ]general|supreme leader)\b|\bsuccessors?\b|\bsucceeds?\b/.test(
      text
    )
  )
    out.push("succession")
  return out
}

const COUNT_NOUNS =
  /\b(?:how many|launch(?:es)?|deportations?|seats|tweets|posts|goals|touchdowns|home runs|strikeouts|medals|wins|games|times|bills|executive orders|orders|storms|hurricanes|earthquakes|visits|countries|states|senators|members|votes|cases|deaths|flights|episodes|appearances|mentions|nominations|vetoes|pardons|strikes|points)\b/
const ONE_DECIMAL =
  /\bunemployment rate\b|\bu-?3\b|\bcpi\b|\bconsumer price index\b|\binflation\b|\bgdp\b|\bcore pce\b|\bpce\b|\bapproval rating\b/
const PLACES: Readonly<Record<string, string>> = {
  one: "0.1",
  "1": "0.1",
  two: "0.01",
  "2": "0.01",
  three: "0.001",
  "3": "0.001",
  tenth: "0.1",
  hundredth: "0.01",
  thousandth: "0.001"
}

/** The step of the figure a market's threshold is read against, when the rules, the figure or the count fix it. */
const stepOf = (title: string, rules: string, q: Quantity | null): string | undefined => {
  if (q === null || q.comparator === "reach" || q.comparator === "dip") return undefined
  const stated =
    /\brounded (?:to|at) (?:the nearest )?(one|two|three|1|2|3) decimal/.exec(rules) ??
    /\b(?:to|at) (one|two|three|1|2|3) decimal places?\b/.exec(rules) ??
    /\b(one|two|three|1|2|3)[- ]decimal[- ]places?\b/.exec(rules) ??
    /\bnearest (tenth|hundredth|thousandth)\b/.exec(rules)
  if (stated !== null) return PLACES[stated[1]!]
  if (/\bnearest (?:whole number|integer)\b|\bwhole number\b/.test(rules)) return "1"
  const text = `${title} ${rules.slice(0, 400)}`
  if (/\bpercentage points?\b/.test(text)) return undefined
  const oneDecimal = ONE_DECIMAL.test(text) && !/\bnowcast\b|\bgdpnow\b/.test(text)
  if ((q.unit === "%" || q.unit === "") && q.decimals <= 1 && oneDecimal) return "0.1"
  if (q.unit === "" && q.decimals === 0 && (COUNT_NOUNS.test(title) || COUNT_NOUNS.test(rules.slice(0, 300))))
    return "1"
  return undefined
}

const PLAIN_LABELS = new Set(["", "yes", "no", "up", "down", "over", "under", "true", "false"])
const WH = /^(?:who|what|which|how|where|when)\b/

/** Splits "A vs B", "A beat B", "A win against B" into its two sides; undefined when it is not one. */
const headToHead = (text: string): readonly [string, string] | undefined => {
  const m =
    /^(?:will )?(?:the )?(.+?) (?:vs\.?|v\.?|versus) (?:the )?(.+?)(?:[:?,]| - | on | in |$)/.exec(text) ??
    /^(?:will )?(?:the )?(.+?) (?:beat|defeat|win against|win over|wins? vs\.?) (?:the )?(.+?)(?:[:?,]| - | on | in |$)/.exec(
      text
    ) ??
    // "Away at Home: who wins", "Away at Home winner": a game named by where it is played
    /^(?:the )?(.+?) (?:at|@) (?:the )?(.+?)(?::? who wins\b|:? winner\b)/.exec(text)
  if (m === null) return undefined
  return [m[1]!, m[2]!]
}

const uniq = (xs: ReadonlyArray<string>): Array<string> => [...new Set(xs)]

/** Parses one market into its proposition. */
export const parse = (listing: Listing): Proposition => {
  const rawTitle = normalize(listing.title)
  // "Event name - Will X …?" carries the question after the dash
  const title = / - (?:will|who|what|which|how)\b/.test(rawTitle)
    ? rawTitle.slice(rawTitle.indexOf(" - ") + 3)
    : rawTitle
  const label = normalize(listing.yesLabel ?? "")
  // the condition sits near the start of a rules text: only that much is read at once
  const rulesHead = listing.rules === undefined ? "" : normalize(listing.rules.slice(0, 800))
  const clause = rulesHead === "" ? undefined : ruleClause(rulesHead)

  const updown =
    /\bup or down\b|\bhigher or lower\b/.test(title) ||
    label === "up" ||
    label === "down" ||
    // a crypto asset going up or down with no price named is measured from a price each venue sets itself
    (/\b(?:up|down|higher|lower)\b/.test(title) &&
      !/\d/.test(title.replace(/\b20\d\d\b|\b\d{1,2}(?::\d\d)?\s?(?:am|pm)\b|\b\d+ ?min(?:ute)?s?\b/g, "")) &&
      words(rewrite(title)).some((t) => Object.values(ASSETS).includes(t)))

  const t1 = extractWhen(rewrite(title))
  const t2 = extractQuantity(t1.rest)
  let quantity = t2.quantity
  const rest = t2.rest
  const when = t1.when
  let candidate: Array<string> = []
  let labelKeys: Array<string> = []
  if (!PLAIN_LABELS.has(label)) {
    const q = extractQuantity(rewrite(label))
    if (q.quantity !== null && quantity === null) quantity = q.quantity
    if (q.quantity === null) {
      candidate = words(rewrite(label))
      // a team written as its city and an initial ("Los Angeles A") keeps the initial
      const initial = / ([a-z])$/.exec(label)
      if (initial !== null) candidate.push(initial[1]!)
    }
    // an outcome label ("Cut 25bps", "Hold") names the outcome
    labelKeys = words(q.rest).filter(isKey)
  }
  let clauseRest = ""
  let rulesWhen: Extracted | undefined
  let rulesQuantity: Quantity | null = null
  if (clause !== undefined) {
    const c1 = extractWhen(rewrite(clause))
    const c2 = extractQuantity(c1.rest)
    clauseRest = c2.rest
    rulesQuantity = c2.quantity
    if (quantity === null && c2.quantity !== null) quantity = c2.quantity
    rulesWhen = c1.when
  }
  let subject = words(rest)
  const wh = (WH.test(title) && candidate.length === 0) || subject.length === 0
  if (wh && clause !== undefined) subject = subject.concat(words(clauseRest))
  subject = uniq(subject.concat(candidate, labelKeys))
  const keys = uniq(subject.filter(isKey))

  let kind: Kind = "event"
  let sides: readonly [ReadonlyArray<string>, ReadonlyArray<string>] | undefined
  let winner: 0 | 1 | undefined
  const h2h = quantity === null && !updown ? headToHead(title.replace(/\?$/, "")) : undefined
  if (updown) kind = "updown"
  else if (h2h !== undefined) {
    const a = words(rewrite(h2h[0]))
    const b = words(rewrite(h2h[1]))
    if (a.length > 0 && b.length > 0) {
      kind = "h2h"
      sides = [a, b]
      const yes = candidate.length > 0 ? candidate : a
      const inA = yes.filter((t) => a.includes(t)).length
      const inB = yes.filter((t) => b.includes(t)).length
      winner = inB > inA ? 1 : 0
      subject = uniq([...a, ...b, ...keys])
    }
  } else if (quantity !== null) {
    kind = subject.some((t) => Object.values(ASSETS).includes(t) || PRICED.has(t)) ? "price" : "measure"
  }

  const whenOf = (w: Extracted): When => ({
    ...(w.day === undefined ? {} : { day: w.day }),
    ...(w.month === undefined ? {} : { month: w.month }),
    ...(w.deadline === undefined ? {} : { deadline: w.deadline }),
    years: uniq(w.years).sort(),
    periods: uniq(w.periods).sort()
  })
  // What the whole rules text says is read on first use: only candidates of a query need it.
  const fromRules = listing.rules
  let rules: Proposition["rules"] | undefined
  const readRules = (): Proposition["rules"] => {
    if (rules !== undefined) return rules
    const text = fromRules === undefined ? "" : normalize(fromRules)
    let w = rulesWhen
    let deadline = rulesWhen?.deadline
    if (text !== "") {
      // the condition's times when it has them, else the first the text names (dates need no phrase rewriting)
      const all = extractWhen(text).when
      if (w === undefined || !w.found) w = all
      if (clause === undefined) deadline = all.deadline
      for (const p of all.periods) if (p.startsWith("fy") && !w.periods.includes(p)) w.periods.push(p)
    }
    rules = {
      present: text !== "",
      source: sourcesOf(text),
      when: w === undefined ? null : whenOf(w),
      quantity: rulesQuantity,
      ...(deadline === undefined ? {} : { deadline }),
      scope: scopeOf(title, text)
    }
    return rules
  }
  const step = stepOf(title, rulesHead, quantity)
  const base = {
    kind,
    subject: subject.filter((t) => !isKey(t)),
    keys,
    quantity,
    when: whenOf(when),
    source: sourcesOf(title),
    ...(step === undefined ? {} : { step }),
    ...(sides === undefined || winner === undefined ? {} : { sides, winner })
  }
  return Object.defineProperty(base, "rules", { enumerable: true, get: readRules }) as unknown as Proposition
}
