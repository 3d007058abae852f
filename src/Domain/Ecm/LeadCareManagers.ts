/**
 * Lead care manager assignment rules (ECM §2.8, §4.8): who may hold a role, and what is wrong with
 * one requested assignment. Pure: the service looks the patients and users up once for a whole
 * request, then judges every assignment with `assignmentProblems`.
 */
import { Schema } from "effect"

/** olcm: outreach lead care manager; ilcm: intensive lead care manager. */
export const LeadCareManagerRole = Schema.Literal("olcm", "ilcm")
export type LeadCareManagerRole = typeof LeadCareManagerRole.Type
export const leadCareManagerRoles: ReadonlyArray<LeadCareManagerRole> = ["olcm", "ilcm"]

/** Most assignments one bulk request may carry. */
export const maxBulkAssignments = 1000

export interface Assignment {
  readonly patient_id: number
  readonly olcm_user_id?: number | undefined
  readonly ilcm_user_id?: number | undefined
}

/** What the database says about a user named in an assignment. */
export type Candidate = "eligible" | "ineligible" | "unknown"

/** What the database says about everything a request names. */
export interface Lookup {
  readonly patientExists: (patientId: number) => boolean
  readonly candidate: (userId: number) => Candidate
}

export const messages = {
  neither: "Either olcm_user_id or ilcm_user_id is required",
  patientNotFound: "Patient not found",
  duplicate: "Patient is listed more than once in assignments",
  unknownUser: (role: LeadCareManagerRole) => `${roleLabel(role)} user not found`,
  ineligibleUser: (role: LeadCareManagerRole) => `${roleLabel(role)} user must be an active staff user`
} as const

/** "Olcm", "Ilcm": the labels ECM §7 field messages start with. */
const roleLabel = (role: LeadCareManagerRole): string => (role === "olcm" ? "Olcm" : "Ilcm")

/**
 * Only active clinic staff may hold either role: not a parent (a family account), not an
 * archived, inactive, pending, suspended or deleted user. The same person may hold both.
 */
export const canLeadCare = (user: { readonly role: string; readonly status: string; readonly deleted: boolean }): boolean =>
  user.role !== "parent" && user.status === "active" && !user.deleted

export const userIdOf = (assignment: Assignment, role: LeadCareManagerRole): number | undefined =>
  role === "olcm" ? assignment.olcm_user_id : assignment.ilcm_user_id

/**
 * Every problem of one assignment, in ECM §7 sentences; empty when it can be applied.
 * `seenBefore`: an earlier assignment of the same request for the same patient was accepted.
 */
export const assignmentProblems = (assignment: Assignment, lookup: Lookup, seenBefore: boolean): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (!lookup.patientExists(assignment.patient_id)) problems.push(messages.patientNotFound)
  else if (seenBefore) problems.push(messages.duplicate)
  const given = leadCareManagerRoles.filter((role) => userIdOf(assignment, role) !== undefined)
  if (given.length === 0) problems.push(messages.neither)
  for (const role of given) {
    const candidate = lookup.candidate(userIdOf(assignment, role)!)
    if (candidate === "unknown") problems.push(messages.unknownUser(role))
    else if (candidate === "ineligible") problems.push(messages.ineligibleUser(role))
  }
  return problems
}
