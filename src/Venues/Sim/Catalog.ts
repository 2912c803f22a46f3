/** The sim venue's catalog: seeded, believable binary markets grouped in events, anchored to a start time. */
import * as F from "../../Domain/Fixed.ts"
import type { Market } from "../../Domain/Market.ts"
import { SeededRandom } from "../../Domain/Random.ts"

/** A market's title and YES label as another venue words it. */
export interface Wording {
  readonly title: string
  readonly subtitle: string
}

/**
 * How other venues may list a market: wordings of the same proposition, and wordings of its complement (whose YES
 * is this market's NO). Only one market of a group of mutually exclusive outcomes carries the complement's wordings,
 * and only where the complement is a single market (a threshold, a game without a draw).
 */
export interface Phrasings {
  readonly same: ReadonlyArray<Wording>
  readonly flipped: ReadonlyArray<Wording>
}

/** A generated market and its initial fair value (on the 0.01 grid, within [0.05, 0.95]). */
export interface SimMarketSpec {
  readonly market: Market
  readonly fairValue: F.Fixed
  /** How a second sim venue may word it; absent for markets no other venue lists (crypto prices). */
  readonly phrasings?: Phrasings
  /**
   * Fair values of markets with the same key walk together (one seeded stream per key); a flipped one walks as the
   * complement. Absent: the market walks on its own stream, as the single sim venue always does.
   */
  readonly link?: { readonly key: string; readonly flipped: boolean }
}

const MINUTE = 60_000
const HOUR = 3_600_000
const DAY = 86_400_000
const TICK = F.of("0.01")
const CENT = 10_000
const MONTHS = ["JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"] as const
const MONTH_NAMES = [
  "January",
  "February",
  "March",
  "April",
  "May",
  "June",
  "July",
  "August",
  "September",
  "October",
  "November",
  "December"
] as const

interface Civil {
  readonly y: number
  readonly m: number
  readonly d: number
}

/** UTC calendar date of a day number (days since 1970-01-01), by Hinnant's civil-from-days. */
const civil = (dayNumber: number): Civil => {
  const z = dayNumber + 719468
  const era = Math.floor(z / 146097)
  const doe = z - era * 146097
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365)
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100))
  const mp = Math.floor((5 * doy + 2) / 153)
  const d = doy - Math.floor((153 * mp + 2) / 5) + 1
  const m = mp < 10 ? mp + 3 : mp - 9
  return { y: m <= 2 ? yoe + era * 400 + 1 : yoe + era * 400, m, d }
}

const pad2 = (n: number): string => String(n).padStart(2, "0")
/** `26DEC03` */
const dayCode = (c: Civil): string => `${pad2(c.y % 100)}${MONTHS[c.m - 1]}${pad2(c.d)}`
/** `27MAR` */
const monthCode = (c: Civil): string => `${pad2(c.y % 100)}${MONTHS[c.m - 1]}`
/** `Dec 3, 2026` */
const longDay = (c: Civil): string => `${MONTH_NAMES[c.m - 1]!.slice(0, 3)} ${c.d}, ${c.y}`
/** `December 3, 2026` */
const fullDay = (c: Civil): string => `${MONTH_NAMES[c.m - 1]} ${c.d}, ${c.y}`
const monthYear = (c: Civil): string => `${MONTH_NAMES[c.m - 1]} ${c.y}`
const thousands = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",")
/** Hundredths with two places: 425 → "4.25", 400 → "4.00". */
const hundredths = (n: number): string => `${Math.floor(n / 100)}.${pad2(n % 100)}`
/** Tenths with one place: 3 → "0.3". */
const tenths = (n: number): string => `${Math.floor(n / 10)}.${n % 10}`

const clampCents = (c: number): number => Math.max(5, Math.min(95, c))

interface Draft {
  readonly suffix: string
  readonly subtitle: string
  readonly title: string
  readonly cents: number
  readonly phrasings?: Phrasings
}

interface EventDraft {
  readonly eventId: string
  readonly category: string
  readonly closeTime: number
  readonly markets: ReadonlyArray<Draft>
}

/** Probabilities of "above threshold" for ascending thresholds: decreasing, in cents. */
const ladder = (rng: SeededRandom, n: number): Array<number> => {
  const out: Array<number> = []
  let c = rng.int(70, 95)
  for (let i = 0; i < n; i++) {
    out.push(clampCents(c))
    c -= rng.int(12, 30)
  }
  return out
}

/** Probabilities of mutually exclusive outcomes, peaked in the middle, summing to about 100 cents. */
const buckets = (rng: SeededRandom, n: number): Array<number> => {
  const weights: Array<number> = []
  for (let i = 0; i < n; i++) weights.push(rng.int(2, 8) + (Math.abs(2 * i - (n - 1)) <= 1 ? 6 : 0))
  const sum = weights.reduce((a, b) => a + b, 0)
  return weights.map((w) => clampCents(Math.floor((w * 100) / sum)))
}

type EventMaker = (rng: SeededRandom, today: number) => EventDraft

const fed: EventMaker = (rng, today) => {
  const day = today + rng.int(7, 45)
  const c = civil(day)
  const base = rng.pick([350, 375, 400, 425, 450])
  const first = base - 25 * rng.int(1, 2)
  const n = rng.int(3, 4)
  const p = ladder(rng, n)
  return {
    eventId: `FED-${monthCode(c)}`,
    category: "Economics",
    closeTime: day * DAY + 18 * HOUR,
    markets: p.map((cents, i) => {
      const t = hundredths(first + 25 * i)
      return {
        suffix: `T${t}`,
        title: `Fed funds upper bound above ${t}% after the ${monthYear(c)} meeting?`,
        subtitle: `Above ${t}%`,
        cents,
        phrasings: {
          same: [
            {
              title: `Will the fed funds rate's upper bound be higher than ${t}% after the ${monthYear(c)} decision?`,
              subtitle: `More than ${t}%`
            },
            {
              title: `Federal funds target upper bound greater than ${t}% after the ${monthYear(c)} FOMC meeting?`,
              subtitle: `Above ${t}%`
            }
          ],
          flipped: [
            {
              title: `Fed funds upper bound at or below ${t}% after the ${monthYear(c)} meeting?`,
              subtitle: `${t}% or lower`
            },
            {
              title: `Will the upper bound of the fed funds rate be ${t}% or less after the ${monthYear(c)} meeting?`,
              subtitle: `${t}% or less`
            }
          ]
        }
      }
    })
  }
}

const cpi: EventMaker = (rng, today) => {
  const day = today + rng.int(5, 30)
  const c = civil(day)
  const first = rng.int(1, 2)
  const p = ladder(rng, 3)
  return {
    eventId: `CPI-${monthCode(c)}`,
    category: "Economics",
    closeTime: day * DAY + 13 * HOUR + 30 * MINUTE,
    markets: p.map((cents, i) => {
      const t = tenths(first + i)
      return {
        suffix: `T${t}`,
        title: `CPI up more than ${t}% month over month in the ${monthYear(c)} release?`,
        subtitle: `Above ${t}%`,
        cents,
        phrasings: {
          same: [
            {
              title: `${monthYear(c)} CPI release: up more than ${t}% month over month?`,
              subtitle: `Above ${t}%`
            }
          ],
          flipped: [
            {
              title: `${monthYear(c)} CPI release: up ${t}% or less month over month?`,
              subtitle: `${t}% or lower`
            }
          ]
        }
      }
    })
  }
}

const SEASON = [-20, -17, -10, 0, 10, 17, 20, 18, 12, 2, -8, -16] as const
const CITIES = [
  { code: "NY", name: "New York City", mean: 62, amp: 20 },
  { code: "CHI", name: "Chicago", mean: 59, amp: 24 },
  { code: "MIA", name: "Miami", mean: 84, amp: 6 },
  { code: "AUS", name: "Austin", mean: 80, amp: 16 },
  { code: "LAX", name: "Los Angeles", mean: 74, amp: 6 },
  { code: "DEN", name: "Denver", mean: 64, amp: 22 }
] as const

const weatherOn = (rng: SeededRandom, city: (typeof CITIES)[number], day: number, brackets: number): EventDraft => {
  const c = civil(day)
  const centre = city.mean + Math.trunc((SEASON[c.m - 1]! * city.amp) / 20) + rng.int(-4, 4)
  const lo = centre - (brackets - 1)
  const p = buckets(rng, brackets)
  return {
    eventId: `HIGH${city.code}-${dayCode(c)}`,
    category: "Climate and Weather",
    closeTime: day * DAY + DAY - MINUTE,
    markets: p.map((cents, i) => {
      const t = lo + 2 * i
      return {
        suffix: `B${t}`,
        title: `Highest temperature in ${city.name} on ${longDay(c)}?`,
        subtitle: `${t}° to ${t + 1}°`,
        cents,
        phrasings: {
          same: [{ title: `${city.name} daily high temperature on ${fullDay(c)}`, subtitle: `${t}-${t + 1}°F` }],
          flipped: []
        }
      }
    })
  }
}

const weather =
  (city: (typeof CITIES)[number]): EventMaker =>
  (rng, today) =>
    weatherOn(rng, city, today + rng.int(2, 14), rng.int(3, 4))

const COINS = [
  { code: "BTC", name: "Bitcoin", bases: [60_000, 120_000], step: 2_500 },
  { code: "ETH", name: "Ethereum", bases: [2_000, 4_500], step: 100 }
] as const

const cryptoOn = (rng: SeededRandom, coin: (typeof COINS)[number], day: number, n: number): EventDraft => {
  const c = civil(day)
  const base = coin.step * rng.int(coin.bases[0] / coin.step, coin.bases[1] / coin.step)
  const p = ladder(rng, n)
  return {
    eventId: `${coin.code}D-${dayCode(c)}`,
    category: "Crypto",
    closeTime: day * DAY + 22 * HOUR,
    markets: p.map((cents, i) => {
      const t = base + coin.step * (i - 1)
      return {
        suffix: `T${t}`,
        title: `${coin.name} above $${thousands(t)} on ${longDay(c)} at 5pm ET?`,
        subtitle: `$${thousands(t)} or above`,
        cents
      }
    })
  }
}

const crypto =
  (coin: (typeof COINS)[number]): EventMaker =>
  (rng, today) =>
    cryptoOn(rng, coin, today + rng.int(2, 10), 3)

interface League {
  readonly code: string
  readonly teams: ReadonlyArray<readonly [string, string]>
  readonly draw: boolean
}

const LEAGUES: ReadonlyArray<League> = [
  {
    code: "NBA",
    draw: false,
    teams: [
      ["BOS", "Boston"],
      ["LAL", "Los Angeles L"],
      ["NYK", "New York"],
      ["GSW", "Golden State"],
      ["MIA", "Miami"],
      ["DEN", "Denver"],
      ["PHX", "Phoenix"],
      ["MIL", "Milwaukee"],
      ["DAL", "Dallas"],
      ["OKC", "Oklahoma City"]
    ]
  },
  {
    code: "NFL",
    draw: false,
    teams: [
      ["KC", "Kansas City"],
      ["BUF", "Buffalo"],
      ["PHI", "Philadelphia"],
      ["SF", "San Francisco"],
      ["DET", "Detroit"],
      ["BAL", "Baltimore"],
      ["GB", "Green Bay"],
      ["CIN", "Cincinnati"]
    ]
  },
  {
    code: "EPL",
    draw: true,
    teams: [
      ["ARS", "Arsenal"],
      ["LIV", "Liverpool"],
      ["MCI", "Manchester City"],
      ["CHE", "Chelsea"],
      ["TOT", "Tottenham"],
      ["NEW", "Newcastle"]
    ]
  }
]

const game =
  (league: League): EventMaker =>
  (rng, today) => {
    const day = today + rng.int(2, 12)
    const c = civil(day)
    const away = rng.int(0, league.teams.length - 1)
    const home = (away + rng.int(1, league.teams.length - 1)) % league.teams.length
    const [aCode, aName] = league.teams[away]!
    const [hCode, hName] = league.teams[home]!
    const eventId = `${league.code}GAME-${dayCode(c)}${aCode}${hCode}`
    const title = `${aName} at ${hName}: who wins on ${longDay(c)}?`
    const homeCents = rng.int(league.draw ? 25 : 30, league.draw ? 55 : 72)
    const drawCents = league.draw ? rng.int(18, 30) : 0
    const awayCents = 100 - homeCents - drawCents - rng.int(0, 2)
    // another venue lists a game without a draw once, as "away vs. home", its YES either team
    const versus = `${aName} vs. ${hName} on ${fullDay(c)}`
    const phrasings: Phrasings | undefined = league.draw
      ? undefined
      : { same: [{ title: versus, subtitle: aName }], flipped: [{ title: versus, subtitle: hName }] }
    const markets: Array<Draft> = [
      {
        suffix: aCode,
        title,
        subtitle: aName,
        cents: clampCents(awayCents),
        ...(phrasings === undefined ? {} : { phrasings })
      },
      { suffix: hCode, title, subtitle: hName, cents: clampCents(homeCents) }
    ]
    if (league.draw) markets.push({ suffix: "TIE", title, subtitle: "Draw", cents: clampCents(drawCents) })
    return { eventId, category: "Sports", closeTime: (day + 1) * DAY + 5 * HOUR, markets }
  }

const DISTRICTS = [
  ["TX", "Texas", 18],
  ["FL", "Florida", 1],
  ["AZ", "Arizona", 7],
  ["VA", "Virginia", 11],
  ["NY", "New York", 21],
  ["GA", "Georgia", 6]
] as const

const ordinal = (n: number): string => {
  const s = n % 100 >= 11 && n % 100 <= 13 ? "th" : (["th", "st", "nd", "rd"][n % 10] ?? "th")
  return `${n}${s}`
}

const special: EventMaker = (rng, today) => {
  const day = today + rng.int(5, 35)
  const c = civil(day)
  const [code, state, district] = rng.pick(DISTRICTS)
  const title = `Which party wins the ${state} ${ordinal(district)} district special election on ${longDay(c)}?`
  const dem = rng.int(15, 85)
  return {
    eventId: `SPECIAL${code}${district}-${dayCode(c)}`,
    category: "Politics",
    closeTime: day * DAY + DAY + 3 * HOUR,
    markets: [
      {
        suffix: "D",
        title,
        subtitle: "Democratic Party",
        cents: clampCents(dem),
        phrasings: {
          same: [
            {
              title: `${state} ${ordinal(district)} district special election on ${fullDay(c)}: which party wins?`,
              subtitle: "Democrats"
            }
          ],
          flipped: []
        }
      },
      { suffix: "R", title, subtitle: "Republican Party", cents: clampCents(100 - dem - rng.int(0, 2)) }
    ]
  }
}

const approval: EventMaker = (rng, today) => {
  const day = today + rng.int(3, 28)
  const c = civil(day)
  const first = rng.int(38, 46)
  const n = rng.int(3, 4)
  const p = ladder(rng, n)
  return {
    eventId: `APPROVAL-${dayCode(c)}`,
    category: "Politics",
    closeTime: day * DAY + 20 * HOUR,
    markets: p.map((cents, i) => ({
      suffix: `T${first + i}`,
      title: `Presidential approval above ${first + i}% in the polling average on ${longDay(c)}?`,
      subtitle: `Above ${first + i}%`,
      cents,
      phrasings: {
        same: [
          {
            title: `Will the president's approval rating be above ${first + i}% on ${fullDay(c)}?`,
            subtitle: `More than ${first + i}%`
          }
        ],
        flipped: [
          {
            title: `Presidential approval ${first + i}% or lower in the polling average on ${fullDay(c)}?`,
            subtitle: `${first + i}% or lower`
          }
        ]
      }
    }))
  }
}

const FILMS = [
  ["STARFALL", "Starfall"],
  ["ORCHARD", "The Last Orchard"],
  ["NEONHARBOR", "Neon Harbor"],
  ["PAPERKING", "Paper Kingdoms"],
  ["TIDEWATER", "Tidewater"],
  ["IRONVEIL", "The Iron Veil"]
] as const

const boxOffice: EventMaker = (rng, today) => {
  const day = today + rng.int(3, 21)
  const [code, film] = rng.pick(FILMS)
  const first = 10 * rng.int(2, 12)
  const p = ladder(rng, 3)
  return {
    eventId: `BOXOFFICE-${code}`,
    category: "Entertainment",
    closeTime: (day + 3) * DAY + 16 * HOUR,
    markets: p.map((cents, i) => {
      const t = first + 10 * i
      return {
        suffix: `T${t}`,
        title: `${film} opening weekend domestic box office above $${t}M?`,
        subtitle: `Above $${t}M`,
        cents,
        phrasings: {
          same: [
            {
              title: `Will ${film} gross more than $${t} million in its domestic opening weekend?`,
              subtitle: `More than $${t}M`
            }
          ],
          flipped: [{ title: `${film} domestic opening weekend $${t}M or less?`, subtitle: `$${t}M or less` }]
        }
      }
    })
  }
}

const critics: EventMaker = (rng, today) => {
  const day = today + rng.int(4, 25)
  const [code, film] = rng.pick(FILMS)
  const first = 5 * rng.int(12, 16)
  const p = ladder(rng, 3)
  return {
    eventId: `RTSCORE-${code}`,
    category: "Entertainment",
    closeTime: day * DAY + 17 * HOUR,
    markets: p.map((cents, i) => {
      const t = first + 5 * i
      return {
        suffix: `T${t}`,
        title: `${film} Rotten Tomatoes score above ${t}% a week after release?`,
        subtitle: `Above ${t}%`,
        cents,
        phrasings: {
          same: [
            {
              title: `Will ${film} have a Rotten Tomatoes score above ${t}% one week after release?`,
              subtitle: `More than ${t}%`
            }
          ],
          flipped: [
            {
              title: `${film} Rotten Tomatoes score ${t}% or lower a week after release?`,
              subtitle: `${t}% or lower`
            }
          ]
        }
      }
    })
  }
}

const CATEGORIES: ReadonlyArray<ReadonlyArray<EventMaker>> = [
  [fed, cpi],
  CITIES.map(weather),
  LEAGUES.map(game),
  [special, approval],
  COINS.map(crypto),
  [boxOffice, critics]
]

const shuffle = <A>(rng: SeededRandom, items: ReadonlyArray<A>): Array<A> => {
  const out = items.slice()
  for (let i = out.length - 1; i > 0; i--) {
    const j = rng.int(0, i)
    const t = out[i]!
    out[i] = out[j]!
    out[j] = t
  }
  return out
}

/** Event makers in a seeded order that visits every category in turn. */
const makerOrder = (rng: SeededRandom): Array<EventMaker> => {
  const lanes = shuffle(rng, CATEGORIES).map((lane) => shuffle(rng, lane))
  const out: Array<EventMaker> = []
  for (let i = 0; lanes.some((lane) => i < lane.length); i++) {
    for (const lane of lanes) if (i < lane.length) out.push(lane[i]!)
  }
  return out
}

/**
 * Generates `count` binary markets for the sim venue, sorted by native id. Same seed and start ⇒ same catalog.
 * With 6 or more markets, two are `closed` (yesterday's weather, awaiting its result) and one `settled`.
 * Open markets opened before `startMs` and close, on whole minutes, days to weeks after it.
 */
export const generateMarkets = (seed: number, startMs: number, count = 24): ReadonlyArray<SimMarketSpec> => {
  const rng = SeededRandom.derive(seed, "catalog")
  const today = Math.floor(startMs / DAY)
  const out: Array<SimMarketSpec> = []
  const seen = new Set<string>()
  const add = (draft: EventDraft, status: Market["status"], limit: number, result: Market["result"] = null) => {
    if (draft.markets.length === 0 || seen.has(draft.eventId)) return
    seen.add(draft.eventId)
    const openTime = (today - rng.int(1, 30)) * DAY + rng.int(0, 23) * HOUR
    for (const m of draft.markets.slice(0, limit)) {
      const market: Market = {
        venue: "sim",
        nativeId: `${draft.eventId}-${m.suffix}`,
        eventId: draft.eventId,
        title: m.title,
        subtitle: m.subtitle,
        category: draft.category,
        status,
        openTime: Math.min(openTime, draft.closeTime - DAY),
        closeTime: draft.closeTime,
        tick: TICK,
        lot: F.ONE,
        result
      }
      const fairValue = (m.cents * CENT) as F.Fixed
      out.push(
        status === "open" && m.phrasings !== undefined
          ? { market, fairValue, phrasings: m.phrasings }
          : { market, fairValue }
      )
    }
  }
  const specials = count >= 6
  if (specials) {
    const city = rng.pick(CITIES)
    add(weatherOn(rng, city, today - 1, 4), "closed", 2)
    const yes = rng.chance(0.5)
    const settled = cryptoOn(rng, rng.pick(COINS), today - 2, 1)
    add(
      { ...settled, markets: settled.markets.map((m) => ({ ...m, cents: yes ? 95 : 5 })) },
      "settled",
      1,
      yes ? "yes" : "no"
    )
  }
  for (let round = 0; out.length < count && round < 100; round++) {
    for (const make of makerOrder(rng)) {
      if (out.length >= count) break
      add(make(rng, today), "open", count - out.length)
    }
  }
  return out.sort((a, b) =>
    a.market.nativeId < b.market.nativeId ? -1 : a.market.nativeId > b.market.nativeId ? 1 : 0
  )
}

/** The id of the k-th embedded sim venue (from 1): `sim`, `sim2`, `sim3`, … */
export const simVenueId = (k: number): string => (k === 1 ? "sim" : `sim${k}`)

/** Share of the first venue's open markets (those another venue may list) that each other sim venue lists. */
const LISTED = 0.8
/** Share of those it states the other way round, where the proposition has a single-market complement. */
const STATED_FLIPPED = 0.4

/**
 * The catalogs of `venues` sim venues. The first is `generateMarkets`' own; each other one lists a seeded share of
 * its open markets, each in one of the other wordings, some as the complement (YES of one = NO of the other), with
 * the fair value tied to the first venue's (the complement's for a flipped one) and walking with it. With one venue
 * the catalog is exactly `generateMarkets`', unlinked. Same seed, start and count ⇒ same catalogs.
 */
export const generateVenueCatalogs = (
  seed: number,
  startMs: number,
  count: number,
  venues: number
): ReadonlyArray<ReadonlyArray<SimMarketSpec>> => {
  const base = generateMarkets(seed, startMs, count)
  if (venues <= 1) return [base]
  const first = base.map((spec) =>
    spec.phrasings === undefined ? spec : { ...spec, link: { key: spec.market.nativeId, flipped: false } }
  )
  const out: Array<ReadonlyArray<SimMarketSpec>> = [first]
  for (let k = 2; k <= venues; k++) {
    const venue = simVenueId(k)
    const rng = SeededRandom.derive(seed, `catalog:${venue}`)
    const specs: Array<SimMarketSpec> = []
    for (const spec of base) {
      const phrasings = spec.phrasings
      if (phrasings === undefined) continue
      const listed = rng.chance(LISTED)
      const flipped = phrasings.flipped.length > 0 && rng.chance(STATED_FLIPPED)
      const choices = flipped ? phrasings.flipped : phrasings.same
      const wording = choices[rng.int(0, choices.length - 1)]
      if (!listed || wording === undefined) continue
      const m = spec.market
      const nativeId = `${m.nativeId.toLowerCase()}${flipped ? "-no" : ""}`
      specs.push({
        market: { ...m, venue, nativeId, eventId: m.eventId.toLowerCase(), ...wording },
        fairValue: flipped ? F.sub(F.ONE, spec.fairValue) : spec.fairValue,
        link: { key: m.nativeId, flipped }
      })
    }
    out.push(specs.sort((a, b) => (a.market.nativeId < b.market.nativeId ? -1 : 1)))
  }
  return out
}
