/**
 * A small demo clinic, made through the public API with the typed client a frontend derives (so
 * it goes through every rule a user meets, and breaks the build when the contract moves): a
 * supervisor with two providers, two families with their children as clinic patients, ECM members
 * from a sample member information file with a lead care manager, a week of slots with booked
 * appointments, an ECM member's outreach (a text, a call, a visit) and this month's PRTF file, a
 * session note, a claim, a collaborator, a content assignment and a questionnaire answer.
 *
 * Made for a fresh install: it refuses to run twice (the demo supervisor's email is the marker).
 */
import { HttpApiClient, HttpClient, HttpClientRequest } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../src/Api/Api.js"
import { type AppointmentId, PatientId, type ProviderId, QuestionId, QuestionnaireId, type UserId } from "../../src/Domain/Ids.js"

/** Every demo account signs in with this password. */
export const demoPassword = "demo-clinic-password"
export const demoDomain = "demo-clinic.example.org"
const email = (local: string) => `${local}@${demoDomain}`

export interface DemoOptions {
  readonly baseUrl?: string
  readonly admin: { readonly email: string; readonly password: string }
  /** The clinic's "now": slots start on the next weekday after it. */
  readonly now: Date
}

export interface DemoSummary {
  readonly supervisorProviderId: ProviderId
  readonly providerIds: ReadonlyArray<ProviderId>
  readonly parentUserIds: ReadonlyArray<UserId>
  readonly clinicPatientIds: ReadonlyArray<PatientId>
  readonly ecmPatientIds: ReadonlyArray<PatientId>
  readonly appointmentIds: ReadonlyArray<AppointmentId>
  /** Held three days before `now`: it has the session note and the claim. */
  readonly heldAppointmentId: AppointmentId
  /** The ECM member texted, called and visited. */
  readonly outreachMemberId: PatientId
  readonly prtfReportId: number
  readonly claimId: number
  readonly sessionNoteId: number
  readonly collaboratorId: number
  readonly userPieceId: number
  readonly questionnaireResponseId: number
  readonly mifFileId: number
}

/** A request of the demo was refused: which step, and the API's error body. */
export class DemoStepFailed extends Error {
  constructor(readonly step: string, override readonly cause: unknown) {
    super(`The demo stopped at "${step}": ${describe(cause)}`)
  }
}

const describe = (error: unknown) =>
  typeof error === "object" && error !== null && "errors" in error
    ? JSON.stringify((error as { errors: unknown }).errors)
    : String(error)

export class DemoAlreadyLoaded extends Error {
  constructor() {
    super(`The demo clinic is already loaded (${email("supervisor")} exists)`)
  }
}

const day = (date: Date) => date.toISOString().slice(0, 10)
const addDays = (date: Date, days: number) => new Date(date.getTime() + days * 86_400_000)

/** The next five weekdays after `now`, each at 16:00 UTC (morning in California). */
const nextWeekdays = (now: Date) => {
  const days: Array<Date> = []
  for (let offset = 1; days.length < 5; offset++) {
    const date = addDays(now, offset)
    if (date.getUTCDay() !== 0 && date.getUTCDay() !== 6) {
      days.push(new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), 16)))
    }
  }
  return days
}

/** A member information file as a health plan sends it (CSV), authorising the year of `now`. */
export const sampleMif = (now: Date, npi: string) => {
  const year = now.getUTCFullYear()
  const header = "MEMBER_ID,CIN,FIRST_NAME,LAST_NAME,DOB,GENDER,ADDRESS,CITY,STATE,ZIP,PHONE,ECM_SERVICE_AUTH_ID," +
    "ECM_PROVIDER_NAME,ECM_NPI,ECM_BENEFIT_AUTH_EFF_DATE,ECM_BENEFIT_AUTH_END_DATE,ACUITY_LEVEL"
  const members = [
    ["90000101A", "Rosa", "Delgado", "03-14-1961", "F", "12 Fruitvale Ave", "Oakland", "94601", "(510) 555-0141", "High"],
    ["90000102A", "Marcus", "Bell", "11-02-1978", "M", "400 Grand Ave", "Oakland", "94610", "(510) 555-0142", "Medium"],
    ["90000103A", "Linh", "Pham", "07-21-1990", "F", "88 E 12th St", "Oakland", "94606", "(510) 555-0143", "Low"],
    ["90000104A", "Arturo", "Campos", "01-30-1955", "M", "3 Foothill Blvd", "Oakland", "94602", "(510) 555-0144", "High"]
  ]
  const rows = members.map(([id, first, last, dob, gender, address, city, zip, phone, acuity]) =>
    [id, `C${id}`, first, last, dob, gender, address, city, "CA", zip, phone, `AUTH-${id}`, "Demo Care ECM", npi,
      `01-01-${year}`, `12-31-${year}`, acuity].join(",")
  )
  return [header, ...rows].join("\n") + "\n"
}

/** The demo's ECM provider NPI: a valid check digit, as the MIF checks require. */
export const demoNpi = "1234567893"

export const loadDemo = (options: DemoOptions) => {
  let step = "sign in as the admin"
  return Effect.gen(function*() {
    const clientOptions = options.baseUrl === undefined ? {} : { baseUrl: options.baseUrl }
    const publicApi = yield* HttpApiClient.make(Api, clientOptions)
    const signedIn = (token: string) =>
      HttpApiClient.make(Api, {
        ...clientOptions,
        transformClient: HttpClient.mapRequest(HttpClientRequest.setHeader("x-user-token", token))
      })
    const { token } = yield* publicApi.users.signIn({ payload: { user: options.admin } })
    const api = yield* signedIn(token)

    const existing = yield* api.adminUsers.list({ urlParams: { search: email("supervisor") } })
    if (existing.users.length > 0) return yield* Effect.fail(new DemoAlreadyLoaded())

    /** A confirmed account of `role`; staff roles get their provider profile with the role. */
    const account = (local: string, first: string, last: string, role: "parent" | "provider" | "supervisor", phone: string) =>
      Effect.gen(function*() {
        const { user } = yield* publicApi.users.register({
          payload: { user: { email: email(local), password: demoPassword, first_name: first, last_name: last, phone } }
        })
        yield* api.users.update({ path: { id: user.id }, payload: { user: { role, confirmed: true } } })
        return user.id
      })

    const providerOf = (userId: UserId, local: string) =>
      Effect.gen(function*() {
        const { providers } = yield* api.providers.list({ urlParams: { search: email(local) } })
        const profile = providers.find((p) => p.user_id === userId)
        if (profile === undefined) return yield* Effect.dieMessage(`no provider profile for ${local}`)
        return profile.id
      })

    step = "staff: a supervisor and two providers"
    const supervisorUser = yield* account("supervisor", "Dana", "Rivera", "supervisor", "(510) 555-0110")
    const supervisorId = yield* providerOf(supervisorUser, "supervisor")
    yield* api.providers.update({
      path: { id: supervisorId },
      payload: { provider: { specialty: "Clinical psychology", license_number: "PSY12345", npi: demoNpi } }
    })
    const staff = [
      { local: "sam.okafor", first: "Sam", last: "Okafor", license: "LMFT54321", specialty: "Family therapy" },
      { local: "lee.tran", first: "Lee", last: "Tran", license: "LCSW67890", specialty: "Clinical social work" }
    ]
    const providerUsers: Array<UserId> = []
    const providerIds: Array<ProviderId> = []
    for (const [index, person] of staff.entries()) {
      const userId = yield* account(person.local, person.first, person.last, "provider", `(510) 555-012${index}`)
      const providerId = yield* providerOf(userId, person.local)
      yield* api.providers.update({
        path: { id: providerId },
        payload: {
          provider: {
            has_supervisor: true, supervisor_id: supervisorId, specialty: person.specialty, license_number: person.license
          }
        }
      })
      providerUsers.push(userId)
      providerIds.push(providerId)
    }

    step = "families: guardians and their children as clinic patients"
    const families = [
      { local: "maria.lopez", first: "Maria", last: "Lopez", phone: "(415) 555-0131", children: [["Mia", "2015-06-01"], ["Leo", "2018-09-12"]] },
      { local: "james.chen", first: "James", last: "Chen", phone: "(415) 555-0132", children: [["Ava", "2012-02-20"]] }
    ] as const
    const parentUserIds: Array<UserId> = []
    const clinicPatientIds: Array<PatientId> = []
    for (const [index, family] of families.entries()) {
      const userId = yield* account(family.local, family.first, family.last, "parent", family.phone)
      parentUserIds.push(userId)
      for (const [first, birthday] of family.children) {
        const { patient } = yield* api.clinicPatients.create({
          payload: {
            patient: {
              first_name: first, last_name: family.last, date_of_birth: birthday, phone: family.phone,
              email: email(family.local), city: "Oakland", state: "CA", zip: "94607",
              user_id: userId, provider_id: providerIds[index % providerIds.length]!
            }
          }
        })
        clinicPatientIds.push(PatientId.make(patient.id))
      }
    }

    step = "ECM members from a member information file, with a lead care manager"
    const mif = yield* api.ecmMifs.import({
      payload: { mif: { file: `data:text/csv;base64,${Buffer.from(sampleMif(options.now, demoNpi)).toString("base64")}` } }
    })
    const members = yield* api.ecmPatients.list({ urlParams: { per_page: 50 } })
    // ECM responses carry plain integers; the requests take the branded ids.
    const ecmPatientIds = members.patients.map((p) => PatientId.make(p.id))
    yield* api.ecmLeadCareManagers.bulkAssign({
      payload: { assignments: ecmPatientIds.map((patientId) => ({ patient_id: patientId, olcm_user_id: providerUsers[0]! })) }
    })

    step = "a week of morning slots for each provider, the first two booked"
    const weekdays = nextWeekdays(options.now)
    const appointmentIds: Array<AppointmentId> = []
    for (const [index, providerId] of providerIds.entries()) {
      const { slot_ids } = yield* api.availability.createSlotsInBatch({
        payload: {
          provider_id: providerId,
          slots: weekdays.flatMap((start) => [0, 1, 2].map((hour) => ({
            start_time: new Date(start.getTime() + hour * 3_600_000),
            end_time: new Date(start.getTime() + hour * 3_600_000 + 50 * 60_000),
            appointment_type: "therapy" as const
          })))
        }
      })
      const patients = index === 0 ? [clinicPatientIds[0]!, ecmPatientIds[0]!] : [clinicPatientIds[2]!, clinicPatientIds[1]!]
      for (const [slot, patientId] of patients.entries()) {
        const { book } = yield* api.availability.createBook({
          payload: { book: { available_slot_id: slot_ids[slot * 3]!, patient_id: patientId, notes: "Demo booking" } }
        })
        if (book.appointment_id === null) return yield* Effect.dieMessage("a booking made no appointment")
        appointmentIds.push(book.appointment_id)
      }
    }

    step = "an ECM member's outreach: a text, a call and a visit"
    const member = members.patients.find((p) => p.name.startsWith("Rosa")) ?? members.patients[0]!
    const phone = "(510) 555-0141"
    yield* api.ecmCommunications.sendSms({
      path: { patient_id: member.id },
      payload: { sms: { phone_number: phone, body: "Hi Rosa, this is your care team at Demo Care. Can we meet this week?" } }
    })
    yield* api.ecmCommunications.placeCall({ path: { patient_id: member.id }, payload: { call: { phone_number: phone } } })
    yield* api.ecmActivities.create({
      path: { patient_id: member.id },
      payload: {
        activity: {
          activity_type: "in_person_appointment", booked_at: addDays(options.now, -2), occurred_at: addDays(options.now, -2),
          status: "complete", duration: 45, assigned_to_id: providerUsers[0]!,
          body: "Home visit: reviewed medications and housing needs"
        }
      }
    })
    yield* api.ecmActivities.create({
      path: { patient_id: member.id },
      payload: { activity: { activity_type: "task", message: "Call Rosa's pharmacy about refills", assigned_to_id: providerUsers[0]! } }
    })

    step = "this month's PRTF file"
    const monthStart = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth(), 1))
    const monthEnd = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth() + 1, 0))
    const prtf = yield* api.ecmPrtfReports.generate({
      payload: { start_date: day(monthStart), end_date: day(monthEnd), provider_npi: demoNpi, provider_name: "Demo Care ECM" }
    })

    step = "a session held earlier this week, with its note and claim"
    // Booked like the others, then recorded as held three days ago (a back-office correction).
    const { slot_ids: [pastSlot] } = yield* api.availability.createSlotsInBatch({
      payload: {
        provider_id: providerIds[0]!,
        slots: [{ start_time: new Date(weekdays[4]!.getTime() + 4 * 3_600_000), end_time: new Date(weekdays[4]!.getTime() + 5 * 3_600_000) }]
      }
    })
    const { book: pastBook } = yield* api.availability.createBook({
      payload: { book: { available_slot_id: pastSlot!, patient_id: clinicPatientIds[0]!, notes: "Demo session" } }
    })
    if (pastBook.appointment_id === null) return yield* Effect.dieMessage("a booking made no appointment")
    const heldAt = new Date(Date.UTC(options.now.getUTCFullYear(), options.now.getUTCMonth(), options.now.getUTCDate() - 3, 17))
    yield* api.appointments.update({ path: { id: pastBook.appointment_id }, payload: { appointment: { scheduled_at: heldAt } } })
    // The status machine's path: confirmed, started, completed.
    let held = (yield* api.appointments.show({ path: { id: pastBook.appointment_id } })).appointment
    for (const status of ["confirmed", "in_progress", "completed"] as const) {
      held = (yield* api.appointments.update({ path: { id: held.id }, payload: { appointment: { status } } })).appointment
    }
    const { session_note } = yield* api.clinicSessionNotes.create({
      payload: { session_note: { patient_id: clinicPatientIds[0]!, appointment_id: held.id } }
    })
    const { insurance_plan } = yield* api.insurancePlans.create({
      payload: { insurance_plan: { name: "Demo Medi-Cal Plan", payer_id: "DEMO1", claim_filing_indicator: "MC" } }
    })
    yield* api.coverage.update({
      path: { patient_id: clinicPatientIds[0]! },
      payload: { coverage: { insurance_plan_id: insurance_plan.id, member_id: "93000001A" } }
    })
    const { claim } = yield* api.claims.create({
      payload: {
        claim: {
          patient_id: clinicPatientIds[0]!, provider_id: providerIds[0]!, appointment_id: held.id,
          cpt_code: "90837", diagnosis_codes: ["F41.1"], service_date: day(heldAt), amount: 150
        }
      }
    })

    step = "a collaborator, a content assignment and a screening answer"
    const { collaborator } = yield* api.collaborators.create({
      payload: {
        collaborator: {
          first_name: "Ana", last_name: "Park", email: email("ana.park"), organization: "Lincoln Elementary",
          type: "school", patient_ids: [clinicPatientIds[0]!]
        }
      }
    })
    const pieces = yield* api.contentLibrary.pieces({ urlParams: {} })
    const { user_piece } = yield* api.userPieces.create({
      payload: { user_piece: { user_id: parentUserIds[0]!, content_piece_id: pieces.pieces[0]!.id } }
    })
    const catalogue = yield* api.questionnaires.list({ urlParams: { category: "screening" } })
    const screener = catalogue.questionnaires.find((q) => q.slug === "gad7") ?? catalogue.questionnaires[0]!
    const { questionnaire_response } = yield* api.questionnaireResponses.create({
      payload: {
        questionnaire_response: {
          questionnaire_id: QuestionnaireId.make(screener.id),
          patient_id: clinicPatientIds[2]!,
          responses: screener.questions.map((question) => ({ question_id: QuestionId.make(question.id), answer: question.options[0] ?? "n/a" }))
        }
      }
    })

    return {
      supervisorProviderId: supervisorId,
      providerIds,
      parentUserIds,
      clinicPatientIds,
      ecmPatientIds,
      appointmentIds,
      heldAppointmentId: held.id,
      outreachMemberId: PatientId.make(member.id),
      prtfReportId: prtf.prtf_report.id,
      claimId: claim.id,
      sessionNoteId: session_note.id,
      collaboratorId: collaborator.id,
      userPieceId: user_piece.id,
      questionnaireResponseId: questionnaire_response.id,
      mifFileId: mif.mif_file_id
    } satisfies DemoSummary
  }).pipe(
    Effect.mapError((error) => error instanceof DemoAlreadyLoaded ? error : new DemoStepFailed(step, error))
  )
}
