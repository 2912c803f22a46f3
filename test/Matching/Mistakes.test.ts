// The kinds of mistake a match must not make, each written from the markets' own wording: titles and rules texts.
import { assert, describe, it } from "@effect/vitest"
import { ALIASES, applyAliases } from "../../src/Matching/Aliases.ts"
import { FLIPPED, MatchIndex, SAME, type Answer } from "../../src/Matching/Matcher.ts"
import type { Listing } from "../../src/Matching/Proposition.ts"
import { normalize } from "../../src/Matching/Text.ts"

const m = (
  venue: "x" | "y",
  nativeId: string,
  title: string,
  rules?: string,
  extra: Partial<Listing> = {}
): Listing => ({
  venue,
  nativeId,
  title,
  ...(rules === undefined ? {} : { rules }),
  ...extra
})

const ask = (pool: ReadonlyArray<Listing>, id: string): Answer => {
  const index = new MatchIndex()
  index.addAll(pool)
  const a = index.match(id)
  assert.isDefined(a)
  return a!
}

/** The verdict, the market it names (matched or candidate) and the dimensions of its doubts. */
const verdict = (a: Answer) => [a.verdict, a.matched?.id ?? a.candidate?.id ?? null, a.reasons.map((r) => r.dimension)]

const kalshi = (condition: string) => `If ${condition}, then the market resolves to Yes.`
const poly = (condition: string, more = "") =>
  `This market will resolve to "Yes" if ${condition}. Otherwise, this market will resolve to "No".${more}`

describe("scope: whoever holds an office next is not the winner of an election", () => {
  const successor = m(
    "x",
    "A",
    "Will Ana Ruiz be the next Prime Minister of Freedonia?",
    kalshi("Ana Ruiz is the next Prime Minister of Freedonia before Jan 1, 2027")
  )
  it("the successor (interim holders included) against the one after the election, interim excluded: uncertain", () => {
    const elected = m(
      "y",
      "B",
      "Will Ana Ruiz be the next Freedonian Prime Minister?",
      poly(
        "Ana Ruiz is the next Prime Minister of Freedonia following the election",
        " Any interim/caretaker Prime Minister will not count toward the resolution of this market."
      )
    )
    const a = ask([successor, elected], "x:A")
    assert.deepStrictEqual(verdict(a), ["uncertain", "y:B", ["scope"]])
    assert.isNull(a.matched)
    assert.deepStrictEqual(a.candidate?.side_map, SAME)
    assert.deepStrictEqual(verdict(ask([successor, elected], "y:B")), ["uncertain", "x:A", ["scope"]])
  })

  it("both the winner of the election: matched", () => {
    const a = m(
      "x",
      "A",
      "Will Ana Ruiz win the 2026 Freedonian presidential election?",
      kalshi("Ana Ruiz wins the 2026 Freedonian presidential election")
    )
    const b = m(
      "y",
      "B",
      "Will Ana Ruiz be the next President of Freedonia?",
      poly("Ana Ruiz wins this election", " This market includes any potential second round.")
    )
    assert.deepStrictEqual(verdict(ask([a, b], "x:A")), ["matched", "y:B", []])
  })
})

describe("deadlines: the rules' deadline decides, never the close time", () => {
  const yearLong = m(
    "x",
    "A",
    "Will Acme release Widget 2 in 2026?",
    kalshi("Acme releases Widget 2 before Jan 1, 2027"),
    { closeTime: Date.UTC(2027, 0, 1) }
  )
  it("the end of the year against the end of June, the titles alike: uncertain, never matched", () => {
    const june = m(
      "y",
      "B",
      "Widget 2 released in 2026?",
      poly("Acme releases Widget 2 by June 30, 2026, 11:59 PM ET"),
      {
        closeTime: Date.UTC(2027, 0, 1)
      }
    )
    const a = ask([yearLong, june], "x:A")
    assert.deepStrictEqual(verdict(a), ["uncertain", "y:B", ["time"]])
    assert.include(a.reasons[0]!.reason, "2026-07-01")
  })

  it("the same deadline written two ways, with close times months apart: matched", () => {
    const december = m(
      "y",
      "B",
      "Widget 2 released in 2026?",
      poly("Acme releases Widget 2 by December 31, 2026, 11:59 PM ET"),
      { closeTime: Date.UTC(2026, 5, 30) }
    )
    assert.deepStrictEqual(verdict(ask([yearLong, december], "x:A")), ["matched", "y:B", []])
  })

  it("a window's end is its deadline: between January 15 and June 30 against before Jan 1, 2027", () => {
    const window = m(
      "y",
      "B",
      "Widget 2 released in 2026?",
      poly("Acme releases Widget 2 between January 15 and June 30, 2026, 11:59 PM ET")
    )
    assert.deepStrictEqual(verdict(ask([yearLong, window], "x:A")), ["uncertain", "y:B", ["time"]])
    const onOrBefore = m(
      "y",
      "B",
      "Widget 2 released in 2026?",
      poly("Acme releases Widget 2 on or before December 31, 2026")
    )
    assert.deepStrictEqual(verdict(ask([yearLong, onOrBefore], "x:A")), ["matched", "y:B", []])
  })

  it("a deadline the title states and the other's rules contradict: no match", () => {
    const a = m("x", "A", "Will Jo Park be confirmed as Secretary of Energy by Dec 31, 2026?")
    const b = m(
      "y",
      "B",
      "Jo Park confirmed as Energy Secretary?",
      poly("Jo Park is confirmed by June 30, 2026, 11:59 PM ET")
    )
    assert.strictEqual(ask([a, b], "x:A").verdict, "none")
  })
})

describe("complements must be exact", () => {
  const cases: ReadonlyArray<readonly [string, string, "same" | "inverse" | "uncertain" | "none"]> = [
    // a count can equal 5: fewer than 5 and more than 5 both say NO there
    ["Will Acme launch fewer than 5 rockets in 2026?", "Will Acme launch more than 5 rockets in 2026?", "uncertain"],
    ["Will Acme launch fewer than 5 rockets in 2026?", "Will Acme launch 5 or more rockets in 2026?", "inverse"],
    ["Will Acme launch 4 or fewer rockets in 2026?", "Will Acme launch more than 4 rockets in 2026?", "inverse"],
    // on whole counts "fewer than 5" is "4 or fewer", and "more than 4" is "5 or more"
    ["Will Acme launch fewer than 5 rockets in 2026?", "Will Acme launch more than 4 rockets in 2026?", "inverse"],
    ["Will Acme launch at least 5 rockets in 2026?", "Will Acme launch 5 or fewer rockets in 2026?", "uncertain"]
  ]
  for (const [ours, theirs, expected] of cases) {
    it(`"${ours}" vs "${theirs}" → ${expected}`, () => {
      const a = ask([m("x", "A", ours), m("y", "B", theirs)], "x:A")
      if (expected === "same" || expected === "inverse") {
        assert.deepStrictEqual(a.matched, { id: "y:B", venue: "y", side_map: expected === "same" ? SAME : FLIPPED })
      } else {
        assert.strictEqual(a.verdict, expected)
        assert.isNull(a.matched)
        if (expected === "uncertain")
          assert.deepStrictEqual(
            a.reasons.map((r) => r.dimension),
            ["boundary"]
          )
      }
    })
  }
})

describe("equivalent thresholds, by the figure's published precision and the comparator's strictness", () => {
  it("at least 3.1% is above 3.0% on the unemployment rate (published to one decimal)", () => {
    const a = ask(
      [
        m("x", "A", "Will the unemployment rate be at least 3.1% in June 2026?"),
        m("y", "B", "Will the unemployment rate be above 3.0% in June 2026?")
      ],
      "x:A"
    )
    assert.deepStrictEqual(a.matched, { id: "y:B", venue: "y", side_map: SAME })
  })

  it("and the complement: above 3.0% against 3.0% or lower", () => {
    const a = ask(
      [
        m("x", "A", "Will the unemployment rate be at least 3.1% in June 2026?"),
        m("y", "B", "Will the unemployment rate be 3.0% or lower in June 2026?")
      ],
      "x:A"
    )
    assert.deepStrictEqual(a.matched, { id: "y:B", venue: "y", side_map: FLIPPED })
  })

  it("fewer than 5 is 4 or fewer on whole counts", () => {
    const a = ask(
      [
        m("x", "A", "Will Acme launch fewer than 5 rockets in 2026?"),
        m("y", "B", "Will Acme launch 4 or fewer rockets in 2026?")
      ],
      "x:A"
    )
    assert.deepStrictEqual(a.matched, { id: "y:B", venue: "y", side_map: SAME })
  })

  it("a figure of unknown precision one written step apart is uncertain; its rules can state the precision", () => {
    const pool = [
      m("x", "A", "Will the Acme sentiment index be at least 3.1 in June 2026?"),
      m("y", "B", "Will the Acme sentiment index be above 3.0 in June 2026?")
    ]
    assert.deepStrictEqual(verdict(ask(pool, "x:A")), ["uncertain", "y:B", ["boundary"]])
    const stated = [
      pool[0]!,
      m(
        "y",
        "B",
        "Will the Acme sentiment index be above 3.0 in June 2026?",
        poly("the Acme sentiment index for June 2026, rounded to one decimal place, is above 3.0")
      )
    ]
    assert.deepStrictEqual(verdict(ask(stated, "x:A")), ["matched", "y:B", []])
  })

  it("a precision the rules state as Kalshi does ('the one-decimal place value') is read", () => {
    const pool = [
      m(
        "x",
        "A",
        "Will the Acme price index be above 2.6 for the year ending in May 2026?",
        kalshi(
          "the Acme price index is above 2.6 for the year ending May 2026 (as represented by the one-decimal place value)"
        )
      ),
      m("y", "B", "Will the Acme price index be at least 2.7 for the year ending in May 2026?")
    ]
    assert.deepStrictEqual(verdict(ask(pool, "x:A")), ["matched", "y:B", []])
  })

  it("above 3.0% is not at least 3.0%, whatever the precision", () => {
    const a = ask(
      [
        m("x", "A", "Will the unemployment rate be at least 3.0% in June 2026?"),
        m("y", "B", "Will the unemployment rate be above 3.0% in June 2026?")
      ],
      "x:A"
    )
    assert.strictEqual(a.verdict, "none")
  })
})

describe("names and abbreviations", () => {
  const pairs: ReadonlyArray<readonly [string, string]> = [
    ["Will Man Utd win the Premier League?", "Will Manchester United win the EPL?"],
    ["Will the ECB cut rates in June 2026?", "Will the European Central Bank cut interest rates in June 2026?"],
    [
      "Will Nicușor Dan win the Romanian presidential election?",
      "Will Nicusor Dan win the Romanian presidential election?"
    ],
    ["Will Acme ship Widget 2 by Sept. 30, 2026?", "Acme ships Widget 2 by September 30, 2026?"],
    [
      "Will the Fed announce a zero-point change in June 2026?",
      "No change in Fed interest rates after June 2026 meeting?"
    ],
    ["Will Acme launch fewer than five rockets in 2026?", "Will Acme launch fewer than 5 rockets in 2026?"],
    ["Will PSG win the Champions League?", "Will Paris Saint-Germain win the UCL?"],
    ["Will the FBI director leave in 2026?", "Will the director of the Federal Bureau of Investigation leave in 2026?"],
    ["Will Acme win at the Academy Awards in 2026?", "Will Acme win at the 2026 Oscars?"]
  ]
  for (const [ours, theirs] of pairs) {
    it(`"${ours}" is "${theirs}"`, () => {
      const pool = [m("x", "A", ours), m("y", "B", theirs)]
      assert.deepStrictEqual(ask(pool, "x:A").matched, { id: "y:B", venue: "y", side_map: SAME })
      assert.deepStrictEqual(ask(pool, "y:B").matched, { id: "x:A", venue: "x", side_map: SAME })
    })
  }

  it("a name is not its neighbour: AC Milan is not Inter Milan, the Clippers are not the Lakers", () => {
    const pool = [
      m("x", "A", "Will AC Milan win the Champions League?"),
      m("y", "B", "Will Inter Milan win the UEFA Champions League?"),
      m("x", "C", "Will the LA Clippers win the NBA Finals?"),
      m("y", "D", "Will the Los Angeles Lakers win the NBA Finals?")
    ]
    assert.isNull(ask(pool, "x:A").matched)
    assert.isNull(ask(pool, "x:C").matched)
  })

  it("the alias table: every spelling in one row only, each rewritten to its row's name", () => {
    const seen = new Map<string, string>()
    for (const [group, { about, rows }] of Object.entries(ALIASES)) {
      assert.isNotEmpty(about, group)
      for (const [name, ...others] of rows) {
        for (const spelling of [name, ...others]) {
          assert.strictEqual(spelling, normalize(spelling), `${spelling} is written normalised`)
          assert.isFalse(seen.has(spelling), `${spelling} is in ${seen.get(spelling)} and ${name}`)
          seen.set(spelling, name)
          assert.strictEqual(applyAliases(spelling), name)
        }
      }
    }
    assert.strictEqual(applyAliases("at least one democrat"), "at least one democrat")
    assert.strictEqual(applyAliases("fewer than five and three or more"), "fewer than 5 and 3 or more")
  })
})

describe("ties: the rules text settles which of two close candidates asks the same question", () => {
  const anchor = m(
    "x",
    "A",
    "Will Acme launch Widget in 2026?",
    kalshi("Acme launches Widget for sale in the United States, as reported by Reuters, before Jan 1, 2027")
  )
  it("the candidate whose rules agree is taken over one whose deadline differs", () => {
    const pool = [
      anchor,
      m("y", "B", "Acme launches Widget in 2026?", poly("Acme launches Widget by March 31, 2026, 11:59 PM ET")),
      m("y", "C", "Acme launches Widget in 2026?", poly("Acme launches Widget by December 31, 2026, 11:59 PM ET"))
    ]
    assert.deepStrictEqual(verdict(ask(pool, "x:A")), ["matched", "y:C", []])
  })

  it("the candidate whose rules read the same (wording, source) is taken", () => {
    const pool = [
      anchor,
      m(
        "y",
        "B",
        "Acme launches Widget in 2026?",
        poly("Acme launches Widget for sale in the United States in 2026, as reported by Reuters")
      ),
      m(
        "y",
        "C",
        "Acme launches Widget in 2026?",
        poly("an Acme prototype called Widget is shown at a trade fair in 2026")
      )
    ]
    assert.deepStrictEqual(verdict(ask(pool, "x:A")), ["matched", "y:B", []])
  })

  it("two candidates the rules cannot tell apart: uncertain, naming the runner-up", () => {
    const pool = [
      anchor,
      m("y", "B", "Acme launches Widget in 2026?", poly("Acme launches Widget in 2026")),
      m("y", "C", "Acme launches Widget in 2026?", poly("Acme launches Widget in 2026"))
    ]
    const a = ask(pool, "x:A")
    assert.strictEqual(a.verdict, "uncertain")
    assert.deepStrictEqual(
      a.reasons.map((r) => r.dimension),
      ["tie"]
    )
  })
})
