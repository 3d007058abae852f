/**
 * The 837P generator against the X12 rules: our structural checker on every batch, hand checks of
 * each rule on a generated file, a parsed round trip with node-x12, and an independent reader
 * (x12-parser, code we did not write) whose segment and loop counts must agree with ours.
 */
import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import { X12Generator, X12Interchange, X12Parser } from "node-x12"
import { Readable } from "node:stream"
import { X12grouper, X12parser, Schema as X12Schema } from "x12-parser"
import { checkInterchange, parseInterchange } from "../../../src/Domain/Billing/Edi/Check.js"
import { batchSegments, generate837P, InvalidClaimData, maxClaimsPerTransaction } from "../../../src/Domain/Billing/Edi/Claim837.js"
import { ediAmount, ediText } from "../../../src/Domain/Billing/Edi/Text.js"
import { serialize } from "../../../src/Domain/Billing/Edi/Segments.js"
import { adultClaim, batchOf, billingNpi, childClaim, manyClaims, npiOf } from "./fixtures.js"

const segmentsOf = (text: string) => parseInterchange(text)!.segments
const find = (text: string, id: string, first?: string) => segmentsOf(text).filter((s) => s[0] === id && (first === undefined || s[1] === first))

/** x12-parser's segments, read from a stream as the library is meant to be used. */
const independentSegments = (text: string): Promise<Array<Record<string, string>>> =>
  new Promise((resolve, reject) => {
    const out: Array<Record<string, string>> = []
    Readable.from([text]).pipe(new X12parser()).on("data", (s: Record<string, string>) => out.push(s)).on("end", () => resolve(out)).on("error", reject)
  })

/** x12-parser's grouper with the 837P hierarchy, counting the loops it finds. */
const independentLoops = (text: string): Promise<Record<string, number>> =>
  new Promise((resolve, reject) => {
    const schema = new X12Schema("005010X222A1", {
      start: "ST",
      end: "SE",
      name: "transaction",
      groups: [{ start: "HL", name: "HL", groups: [{ start: "CLM", name: "2300", groups: [{ start: "LX", name: "2400" }] }] }]
    })
    const counts: Record<string, number> = {}
    const walk = (node: { name: string; data?: Array<unknown>; isGroup?: boolean } & Record<string, unknown>) => {
      if (node.isGroup === true) {
        counts[node.name] = (counts[node.name] ?? 0) + 1
        for (const child of node.data ?? []) walk(child as never)
      } else {
        const key = `segment:${node.name}${node.name === "HL" ? `:${String(node["3"])}` : ""}`
        counts[key] = (counts[key] ?? 0) + 1
      }
    }
    Readable.from([text]).pipe(new X12parser()).pipe(new X12grouper(schema))
      .on("data", (node: unknown) => walk(node as never)).on("end", () => resolve(counts)).on("error", reject)
  })

/** Every Latin letter from A to U+017F (ASCII, Latin-1 Supplement, Latin Extended-A). */
const latinLetters = Array.from({ length: 0x17f - 0x41 + 1 }, (_, i) => String.fromCodePoint(0x41 + i)).filter((c) => /\p{Script=Latin}/u.test(c))

describe("837P generator", () => {
  const both = generate837P(batchOf([adultClaim(), childClaim()]))

  it("passes our structural checker, with the loops counted", () => {
    const check = checkInterchange(both)
    expect(check.problems).toEqual([])
    expect(check.counts).toEqual({
      segments: 48, groups: 1, transactions: 1, billingProviders: 1, subscribers: 2, patients: 1, claims: 2, serviceLines: 2, renderingProviders: 2
    })
  })

  it("envelope: fixed-width ISA, padded ids, 9-digit ISA13, matching control numbers and counts", () => {
    const isa = both.slice(0, both.indexOf("~") + 1)
    expect(isa.length).toBe(106)
    expect(isa).toBe("ISA*00*          *00*          *ZZ*CLINIC01       *ZZ*CLEARHOUSE     *260201*1730*^*00501*000000042*0*T*:~")
    const [gs] = find(both, "GS")
    const [ge] = find(both, "GE")
    expect(gs![6]).toBe("42")
    expect(ge).toEqual(["GE", "1", "42"])
    expect(find(both, "IEA")).toEqual([["IEA", "1", "000000042"]])
    const segments = segmentsOf(both)
    const st = segments.findIndex((s) => s[0] === "ST")
    const se = segments.findIndex((s) => s[0] === "SE")
    expect(segments[se]).toEqual(["SE", String(se - st + 1), "0001"])
    expect(segments[st]).toEqual(["ST", "837", "0001", "005010X222A1"])
  })

  it("billing provider, submitter, receiver; SBR02 18 only for the patient as subscriber; a child under a guardian gets 2000C", () => {
    expect(find(both, "NM1", "85")).toEqual([["NM1", "85", "2", "CARE COORDINATION CLINIC", "", "", "", "", "XX", billingNpi]])
    expect(find(both, "REF")).toEqual([["REF", "EI", "123456789"]])
    expect(find(both, "PER")).toEqual([["PER", "IC", "BILLING OFFICE", "TE", "9165550100"]])
    expect(find(both, "SBR")).toEqual([["SBR", "P", "18", "GRP-01", "", "", "", "", "", "BL"], ["SBR", "P", "", "", "", "", "", "", "", "MC"]])
    expect(find(both, "HL")).toEqual([["HL", "1", "", "20", "1"], ["HL", "2", "1", "22", "0"], ["HL", "3", "1", "22", "1"], ["HL", "4", "3", "23", "0"]])
    expect(find(both, "PAT")).toEqual([["PAT", "19"]])
    expect(find(both, "NM1", "QC")).toEqual([["NM1", "QC", "1", "VALE", "ROBIN"]])
    expect(find(both, "NM1", "IL").map((s) => s[3])).toEqual(["LOPEZ", "VALE"])
    // The guardian's DMG, then the child's.
    expect(find(both, "DMG")).toEqual([["DMG", "D8", "19900203", "F"], ["DMG", "D8", "19850909", "F"], ["DMG", "D8", "20150601", "M"]])
  })

  it("claims: CLM02 = SV102, place of service and frequency, HI with ABK then ABF (12 codes, no dots), pointers to codes that exist", () => {
    expect(find(both, "CLM")).toEqual([
      ["CLM", "CLM00000001", "150", "", "", "11:B:1", "Y", "A", "Y", "Y"],
      ["CLM", "CLM00000002", "200.5", "", "", "10:B:1", "Y", "A", "Y", "Y"]
    ])
    const [, twelve] = find(both, "HI")
    expect(twelve!.length).toBe(13)
    expect(twelve![1]).toBe("ABK:F900")
    expect(twelve!.slice(2).every((c) => c.startsWith("ABF:") && !c.includes("."))).toBe(true)
    expect(find(both, "SV1")).toEqual([
      ["SV1", "HC:90837", "150", "UN", "1", "", "", "1"],
      ["SV1", "HC:90847:HO:95", "200.5", "UN", "1", "", "", "1:2:3:4"]
    ])
    expect(find(both, "DTP")).toEqual([["DTP", "472", "D8", "20260105"], ["DTP", "472", "D8", "20260105"]])
  })

  it("2310B only when the rendering provider is not the billing provider", () => {
    const same = generate837P(batchOf([adultClaim({ renderingProvider: { npi: billingNpi, firstName: "Clinic", lastName: "Self" } })]))
    expect(find(same, "NM1", "82")).toEqual([])
    expect(checkInterchange(same).problems).toEqual([])
    expect(find(both, "NM1", "82")).toHaveLength(2)
  })

  it("free text is upper case, ASCII, without the delimiters * ~ : ^", () => {
    const text = generate837P(batchOf([adultClaim({
      patient: { ...adultClaim().patient, firstName: "Zoë*~", lastName: "O'Brien:^Núñez" }
    })]))
    expect(find(text, "NM1", "IL")[0]!.slice(3, 5)).toEqual(["O'BRIEN NUNEZ", "ZOE"])
    expect(checkInterchange(text).problems).toEqual([])
    fc.assert(fc.property(fc.string({ unit: "binary" }), (s) => {
      const out = ediText(s)
      return !/[*~:^a-z]/.test(out) && /^[\x20-\x7e]*$/.test(out) && out === out.trim()
    }))
  })

  it("names and addresses keep what a payer matches on: letters transliterated, delimiters as spaces", () => {
    expect(["Łukasz Żółć", "Søren Ærø", "Straße", "Đorđe", "Þórunn Guðrún", "Œuvre", "Yıldız", "Ħamrun", "ẞ", "O’Brien", "Col·legi"].map((t) => ediText(t)))
      .toEqual(["LUKASZ ZOLC", "SOREN AERO", "STRASSE", "DORDE", "THORUNN GUDRUN", "OEUVRE", "YILDIZ", "HAMRUN", "SS", "O'BRIEN", "COLLEGI"])
    expect(["Unit~B", "Apt*4", "Suite:2^3"].map((t) => ediText(t))).toEqual(["UNIT B", "APT 4", "SUITE 2 3"])
    // Every letter of Latin-1 and Latin Extended-A is sent as Latin letters, never dropped to a space.
    for (const letter of latinLetters) expect(ediText(letter), `${letter} U+${letter.codePointAt(0)!.toString(16)}`).toMatch(/^[A-Z']*[A-Z][A-Z']*$/)
    const word = fc.string({ unit: fc.constantFrom(...latinLetters), minLength: 1, maxLength: 12 })
    fc.assert(fc.property(word, fc.constantFrom("*", "~", ":", "^"), word, (a, delimiter, b) =>
      ediText(a + delimiter + b, 200) === `${ediText(a, 200)} ${ediText(b, 200)}`))
    const text = generate837P(batchOf([adultClaim({
      patient: { ...adultClaim().patient, firstName: "Łukasz", lastName: "Ørsted-Þórsson", address: { line1: "1 Straße Way, Unit~B", city: "Æbeltoft", state: "CA", zip: "95814" } }
    })]))
    expect(checkInterchange(text).problems).toEqual([])
    expect(find(text, "NM1", "IL")[0]!.slice(3, 5)).toEqual(["ORSTED-THORSSON", "LUKASZ"])
    expect(find(text, "N3")[1]).toEqual(["N3", "1 STRASSE WAY, UNIT B"])
    expect(new X12Parser(true).parse(text)).toBeInstanceOf(X12Interchange)
  })

  it("amounts are exact decimals from cents", () => {
    expect([ediAmount(15000), ediAmount(15050), ediAmount(15025), ediAmount(1), ediAmount(9_999_999_999)]).toEqual(["150", "150.5", "150.25", "0.01", "99999999.99"])
    fc.assert(fc.property(fc.integer({ min: 1, max: 9_999_999_999 }), (cents) => Math.round(Number(ediAmount(cents)) * 100) === cents))
  })

  it("refuses what no 837P may carry: a bad NPI, no claims, 13 codes", () => {
    expect(() => generate837P(batchOf([adultClaim({ renderingProvider: { npi: "1234567890", firstName: "A", lastName: "B" } })]))).toThrow(InvalidClaimData)
    expect(() => generate837P(batchOf([]))).toThrow(InvalidClaimData)
    expect(() => generate837P(batchOf([adultClaim({ diagnosisCodes: Array.from({ length: 13 }, (_, i) => `F${10 + i}`) })]))).toThrow(InvalidClaimData)
    expect(() => generate837P({ ...batchOf([adultClaim()]), billingProvider: { ...batchOf([]).billingProvider, npi: "1234567890" } })).toThrow(InvalidClaimData)
    expect(() => generate837P(batchOf([adultClaim({ patient: { ...adultClaim().patient, lastName: "李" } })]))).toThrow(
      "claim CLM00000001: the patient's name has no Latin letters an 837P can carry"
    )
  })

  it("the checker catches broken files: wrong counts, sums, pointers, NPIs, SBR02", () => {
    const broken = (from: string, to: string) => checkInterchange(both.replace(from, to)).problems
    expect(broken("SE*44*0001", "SE*43*0001").join()).toContain("SE01")
    expect(broken("GE*1*42", "GE*2*42").join()).toContain("GE01")
    expect(broken("IEA*1*000000042", "IEA*1*000000043").join()).toContain("IEA02")
    expect(broken("CLM*CLM00000001*150", "CLM*CLM00000001*151").join()).toContain("CLM02")
    expect(broken("SV1*HC:90837*150*UN*1***1", "SV1*HC:90837*150*UN*1***2").join()).toContain("pointer 2")
    expect(broken(`XX*${npiOf("987654321")}`, "XX*9876543210").join()).toContain("Luhn")
    expect(broken("SBR*P*18*GRP-01", "SBR*P**GRP-01").join()).toContain("SBR02")
    expect(broken("HL*2*1*22*0", "HL*2*1*22*1").join()).toContain("HL04")
    expect(broken("HI*ABK:F329", "HI*ABF:F32.9").length).toBeGreaterThanOrEqual(2)
    expect(broken("*CLINIC01       *", "*CLINIC01 *").join()).toContain("ISA")
    expect(broken("NM1*QC*1*VALE*ROBIN", "NM1*QC*1**ROBIN").join()).toContain("NM103")
  })

  it("a batch over 5,000 claims is split into transaction sets; GE01 counts them", () => {
    const claims = manyClaims(maxClaimsPerTransaction + 10)
    const text = generate837P(batchOf(claims))
    const check = checkInterchange(text)
    expect(check.problems).toEqual([])
    expect(check.counts.transactions).toBe(2)
    expect(check.counts.claims).toBe(claims.length)
    expect(find(text, "GE")[0]![1]).toBe("2")
  })

  it("random batches always pass the checker", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 999_999_999 }), (n, control) => {
      const text = generate837P(batchOf(manyClaims(n), control))
      return checkInterchange(text).problems.length === 0 && text.slice(0, text.indexOf("~") + 1).length === 106
    }), { numRuns: 50 })
  })
})

describe("837P read by code we did not write", () => {
  const text = generate837P(batchOf(manyClaims(30)))
  const ours = checkInterchange(text)

  it("node-x12: parses strictly, every segment round trips, and its generator writes the same file back", () => {
    expect(ours.problems).toEqual([])
    const parsed = new X12Parser(true).parse(text) as X12Interchange
    expect(parsed).toBeInstanceOf(X12Interchange)
    // node-x12 reads ISA13 as a number.
    expect(Number(parsed.header.valueOf(13))).toBe(42)
    expect(parsed.functionalGroups).toHaveLength(1)
    const transactions = parsed.functionalGroups[0]!.transactions
    expect(transactions).toHaveLength(ours.counts.transactions)
    const segments = transactions.flatMap((t) => t.segments)
    // node-x12 keeps ST and SE as header/trailer.
    expect(segments.length + 2 * transactions.length + 4).toBe(ours.counts.segments)
    expect(segments.filter((s) => s.tag === "CLM")).toHaveLength(ours.counts.claims)
    expect(parsed.toString()).toBe(text)
    expect(new X12Generator(parsed.toJSEDINotation()).toString()).toBe(text)
    // Our segments, serialised again, are the same text: nothing lost between model and file.
    expect(serialize(batchSegments(batchOf(manyClaims(30))))).toBe(text)
  })

  it("x12-parser: its segment and loop counts agree with ours", async () => {
    const segments = await independentSegments(text)
    expect(segments).toHaveLength(ours.counts.segments)
    expect(segments.filter((s) => s.name === "CLM")).toHaveLength(ours.counts.claims)
    expect(segments.filter((s) => s.name === "HL" && s["3"] === "22")).toHaveLength(ours.counts.subscribers)
    expect(segments.filter((s) => s.name === "HL" && s["3"] === "23")).toHaveLength(ours.counts.patients)
    expect(segments.filter((s) => s.name === "ST")).toHaveLength(ours.counts.transactions)
    const isa = segments[0]!
    expect([isa.name, isa["13"], isa["16"]]).toEqual(["ISA", "000000042", ":"])
    const loops = await independentLoops(text)
    expect(loops["transaction"]).toBe(ours.counts.transactions)
    expect(loops["HL"]).toBe(ours.counts.billingProviders + ours.counts.subscribers + ours.counts.patients)
    expect(loops["2300"]).toBe(ours.counts.claims)
    expect(loops["2400"]).toBe(ours.counts.serviceLines)
  })
})
