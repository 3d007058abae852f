/**
 * Reads the local outboxes a fresh install writes instead of sending (mail as `.eml` files,
 * texts/calls and pushes as JSON lines under DATA_DIR/outbox) and decodes them for a person:
 * a mail's quoted-printable or base64 body comes back as plain text, and the links and one-time
 * codes it carries are listed whole (a grep of the raw `.eml` finds soft line breaks and `=3D`).
 */
import { simpleParser } from "mailparser"
import { readdir, readFile } from "node:fs/promises"
import * as path from "node:path"

export interface OutboxMail {
  readonly kind: "mail"
  readonly file: string
  readonly date: string | undefined
  readonly to: string
  readonly subject: string
  readonly text: string
  readonly links: ReadonlyArray<string>
  readonly codes: ReadonlyArray<string>
}

export interface OutboxLine {
  readonly kind: "sms" | "call" | "push"
  readonly date: string | undefined
  readonly to: string
  readonly text: string
  readonly links: ReadonlyArray<string>
  readonly codes: ReadonlyArray<string>
}

export type OutboxItem = OutboxMail | OutboxLine

const linkPattern = /https?:\/\/[^\s<>"')\]]+/g
/** The API's one-time codes are 6 digits standing alone (not part of a number, a date or a link). */
const codePattern = /(?<![\d/:-]|\d\.)\b\d{6}\b(?![\d/:-]|\.\d)/g

const linksIn = (text: string) => [...new Set(text.match(linkPattern) ?? [])]
const codesIn = (text: string) => [...new Set(text.replace(linkPattern, " ").match(codePattern) ?? [])]

const newestFiles = async (dir: string, limit: number) => {
  const names = await readdir(dir).catch(() => [] as Array<string>)
  // Outbox file names start with a sortable UTC stamp.
  return names.filter((name) => name.endsWith(".eml")).sort().slice(-limit).map((name) => path.join(dir, name))
}

const readMail = async (file: string): Promise<OutboxMail> => {
  const parsed = await simpleParser(await readFile(file))
  const to = [parsed.to ?? []].flat().map((address) => address.text).join(", ")
  const text = parsed.text ?? ""
  const html = typeof parsed.html === "string" ? parsed.html : ""
  return {
    kind: "mail",
    file,
    date: parsed.date?.toISOString(),
    to,
    subject: parsed.subject ?? "",
    text,
    links: [...new Set([...linksIn(text), ...linksIn(html.replace(/&amp;/g, "&"))])],
    codes: codesIn(text)
  }
}

const jsonLines = async (file: string, limit: number): Promise<ReadonlyArray<Record<string, unknown>>> => {
  const text = await readFile(file, "utf8").catch(() => "")
  return text.split("\n").filter((line) => line.trim() !== "").slice(-limit).flatMap((line) => {
    try {
      return [JSON.parse(line) as Record<string, unknown>]
    } catch {
      return [] // a line cut by a crash mid-write
    }
  })
}

const field = (record: Record<string, unknown>, key: string) => {
  const value = record[key]
  return typeof value === "string" ? value : ""
}

const telephonyItem = (record: Record<string, unknown>): OutboxLine => {
  const text = field(record, "body")
  return {
    kind: field(record, "kind") === "call" ? "call" : "sms",
    date: field(record, "created_at") || undefined,
    to: field(record, "to"),
    text,
    links: linksIn(text),
    codes: codesIn(text)
  }
}

const pushItem = (record: Record<string, unknown>): OutboxLine => {
  const text = [field(record, "title"), field(record, "body")].filter((part) => part !== "").join(" — ")
  return {
    kind: "push",
    date: field(record, "created_at") || undefined,
    to: `device …${field(record, "token")}`,
    text,
    links: linksIn(text),
    codes: codesIn(text)
  }
}

/** The newest `limit` items of each outbox, oldest first within the merged list. */
export const readOutbox = async (dataDir: string, limit: number): Promise<ReadonlyArray<OutboxItem>> => {
  const outbox = path.join(dataDir, "outbox")
  const mails = await Promise.all((await newestFiles(path.join(outbox, "mail"), limit)).map(readMail))
  const texts = (await jsonLines(path.join(outbox, "telephony.jsonl"), limit)).map(telephonyItem)
  const pushes = (await jsonLines(path.join(outbox, "push.jsonl"), limit)).map(pushItem)
  return [...mails, ...texts, ...pushes].sort((a, b) => (a.date ?? "").localeCompare(b.date ?? ""))
}

export const formatItem = (item: OutboxItem): string => {
  const heading = item.kind === "mail"
    ? `✉ mail to ${item.to} — ${item.subject}`
    : `${item.kind === "push" ? "🔔 push" : item.kind === "call" ? "☎ call" : "💬 text"} to ${item.to}`
  const lines = [`${heading}${item.date === undefined ? "" : `  (${item.date})`}`]
  if (item.text.trim() !== "") lines.push(...item.text.trim().split("\n").map((line) => `  ${line}`))
  for (const link of item.links) lines.push(`  link: ${link}`)
  for (const code of item.codes) lines.push(`  code: ${code}`)
  if (item.kind === "mail") lines.push(`  file: ${item.file}`)
  return lines.join("\n")
}
