/**
 * `npm run outbox [-- --limit N]`: the latest mails, texts, calls and pushes the local outboxes
 * hold (a fresh install sends nothing; it writes them under DATA_DIR/outbox), decoded, with their
 * links and codes listed whole: the invite link of a provider, a confirmation code, a reminder.
 */
import { formatItem, readOutbox } from "./outbox/read.js"

const limitAt = process.argv.indexOf("--limit")
const limit = limitAt === -1 ? 5 : Number(process.argv[limitAt + 1])
if (!Number.isInteger(limit) || limit < 1) {
  console.error("usage: npm run outbox [-- --limit N]  (N ≥ 1; default 5 of each kind)")
  process.exit(2)
}
const dataDir = process.env["DATA_DIR"] || "./.data"

const items = await readOutbox(dataDir, limit)
if (items.length === 0) {
  console.log(`Nothing in ${dataDir}/outbox yet (mail, texts, calls and pushes appear there while SMTP, Twilio and FCM are not configured).`)
} else {
  console.log(items.map(formatItem).join("\n\n"))
}
