/**
 * The alias table: names that venues write several ways (teams, leagues, offices, agencies, events, units, outcomes),
 * each rewritten to one canonical spelling before a question is parsed. Written in normalised text: lower case,
 * no accents. Each row is `[canonical, ...other spellings]`; a spelling is matched as whole words.
 */

/** One group of the table: its rows, and what the group is for. */
export interface AliasGroup {
  readonly about: string
  readonly rows: ReadonlyArray<readonly [string, ...Array<string>]>
}

/** The table, by group. A spelling must appear in one row only (a test checks it). */
export const ALIASES: Readonly<Record<string, AliasGroup>> = {
  teams: {
    about: "clubs and franchises by their short names, nicknames and full names",
    rows: [
      ["manchester united", "man utd", "man united", "manchester utd"],
      ["manchester city", "man city"],
      ["tottenham", "tottenham hotspur"],
      ["wolverhampton", "wolves", "wolverhampton wanderers"],
      ["nottingham forest", "nott'm forest", "notts forest"],
      ["newcastle", "newcastle united", "newcastle utd"],
      ["brighton", "brighton and hove albion", "brighton hove albion"],
      ["west ham", "west ham united"],
      ["paris saint germain", "psg", "paris sg", "paris saint-germain", "paris st germain", "paris st-germain"],
      ["bayern munich", "bayern", "fc bayern", "bayern munchen", "fc bayern munchen"],
      ["borussia dortmund", "dortmund", "bvb"],
      ["bayer leverkusen", "leverkusen"],
      ["rb leipzig", "leipzig"],
      ["internazionale", "inter milan", "fc internazionale milano"],
      ["juventus", "juve"],
      ["atletico madrid", "atleti", "atletico de madrid"],
      ["barcelona", "fc barcelona", "barca"],
      ["sporting cp", "sporting lisbon", "sporting clube de portugal"],
      ["benfica", "sl benfica"],
      ["ajax", "afc ajax"],
      ["psv", "psv eindhoven"],
      ["oklahoma city thunder", "okc thunder", "okc"],
      ["golden state warriors", "golden state", "gsw"],
      ["philadelphia 76ers", "sixers", "76ers"],
      ["new york knicks", "ny knicks", "knicks"],
      ["los angeles lakers", "la lakers", "lakers"],
      ["los angeles clippers", "la clippers", "clippers"],
      ["tampa bay buccaneers", "bucs"],
      ["new england patriots", "pats"],
      ["san francisco 49ers", "niners", "sf 49ers"],
      ["uconn", "university of connecticut", "connecticut huskies"]
    ]
  },
  leagues: {
    about: "competitions and governing bodies",
    rows: [
      ["premier league", "epl", "english premier league"],
      ["champions league", "ucl", "uefa champions league"],
      ["la liga", "laliga"],
      ["ligue 1", "ligue un"],
      ["major league soccer", "mls"],
      ["world cup", "fifa world cup"],
      ["formula 1", "formula one", "f1"]
    ]
  },
  offices: {
    about: "offices and titles",
    rows: [
      ["president", "potus"],
      ["prime minister", "premier minister"],
      ["supreme court", "scotus"],
      ["secretary of state", "sec of state", "secstate"],
      ["ceo", "chief executive officer", "chief executive"],
      ["fed chair", "chair of the federal reserve", "federal reserve chair", "fed chairman"]
    ]
  },
  agencies: {
    about: "agencies, central banks and international bodies by their acronyms",
    rows: [
      ["fbi", "federal bureau of investigation"],
      ["cia", "central intelligence agency"],
      ["nasa", "national aeronautics and space administration"],
      ["european central bank", "ecb"],
      ["bank of england", "boe"],
      ["bank of japan", "boj"],
      ["imf", "international monetary fund"],
      ["nato", "north atlantic treaty organization"],
      ["united nations", "un", "u.n."],
      ["european union", "eu", "e.u."],
      ["sec", "securities and exchange commission"],
      ["ftc", "federal trade commission"],
      ["doj", "department of justice", "justice department"],
      ["dhs", "department of homeland security"],
      ["irs", "internal revenue service"],
      ["epa", "environmental protection agency"],
      ["cdc", "centers for disease control", "centers for disease control and prevention"],
      ["fda", "food and drug administration"],
      ["tsa", "transportation security administration"],
      ["opec", "organization of the petroleum exporting countries"],
      ["world health organization", "w.h.o."],
      ["bls", "bureau of labor statistics"],
      ["bea", "bureau of economic analysis"],
      ["nber", "national bureau of economic research"]
    ]
  },
  people: {
    about: "people and posts known by their initials",
    rows: [
      ["alexandria ocasio-cortez", "aoc"],
      ["marjorie taylor greene", "mtg"],
      ["mohammed bin salman", "mbs"],
      ["director of national intelligence", "dni"],
      ["health and human services", "hhs"]
    ]
  },
  events: {
    about: "events, awards and ceremonies",
    rows: [
      ["oscars", "academy awards", "the academy awards", "oscar awards"],
      ["grammys", "grammy awards"],
      ["emmys", "emmy awards"],
      ["golden globes", "golden globe awards"],
      ["olympics", "olympic games"],
      ["eurovision", "eurovision song contest"],
      ["g7", "group of seven", "g-7"],
      ["g20", "group of twenty", "g-20"],
      ["state of the union", "sotu"],
      ["march madness", "ncaa tournament", "ncaa men's tournament", "ncaa men's basketball tournament"]
    ]
  },
  units: {
    about: "units and measures",
    rows: [
      ["percent", "pct", "per cent"],
      ["bps", "basis points", "basis point"],
      ["degrees", "deg", "degrees fahrenheit", "fahrenheit", "deg f"],
      ["gdp", "gross domestic product"],
      ["cpi", "consumer price index"]
    ]
  },
  outcomes: {
    about: "outcomes said several ways",
    rows: [
      [
        "no change",
        "zero-point change",
        "zero point change",
        "a 0bps change",
        "0 bps change",
        "0bps change",
        "unchanged",
        "hike rates by 0bps",
        "hike by 0bps",
        "cut rates by 0bps",
        "cut by 0bps"
      ]
    ]
  }
}

/** Words for small numbers, read as digits where a count is compared ("fewer than five"). */
export const NUMBER_WORDS: Readonly<Record<string, string>> = {
  zero: "0",
  one: "1",
  two: "2",
  three: "3",
  four: "4",
  five: "5",
  six: "6",
  seven: "7",
  eight: "8",
  nine: "9",
  ten: "10",
  eleven: "11",
  twelve: "12",
  thirteen: "13",
  fourteen: "14",
  fifteen: "15",
  sixteen: "16",
  seventeen: "17",
  eighteen: "18",
  nineteen: "19",
  twenty: "20",
  thirty: "30",
  forty: "40",
  fifty: "50",
  hundred: "100"
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

const canonical = new Map<string, string>()
for (const group of Object.values(ALIASES))
  for (const [name, ...others] of group.rows) for (const o of [name, ...others]) canonical.set(o, name)

/** Longest spellings first, so "inter milan" wins over "inter". */
const ALIAS_RE = new RegExp(
  `(?<![a-z0-9'])(?:${[...canonical.keys()]
    .sort((a, b) => b.length - a.length)
    .map(escape)
    .join("|")})(?![a-z0-9'])`,
  "g"
)

const COMPARED_NUMBER = new RegExp(
  `\\b(than|least|most|exactly|between|and|to|or) (${Object.keys(NUMBER_WORDS).join("|")})\\b(?! of\\b)|\\b(${Object.keys(
    NUMBER_WORDS
  )
    .filter((w) => w !== "one")
    .join("|")}) or (more|fewer|less|above|below|higher|lower|greater)\\b`,
  "g"
)

/** Rewrites every spelling of the table to its canonical name, and compared number words to digits. */
export const applyAliases = (normalized: string): string =>
  normalized
    .replace(ALIAS_RE, (m) => canonical.get(m) ?? m)
    .replace(COMPARED_NUMBER, (m, before?: string, word?: string, word2?: string, after?: string) =>
      before !== undefined && word !== undefined
        ? // "at least one Democrat" stays words: one member of a group, not a count
          before === "least" && word === "one"
          ? m
          : `${before} ${NUMBER_WORDS[word]}`
        : `${NUMBER_WORDS[word2!]} or ${after}`
    )
