/**
 * The rows tests start from: users who sign in with `password`, provider profiles, patients and
 * appointments. Written through the app's repositories where one has the statement (appointments
 * have none for a past or completed visit without a slot, so that insert lives here).
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { randomBytes, scryptSync } from "node:crypto"
import { normalizeEmail } from "../../src/Domain/Accounts/Email.js"
import type { Role, UserStatus } from "../../src/Domain/Accounts/User.js"
import { AppointmentId } from "../../src/Domain/Ids.js"
import type { AppointmentStatus, AppointmentType } from "../../src/Domain/Scheduling/Scheduling.js"
import { UsersRepo } from "../../src/Services/Accounts/UsersRepo.js"
import { type PatientValues, PatientsRepo } from "../../src/Services/Patients/PatientsRepo.js"
import { ProvidersRepo } from "../../src/Services/Providers/ProvidersRepo.js"

/** The bootstrap admin of every test app (already in the template database: test/support/globalSetup.ts). */
export const admin = { email: "admin@example.test", password: "admin-password-1" } as const

/** The password of every fixture user. */
export const password = "user-password-1"

/**
 * A scrypt hash with a small work factor. Sign-in reads the parameters from the stored hash, so
 * fixture users sign in through the production code at a fraction of its cost (the production
 * parameters cost ~60 ms of CPU a sign-in, and tests sign in thousands of times). Hashes the app
 * writes keep the production parameters.
 */
export const fixtureHash = (plain: string): string => {
  const [N, r, p, keyLength] = [1024, 8, 1, 64]
  const salt = randomBytes(16)
  const key = scryptSync(plain.normalize("NFKC"), salt, keyLength, { N, r, p })
  return ["scrypt", N, r, p, salt.toString("base64"), key.toString("base64")].join("$")
}

const passwordHash = fixtureHash(password)
let counter = 0

/** A unique email under `domain`. */
export const uniqueEmail = (prefix = "user", domain = "fixtures.test") => `${prefix}${++counter}.${Date.now()}@${domain}`

export interface NewUser {
  readonly email?: string
  readonly first_name?: string
  readonly last_name?: string
  readonly role?: Role
  readonly status?: UserStatus
  readonly clinical?: boolean
  readonly confirmed?: boolean
  readonly phone?: string | null
  /** The stored hash (`password`'s cheap hash unless told). */
  readonly password_hash?: string
}

/** The row of a new user: `user` over the defaults (a confirmed, active parent with `password`). */
const userValues = (user: NewUser) => ({
  email: user.email ?? uniqueEmail(),
  password_hash: user.password_hash ?? passwordHash,
  first_name: user.first_name ?? "Test",
  last_name: user.last_name ?? `User${++counter}`,
  role: user.role ?? "parent",
  status: user.status ?? "active",
  clinical: user.clinical ?? false,
  confirmed: user.confirmed ?? true,
  ...(user.phone === undefined ? {} : { phone: user.phone })
})

/** A confirmed user (active, a parent, unless told otherwise) who signs in with `password` (unless told a hash); the id. */
export const insertUser = (user: NewUser = {}) =>
  Effect.gen(function*() {
    const users = yield* UsersRepo
    const values = userValues(user)
    const row = yield* users.insertIfAbsent(values)
    if (row._tag === "None") return yield* Effect.dieMessage(`insertUser: ${values.email} is taken`)
    return row.value.id
  }).pipe(Effect.provide(UsersRepo.Default))

/**
 * Users with the same fields and defaults as `insertUser`, in one statement (the repository inserts
 * one at a time): for callers that seed many users per request. Every user needs an email of its
 * own (each one given, or a unique default); their ids, in order.
 */
export const insertUsers = (users: ReadonlyArray<NewUser>) =>
  Effect.gen(function*() {
    if (users.length === 0) return []
    const sql = yield* SqlClient.SqlClient
    // Every row names the same columns: a phone given to some users is NULL for the others.
    const rows = users.map((user) => ({ ...userValues(user), phone: user.phone ?? null })).map((row) => ({ ...row, email: normalizeEmail(row.email) }))
    const inserted = yield* sql<{ id: number; email: string }>`INSERT INTO users ${sql.insert(rows)} RETURNING id, email`
    // RETURNING's order is not promised: match the rows back by their unique email.
    const ids = new Map(inserted.map((row) => [row.email, row.id]))
    return rows.map((row) => ids.get(row.email)!)
  }).pipe(Effect.orDie)

/** A user with an active provider profile holding `role`; the profile and user ids. */
export const insertProvider = (
  options: NewUser & { readonly role?: "provider" | "supervisor"; readonly supervisorId?: number | null } = {}
) =>
  Effect.gen(function*() {
    const role = options.role ?? "provider"
    const userId = yield* insertUser({ ...options, role })
    const providers = yield* ProvidersRepo
    const id = yield* providers.insert(userId, role, options.supervisorId ?? null)
    return { id, userId }
  }).pipe(Effect.provide(ProvidersRepo.Default))

/** A patient (first name Pat, a unique last name, born 2015-06-01 unless told otherwise); the id. */
export const insertPatient = (patient: PatientValues = {}) =>
  Effect.gen(function*() {
    const patients = yield* PatientsRepo
    return yield* patients.insert({ first_name: "Pat", last_name: `Patient${++counter}`, date_of_birth: "2015-06-01", ...patient })
  }).pipe(Effect.provide(PatientsRepo.Default), Effect.orDie)

export interface NewAppointment {
  readonly patientId: number
  readonly providerId: number
  readonly scheduledAt: Date
  readonly minutes?: number
  readonly status?: AppointmentStatus
  readonly type?: AppointmentType
}

/** The day of `at` in the clinic's time zone (YYYY-MM-DD). */
export const clinicDay = (at: Date) => at.toLocaleDateString("en-CA", { timeZone: "America/Los_Angeles" })

/** An appointment without a slot (a past visit, say); completed, 5 minutes of therapy unless told otherwise. */
export const insertAppointment = (appointment: NewAppointment) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<{ id: number }>`INSERT INTO appointments ${
      sql.insert({
        patient_id: appointment.patientId,
        provider_id: appointment.providerId,
        scheduled_at: appointment.scheduledAt,
        duration_minutes: appointment.minutes ?? 5,
        status: appointment.status ?? "completed",
        appointment_type: appointment.type ?? "therapy"
      })
    } RETURNING id`
    return { id: AppointmentId.make(row!.id), day: clinicDay(appointment.scheduledAt) }
  }).pipe(Effect.orDie)
export * from "./fixtures/Accounts.js"
export * from "./fixtures/Content.js"
export * from "./fixtures/Ecm.js"
export * from "./fixtures/EcmExchange.js"
export * from "./fixtures/Patients.js"
export * from "./fixtures/Prescriptions.js"
export * from "./fixtures/Questionnaires.js"
export * from "./fixtures/Recovery.js"
export * from "./fixtures/Reports.js"
export * from "./fixtures/Scheduling.js"
export * from "./fixtures/Videos.js"
