/** Reading the project's Markdown pages: their files, links, headings' anchors, command blocks and `crossbook` lines. */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"

export const ROOT = join(import.meta.dirname, "../..")

/** README.md, CHANGELOG.md and every page under docs/, as paths relative to the project. */
export const markdownFiles = (): Array<string> => {
  const walk = (dir: string): Array<string> =>
    readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? walk(join(dir, entry.name))
        : entry.name.endsWith(".md")
          ? [relative(ROOT, join(ROOT, dir, entry.name))]
          : []
    )
  return ["README.md", "CHANGELOG.md", ...walk("docs")]
}

/** A fenced block: its language (empty when none) and its text. */
export interface Block {
  readonly lang: string
  readonly text: string
}

export const blocks = (markdown: string): Array<Block> =>
  [...markdown.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, text: m[2]! }))

/** The text outside fenced blocks (where links are read). */
const prose = (markdown: string): string => markdown.replace(/^```[\w-]*\n[\s\S]*?^```$/gm, "")

/** Every link target of a page, outside code. */
export const links = (markdown: string): Array<string> =>
  [
    ...prose(markdown)
      .replace(/`[^`\n]*`/g, "")
      .matchAll(/\]\(([^)\s]+)\)/g)
  ].map((m) => m[1]!)

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens. */
export const anchorOf = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-")

export const anchors = (markdown: string): Set<string> =>
  new Set([...prose(markdown).matchAll(/^#{1,6} (.+)$/gm)].map((m) => anchorOf(m[1]!)))

/** The languages whose blocks are commands to run. */
export const SHELL = new Set(["sh", "bash", "shell", "console", ""])

/** Shell words of a line, quotes removed, up to a comment; operators (`;`, `&&`, `|`, `$(`, `)`, `>`, `&`) kept as words. */
export const shellWords = (line: string): Array<string> => {
  const words: Array<string> = []
  let word = ""
  let quote: string | undefined
  let started = false
  const end = () => {
    if (started) words.push(word)
    word = ""
    started = false
  }
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!
    if (quote !== undefined) {
      if (c === quote) quote = undefined
      else if (c === "\\" && quote === '"' && i + 1 < line.length) word += line[++i]
      else word += c
      continue
    }
    if (c === "'" || c === '"') {
      quote = c
      started = true
    } else if (c === "\\" && i + 1 < line.length) {
      word += line[++i]
      started = true
    } else if (/\s/.test(c)) end()
    else if (c === "#" && !started) break
    else if (c === "$" && line[i + 1] === "(") {
      end()
      words.push("$(")
      i++
    } else if ("|&;<>()".includes(c)) {
      end()
      let op = c
      while (i + 1 < line.length && "|&<>".includes(line[i + 1]!) && op.length < 2) op += line[++i]
      words.push(op)
    } else {
      word += c
      started = true
    }
  }
  end()
  return words
}

const OPERATORS = new Set([";", "&&", "||", "|", "&", "$(", "(", ")", ">", ">>", "<", "2>"])

/**
 * The `crossbook` command lines of a block: the words after `crossbook` (run as `npx crossbook`, `crossbook`, or after
 * variable assignments), up to the next operator. Continued lines (`\` at the end) are joined first.
 */
export const crossbookLines = (block: string): Array<Array<string>> => {
  const lines = block.replace(/\\\n/g, " ").split("\n")
  const found: Array<Array<string>> = []
  for (const raw of lines) {
    const line = raw.replace(/^\$ /, "")
    const words = shellWords(line)
    let atCommand = true
    for (let i = 0; i < words.length; i++) {
      const word = words[i]!
      if (OPERATORS.has(word)) {
        atCommand = true
        continue
      }
      if (!atCommand) continue
      if (/^[A-Z_][A-Z0-9_]*=/.test(word) || word === "npx") continue
      if (word === "crossbook") {
        const rest: Array<string> = []
        for (let j = i + 1; j < words.length && !OPERATORS.has(words[j]!); j++) rest.push(words[j]!)
        found.push(rest)
      }
      atCommand = false
    }
  }
  return found
}

export const read = (file: string): string => readFileSync(join(ROOT, file), "utf8")
