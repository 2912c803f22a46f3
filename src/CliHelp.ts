/** The command tree read as plain data, its help pages in the style of git and kubectl, and "did you mean" for commands. */
import type { Command } from "@effect/cli"
import { distance } from "fastest-levenshtein"
import { BUILT_IN_VENUES } from "./Venues/BuiltIn.ts"
import type { VenueRegistration } from "./Venues/Registration.ts"

/** One flag of a command, as its help page shows it. */
export interface FlagSpec {
  readonly name: string
  readonly aliases: ReadonlyArray<string>
  /** What the flag takes (`<text>`, `<n>`, `<file>`, `buy|sell`); empty for a switch. */
  readonly value: string
  readonly description: string
  /** The default shown, when the flag has one worth showing. */
  readonly default: string | undefined
  readonly required: boolean
  readonly repeated: boolean
}

/** One positional argument of a command. */
export interface ArgSpec {
  readonly name: string
  readonly description: string
  readonly optional: boolean
  readonly repeated: boolean
}

/** A command of the tree, with its flags, arguments and subcommands. */
export interface CommandSpec {
  readonly name: string
  /** The words after `crossbook` that name it (empty for `crossbook` itself). */
  readonly path: ReadonlyArray<string>
  readonly description: string
  readonly flags: ReadonlyArray<FlagSpec>
  readonly args: ReadonlyArray<ArgSpec>
  readonly commands: ReadonlyArray<CommandSpec>
}

/** The flags every command takes, added by the command-line library. */
export const GLOBAL_FLAGS: ReadonlyArray<FlagSpec> = [
  flag("help", ["h"], "", "Show this help", undefined),
  flag("version", [], "", "Show the version", undefined),
  flag(
    "log-level",
    [],
    "<level>",
    "Minimum log level: all, trace, debug, info, warning, error, fatal, none",
    undefined
  ),
  flag("completions", [], "<shell>", "Print a completion script for sh, bash, fish or zsh", undefined)
]

function flag(
  name: string,
  aliases: ReadonlyArray<string>,
  value: string,
  description: string,
  fallback: string | undefined
): FlagSpec {
  return { name, aliases, value, description, default: fallback, required: false, repeated: false }
}

/** The words of a help description (the library keeps them as a document of paragraphs and spans). */
const textOf = (doc: unknown): string => {
  if (doc === null || typeof doc !== "object") return ""
  const node = doc as Record<string, unknown>
  if (typeof node["value"] === "string") return node["value"]
  const parts: Array<string> = []
  for (const key of ["value", "left", "right"]) if (key in node) parts.push(textOf(node[key]))
  if (Array.isArray(node["elements"])) parts.push(...node["elements"].map(textOf))
  return parts
    .filter((p) => p !== "")
    .join(" ")
    .trim()
}

/** What a flag or argument's primitive takes, as a placeholder. */
const valueOf = (primitive: Record<string, unknown>): string => {
  switch (primitive["_tag"]) {
    case "Bool":
      return ""
    case "Choice":
      return (primitive["alternatives"] as ReadonlyArray<readonly [string, unknown]>).map(([name]) => name).join("|")
    case "Integer":
      return "<n>"
    case "Float":
      return "<number>"
    case "Path":
      return primitive["pathType"] === "directory" ? "<dir>" : "<file>"
    case "DateTime":
      return "<time>"
    default:
      return "<text>"
  }
}

const shown = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value === "object" && "_tag" in value && (value as { _tag: string })._tag === "None") return undefined
  if (typeof value === "object" && "_tag" in value && (value as { _tag: string })._tag === "Some")
    return shown((value as unknown as { value: unknown }).value)
  if (typeof value === "boolean") return undefined
  return String(value)
}

/** The flags an options tree holds, with what wraps them (a default, a repetition, a fallback) folded in. */
const flagsOf = (
  options: unknown,
  context: { readonly default?: string | undefined; readonly optional: boolean; readonly repeated: boolean }
): Array<FlagSpec> => {
  const node = options as Record<string, unknown>
  switch (node["_tag"]) {
    case "Single": {
      const primitive = node["primitiveType"] as Record<string, unknown>
      const isSwitch = primitive["_tag"] === "Bool"
      return [
        {
          name: node["name"] as string,
          aliases: node["aliases"] as ReadonlyArray<string>,
          value: valueOf(primitive),
          description: textOf(node["description"]),
          default: context.default,
          required: !context.optional && !isSwitch,
          repeated: context.repeated
        }
      ]
    }
    case "WithDefault":
      return flagsOf(node["options"], { ...context, default: shown(node["fallback"]), optional: true })
    case "WithFallback":
      return flagsOf(node["options"], { ...context, optional: true })
    case "Map":
      return flagsOf(node["options"], context)
    case "Both":
    case "OrElse":
      return [...flagsOf(node["left"], context), ...flagsOf(node["right"], context)]
    case "Variadic":
    case "KeyValueMap": {
      const min = node["min"] as { _tag: string; value?: number } | undefined
      const optional = context.optional || min === undefined || min._tag === "None" || min.value === 0
      return flagsOf(node["argumentOption"], { ...context, optional, repeated: true })
    }
    default:
      return []
  }
}

const argsOf = (args: unknown, optional = false, repeated = false): Array<ArgSpec> => {
  const node = args as Record<string, unknown>
  switch (node["_tag"]) {
    case "Single":
      return [{ name: node["name"] as string, description: textOf(node["description"]), optional, repeated }]
    case "WithDefault":
    case "WithFallbackConfig":
      return argsOf(node["args"], true, repeated)
    case "Map":
      return argsOf(node["args"], optional, repeated)
    case "Both":
      return [...argsOf(node["left"], optional, repeated), ...argsOf(node["right"], optional, repeated)]
    case "Variadic":
      return argsOf(node["args"], optional, true)
    default:
      return []
  }
}

const specOfDescriptor = (descriptor: unknown, parent: ReadonlyArray<string>): CommandSpec => {
  const node = descriptor as Record<string, unknown>
  switch (node["_tag"]) {
    case "Standard":
    case "GetUserInput": {
      const name = node["name"] as string
      return {
        name,
        path: [...parent, name].filter((w) => w !== ""),
        description: textOf(node["description"]),
        flags: node["_tag"] === "Standard" ? flagsOf(node["options"], { optional: false, repeated: false }) : [],
        args: node["_tag"] === "Standard" ? argsOf(node["args"]) : [],
        commands: []
      }
    }
    case "Map":
      return specOfDescriptor(node["command"], parent)
    case "Subcommands": {
      const own = specOfDescriptor(node["parent"], parent)
      const children = node["children"] as ReadonlyArray<unknown>
      return { ...own, commands: children.map((child) => specOfDescriptor(child, own.path)) }
    }
    default:
      throw new Error(`unknown command descriptor ${String(node["_tag"])}`)
  }
}

/** The command tree of a command, as data: `crossbook` itself has the empty path. */
export const commandSpec = (command: Command.Command<any, any, any, any>): CommandSpec => {
  const root = specOfDescriptor(command.descriptor, [])
  const rename = (spec: CommandSpec, path: ReadonlyArray<string>): CommandSpec => ({
    ...spec,
    path,
    commands: spec.commands.map((c) => rename(c, [...path, c.name]))
  })
  return rename(root, [])
}

/** The command the words name, as far as they name one, and the words left after it. */
export const resolveCommand = (
  root: CommandSpec,
  words: ReadonlyArray<string>
): { readonly spec: CommandSpec; readonly rest: ReadonlyArray<string> } => {
  let spec = root
  let i = 0
  for (; i < words.length; i++) {
    const next = spec.commands.find((c) => c.name === words[i])
    if (next === undefined) break
    spec = next
  }
  return { spec, rest: words.slice(i) }
}

/** Every command of the tree, the root first. */
export const allCommands = (root: CommandSpec): Array<CommandSpec> => [root, ...root.commands.flatMap(allCommands)]

/** The names close to a mistyped one, closest first: a shared prefix, or a few letters' difference. */
export const suggestions = (word: string, names: ReadonlyArray<string>): Array<string> =>
  names
    .map((name) => ({ name, d: distance(word, name) }))
    .filter(
      ({ name, d }) => d <= Math.max(2, Math.floor(name.length / 3)) || (word.length >= 2 && name.startsWith(word))
    )
    .sort((a, b) => a.d - b.d || (a.name < b.name ? -1 : 1))
    .map(({ name }) => name)

/** Examples shown on a command's help page, by its path: a comment line then the command, or a command alone. */
export const EXAMPLES: Readonly<Record<string, ReadonlyArray<string>>> = {
  "": [
    "# run the server on the embedded sim venue, then ask it who you are",
    "crossbook serve",
    "crossbook me",
    "# place an order and list the live ones",
    "crossbook orders place --market sim:FED-26DEC-T4.00 --side buy --amount 5 --price 0.05",
    "crossbook orders list"
  ],
  serve: ["crossbook serve", "crossbook serve --port 8001 --venues sim", "crossbook serve --env-file kalshi.env"],
  token: ["crossbook token create --name laptop"],
  "token create": ["crossbook token create", "crossbook token create --name ci --json"],
  me: ["crossbook me", "SERVICE_URL=http://127.0.0.1:8001 crossbook me"],
  orders: ["crossbook orders list", "crossbook orders place --market sim:X --side buy --amount 5 --price 0.05"],
  "orders list": [
    "crossbook orders list",
    "crossbook orders list --status all --limit 20",
    "crossbook orders list --json"
  ],
  "orders place": [
    "crossbook orders place --market sim:X --side buy --amount 5 --price 0.05",
    "crossbook orders place --market sim:X --side sell --amount 2 --price 0.97 --tif ioc",
    "crossbook orders place --account sim:paper --market sim:X --side buy --amount 5 --price 0.4"
  ],
  "orders cancel": ["crossbook orders cancel ord_123", "crossbook orders cancel ord_123 --account sim:paper"],
  openapi: ["crossbook openapi > openapi.json", "crossbook openapi --out openapi.json"],
  doctor: ["crossbook doctor", "crossbook doctor --json"],
  match: [
    "crossbook match sim:CPI-26DEC-T0.4",
    "crossbook match --catalog kalshi.jsonl --catalog polymarket.jsonl kalshi:KXU3-25FEB-T3.9"
  ],
  "match eval": ["crossbook match eval --catalog kalshi.jsonl --catalog polymarket.jsonl --pairs pairs.jsonl"],
  data: ["crossbook data serve", "crossbook data invite --name me"],
  "data serve": ["crossbook data serve", "crossbook data serve --port 8101 --sim-venues 2"],
  "data invite": ["crossbook data invite --name me"],
  "data import": ["crossbook data import rec.jsonl"],
  record: ["crossbook record --venue sim --markets sim:X --duration 60"],
  login: ["crossbook login --url http://127.0.0.1:8100 --code ABCD-1234"],
  keys: ["crossbook keys create --name laptop", "crossbook keys list"],
  "keys create": ["crossbook keys create --name laptop"],
  "keys list": ["crossbook keys list", "crossbook keys list --json"],
  "keys revoke": ["crossbook keys revoke key_123"],
  history: [
    "crossbook history book --at 2026-11-24T10:00:30Z sim:X",
    "crossbook history trades --from 2026-11-24T10:00Z --to 2026-11-24T10:05Z sim:X"
  ],
  "history book": [
    "crossbook history book --at 2026-11-24T10:00:30Z sim:X",
    "crossbook history book --json --at 0 sim:X"
  ],
  "history trades": ["crossbook history trades --from 2026-11-24T10:00Z --to 2026-11-24T10:05Z sim:X"],
  "history tape": ["crossbook history tape --from 2026-11-24T10:00Z --to 2026-11-24T10:05Z --out rec.jsonl sim:X"],
  sim: ["crossbook sim generate --seed 7 --markets 2 --duration-s 600 gen.jsonl"],
  "sim generate": [
    "crossbook sim generate --seed 7 --markets 2 --duration-s 600 gen.jsonl",
    "crossbook sim generate --seed 5 --markets 2 --duration-s 600 --venues 2 twins.jsonl"
  ],
  "sim replay": ["crossbook sim replay --orders orders.json --seed 3 --out out tape.jsonl"],
  "sim convert": ["crossbook sim convert --from kalshi kalshi_ws.jsonl kalshi.jsonl"],
  backtest: [
    "crossbook backtest --seed 4 --out bt sim/examples/bracket-maker.ts",
    "crossbook backtest --tape rec.jsonl --seed 4 --out bt sim/examples/bracket-maker.ts"
  ],
  sweep: [
    "crossbook sweep --out sw sweep.json",
    "crossbook sweep --cluster postgres://db-host/sweeps --out sw sweep.json"
  ],
  runner: ["crossbook runner --storage postgres://db-host/sweeps --host 10.0.0.5 --port 34431"]
}

/** How the top-level commands are grouped on `crossbook --help`; a command not named here is listed last. */
const GROUPS: ReadonlyArray<readonly [string, ReadonlyArray<string>]> = [
  ["Run a server", ["serve", "doctor", "token", "openapi"]],
  ["Talk to a running server", ["me", "orders"]],
  ["Simulate and test strategies", ["sim", "backtest", "sweep", "runner"]],
  ["Markets across venues and their history", ["match", "data", "record", "login", "keys", "history"]]
]

/** The widest a help page's line may be. */
export const HELP_WIDTH = 100

/** A command's column in a list is 16 wide, after 2 spaces and before 3: its summary has the rest. */
const SUMMARY_WIDTH = HELP_WIDTH - 21

const bold = (text: string, colour: boolean) => (colour ? `\x1b[1m${text}\x1b[22m` : text)

/** Words wrapped to `width`, each line after the first indented by `indent`. */
const wrap = (text: string, width: number, indent: number): Array<string> => {
  const lines: Array<string> = []
  let line = ""
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    if (line === "") line = word
    else if (line.length + 1 + word.length <= width) line += ` ${word}`
    else {
      lines.push(line)
      line = word
    }
  }
  if (line !== "") lines.push(line)
  return lines.map((l, i) => (i === 0 ? l : " ".repeat(indent) + l))
}

/** Two columns: a left cell padded to the widest (at most `maxLeft`), then its text wrapped to the page. */
const table = (rows: ReadonlyArray<readonly [string, string]>, maxLeft = 30, minLeft = 0): Array<string> => {
  const left = Math.min(maxLeft, Math.max(minLeft, ...rows.map(([l]) => l.length)))
  const column = 2 + left + 3
  return rows.flatMap(([l, r]) => {
    const text = wrap(r, HELP_WIDTH - column, column)
    if (l.length > left) return [`  ${l}`, ...(text.length > 0 ? [" ".repeat(column) + text.join("\n")] : [])]
    return [`  ${l.padEnd(left)}   ${text.join("\n")}`.trimEnd()]
  })
}

const flagCell = (f: FlagSpec): string => {
  const names = [...f.aliases.map((a) => `-${a}`), `--${f.name}`].join(", ")
  const value = f.value === "" ? "" : ` ${f.value}`
  return `${f.aliases.length === 0 ? "    " : ""}${names}${value}`
}

const flagText = (f: FlagSpec): string => {
  const notes = [
    f.required ? "required" : undefined,
    f.repeated ? "repeatable" : undefined,
    f.default !== undefined && f.default !== "" ? `default ${f.default}` : undefined
  ].filter((n) => n !== undefined)
  const description = f.description === "" ? "" : f.description
  return notes.length === 0 ? description : `${description} (${notes.join("; ")})`.trim()
}

/** An argument as usage shows it: `<ID>`. */
const argName = (a: ArgSpec): string => `<${a.name.replace(/^<|>$/g, "")}>`

const usageLine = (spec: CommandSpec): string => {
  const words = ["crossbook", ...spec.path]
  const required = spec.flags.filter((f) => f.required).map((f) => `--${f.name} ${f.value}`.trim())
  const args = spec.args.map((a) => {
    const name = `${argName(a)}${a.repeated ? "..." : ""}`
    return a.optional ? `[${name}]` : name
  })
  const parts = [...words]
  if (spec.commands.length > 0 && spec.flags.length === 0 && spec.args.length === 0) parts.push("<command>")
  parts.push(...required)
  if (spec.flags.some((f) => !f.required) || spec.flags.length === 0) parts.push("[flags]")
  parts.push(...args)
  return wrap(parts.join(" "), HELP_WIDTH - 2, 4).join("\n")
}

/** The one line a command shows in its parent's list: its description's first clause, without an aside. */
export const summaryOf = (description: string, width = SUMMARY_WIDTH): string => {
  const first = description.split(/(?<=[a-z)`])[:;] |\. /)[0] ?? description
  if (first.length <= width) return first
  const bare = first.replace(/\s*\([^)]*\)/g, "")
  return bare.length <= width ? bare : `${bare.slice(0, width - 1).replace(/\s+\S*$/, "")}…`
}

/** The pages that list the venues a server can serve, each with its settings. */
const VENUE_PAGES: ReadonlySet<string> = new Set(["serve"])

/** The venues as a help page lists them: id, what it is, the environment variables it reads. */
const venueRows = (venues: ReadonlyArray<VenueRegistration>): Array<readonly [string, string]> =>
  venues.map((v) => {
    const names = v.settings.variables
    return [v.id, names.length === 0 ? v.description : `${v.description}. Settings: ${names.join(", ")}`] as const
  })

/**
 * The help page of a command: description, usage, commands (grouped on the root), flags, the venues (on `serve`'s,
 * from their registrations: the built-in ones unless others are given), examples.
 */
export const renderHelp = (
  root: CommandSpec,
  spec: CommandSpec,
  colour: boolean,
  venues: ReadonlyArray<VenueRegistration> = BUILT_IN_VENUES
): string => {
  const out: Array<string> = []
  const name = ["crossbook", ...spec.path].join(" ")
  out.push(...wrap(spec.path.length === 0 ? `${name}: ${spec.description}` : spec.description, HELP_WIDTH, 0), "")
  out.push(bold("Usage:", colour), `  ${usageLine(spec)}`, "")
  if (spec.commands.length > 0) {
    const nameColumn = Math.min(16, Math.max(...spec.commands.map((c) => c.name.length)))
    const rows = (commands: ReadonlyArray<CommandSpec>) =>
      table(
        commands.map((c) => [c.name, summaryOf(c.description)] as const),
        nameColumn,
        nameColumn
      )
    if (spec.path.length === 0) {
      const named = new Set(GROUPS.flatMap(([, names]) => names))
      for (const [title, names] of GROUPS) {
        const members = names.flatMap((n) => spec.commands.filter((c) => c.name === n))
        if (members.length > 0) out.push(bold(`${title}:`, colour), ...rows(members), "")
      }
      const others = spec.commands.filter((c) => !named.has(c.name))
      if (others.length > 0) out.push(bold("Other commands:", colour), ...rows(others), "")
    } else {
      out.push(bold("Commands:", colour), ...rows(spec.commands), "")
    }
  }
  const flagColumn = Math.min(30, Math.max(...[...spec.flags, ...GLOBAL_FLAGS].map((f) => flagCell(f).length)))
  const flagRows = (flags: ReadonlyArray<FlagSpec>) =>
    table(
      flags.map((f) => [flagCell(f), flagText(f)] as const),
      flagColumn,
      flagColumn
    )
  if (spec.args.length > 0) {
    out.push(bold("Arguments:", colour), ...table(spec.args.map((a) => [argName(a), a.description] as const)), "")
  }
  if (spec.flags.length > 0) out.push(bold("Flags:", colour), ...flagRows(spec.flags), "")
  out.push(bold("Global flags:", colour), ...flagRows(GLOBAL_FLAGS), "")
  if (VENUE_PAGES.has(spec.path.join(" ")) && venues.length > 0) {
    out.push(bold("Venues:", colour), ...table(venueRows(venues), 12, 12), "")
  }
  const examples = EXAMPLES[spec.path.join(" ")] ?? []
  if (examples.length > 0) {
    out.push(bold("Examples:", colour), ...examples.map((e) => `  ${e}`), "")
  }
  if (spec.commands.length > 0) {
    out.push(`Run '${name} <command> --help' for a command's flags.`)
  } else if (spec.path.length > 0 && root.commands.length > 0) {
    out.push(`Run 'crossbook --help' for every command.`)
  }
  return out.join("\n").replace(/\n+$/, "") + "\n"
}

/** Every help page by path (`""`, `"serve"`, `"orders place"`, …). */
export const helpPages = (
  root: CommandSpec,
  colour: boolean,
  venues: ReadonlyArray<VenueRegistration> = BUILT_IN_VENUES
): Record<string, string> =>
  Object.fromEntries(allCommands(root).map((spec) => [spec.path.join(" "), renderHelp(root, spec, colour, venues)]))

/**
 * A command line that names a command group with a word that is none of its commands: the message to print
 * (with the group's own commands and the nearest names), or undefined when the words are fine. A group that takes
 * arguments of its own (`match ID`) is left to the parser.
 */
export const unknownCommand = (root: CommandSpec, argv: ReadonlyArray<string>): string | undefined => {
  let spec = root
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i]!
    if (word === "--") return undefined
    if (word.startsWith("-")) {
      const name = word.replace(/^-+/, "").split("=")[0]!
      const known = [...spec.flags, ...GLOBAL_FLAGS].find((f) => f.name === name || f.aliases.includes(name))
      if (known !== undefined && known.value !== "" && !word.includes("=")) i++
      continue
    }
    const next = spec.commands.find((c) => c.name === word)
    if (next !== undefined) {
      spec = next
      continue
    }
    if (spec.commands.length === 0 || spec.args.length > 0) return undefined
    const where = ["crossbook", ...spec.path].join(" ")
    const near = suggestions(
      word,
      spec.commands.map((c) => c.name)
    )
    const lines = [`crossbook: unknown command "${word}" for "${where}"`]
    if (near.length > 0) lines.push("", "Did you mean this?", ...near.slice(0, 3).map((n) => `  ${n}`))
    lines.push(
      "",
      "Commands:",
      ...table(
        spec.commands.map((c) => [c.name, summaryOf(c.description)] as const),
        16
      )
    )
    lines.push("", `Run '${where} --help' for usage.`)
    return lines.join("\n") + "\n"
  }
  return undefined
}

/**
 * What is wrong with a `crossbook` command line (the words after `crossbook`): commands and flags it names that the
 * tree does not have. Empty when every word is known; arguments and flag values are not judged.
 */
export const commandLineProblems = (root: CommandSpec, words: ReadonlyArray<string>): Array<string> => {
  const problems: Array<string> = []
  let spec = root
  let positional = false
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!
    if (word === "--") break
    const where = ["crossbook", ...spec.path].join(" ")
    if (word.startsWith("-") && word.length > 1) {
      const name = word.replace(/^-+/, "").split("=")[0]!
      const known = [...spec.flags, ...GLOBAL_FLAGS].find((f) => f.name === name || f.aliases.includes(name))
      if (known === undefined) {
        problems.push(`${where} has no flag ${word.split("=")[0]}`)
        // What follows an unknown flag may be its value: it is not judged.
        if (!word.includes("=") && !(words[i + 1] ?? "-").startsWith("-")) i++
      } else if (known.value !== "" && !word.includes("=")) i++
      continue
    }
    const next = positional ? undefined : spec.commands.find((c) => c.name === word)
    if (next !== undefined) {
      spec = next
      continue
    }
    if (spec.args.length === 0) problems.push(`${where} has no command ${word}`)
    positional = true
  }
  return problems
}
