import { assert, describe, it } from "@effect/vitest"
import { FLIPPED, MatchIndex, SAME, type SideMap } from "../../src/Matching/Matcher.ts"
import type { Listing } from "../../src/Matching/Proposition.ts"

/** Small labelled cases written for each part of the grammar: two venues, `x` and `y`, wording things their own way. */
const m = (venue: "x" | "y", nativeId: string, title: string, extra: Partial<Listing> = {}): Listing => ({
  venue,
  nativeId,
  title,
  ...extra
})

const indexOf = (listings: ReadonlyArray<Listing>) => {
  const index = new MatchIndex()
  index.addAll(listings)
  return index
}

/** The match of `id` in a pool, as `[matched id, side_map]`, or null. */
const answer = (pool: ReadonlyArray<Listing>, id: string): [string, SideMap] | null => {
  const a = indexOf(pool).match(id)
  assert.isDefined(a)
  return a!.matched === null ? null : [a!.matched.id, a!.matched.side_map]
}

describe("comparators and their complements", () => {
  const cases: ReadonlyArray<readonly [string, string, SideMap | null]> = [
    [
      "Will the unemployment rate be above 4.1% in March 2026?",
      "Unemployment rate 4.1% or less in March 2026?",
      FLIPPED
    ],
    [
      "Will the unemployment rate be above 4.1% in March 2026?",
      "Unemployment rate greater than 4.1% in March 2026?",
      SAME
    ],
    ["Will the unemployment rate be above 4.1% in March 2026?", "Unemployment rate at least 4.1% in March 2026?", null],
    ["Will CPI rise at least 0.3% in March 2026?", "Will CPI rise less than 0.3% in March 2026?", FLIPPED],
    ["Will CPI rise at least 0.3% in March 2026?", "Will CPI rise 0.3% or more in March 2026?", SAME],
    ["Will CPI rise at least 0.3% in March 2026?", "Will CPI rise more than 0.3% in March 2026?", null],
    ["Will GDP growth be below 2% in Q1 2026?", "GDP growth 2% or higher in Q1 2026?", FLIPPED],
    ["Will GDP growth be below 2% in Q1 2026?", "GDP growth under 2% in Q1 2026?", SAME],
    ["Will GDP growth be below 2% in Q1 2026?", "GDP growth 2% or lower in Q1 2026?", null],
    [
      "Will payrolls grow by 150k or fewer jobs in April 2026?",
      "Will payrolls grow by more than 150,000 jobs in April 2026?",
      FLIPPED
    ],
    [
      "Will the 30-year mortgage rate exceed 7% by June 30, 2026?",
      "30-year mortgage rate above 7% by June 30, 2026?",
      SAME
    ],
    [
      "Will the 30-year mortgage rate exceed 7% by June 30, 2026?",
      "30-year mortgage rate above 7.5% by June 30, 2026?",
      null
    ]
  ]
  for (const [ours, theirs, expected] of cases) {
    it(`"${ours}" vs "${theirs}" → ${expected === null ? "no match" : expected.yes === "yes" ? "same" : "flipped"}`, () => {
      const pool = [m("x", "A", ours), m("y", "B", theirs)]
      assert.deepStrictEqual(answer(pool, "x:A"), expected === null ? null : ["y:B", expected])
      assert.deepStrictEqual(answer(pool, "y:B"), expected === null ? null : ["x:A", expected])
    })
  }

  it("a threshold stated only in the rules or the outcome label is read from there", () => {
    const pool = [
      m("x", "A", "What share of the vote will the Greens get in the Austrian election?", {
        rules:
          "If the Greens receive 8% or above share of the vote in the 2026 Austrian election, then the market resolves to Yes."
      }),
      m("y", "B", "Will the Greens win less than 8% of the vote in the Austrian election?"),
      m("x", "C", "Solana price on Jun 7, 2026?", { yesLabel: "≥150" }),
      m("y", "D", "Will Solana be at least $150 on June 7, 2026?")
    ]
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:B", FLIPPED])
    const explain = indexOf(pool).match("x:C")!.explain
    assert.deepStrictEqual(explain.anchor.quantity, { comparator: "ge", low: "150", unit: "", decimals: 0 })
  })

  it("units are read exactly: $250b is 250,000,000,000 and a bare 250 is not it", () => {
    const pool = [
      m("x", "A", "Will federal spending decrease by more than $250b in 2026?"),
      m("y", "B", "Will federal spending decrease by more than 250 billion dollars in 2026?"),
      m("y", "C", "Will federal spending decrease by more than 250 in 2026?")
    ]
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:B", SAME])
  })
})

describe("brackets", () => {
  it("the same bracket matches however it is written; a neighbouring one does not", () => {
    const pool = [
      m("x", "A", "Will the high temperature in Chicago be 40-41° on March 3, 2026?"),
      m("y", "B", "Highest temperature in Chicago between 40 and 41°F on March 3, 2026?"),
      m("y", "C", "Highest temperature in Chicago between 42 and 43°F on March 3, 2026?"),
      m("x", "D", "Will the high temperature in Chicago be 42-43° on March 3, 2026?")
    ]
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:B", SAME])
    assert.deepStrictEqual(answer(pool, "y:C"), ["x:D", SAME])
  })

  it("a bracket is never matched to a threshold at one of its ends", () => {
    const pool = [
      m("x", "A", "Will 7-9 rockets launch in 2026?"),
      m("y", "B", "Will more than 7 rockets launch in 2026?")
    ]
    assert.isNull(answer(pool, "x:A"))
  })
})

describe("dates and periods", () => {
  it("'in 2026' is 'before Jan 1, 2027'; another year, a deadline months earlier or a fiscal year is not", () => {
    const same = [
      m("x", "A", "Will Acme Corp's CEO leave before Jan 1, 2027?"),
      m("y", "B", "Acme Corp CEO out in 2026?")
    ]
    assert.deepStrictEqual(answer(same, "x:A"), ["y:B", SAME])
    const other = [
      m("x", "A", "Will Acme Corp's CEO leave before Jan 1, 2027?"),
      m("y", "B", "Acme Corp CEO out in 2027?")
    ]
    assert.isNull(answer(other, "x:A"))
    const earlier = [
      m("x", "A", "Will Jane Roe be confirmed as Labor Secretary by Dec 31, 2026?"),
      m("y", "B", "Jane Roe confirmed as Labor Secretary?", {
        rules: 'This market will resolve to "Yes" if Jane Roe is confirmed by June 30, 2026, 11:59 PM ET.'
      })
    ]
    assert.isNull(answer(earlier, "x:A"))
    const fiscal = [
      m("x", "A", "How many removals in 2026?", {
        rules: "If there are at least 300,000 removals in 2026, then the market resolves to Yes."
      }),
      m("y", "B", "Will there be less than 300,000 removals?", {
        rules: 'This market will resolve to "Yes" if fewer than 300,000 removals happen in the 2026 fiscal year.'
      })
    ]
    assert.isNull(answer(fiscal, "x:A"))
  })

  it("a day must be the same day, and a month the same month", () => {
    const pool = [
      m("x", "A", "Will the high temp in Denver be above 70° on May 4, 2026?"),
      m("y", "B", "Highest temperature in Denver above 70°F on May 5, 2026?"),
      m("y", "C", "Highest temperature in Denver above 70°F on May 4, 2026?"),
      m("x", "D", "Will the Fed cut rates by 25bps at their June 2026 meeting?"),
      m("y", "E", "Fed decreases interest rates by 25 bps after July 2026 meeting?")
    ]
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:C", SAME])
    assert.isNull(answer(pool, "x:D"))
  })

  it("the same relative period whose rules end it on another day is uncertain, never matched", () => {
    const pool = [
      m("x", "A", "Will the governor sign the budget in the first 100 days?", {
        rules: "If the governor signs the budget before May 1, 2026, then the market resolves to Yes."
      }),
      m("y", "B", "Governor signs budget in first 100 days?", {
        rules: 'This market will resolve to "Yes" if the governor signs the budget by April 20, 2026.'
      })
    ]
    const a = indexOf(pool).match("x:A")!
    assert.strictEqual(a.verdict, "uncertain")
    assert.isNull(a.matched)
    assert.strictEqual(a.candidate?.id, "y:B")
    assert.deepStrictEqual(
      a.reasons.map((r) => [r.dimension, r.status]),
      [["time", "differs"]]
    )
    assert.deepStrictEqual(a.explain.rules, { verdict: "differs", differs: ["time"] })
  })
})

describe("head-to-head markets", () => {
  const pool = [
    m("x", "A", "Will the Hawks beat the Eagles on Sep 13, 2026?"),
    m("y", "B", "Hawks vs. Eagles on September 13, 2026", { yesLabel: "Eagles" }),
    m("y", "C", "Hawks vs. Eagles on September 20, 2026", { yesLabel: "Hawks" }),
    m("y", "D", "Lions vs. Eagles on September 13, 2026", { yesLabel: "Eagles" })
  ]
  it("'A beats B' against a head-to-head market whose YES is B is the flip", () => {
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:B", FLIPPED])
    assert.deepStrictEqual(answer(pool, "y:B"), ["x:A", FLIPPED])
  })
  it("the same side of the same game matches straight", () => {
    const straight = [
      m("x", "A", "Will the Hawks beat the Eagles on Sep 13, 2026?"),
      m("y", "B", "Eagles vs Hawks on Sep 13, 2026", { yesLabel: "Hawks" })
    ]
    assert.deepStrictEqual(answer(straight, "x:A"), ["y:B", SAME])
  })
  it("a game named by where it is played ('Away at Home: who wins', 'at … winner') is a head-to-head", () => {
    const away = [
      m("x", "A", "Hawks at Eagles: who wins on Sep 13, 2026?", { yesLabel: "Hawks" }),
      m("y", "B", "Hawks vs. Eagles on September 13, 2026", { yesLabel: "Eagles" })
    ]
    assert.deepStrictEqual(answer(away, "x:A"), ["y:B", FLIPPED])
    const home = [
      m("x", "A", "Hawks at Eagles Winner? Sep 13, 2026", { yesLabel: "Eagles" }),
      m("y", "B", "Will the Eagles beat the Hawks on September 13, 2026?")
    ]
    assert.deepStrictEqual(answer(home, "x:A"), ["y:B", SAME])
    // both sides of the game listed there: the one stated as we state it is the answer, not an unsure tie
    const both = [
      m("x", "A", "Hawks at Eagles: who wins on Sep 13, 2026?", { yesLabel: "Hawks", eventId: "G1" }),
      m("x", "B", "Hawks at Eagles: who wins on Sep 13, 2026?", { yesLabel: "Eagles", eventId: "G1" }),
      m("y", "C", "Hawks vs. Eagles on September 13, 2026", { yesLabel: "Eagles" })
    ]
    assert.deepStrictEqual(answer(both, "y:C"), ["x:B", SAME])
    assert.deepStrictEqual(answer(both, "x:A"), ["y:C", FLIPPED])
    assert.deepStrictEqual(answer(both, "x:B"), ["y:C", SAME])
    // a price "at" a time is not a game
    const price = [
      m("x", "A", "Will the unemployment rate be above 4.1% at the March 2026 release?"),
      m("y", "B", "Hawks vs. Eagles on September 13, 2026", { yesLabel: "Eagles" })
    ]
    assert.isNull(answer(price, "x:A"))
  })
})

describe("multi-candidate events", () => {
  const pool = [
    m("x", "A1", "Who will win the 2026 Ruritanian presidential election?", { yesLabel: "Anna Novak" }),
    m("x", "A2", "Who will win the 2026 Ruritanian presidential election?", { yesLabel: "Boris Kral" }),
    m("x", "A3", "Will Anna Novak win the first round of the 2026 Ruritanian presidential election?"),
    m("y", "B1", "Ruritania Presidential Election - Will Anna Novak win the 2026 Ruritanian presidential election?"),
    m("y", "B2", "Ruritania Presidential Election - Will Boris Kral win the 2026 Ruritanian presidential election?"),
    m("y", "B3", "Ruritania Presidential Election - Will Ivan Kral win the 2026 Ruritanian presidential election?")
  ]
  it("each candidate matches its own market, never a sibling's", () => {
    assert.deepStrictEqual(answer(pool, "x:A1"), ["y:B1", SAME])
    assert.deepStrictEqual(answer(pool, "x:A2"), ["y:B2", SAME])
    assert.deepStrictEqual(answer(pool, "y:B1"), ["x:A1", SAME])
  })
  it("winning a first round is not winning the election; a candidate with no market there has no match", () => {
    assert.isNull(answer(pool, "x:A3"))
    assert.isNull(answer(pool, "y:B3"))
  })
  it("a team's conference title is not its league title", () => {
    const teams = [
      m("x", "K1", "Will the Denver Nuggets win the NBA Western Conference Finals?"),
      m("y", "P1", "Will the Denver Nuggets win the 2026 NBA Finals?"),
      m("y", "P2", "Will the Denver Nuggets win the Western Conference?")
    ]
    assert.deepStrictEqual(answer(teams, "x:K1"), ["y:P2", SAME])
    assert.isNull(answer(teams.slice(0, 2), "x:K1"))
  })
})

describe("refusals", () => {
  it("every crypto up-or-down market is refused, even against its own wording", () => {
    const pool = [
      m("x", "A", "Bitcoin Up or Down - July 24, 3:55PM-4:00PM ET", { yesLabel: "Up" }),
      m("y", "B", "Bitcoin Up or Down - July 24, 3:55PM-4:00PM ET", { yesLabel: "Up" })
    ]
    const a = indexOf(pool).match("x:A")!
    assert.isNull(a.matched)
    assert.include(a.explain.reason, "up-or-down")
  })
  it("a named settlement source that differs is not the same question", () => {
    const pool = [
      m("x", "A", "Will Trump's approval on 538 be above 45% on May 1, 2026?"),
      m("y", "B", "Will Trump's approval on RealClearPolitics be above 45% on May 1, 2026?")
    ]
    assert.isNull(answer(pool, "x:A"))
  })
  it("an asset's price is matched only when both name the same settlement source", () => {
    const pool = [
      m("x", "A", "Will the price of Bitcoin be above $100,000 on June 7, 2026?"),
      m("y", "B", "Bitcoin above $100,000 on June 7, 2026?")
    ]
    assert.isNull(answer(pool, "x:A"))
    const sourced = [
      m("x", "A", "Will the price of Bitcoin be above $100,000 on June 7, 2026?", {
        rules: "Settles on the Coinbase BTC-USD close."
      }),
      m("y", "B", "Bitcoin above $100,000 on June 7, 2026?", {
        rules: "Resolves by the Coinbase BTC-USD 1-minute candle."
      })
    ]
    assert.deepStrictEqual(answer(sourced, "x:A"), ["y:B", SAME])
  })
  it("another outcome of the same meeting is not a match", () => {
    const pool = [
      m("x", "A", "Will the Federal Reserve cut rates by 25bps at their June 2026 meeting?"),
      m("y", "B", "No change in Fed interest rates after June 2026 meeting?"),
      m("y", "C", "Fed increases interest rates by 25+ bps after June 2026 meeting?")
    ]
    assert.isNull(answer(pool, "x:A"))
  })
  it("two equally close answers on one venue make the answer unsure: no match", () => {
    const pool = [
      m("x", "A", "Will Zeta Labs release Model Nine before July 2026?"),
      m("y", "B", "Zeta Labs releases Model Nine before July 2026?"),
      m("y", "C", "Zeta Labs released Model Nine before July 2026?")
    ]
    assert.isNull(answer(pool, "x:A"))
  })

  it("a crypto asset going up or down with no price named is refused like an up-or-down market", () => {
    const pool = [
      m("x", "A", "Bitcoin price up in next 15 mins?"),
      m("y", "B", "Will Bitcoin go up between 3:00PM and 3:15PM ET?")
    ]
    assert.isNull(answer(pool, "x:A"))
    assert.include(indexOf(pool).match("x:A")!.explain.reason, "up-or-down")
  })
})

describe("outcome labels and league names", () => {
  it("an outcome label names the outcome: 'Cut 25bps' is the 25 bps cut, not the hold", () => {
    const pool = [
      m("x", "C25", "Fed decision in Oct 2026?", { yesLabel: "Cut 25bps" }),
      m("x", "H0", "Fed decision in Oct 2026?", { yesLabel: "Hold" }),
      m("y", "P1", "Fed decreases interest rates by 25 bps after October 2026 meeting?"),
      m("y", "P2", "No change in Fed interest rates after October 2026 meeting?")
    ]
    assert.deepStrictEqual(answer(pool, "x:C25"), ["y:P1", SAME])
    assert.deepStrictEqual(answer(pool, "x:H0"), ["y:P2", SAME])
  })

  it("a championship named by its sport is the league's, and a team written by its initial is found", () => {
    const pool = [
      m("x", "LAD", "Will Los Angeles D win the 2026 Pro Baseball Championship?", { yesLabel: "Los Angeles D" }),
      m("x", "LAA", "Will Los Angeles A win the 2026 Pro Baseball Championship?", { yesLabel: "Los Angeles A" }),
      m("y", "D", "MLB World Series Champion 2026 - Will the Los Angeles Dodgers win the 2026 World Series?"),
      m("y", "A", "MLB World Series Champion 2026 - Will the Los Angeles Angels win the 2026 World Series?"),
      m("y", "N", "Will the Los Angeles Dodgers win the 2026 NL West?")
    ]
    assert.deepStrictEqual(answer(pool, "x:LAD"), ["y:D", SAME])
    assert.deepStrictEqual(answer(pool, "x:LAA"), ["y:A", SAME])
    assert.isNull(answer(pool, "y:N"))
  })

  it("winning the House is controlling it, and the House is not the Senate", () => {
    const pool = [
      m("x", "H", "Will Republicans win the House in 2026?", { yesLabel: "Republican Party" }),
      m("x", "S", "Will Republicans win the Senate in 2026?", { yesLabel: "Republican Party" }),
      m(
        "y",
        "PH",
        "Which party will win the House in 2026? - Will the Republican Party control the House after the 2026 Midterm elections?",
        { yesLabel: "Republican Party" }
      )
    ]
    assert.deepStrictEqual(answer(pool, "x:H"), ["y:PH", SAME])
    assert.isNull(answer(pool, "x:S"))
  })

  it("an award's category is part of the question", () => {
    const pool = [
      m("x", "BD", "Will The Brutalist win Best Director at the Oscars?"),
      m("y", "BP", "Will The Brutalist win Best Picture at the Oscars?")
    ]
    assert.isNull(answer(pool, "x:BD"))
    const both = [...pool, m("y", "PD", 'Will "The Brutalist" win Best Director at the 2025 Oscars?')]
    assert.deepStrictEqual(answer(both, "x:BD"), ["y:PD", SAME])
  })

  it("an annual rate is not a monthly one at the same threshold", () => {
    const pool = [
      m("x", "A", "Will CPI be above 3% for the year ending in June 2026?"),
      m("y", "B", "Will CPI be above 3% in June 2026?")
    ]
    assert.isNull(answer(pool, "x:A"))
  })

  it("a source one title names must be the one the other market's rules name", () => {
    const pool = [
      m("x", "A", "Will Trump's approval rating on 538 be above 45% on May 1, 2026?"),
      m("y", "B", "Trump approval rating above 45% on May 1, 2026?", {
        rules: 'This market will resolve to "Yes" if the Silver Bulletin approval average is above 45% on May 1, 2026.'
      })
    ]
    assert.isNull(answer(pool, "x:A"))
  })

  it("reaching a level at any time is not standing above it at the end", () => {
    const pool = [
      m("x", "A", "Will the national debt reach $40 trillion before the end of 2026?"),
      m("y", "B", "National debt hits $40T in 2026?"),
      m("y", "C", "National debt above $40 trillion on December 31, 2026?")
    ]
    assert.deepStrictEqual(answer(pool, "x:A"), ["y:B", SAME])
    assert.isNull(answer(pool, "y:C"))
  })

  it("any member of a group, every member, and one named member are three questions", () => {
    const pool = [
      m("x", "ANY", "Will any Democratic senator vote for Jane Roe?"),
      m("x", "ALL", "Will every Republican Senator vote for Jane Roe?"),
      m("y", "ONE", "Will Democratic senator Tom Birch vote to confirm Jane Roe as Secretary of Labor?"),
      m("y", "EVERY", "Will all Republican Senators vote to confirm Jane Roe?")
    ]
    assert.isNull(answer(pool, "x:ANY"))
    assert.deepStrictEqual(answer(pool, "x:ALL"), ["y:EVERY", SAME])
  })
})
