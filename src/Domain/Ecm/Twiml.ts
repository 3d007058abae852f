/**
 * The TwiML documents the service answers Twilio with (text/xml). Written by hand rather than
 * with the `twilio` package's builder, so the webhook path does not load the SDK; every text and
 * attribute is XML-escaped.
 */

export const escapeXml = (text: string): string =>
  text.replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", "\"": "&quot;", "'": "&apos;" })[c]!)

const document = (verbs: ReadonlyArray<string>) =>
  `<?xml version="1.0" encoding="UTF-8"?><Response>${verbs.join("")}</Response>`

const say = (text: string) => `<Say>${escapeXml(text)}</Say>`

/** Nothing to do: Twilio's acknowledgement. */
export const emptyResponse = (): string => document([])

/** A reply to an inbound SMS. */
export const messageResponse = (text: string): string => document([`<Message>${escapeXml(text)}</Message>`])

/** Connects the call to `number` (E.164) after saying `greeting`. */
export const forwardResponse = (greeting: string, number: string): string =>
  document([say(greeting), `<Dial timeout="25">${escapeXml(number)}</Dial>`])

/** Plays `text` and hangs up. */
export const sayResponse = (text: string): string => document([say(text), "<Hangup/>"])

/**
 * Takes a voicemail: the recording's action and its transcription both post to `callbackUrl`
 * (our recording webhook), which keeps the recording URL and the transcript.
 */
export const voicemailResponse = (greeting: string, callbackUrl: string): string =>
  document([
    say(greeting),
    `<Record maxLength="120" playBeep="true" action="${escapeXml(callbackUrl)}" method="POST" transcribe="true" ` +
    `transcribeCallback="${escapeXml(callbackUrl)}"/>`,
    say("We did not receive a message. Goodbye."),
    "<Hangup/>"
  ])
