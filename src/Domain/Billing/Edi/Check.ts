/**
 * A structural checker for 837P interchanges, written against the X12 rules, not against our
 * generator: it reads the delimiters from the ISA, splits the text itself and checks the envelope
 * (fixed-width ISA, control numbers, counts), the hierarchy (HL parents and child codes), the
 * loops each level needs, the claims (CLM02 = Σ SV102, HI qualifiers and count, diagnosis
 * pointers), NPIs (Luhn with 80840) and the text (upper case). The generator runs it over every
 * batch before storing one; tests run it over everything they generate.
 */
import { isValidNpi } from "../../Providers/Npi.js"

export interface EdiCounts {
  readonly segments: number
  readonly groups: number
  readonly transactions: number
  /** HL levels: 20 billing provider (2000A), 22 subscriber (2000B), 23 patient (2000C). */
  readonly billingProviders: number
  readonly subscribers: number
  readonly patients: number
  /** 2300 loops (CLM) and 2400 loops (LX). */
  readonly claims: number
  readonly serviceLines: number
  readonly renderingProviders: number
}

export interface EdiCheck {
  readonly problems: ReadonlyArray<string>
  readonly counts: EdiCounts
}

export const claimFilingIndicators = ["11", "12", "13", "14", "15", "16", "17", "AM", "BL", "CH", "CI", "DS", "FI", "HM", "LM", "MA", "MB", "MC", "OF", "TV", "VA", "WC", "ZZ"] as const

const toCents = (text: string): number | undefined => {
  if (!/^-?\d+(?:\.\d{1,2})?$/.test(text)) return undefined
  const [whole, fraction = ""] = text.replace("-", "").split(".")
  const cents = Number(whole) * 100 + Number(fraction.padEnd(2, "0"))
  return text.startsWith("-") ? -cents : cents
}

/** Splits an interchange into segments of elements, with the delimiters its ISA declares. */
export const parseInterchange = (text: string) => {
  if (!text.startsWith("ISA") || text.length < 106) return undefined
  const element = text[3]!
  const component = text[104]!
  const terminator = text[105]!
  const segments = text.split(terminator).map((s) => s.replace(/^[\r\n]+/, "")).filter((s) => s.length > 0).map((s) => s.split(element))
  return { element, component, terminator, segments }
}

export const checkInterchange = (text: string): EdiCheck => {
  const problems: Array<string> = []
  const problem = (message: string) => problems.push(message)
  const counts = { segments: 0, groups: 0, transactions: 0, billingProviders: 0, subscribers: 0, patients: 0, claims: 0, serviceLines: 0, renderingProviders: 0 }
  const parsed = parseInterchange(text)
  if (parsed === undefined) return { problems: ["not an interchange: no ISA of 106 characters"], counts }
  const { component, segments, terminator } = parsed
  counts.segments = segments.length

  // Envelope.
  const isaText = text.slice(0, text.indexOf(terminator) + 1)
  if (isaText.length !== 106) problem(`ISA is ${isaText.length} characters with its terminator, not 106`)
  const isa = segments[0]!
  if (isa.length !== 17) problem(`ISA has ${isa.length - 1} elements, not 16`)
  if (isa[6]?.length !== 15 || isa[8]?.length !== 15) problem("ISA06 and ISA08 are padded to 15 characters")
  if (isa[2]?.length !== 10 || isa[4]?.length !== 10) problem("ISA02 and ISA04 are 10 characters")
  if (!/^\d{9}$/.test(isa[13] ?? "")) problem("ISA13 is a 9-digit control number")
  if (isa[12] !== "00501") problem("ISA12 is 00501")
  if (isa[11] !== "^") problem("ISA11 (repetition separator) is ^")
  const iea = segments[segments.length - 1]!
  if (iea[0] !== "IEA") problem("the interchange ends with IEA")
  if (iea[2] !== isa[13]) problem("IEA02 equals ISA13")

  let gsCount = 0
  let gsControl: string | undefined
  let stInGroup = 0
  let stIndex = -1
  let stControl: string | undefined
  const stControls = new Set<string>()
  // Hierarchy within the current transaction set.
  let hls = new Map<string, { level: string; parent: string; childCode: string; children: number; sbr02?: string }>()
  let currentHl: string | undefined
  // The current claim, for CLM02 = Σ SV102 and pointers.
  let claim: { id: string; total: number | undefined; lines: number; sum: number; codes: number } | undefined
  const closeClaim = () => {
    if (claim === undefined) return
    if (claim.lines === 0) problem(`claim ${claim.id} has no service line`)
    if (claim.total !== claim.sum) problem(`claim ${claim.id}: CLM02 ${claim.total} ≠ Σ SV102 ${claim.sum} (cents)`)
    claim = undefined
  }
  const closeTransaction = () => {
    closeClaim()
    for (const [id, hl] of hls) {
      const expected = hl.children > 0 ? "1" : "0"
      if (hl.childCode !== expected) problem(`HL ${id}: HL04 is ${hl.childCode} but it has ${hl.children} children`)
      if (hl.level === "22") {
        if (hl.sbr02 === "18" && hl.children > 0) problem(`HL ${id}: SBR02 18 (patient is the subscriber) with a 2000C below`)
        if (hl.sbr02 !== "18" && hl.children === 0) problem(`HL ${id}: SBR02 is not 18 but there is no 2000C patient loop`)
      }
    }
    hls = new Map()
  }
  const next = (i: number, id: string) => segments[i + 1]?.[0] === id

  for (let i = 0; i < segments.length; i++) {
    const s = segments[i]!
    const id = s[0]!
    if (i > 0 && id !== "ISA" && s.slice(1).some((e) => /[a-z]/.test(e))) problem(`${id} at segment ${i + 1} holds lower-case text`)
    if (id !== "ISA" && s.slice(1).some((e) => e.includes("~") || e.includes("^"))) problem(`${id} at segment ${i + 1} holds a delimiter`)
    for (let e = s.length - 1; e > 0 && id !== "ISA"; e--) {
      if (s[e] === "") {
        problem(`${id} at segment ${i + 1} ends with an empty element`)
        break
      } else break
    }
    switch (id) {
      case "GS":
        gsCount++
        gsControl = s[6]
        stInGroup = 0
        if (s[8] !== "005010X222A1") problem("GS08 is 005010X222A1")
        break
      case "GE":
        if (s[2] !== gsControl) problem("GE02 equals GS06")
        if (s[1] !== String(stInGroup)) problem(`GE01 is ${s[1]}, the group has ${stInGroup} transaction sets`)
        break
      case "ST":
        stInGroup++
        counts.transactions++
        stIndex = i
        stControl = s[2]
        if (stControl !== undefined && stControls.has(stControl)) problem(`ST02 ${stControl} repeats`)
        if (stControl !== undefined) stControls.add(stControl)
        if (s[1] !== "837" || s[3] !== "005010X222A1") problem("ST is 837 of 005010X222A1")
        if (!next(i, "BHT")) problem("BHT follows ST")
        break
      case "SE": {
        closeTransaction()
        const count = i - stIndex + 1
        if (s[1] !== String(count)) problem(`SE01 is ${s[1]}, ST through SE is ${count} segments`)
        if (s[2] !== stControl) problem("SE02 equals ST02")
        break
      }
      case "NM1": {
        const entity = s[1]
        if (s[8] === "XX" && !isValidNpi(s[9] ?? "")) problem(`NM1*${entity}: NPI ${s[9]} fails the Luhn check`)
        if ((s[3] ?? "") === "") problem(`NM1*${entity} at segment ${i + 1} has no name (NM103)`)
        if (s[2] === "1" && (s[4] ?? "") === "" && entity !== "85") problem(`NM1*${entity} at segment ${i + 1}: a person needs a first name (NM104)`)
        if (entity === "41" && !next(i, "PER")) problem("1000A submitter NM1*41 is followed by PER")
        if (entity === "85") {
          if (s[8] !== "XX") problem("2010AA NM1*85 carries the NPI (XX)")
          if (!next(i, "N3") || segments[i + 2]?.[0] !== "N4") problem("2010AA has N3 and N4")
          const ref = segments.slice(i + 1, i + 5).find((x) => x[0] === "REF")
          if (ref?.[1] !== "EI" || !/^\d{9}$/.test(ref[2] ?? "")) problem("2010AA has REF*EI with a 9-digit tax id")
        }
        if (entity === "IL") {
          const loop = segments.slice(i + 1, i + 5).map((x) => x[0])
          if (!loop.includes("DMG")) problem("2010BA subscriber has DMG")
        }
        if (entity === "QC") {
          const loop = segments.slice(i + 1, i + 4).map((x) => x[0])
          if (loop.join(",") !== "N3,N4,DMG") problem("2010CA patient has N3, N4 and DMG")
        }
        if (entity === "82") counts.renderingProviders++
        break
      }
      case "HL": {
        closeClaim()
        const [, hlId = "", parent = "", level = "", childCode = ""] = s
        if (hls.has(hlId)) problem(`HL ${hlId} repeats`)
        if (String(hls.size + 1) !== hlId) problem(`HL01 ${hlId} is not the next number`)
        if (level === "20") {
          counts.billingProviders++
          if (parent !== "") problem("2000A has no parent")
        } else {
          const parentHl = hls.get(parent)
          const expectedParent = level === "22" ? "20" : level === "23" ? "22" : undefined
          if (expectedParent === undefined) problem(`HL ${hlId}: unknown level ${level}`)
          else if (parentHl?.level !== expectedParent) problem(`HL ${hlId} (level ${level}) has parent ${parent}, not a level ${expectedParent}`)
          if (parentHl !== undefined) parentHl.children++
          if (level === "22") {
            counts.subscribers++
            if (!next(i, "SBR")) problem(`HL ${hlId}: 2000B starts with SBR`)
          }
          if (level === "23") {
            counts.patients++
            if (!next(i, "PAT")) problem(`HL ${hlId}: 2000C starts with PAT`)
            if (!["19", "01", "G8"].includes(segments[i + 1]?.[1] ?? "")) problem(`HL ${hlId}: PAT01 is a relationship code`)
            if (segments[i + 2]?.[0] !== "NM1" || segments[i + 2]?.[1] !== "QC") problem(`HL ${hlId}: 2010CA NM1*QC follows PAT`)
          }
        }
        hls.set(hlId, { level, parent, childCode, children: 0 })
        currentHl = hlId
        break
      }
      case "SBR": {
        const hl = currentHl === undefined ? undefined : hls.get(currentHl)
        if (hl?.level !== "22") problem("SBR outside a 2000B")
        else hl.sbr02 = s[2] ?? ""
        if (!(claimFilingIndicators as ReadonlyArray<string>).includes(s[9] ?? "")) problem(`SBR09 ${s[9]} is not a claim filing indicator`)
        const payer = segments.slice(i + 1, i + 8).find((x) => x[0] === "NM1" && x[1] === "PR")
        if (payer === undefined) problem("2010BB payer NM1*PR follows the subscriber")
        break
      }
      case "CLM": {
        closeClaim()
        counts.claims++
        const level = currentHl === undefined ? undefined : hls.get(currentHl)?.level
        if (level !== "22" && level !== "23") problem(`CLM ${s[1]} outside a subscriber or patient loop`)
        if (level === "22" && hls.get(currentHl!)?.sbr02 !== "18") problem(`CLM ${s[1]} under a 2000B whose subscriber is not the patient`)
        if ((s[1] ?? "").length === 0 || (s[1] ?? "").length > 38) problem("CLM01 is 1–38 characters")
        const place = (s[5] ?? "").split(component)
        if (place.length !== 3 || place[1] !== "B" || place[2] !== "1" || !/^\d{2}$/.test(place[0] ?? "")) {
          problem(`CLM ${s[1]}: CLM05 is place of service:B:1`)
        }
        const hi = segments[i + 1]
        if (hi?.[0] !== "HI") problem(`CLM ${s[1]}: HI follows CLM`)
        const codes = (hi ?? []).slice(1).map((c) => c.split(component))
        if (codes.length < 1 || codes.length > 12) problem(`CLM ${s[1]}: HI holds 1–12 codes`)
        codes.forEach(([qualifier, code], n) => {
          if (qualifier !== (n === 0 ? "ABK" : "ABF")) problem(`CLM ${s[1]}: HI0${n + 1} qualifier is ${n === 0 ? "ABK" : "ABF"}`)
          if (!/^[A-Z][0-9][A-Z0-9]{1,5}$/.test(code ?? "") || (code ?? "").includes(".")) problem(`CLM ${s[1]}: ${code} is not an ICD-10-CM code without a dot`)
        })
        claim = { id: s[1] ?? "", total: toCents(s[2] ?? ""), lines: 0, sum: 0, codes: codes.length }
        break
      }
      case "LX":
        if (claim === undefined) problem("LX outside a claim")
        else if (s[1] !== String(claim.lines + 1)) problem(`claim ${claim.id}: LX01 ${s[1]} is not the next line number`)
        if (!next(i, "SV1")) problem("SV1 follows LX")
        break
      case "SV1": {
        counts.serviceLines++
        if (claim === undefined) {
          problem("SV1 outside a claim")
          break
        }
        claim.lines++
        const amount = toCents(s[2] ?? "")
        if (amount === undefined || amount <= 0) problem(`claim ${claim.id}: SV102 ${s[2]} is not a positive amount`)
        else claim.sum += amount
        if ((s[1] ?? "").split(component)[0] !== "HC") problem(`claim ${claim.id}: SV101 starts with HC`)
        const pointers = (s[7] ?? "").split(component)
        if (pointers.length < 1 || pointers.length > 4) problem(`claim ${claim.id}: SV107 has 1–4 pointers`)
        for (const p of pointers) {
          const n = Number(p)
          if (!/^\d{1,2}$/.test(p) || n < 1 || n > 12 || n > claim.codes) problem(`claim ${claim.id}: pointer ${p} points at no diagnosis code`)
        }
        if (!next(i, "DTP") || segments[i + 1]?.[1] !== "472") problem(`claim ${claim.id}: DTP*472 follows SV1`)
        break
      }
    }
  }
  counts.groups = gsCount
  if (iea[1] !== String(gsCount)) problem(`IEA01 is ${iea[1]}, the interchange has ${gsCount} groups`)
  return { problems, counts }
}
