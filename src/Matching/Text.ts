/** Text of market questions made comparable: normalised characters, canonical phrases, stemmed content words. */
import { stemmer } from "stemmer"
import { applyAliases } from "./Aliases.ts"

/** Lower case, accents and typographic quotes removed, `&` spelled out, spaces collapsed. */
export const normalize = (text: string): string =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[łŀ]/g, "l")
    .replace(/ø/g, "o")
    .replace(/ß/g, "ss")
    .replace(/æ/g, "ae")
    .replace(/œ/g, "oe")
    .replace(/[đð]/g, "d")
    .replace(/ı/g, "i")
    .replace(/þ/g, "th")
    .replace(/[\u2018\u2019\u201b`]/g, "'")
    .replace(/[\u201c\u201d"*]/g, " ")
    .replace(/[\u2013\u2014]/g, "-")
    .replace(/&/g, " and ")
    .replace(/\s+/g, " ")
    .trim()

/**
 * Phrases that name one thing in several ways, rewritten to one token before words are split; each runs only on
 * a text holding one of its hints (a cheap test first: catalogs are large). Competitions,
 * offices and outcomes are written as `k_…` tokens: a proposition about one never matches one about another.
 */
const PHRASES: ReadonlyArray<readonly [RegExp, string, ReadonlyArray<string>]> = [
  // competitions: the thing a team or a person wins
  [/\b(?:nba )?western conference(?: finals| championship| title)?\b/g, " k_westconf ", ["western"]],
  [/\b(?:nba )?eastern conference(?: finals| championship| title)?\b/g, " k_eastconf ", ["eastern"]],
  [
    /\bnba (?:finals|championship|title)\b|\bpro basketball (?:championship|finals)\b/g,
    " k_nbafinal ",
    ["nba", "pro basketball"]
  ],
  [/\bstanley cup(?: finals?)?\b|\bpro hockey championship\b/g, " k_stanleycup ", ["stanley", "pro hockey"]],
  [/\b(afc|nfc) (?:championship|title|champion)\b/g, " k_$1 ", ["afc", "nfc"]],
  [/\b(afc|nfc|al|nl) (east|west|north|south|central)\b/g, " k_$1$2 ", ["afc", "nfc", "al ", "nl "]],
  [/\b(?:american league|al) pennant\b/g, " k_alpennant ", ["pennant"]],
  [/\b(?:national league|nl) pennant\b/g, " k_nlpennant ", ["pennant"]],
  [/\bmvp\b|\bmost valuable player\b/g, " k_mvp ", ["mvp", "most valuable"]],
  [/\brookie of the year\b/g, " k_roy ", ["rookie"]],
  [/\bpopular vote\b/g, " k_popularvote ", ["popular"]],
  [/\bhouse of representatives\b/g, " house ", ["representatives"]],
  [
    /\b(?:wins?|won|controls?|takes?|flips?|keeps?|retains?|holds?)(?: control of| the majority in| a majority in)? (?:the )?(?:us |u\.s\. )?(house|senate)\b/g,
    " k_$1control ",
    ["house", "senate"]
  ],
  [/\bmidterms?(?: elections?)?\b/g, " ", ["midterm"]],
  [/\b(?:mlb )?world series\b|\bpro baseball championship\b/g, " k_worldseries ", ["world series", "pro baseball"]],
  [
    /\bsuper bowl\b|\bpro football championship\b|\bnfl (?:league )?championship\b/g,
    " k_superbowl ",
    ["super bowl", "pro football", "nfl"]
  ],
  [
    /\bmarch madness\b|\bncaa (?:men's )?(?:basketball )?(?:tournament|championship)\b/g,
    " k_ncaatourn ",
    ["march madness", "ncaa"]
  ],
  [/\b(?:uefa )?champions league\b/g, " k_ucl ", ["champions"]],
  [/\b(?:uefa )?europa league\b/g, " k_uel ", ["europa"]],
  [/\bpremier league\b/g, " k_epl ", ["premier"]],
  [/\bnobel peace prize\b/g, " k_nobelpeace ", ["nobel"]],
  [/\bcy young(?: award)?\b/g, " cyyoung ", ["cy young"]],
  // contests inside an election
  [/\b(?:the )?(?:2nd|second)(?: most seats| place| most votes)?\b/g, " k_second ", ["2nd", "second"]],
  [/\bmost seats\b/g, " k_mostseats ", ["most seats"]],
  [/\b(?:1st|first) round\b/g, " k_firstround ", ["round"]],
  [/\b(?:be )?1st in\b/g, " k_firstround ", ["1st in"]],
  [/\bmost votes\b/g, " k_mostvotes ", ["most votes"]],
  [/\b(?:presidential |president(?:ial)? )?(?:nominee|nomination|primary)\b/g, " k_nominee ", ["nomin", "primary"]],
  [/\bprime minister\b/g, " primeminister ", ["prime minister"]],
  [/\bpresidential\b/g, " president ", ["presidential"]],
  // central bank outcomes
  [
    /\bno change\b|\b(?:hold|holds|pause|pauses|maintain|maintains|keep|keeps) (?:interest )?rates?\b|^ hold $/g,
    " k_hold ",
    ["no change", "hold", "pause", "maintain", "keep"]
  ],
  [
    /\b(?:cuts?|decreases?|lowers?|reduces?)(?= (?:interest )?rates?\b| by \d[\d.,]* ?(?:bps|basis points)\b| >?\d+ ?(?:bps|basis points)\b)/g,
    " k_cut ",
    ["cut", "decrease", "lower", "reduce"]
  ],
  [
    /\b(?:hikes?|increases?|raises?)(?= (?:interest )?rates?\b| by \d[\d.,]* ?(?:bps|basis points)\b| >?\d+ ?(?:bps|basis points)\b)/g,
    " k_hike ",
    ["hike", "increase", "raise"]
  ],
  [/\binterest rates?\b|\brates\b/g, " rate ", ["rate"]],
  [/\bfederal reserve\b|\bfomc\b/g, " fed ", ["federal reserve", "fomc"]],
  // measures written several ways
  [/\bs and p 500\b|\bs ?and ?p\b|\bsp ?500\b/g, " spx ", ["s and p", "sand", "sp"]],
  [/\bdow jones(?: industrial average)?\b/g, " dow ", ["dow jones"]],
  [/\b(?:highest|maximum|max)\b/g, " high ", ["highest", "max"]],
  [/\b(?:lowest|minimum)\b/g, " low ", ["lowest", "minimum"]],
  [/\btemp\b|\btemperatures?\b/g, " temperature ", ["temp"]],
  [/\bjobs? (?:added|growth)\b|\bnonfarm payrolls?\b|\bpayrolls?\b/g, " payroll ", ["job", "payroll"]],
  [/\bconsumer price index\b|\binflation\b/g, " cpi ", ["consumer price", "inflation"]],
  [
    /\b(?:annual|yearly|year[- ]over[- ]year|yoy|12[- ]month)\b|\bfor the year ending\b/g,
    " k_yoy ",
    ["annual", "yearly", "year", "yoy", "12"]
  ],
  // names written several ways
  [/\bu\.?s\.?a?\.?(?= |$)|\bunited states\b/g, " us ", ["us", "u.s", "usa", "united states"]],
  [/\bunited kingdom\b|\bu\.k\.|\bbritain\b|\bgreat britain\b/g, " uk ", ["united kingdom", "u.k.", "britain"]],
  [/\bnew york city\b|\bnyc\b/g, " nyc ", ["new york city", "nyc"]],
  [/\blos angeles\b/g, " la ", ["los angeles"]],
  [/\brfk jr\b\.?|\brobert (?:f\. |f )?kennedy(?: jr\.?)?/g, " rfk ", ["rfk", "kennedy"]],
  [/\bfivethirtyeight\b/g, " 538 ", ["fivethirtyeight"]],
  // U-3 is the headline unemployment rate; U-6 and others stay words of their own
  [/\(?\bu-?3\b\)?/g, " ", ["u-3", "u3"]],
  // who must do it: any one of a group, or every one of it, is not one named member
  [
    /\b(?:any|at least one)(?= (?:[a-z]+ ){0,2}(?:democrats?|republicans?|senators?|members?|countr(?:y|ies)|states?|candidates?|teams?|players?)\b)/g,
    " k_any ",
    ["any", "at least one"]
  ],
  [
    /\b(?:every|all|each)(?= (?:[a-z]+ ){0,2}(?:democrats?|republicans?|senators?|members?|countries|states|candidates|teams|players)\b)/g,
    " k_every ",
    ["every", "all", "each"]
  ],
  [/\bmayorship\b/g, " mayor ", ["mayorship"]],
  [
    /\bout as\b|\bno longer (?:serving )?as\b|\bleaves?\b|\bstep(?:s)? down\b|\bresigns?\b|\bdepart(?:s)?\b/g,
    " leave ",
    ["out as", "no longer", "leave", "step", "resign", "depart"]
  ],
  [/\b(?:enacts?|imposes?|implements?)\b/g, " impose ", ["enact", "impose", "implement"]],
  [/\bmake up\b|\bforms?\b/g, " form ", ["make up", "form"]],
  // a confirmation vote names the office in passing: "vote to confirm X as Secretary of Y" is "vote for X"
  [/\bvote to confirm\b/g, " vote for ", ["vote to confirm"]],
  [
    /\bas (?:the )?(?:[a-z]+ )?(?:secretary|director|attorney general|administrator|ambassador|chair(?:man)?|commissioner|head)\b(?: of (?:the )?(?:(?!by\b|before\b|in\b|on\b|at\b|after\b|until\b|during\b)[a-z]+(?: and)? ?){1,4})?/g,
    " ",
    ["as "]
  ],
  [
    /\b(?:creat(?:e|ed|es|ion)|achiev(?:e|ed|es|ement)|develop(?:s|ed)?)\b(?: of)?/g,
    " achieve ",
    ["creat", "achiev", "develop"]
  ],
  [/\bwins?\b|\bwon\b|\bget\b|\bgets\b|\breceives?\b/g, " win ", ["win", "won", "get", "receive"]]
]

/** Roman numerals that stand for a version or a sequel ("GTA VI"), never the single letters i, v, x. */
const ROMAN: Readonly<Record<string, string>> = {
  ii: "2",
  iii: "3",
  iv: "4",
  vi: "6",
  vii: "7",
  viii: "8",
  ix: "9"
}

/** Adjectives of places, mapped to the place. */
const DEMONYMS: Readonly<Record<string, string>> = {
  german: "germany",
  greenlandic: "greenland",
  polish: "poland",
  romanian: "romania",
  canadian: "canada",
  ecuadorian: "ecuador",
  brazilian: "brazil",
  australian: "australia",
  french: "france",
  british: "uk",
  chinese: "china",
  japanese: "japan",
  mexican: "mexico",
  russian: "russia",
  ukrainian: "ukraine",
  indian: "india",
  israeli: "israel",
  iranian: "iran",
  spanish: "spain",
  italian: "italy",
  korean: "korea",
  turkish: "turkey",
  argentine: "argentina",
  argentinian: "argentina",
  colombian: "colombia",
  chilean: "chile",
  peruvian: "peru",
  dutch: "netherlands",
  swedish: "sweden",
  norwegian: "norway",
  danish: "denmark",
  finnish: "finland",
  irish: "ireland",
  portuguese: "portugal",
  hungarian: "hungary",
  czech: "czechia",
  austrian: "austria",
  swiss: "switzerland",
  belgian: "belgium",
  filipino: "philippines",
  venezuelan: "venezuela",
  democrats: "democrat",
  democratic: "democrat",
  republicans: "republican",
  gop: "republican"
}

/** Crypto assets by ticker and name. */
export const ASSETS: Readonly<Record<string, string>> = {
  btc: "bitcoin",
  bitcoin: "bitcoin",
  eth: "ethereum",
  ether: "ethereum",
  ethereum: "ethereum",
  sol: "solana",
  solana: "solana",
  xrp: "xrp",
  ripple: "xrp",
  doge: "dogecoin",
  dogecoin: "dogecoin",
  bnb: "bnb",
  ada: "cardano",
  cardano: "cardano",
  hype: "hyperliquid",
  hyperliquid: "hyperliquid"
}

/** Commodities and indices whose price questions each venue settles on its own reference. */
export const PRICED = new Set([
  "wti",
  "crude",
  "oil",
  "brent",
  "gold",
  "silver",
  "gasoline",
  "copper",
  "spx",
  "nasdaq",
  "dow",
  "ndx"
])

/** Words that carry no identity of the proposition. */
const STOP = new Set(
  (
    "a an the of in on at by to for from with and or as is are be been being was were will would shall should " +
    "who what which whom whose how many much when where whether this that these those there their its it his her " +
    "they them he she do does did have has had than then if yes no not market resolve resolves resolved according " +
    "per any next new between above below over under more less least most greater fewer higher lower equal " +
    "before after during until through end price close closes settle settlement value level score rate share " +
    "percent percentage total number count amount happen occur official officially announce announc happens " +
    "successfully success reach reaches reached up down week month year day date time today tomorrow et est edt " +
    "pt utc am pm party meeting meetings decision"
  ).split(" ")
)

/** Words kept but weighed little: they say what kind of question it is, not which one. */
export const GENERIC = new Set([
  "win",
  "elect",
  "president",
  "us",
  "vote",
  "trump",
  "donald",
  // verbs of change: a measure rises or increases, the same question either way
  "increas",
  "rise",
  "grow",
  "fall",
  "drop"
])

const AWARD =
  /\bbest ((?:(?:supporting|lead|leading|original|adapted|animated|international|foreign|visual|sound|costume|production|makeup|documentary|short|live action) )*(?:picture|actor|actress|director|screenplay|feature(?: film)?|film|song|score|documentary|cinematography|editing|effects|design|mixing))\b/g

const stems = new Map<string, string>()
/** The stem of a word, remembered: a catalog repeats its words many times. */
const stemOf = (word: string): string => {
  let stem = stems.get(word)
  if (stem === undefined) {
    if (stems.size > 200_000) stems.clear()
    stems.set(word, (stem = stemmer(word)))
  }
  return stem
}

/** Rewrites the phrases that name one thing several ways to one token each. */
export const rewrite = (normalized: string): string => {
  let text = ` ${applyAliases(normalized)} `
  for (const [re, to, hints] of PHRASES) if (hints.some((h) => text.includes(h))) text = text.replace(re, to)
  // an award's category is what is won: "Best Picture" is never "Best Adapted Screenplay"
  if (text.includes("best "))
    text = text.replace(AWARD, (_m, category: string) => ` k_best_${category.replace(/ /g, "_")} `)
  return text
}

/** The canonical tokens of a rewritten text: stop words dropped, the rest mapped and stemmed. */
export const words = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const raw of text.split(/[^a-z0-9_.$%'-]+/)) {
    let word = raw.replace(/^[.'-]+|[.'-]+$/g, "").replace(/'s$/, "")
    if (word === "") continue
    if (/^\d{4}$/.test(word) && word.startsWith("20")) continue
    word = word.replace(/[.'-]/g, "")
    if (word === "" || STOP.has(word)) continue
    if (word.startsWith("k_")) {
      out.push(word)
      continue
    }
    const mapped = ROMAN[word] ?? DEMONYMS[word] ?? ASSETS[word] ?? word
    const stem = /^[a-z]+$/.test(mapped) && mapped.length > 3 ? stemOf(mapped) : mapped
    if (!STOP.has(stem)) out.push(stem)
  }
  return out
}

/** A key token: a competition, a contest or an outcome. Two propositions must name the same ones. */
export const isKey = (token: string): boolean => token.startsWith("k_")
