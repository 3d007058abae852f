import { describe, expect, it } from "@effect/vitest"
import fc from "fast-check"
import {
  formCSections,
  formDataProblems,
  isDateField,
  isFormCSection,
  maxFormDataBytes,
  memberIdProblem
} from "../../../src/Domain/Ecm/FormC.js"
import {
  assignmentProblems,
  canLeadCare,
  type Candidate,
  messages
} from "../../../src/Domain/Ecm/LeadCareManagers.js"

/** Keys that are not date fields: any text the date rule leaves alone. */
const plainKey = fc.string({ maxLength: 12 }).filter((k) => !isDateField(k))

/** Any JSON value whose object keys are plain (dates are a property of their own below). */
const { value: plainJson } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(null), fc.boolean(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 20 }),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(plainKey, tie("value"), { maxKeys: 4 })
  )
}))

const section = fc.constantFrom(...formCSections)
const sectionValue = fc.dictionary(plainKey.filter((k) => k !== "member_id"), plainJson, { maxKeys: 5 })
const document = fc.dictionary(section, sectionValue, { minKeys: 1, maxKeys: formCSections.length })

const day = fc.date({ min: new Date("0001-01-01T00:00:00Z"), max: new Date("9999-12-31T00:00:00Z"), noInvalidDate: true })
  .map((d) => d.toISOString().slice(0, 10))

describe("Form C document rules", () => {
  it("has the 23 sections of ECM §2.5", () => {
    expect(formCSections).toHaveLength(23)
    expect(new Set(formCSections).size).toBe(23)
    expect(isFormCSection("community_ltss_services")).toBe(true)
    expect(isFormCSection("__proto__")).toBe(false)
  })

  it("accepts any non-empty object made only of known sections with object values", () => {
    fc.assert(fc.property(document, (doc) => {
      expect(formDataProblems(doc)).toEqual([])
    }), { numRuns: 1000 })
  })

  it("accepts real days as YYYY-MM-DD in date fields at any depth, and null", () => {
    fc.assert(fc.property(section, fc.constantFrom("date", "dob", "assessment_date", "last_visit_dob"), fc.option(day), (name, key, value) => {
      expect(formDataProblems({ [name]: { [key]: value, nested: { list: [{ [key]: value }] } } })).toEqual([])
    }))
  })

  it("refuses a date field holding anything but a real YYYY-MM-DD day, naming the section and path", () => {
    fc.assert(fc.property(section, fc.oneof(fc.string({ maxLength: 12 }).filter((s) => !/^\d{4}-\d{2}-\d{2}$/.test(s)), fc.integer(), fc.boolean(), fc.constant([])), (name, value) => {
      expect(formDataProblems({ [name]: { visit_date: value } })).toEqual([`Form data ${name}.visit_date must be a date in YYYY-MM-DD format`])
    }))
    for (const bad of ["2026-02-30", "0000-01-01", "2026-13-01", "2026-1-01"]) {
      expect(formDataProblems({ safety: { date: bad } })).toEqual(["Form data safety.date must be a date in YYYY-MM-DD format"])
    }
    // up_to_date is a yes/no answer, not a date.
    expect(formDataProblems({ preventive_care: { immunizations_up_to_date: true } })).toEqual([])
  })

  it("refuses any key that is not a section, naming it, while still judging the known ones", () => {
    fc.assert(fc.property(fc.string({ maxLength: 30 }).filter((k) => !isFormCSection(k)), (key) => {
      expect(formDataProblems({ [key]: {}, culture: "text" })).toEqual([
        `Form data section ${JSON.stringify(key)} is not a Form C section`,
        "Form data section culture must be an object"
      ])
    }))
    const long = "k".repeat(500)
    expect(formDataProblems({ [long]: {} })).toEqual([`Form data section ${JSON.stringify(`${"k".repeat(64)}…`)} is not a Form C section`])
  })

  it("refuses non-object sections, blank and non-object documents, and oversized ones", () => {
    fc.assert(fc.property(section, fc.oneof(fc.constant(null), fc.string(), fc.integer(), fc.boolean(), fc.array(fc.integer())), (name, value) => {
      expect(formDataProblems({ [name]: value })).toEqual([`Form data section ${name} must be an object`])
    }))
    for (const blank of [undefined, null, {}]) expect(formDataProblems(blank)).toEqual(["Form data can't be blank"])
    for (const other of ["x", 1, true, []]) expect(formDataProblems(other)).toEqual(["Form data must be an object keyed by section name"])
    expect(formDataProblems({ priorities: { notes: "é".repeat(maxFormDataBytes / 2) } })).toEqual([`Form data is too large (maximum is ${maxFormDataBytes} bytes)`])
  })

  it("caps the messages of a document with very many problems", () => {
    const doc = { medications: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`d${i}_date`, "no"])) }
    const problems = formDataProblems(doc)
    expect(problems).toHaveLength(21)
    expect(problems[20]).toBe("Form data has 30 more problems")
  })

  it("checks background_information.member_id against the patient's", () => {
    const doc = (memberId: unknown) => ({ background_information: { member_id: memberId } })
    expect(memberIdProblem({ culture: {} }, "A1")).toBeUndefined()
    expect(memberIdProblem(doc("A1"), "A1")).toBeUndefined()
    expect(memberIdProblem(doc(" A1 "), "A1")).toBeUndefined()
    expect(memberIdProblem(doc(""), null)).toBeUndefined()
    expect(memberIdProblem(doc(null), "A1")).toBeUndefined()
    expect(memberIdProblem(doc("a1"), "A1")).toBe("Form data background_information.member_id does not match the patient's member id")
    expect(memberIdProblem(doc("A1"), null)).toBe("Form data background_information.member_id does not match the patient's member id")
    expect(memberIdProblem(doc(1), "1")).toBe("Form data background_information.member_id must be text")
  })
})

describe("lead care manager assignment rules", () => {
  const lookup = (patients: ReadonlyArray<number>, users: Record<number, Candidate>) => ({
    patientExists: (id: number) => patients.includes(id),
    candidate: (id: number) => users[id] ?? "unknown"
  })

  it("only active, undeleted staff can lead care", () => {
    expect(canLeadCare({ role: "provider", status: "active", deleted: false })).toBe(true)
    expect(canLeadCare({ role: "parent", status: "active", deleted: false })).toBe(false)
    for (const status of ["archived", "inactive", "pending", "suspended"]) {
      expect(canLeadCare({ role: "admin", status, deleted: false })).toBe(false)
    }
    expect(canLeadCare({ role: "support", status: "active", deleted: true })).toBe(false)
  })

  it("names every problem of one assignment", () => {
    const world = lookup([1], { 10: "eligible", 11: "ineligible" })
    expect(assignmentProblems({ patient_id: 1, olcm_user_id: 10, ilcm_user_id: 10 }, world, false)).toEqual([])
    expect(assignmentProblems({ patient_id: 1 }, world, false)).toEqual([messages.neither])
    expect(assignmentProblems({ patient_id: 2, olcm_user_id: 11, ilcm_user_id: 12 }, world, false)).toEqual([
      "Patient not found", "Olcm user must be an active staff user", "Ilcm user not found"
    ])
    expect(assignmentProblems({ patient_id: 1, ilcm_user_id: 10 }, world, true)).toEqual([messages.duplicate])
  })
})
