/**
 * ECM communications (ECM §2.9, §3.3, §3.4): the pure rules of SMS and calls — the status
 * machines that status callbacks go through, SMS opt-out keywords, message segments and call
 * minutes. docs/communications.md tells the whole flow.
 */
import { Schema } from "effect"

/** §3.3 and the statuses Twilio adds (`accepted`, `scheduled`, `receiving`, `received`, `read`, `canceled`). */
export const smsStatuses = [
  "accepted", "scheduled", "queued", "sending", "sent", "delivered", "undelivered", "failed", "canceled", "read",
  "receiving", "received"
] as const
export const SmsStatus = Schema.Literal(...smsStatuses)
export type SmsStatus = typeof SmsStatus.Type

/** §3.4 and Twilio's `initiated`. */
export const callStatuses = ["queued", "initiated", "ringing", "in-progress", "completed", "busy", "no-answer", "failed", "canceled"] as const
export const CallStatus = Schema.Literal(...callStatuses)
export type CallStatus = typeof CallStatus.Type

export const Direction = Schema.Literal("outbound", "inbound")
export type Direction = typeof Direction.Type

/**
 * How far along a message is. A status callback moves a record only forwards: Twilio sends
 * callbacks concurrently and retries them, so a late `sent` can arrive after `delivered`.
 */
const smsRank: Record<SmsStatus, number> = {
  accepted: 0, scheduled: 0, queued: 1, sending: 2, sent: 3, receiving: 3, received: 4,
  delivered: 4, undelivered: 4, failed: 4, canceled: 4, read: 5
}
/** Final: nothing moves a message out of these (`delivered` may still become `read`). */
const smsFinal: ReadonlySet<SmsStatus> = new Set(["undelivered", "failed", "canceled", "read", "received"])

const callRank: Record<CallStatus, number> = {
  queued: 0, initiated: 1, ringing: 2, "in-progress": 3, completed: 4, busy: 4, "no-answer": 4, failed: 4, canceled: 4
}
const callFinal: ReadonlySet<CallStatus> = new Set(["completed", "busy", "no-answer", "failed", "canceled"])

/** Whether a status callback saying `to` moves a message now at `from` (never backwards, finals stay). */
export const smsMoves = (from: SmsStatus, to: SmsStatus): boolean => !smsFinal.has(from) && smsRank[to] > smsRank[from]

export const callMoves = (from: CallStatus, to: CallStatus): boolean => !callFinal.has(from) && callRank[to] > callRank[from]

/** Statuses from which the status machine may still move: what an SQL guard lists. */
export const smsStatusesBefore = (to: SmsStatus): ReadonlyArray<SmsStatus> => smsStatuses.filter((from) => smsMoves(from, to))
export const callStatusesBefore = (to: CallStatus): ReadonlyArray<CallStatus> => callStatuses.filter((from) => callMoves(from, to))

/** Outcomes: the activity is complete when the message arrived or the call was answered. */
export const smsSucceeded = (status: SmsStatus) => status === "delivered" || status === "read"
export const callSucceeded = (status: CallStatus) => status === "completed"

/**
 * A call called off before anyone answered (Twilio's `canceled`: hung up by us while queued or
 * ringing): it did not happen, so its activity is cancelled and it counts as nothing
 * (docs/prtf.md). `no-answer`, `busy` and `failed` are attempts that did not connect.
 */
export const callCalledOff = (status: CallStatus) => status === "canceled"

/** Outcomes that leave the patient unreached: a follow-up task asks to verify the contact details. */
export const smsFailed = (status: SmsStatus) => status === "failed" || status === "undelivered"
export const callFailed = (status: CallStatus) => status === "failed" || status === "no-answer" || status === "busy"

/** Twilio's and the carriers' opt-out and opt-in keywords (whole message, any case). */
export const optOutKeywords = ["STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT"] as const
export const optInKeywords = ["START", "UNSTOP"] as const

export type OptChange = "opt_out" | "opt_in" | null

/** What an inbound message does to the sender's SMS subscription. */
export const optChangeOf = (body: string): OptChange => {
  const word = body.trim().replace(/[.!]+$/, "").toUpperCase()
  if ((optOutKeywords as ReadonlyArray<string>).includes(word)) return "opt_out"
  if ((optInKeywords as ReadonlyArray<string>).includes(word)) return "opt_in"
  return null
}

/** Longest SMS body accepted (Twilio refuses longer ones). */
export const maxSmsLength = 1600

/** GSM 03.38 basic set and its extension (each extension character takes two septets). */
const gsmBasic = "@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !\"#¤%&'()*+,-./0123456789:;<=>?¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà"
const gsmExtension = "^{}\\[~]|€\f"

/**
 * Segments the message is sent in: GSM-7 bodies take 160 characters in one segment and 153 per
 * segment beyond; anything else is UCS-2, 70 and 67 (counted in UTF-16 units, as carriers do).
 */
export const smsSegments = (body: string): number => {
  let septets = 0
  let gsm = true
  for (const char of body) {
    if (gsmBasic.includes(char)) septets += 1
    else if (gsmExtension.includes(char)) septets += 2
    else {
      gsm = false
      break
    }
  }
  if (gsm) return septets <= 160 ? 1 : Math.ceil(septets / 153)
  const units = body.length
  return units <= 70 ? 1 : Math.ceil(units / 67)
}

/** A call's duration in whole minutes, rounded up (an answered 10-second call is 1 minute). */
export const callMinutes = (seconds: number): number => Math.ceil(Math.max(0, seconds) / 60)
