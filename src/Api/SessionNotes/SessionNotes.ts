/**
 * Session notes (general §2.3, §4.2, §4.3, §4.15): the clinic endpoints, the admin
 * list, detail, deletion and PDF, addenda and sign-offs, and the supervisor views.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { AppointmentId, maxId, PatientId, PatientIdFromText, ProviderIdFromText } from "../../Domain/Ids.js"
import { AppointmentStatus, AppointmentType, PersonName } from "../../Domain/Scheduling/Scheduling.js"
import {
  Addendum, SessionNote, SessionNoteStatus, sessionNoteStatuses, SignOff, SupervisionStatus, SupervisorAppointment, SupervisorSessionNote
} from "../../Domain/SessionNotes/SessionNote.js"
import { BodyLimit } from "../BodyLimit.js"
import { Access, groupDocs, operationDocs, requestBody } from "../Docs.js"
import { NotFound, reportAllErrors, ValidationFailed } from "../Errors.js"
import { Pagination } from "../Pagination.js"
import { BoundedArray, BoundedString, IdParam, RequiredString } from "../Schemas.js"
import { AdminAuthentication, StaffAuthentication } from "../Security.js"
import { dateRange, listBodyFields, listQuery, nameFilter } from "../Lists.js"

export const sessionNotesPageSize = 25
/** Signed links to signature images live this long. */
export const signatureUrlMinutes = 30
export const sessionNoteLimits = {
  /** Characters per SOAP section: a long session's note is a few thousand. */
  section: 10_000,
  instructions: 5_000,
  supervisionNotes: 5_000,
  /** Decoded bytes of a signature PNG: a signature pad's image is a few KB to a few tens of KB. */
  signatureBytes: 256 * 1024,
  /** Width and height of a signature image, in pixels (read from the PNG header before decoding). */
  signatureSide: 2_000
} as const
/** Longest signature data URI: a PNG of `signatureBytes`, base64 (4/3), with its prefix. */
export const maxSignatureDataUriLength = Math.ceil(sessionNoteLimits.signatureBytes / 3) * 4 + 32
/** Bodies carrying a note's content (5 sections, each character possibly a `\u` escape). */
export const noteBodyBytes = 512 * 1024
/** Bodies carrying a signature image and instructions. */
export const signatureBodyBytes = 512 * 1024

export const sessionNoteMessages = {
  notFound: "Session note not found",
  addendumNotFound: "Addendum not found",
  signOffNotFound: "Sign off not found",
  move: (from: string, to: string) => `cannot change from ${from} to ${to}`,
  kept: (status: string) => `is ${status}: notes in that status are kept for compliance; only draft notes can be deleted`,
  locked: "is locked: the note was signed; corrections are addenda",
  notEditable: (status: string) => `can't be changed while the note is ${status}`,
  completedReadOnly: "is completed: the note is read-only; corrections are addenda",
  notSigned: (status: string) => `is ${status}: only signed notes can be exported`,
  signature: {
    png: "must be a PNG image (data:image/png;base64,…)",
    tooLarge: `is too large (maximum is ${sessionNoteLimits.signatureBytes / 1024} KB)`,
    dimensions: `is too large (maximum is ${sessionNoteLimits.signatureSide}×${sessionNoteLimits.signatureSide} pixels)`,
    corrupt: "is not a valid PNG image",
    blank: "can't be blank"
  }
} as const

const SessionNoteIdValue = Schema.Int.pipe(
  Schema.between(1, maxId),
  Schema.annotations({ message: () => "is invalid", description: "A session note id" })
)

const Section = BoundedString(sessionNoteLimits.section)
const ContentInput = Schema.Struct({
  subjective: Schema.optional(Schema.NullOr(Section)),
  objective: Schema.optional(Schema.NullOr(Section)),
  assessment: Schema.optional(Schema.NullOr(Section)),
  plan: Schema.optional(Schema.NullOr(Section)),
  free_text: Schema.optional(Schema.NullOr(Section))
}).annotations({ description: "SOAP sections (subjective, objective, assessment, plan) and free_text; a section left out or blank is null" })
export type ContentInput = typeof ContentInput.Type

const SignatureDataUri = RequiredString(maxSignatureDataUriLength).annotations({
  description: `A PNG image as a base64 data URI (\`data:image/png;base64,…\`), at most ${sessionNoteLimits.signatureBytes / 1024} KB ` +
    `and ${sessionNoteLimits.signatureSide}×${sessionNoteLimits.signatureSide} pixels`
})

/** A review date: `YYYY-MM-DD` (midnight UTC) or an ISO 8601 timestamp with an offset. */
const reviewDatePattern = "^\\d{4}-\\d{2}-\\d{2}(T\\d{2}:\\d{2}(:\\d{2}(\\.\\d{1,6})?)?(Z|[+-]\\d{2}:\\d{2}))?$"
const reviewDateRegex = new RegExp(reviewDatePattern)
const isReviewDate = (s: string): boolean => {
  if (!reviewDateRegex.test(s) || s.slice(0, 4) < "1900") return false
  const day = new Date(`${s.slice(0, 10)}T00:00:00.000Z`)
  if (Number.isNaN(day.getTime()) || day.toISOString().slice(0, 10) !== s.slice(0, 10)) return false
  if (s.length === 10) return true
  return Number(s.slice(11, 13)) < 24 && Number(s.slice(14, 16)) < 60 && !Number.isNaN(new Date(s).getTime())
}
const ReviewDate = Schema.String.pipe(
  Schema.filter(isReviewDate, { message: () => "is invalid", jsonSchema: { pattern: reviewDatePattern, maxLength: 35 } }),
  Schema.compose(Schema.transform(Schema.String, Schema.DateFromSelf, {
    strict: true,
    decode: (s) => new Date(s.length === 10 ? `${s}T00:00:00.000Z` : s),
    encode: (d) => d.toISOString()
  })),
  Schema.annotations({ description: "ISO 8601: a date (YYYY-MM-DD, midnight UTC) or a timestamp with an offset" })
)

const exampleContent = {
  subjective: "Parent reports fewer tantrums at home this week.",
  objective: "Engaged for the full 50 minutes; used the breathing exercise twice.",
  assessment: "Progressing toward goal 1.",
  plan: "Continue weekly CBT; practise the feelings chart daily."
}

export class CreateSessionNoteRequest extends Schema.Class<CreateSessionNoteRequest>("CreateSessionNoteRequest")({
  session_note: Schema.Struct({
    patient_id: PatientId.annotations({ description: "The patient" }),
    appointment_id: AppointmentId.annotations({ description: "The session's appointment: of this patient, and (for a provider) their own" }),
    content: Schema.optional(ContentInput)
  })
}, requestBody({ session_note: { patient_id: 7, appointment_id: 345, content: exampleContent } })) {}
export type NewSessionNote = CreateSessionNoteRequest["session_note"]

export class UpdateSessionNoteRequest extends Schema.Class<UpdateSessionNoteRequest>("UpdateSessionNoteRequest")({
  session_note: Schema.Struct({
    content: Schema.optional(ContentInput.annotations({ description: "Replaces the content (draft or requires_addendum, never once signed)" })),
    status: Schema.optional(SessionNoteStatus.annotations({ description: "pending_review (submit), pending_signature (review passed, admin; supervised notes move by the supervisor's approval) or archived (admin)" })),
    supervision_status: Schema.optional(Schema.Literal("approved", "escalated").annotations({
      message: () => "is not included in the list",
      description: "The supervisor (or an admin): approved or escalated"
    })),
    supervision_notes: Schema.optional(Schema.NullOr(BoundedString(sessionNoteLimits.supervisionNotes)))
  })
}, requestBody(
  { session_note: { content: exampleContent } },
  { session_note: { status: "pending_review" } },
  { session_note: { supervision_status: "approved", supervision_notes: "Good use of the treatment plan goals." } }
)) {}
export type SessionNoteChanges = UpdateSessionNoteRequest["session_note"]

export class SessionNoteResponse extends Schema.Class<SessionNoteResponse>("SessionNoteResponse")({ session_note: SessionNote }) {}
export class SessionNoteList extends Schema.Class<SessionNoteList>("SessionNoteList")({
  session_notes: Schema.Array(SessionNote),
  pagination: Pagination
}) {}

const ClinicListQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText.annotations({ description: "The patient (required)" })),
    status: Schema.optional(SessionNoteStatus)
  }
})

const LastQuery = Schema.Struct({
  patient_id: Schema.optional(PatientIdFromText.annotations({ description: "The patient (required)" }))
}).annotations(reportAllErrors)

export const SessionNoteSortColumn = Schema.Literal(
  "id", "status", "patient_id", "provider_id", "appointment_date", "created_at", "updated_at"
).annotations({ message: () => "is not included in the list" })
export type SessionNoteSortColumn = typeof SessionNoteSortColumn.Type

const AdminListQuery = listQuery({
  size: "page_size",
  sortBy: SessionNoteSortColumn,
  search: "Patient or provider name",
  fields: {
    provider_id: Schema.optional(ProviderIdFromText),
    patient_id: Schema.optional(PatientIdFromText),
    status: Schema.optional(SessionNoteStatus)
  }
})

export class FilterSessionNotesRequest extends Schema.Class<FilterSessionNotesRequest>("FilterSessionNotesRequest")({
  ...listBodyFields({
    size: "page_size",
    sortBy: SessionNoteSortColumn,
    search: "Patient or provider name",
    filters: Schema.Struct({
      date: dateRange("The appointment's day (clinic time zone), both inclusive"),
      status: Schema.optional(Schema.NullOr(Schema.Union(
        SessionNoteStatus,
        BoundedArray(SessionNoteStatus, sessionNoteStatuses.length)
      )).annotations({ description: "A status or a list of statuses" })),
      appointment_type: Schema.optional(Schema.NullOr(AppointmentType)),
      patient_name: nameFilter(),
      provider_name: nameFilter()
    })
  })
}, requestBody({
  sort_by: "appointment_date",
  sort_dir: "DESC",
  page_size: 25,
  filters: { date: { start_date: "2026-01-01", end_date: "2026-01-31" }, status: ["pending_review", "pending_signature"], provider_name: "Quinn" }
})) {}

export class SessionNoteFilters extends Schema.Class<SessionNoteFilters>("SessionNoteFilters")({
  statuses: Schema.Array(SessionNoteStatus),
  appointment_types: Schema.Array(AppointmentType),
  providers: Schema.Array(PersonName)
}) {}

export class CreateAddendumRequest extends Schema.Class<CreateAddendumRequest>("CreateAddendumRequest")({
  session_note_id: SessionNoteIdValue,
  addendum: Schema.Struct({
    instructions: RequiredString(sessionNoteLimits.instructions),
    signature: Schema.optional(SignatureDataUri)
  })
}, requestBody({ session_note_id: 12, addendum: { instructions: "Add the parent's report on school behaviour to the subjective section." } })) {}

export class UpdateAddendumRequest extends Schema.Class<UpdateAddendumRequest>("UpdateAddendumRequest")({
  addendum: Schema.Struct({
    instructions_response: Schema.optional(RequiredString(sessionNoteLimits.instructions).annotations({ description: "Required to answer" })),
    responded_signature: Schema.optional(SignatureDataUri)
  })
}, requestBody({ addendum: { instructions_response: "Added: teacher reports two calm days out of five." } })) {}

export class AddendumResponse extends Schema.Class<AddendumResponse>("AddendumResponse")({ addendum: Addendum }) {}

export class CreateSignOffRequest extends Schema.Class<CreateSignOffRequest>("CreateSignOffRequest")({
  session_note_id: SessionNoteIdValue,
  sign_off: Schema.Struct({
    instructions: Schema.optional(Schema.NullOr(BoundedString(sessionNoteLimits.instructions))),
    review_date: ReviewDate,
    signature: SignatureDataUri
  })
}, requestBody({
  session_note_id: 12,
  sign_off: {
    review_date: new Date("2026-01-06T00:00:00.000Z"),
    signature: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
  }
})) {}

export class UpdateSignOffRequest extends Schema.Class<UpdateSignOffRequest>("UpdateSignOffRequest")({
  sign_off: Schema.Struct({
    instructions: Schema.optional(Schema.NullOr(BoundedString(sessionNoteLimits.instructions))),
    review_date: Schema.optional(ReviewDate)
  })
}, requestBody({ sign_off: { instructions: "Reviewed with the provider in supervision.", review_date: new Date("2026-01-07T00:00:00.000Z") } })) {}

export class SignOffResponse extends Schema.Class<SignOffResponse>("SignOffResponse")({ sign_off: SignOff }) {}

export class SupervisorSessionNoteList extends Schema.Class<SupervisorSessionNoteList>("SupervisorSessionNoteList")({
  session_notes: Schema.Array(SupervisorSessionNote),
  pagination: Pagination
}) {}
export class SupervisorSessionNoteResponse extends Schema.Class<SupervisorSessionNoteResponse>("SupervisorSessionNoteResponse")({
  session_note: SupervisorSessionNote
}) {}
export class SupervisorAppointmentList extends Schema.Class<SupervisorAppointmentList>("SupervisorAppointmentList")({
  appointments: Schema.Array(SupervisorAppointment),
  pagination: Pagination
}) {}
export class SupervisorAppointmentResponse extends Schema.Class<SupervisorAppointmentResponse>("SupervisorAppointmentResponse")({
  appointment: SupervisorAppointment
}) {}

const SupervisorNotesQuery = listQuery({
  size: "page_size",
  fields: {
    supervisor_id: Schema.optional(ProviderIdFromText.annotations({ description: "The supervising provider's id" })),
    status: Schema.optional(SessionNoteStatus),
    provider_id: Schema.optional(ProviderIdFromText)
  }
})

const SupervisorAppointmentsQuery = listQuery({
  size: "page_size",
  fields: {
    supervisor_id: Schema.optional(ProviderIdFromText.annotations({ description: "The supervising provider's id" })),
    provider_id: Schema.optional(ProviderIdFromText),
    status: Schema.optional(AppointmentStatus),
    supervision_status: Schema.optional(SupervisionStatus)
  }
})

const idPath = Schema.Struct({ id: IdParam })

export const PdfBody = HttpApiSchema.Uint8Array({ contentType: "application/pdf" }).annotations({
  description: "The signed note as a PDF (application/pdf)"
})

const staffRules = "Clinic staff (`X-User-Token`; a `parent` gets 403 `Staff access required`). A provider reads and writes " +
  "the notes of their own appointments; their supervisor reads them; admins see every note. Any other note is 404 " +
  "`Session note not found`."

const statusMachine = "Status moves: draft → pending_review (the provider submits) → pending_signature (review passed) → " +
  "completed (signed off); pending_review and pending_signature → requires_addendum (an addendum) → pending_review (the " +
  "provider answers it); every status but completed → archived (admin); completed → requires_addendum only through an " +
  "addendum (the body stays locked). Other moves are 422 `{\"errors\":{\"status\":[\"cannot change from … to …\"]}}`. " +
  "See docs/session-notes.md."

/** Clinic session notes (general §4.2). */
export class ClinicSessionNotesApi extends HttpApiGroup.make("clinicSessionNotes")
  .add(
    HttpApiEndpoint.get("list", "/clinic/patients/session_notes")
      .setUrlParams(ClinicListQuery)
      .addSuccess(SessionNoteList)
      .annotateContext(operationDocs({
        summary: "List a patient's session notes",
        description: `The patient's notes the caller may read, newest first, ${sessionNotesPageSize} a page by default ` +
          "(each read is audited). `patient_id` is required.",
        access: Access.staff,
        patients: { records: "clinical" },
        spec: "general §2.3, §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("last", "/clinic/patients/session_notes/last")
      .setUrlParams(LastQuery)
      .addSuccess(SessionNoteResponse)
      .annotateContext(operationDocs({
        summary: "A patient's latest session note",
        description: "The patient's most recently created note the caller may read; 404 `Session note not found` when none.",
        access: Access.staff,
        patients: { records: "clinical" },
        spec: "general §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/clinic/patients/session_notes/:id")
      .setPath(idPath)
      .addSuccess(SessionNoteResponse)
      .annotateContext(operationDocs({
        summary: "Show a session note",
        description: `One note with its addenda and sign-offs (the read is audited). ${staffRules}`,
        access: Access.staff,
        spec: "general §2.3, §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/clinic/patients/session_notes")
      .setPayload(CreateSessionNoteRequest)
      .addSuccess(SessionNoteResponse, { status: 201 })
      .annotate(BodyLimit, noteBodyBytes)
      .annotateContext(operationDocs({
        summary: "Write a session note",
        description: "A draft note for an appointment of the patient: a provider for their own appointments, an admin for " +
          "any. The appointment must belong to the patient (422 `must exist`); one note per appointment (422 `has already " +
          "been taken`). `supervision_required` and `supervisor_id` come from the provider's supervisor.",
        access: Access.staff,
        patients: { records: "clinical" },
        spec: "general §2.3, §4.2"
      }))
  )
  .add(
    HttpApiEndpoint.put("update", "/clinic/patients/session_notes/:id")
      .setPath(idPath)
      .setPayload(UpdateSessionNoteRequest)
      .addSuccess(SessionNoteResponse)
      .annotate(BodyLimit, noteBodyBytes)
      .annotateContext(operationDocs({
        summary: "Edit, submit, review or archive a session note",
        description: "Changes the content (draft or requires_addendum; the previous version is kept), moves the status, or " +
          "records the supervisor's review (`supervision_status` approved moves a pending_review note to " +
          `pending_signature). A completed note is read-only (422). ${statusMachine}`,
        access: Access.staff,
        spec: "general §2.3, §4.2"
      }))
  )
  .middleware(StaffAuthentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Clinic · Session notes",
    description: "The clinical record of each therapy session: SOAP content, its review, supervision and sign-off. " +
      "Therapy notes are not shared through the parent portal."
  }))
{}

/** Admin session notes (general §4.3). */
export class SessionNotesApi extends HttpApiGroup.make("sessionNotes")
  .add(
    HttpApiEndpoint.get("list", "/admin/clinic/session_notes")
      .setUrlParams(AdminListQuery)
      .addSuccess(SessionNoteList)
      .annotateContext(operationDocs({
        summary: "List session notes",
        description: `Every note, newest first unless \`sort_by\`/\`sort_dir\` say otherwise, ${sessionNotesPageSize} a page ` +
          "by default; `search` matches patient and provider names.",
        access: Access.admin,
        spec: "general §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.post("filter", "/admin/clinic/session_notes/filter_notes")
      .setPayload(FilterSessionNotesRequest)
      .addSuccess(SessionNoteList)
      .annotateContext(operationDocs({
        summary: "Filter session notes",
        description: "The list with the §4.3 filters: the appointment's day range, status (one or a list), appointment type, " +
          "patient and provider name.",
        access: Access.admin,
        spec: "general §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.get("filters", "/admin/clinic/session_notes/filters")
      .addSuccess(SessionNoteFilters)
      .annotateContext(operationDocs({
        summary: "Session note filter options",
        description: "The statuses, appointment types and active providers.",
        access: Access.admin,
        spec: "general §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/admin/clinic/session_notes/:id")
      .setPath(idPath)
      .addSuccess(SessionNoteResponse)
      .annotateContext(operationDocs({
        summary: "Show a session note",
        description: "The note with its addenda and sign-offs (the read is audited).",
        access: Access.admin,
        spec: "general §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.get("pdf", "/admin/clinic/session_notes/:id/pdf")
      .setPath(idPath)
      .addSuccess(PdfBody)
      .annotateContext(operationDocs({
        summary: "Download a signed session note as PDF",
        description: "The note's content, addenda, sign-offs and signature images as a PDF, for auditors and payers (beyond " +
          "the spec). Only signed notes: otherwise 422 `{\"errors\":{\"status\":[\"is … : only signed notes can be exported\"]}}`. Audited.",
        access: Access.admin,
        spec: "general §4.3 (beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/admin/clinic/session_notes/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .annotateContext(operationDocs({
        summary: "Delete a draft session note",
        description: "Deletes a draft note (audited). Notes in any other status are kept for compliance: 422.",
        access: Access.admin,
        spec: "general §4.3"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Session notes",
    description: "Every session note: lists, filters, detail, compliance-restricted deletion and the signed PDF."
  }))
{}

const reviewerRules = "Clinic staff (`X-User-Token`; a `parent` gets 403 `Staff access required`); a note the caller may not " +
  "read is 404 `Session note not found`."

/** Addenda and sign-offs (general §4.3): reviewers and providers, not only admins. */
export class SessionNoteReviewsApi extends HttpApiGroup.make("sessionNoteReviews")
  .add(
    HttpApiEndpoint.post("createAddendum", "/admin/clinic/session_notes/addendums")
      .setPayload(CreateAddendumRequest)
      .addSuccess(AddendumResponse, { status: 201 })
      .annotate(BodyLimit, signatureBodyBytes)
      .annotateContext(operationDocs({
        summary: "Ask for an addendum",
        description: "The note's supervisor or an admin asks the provider for changes: the note (pending_review, " +
          "pending_signature or completed) moves to requires_addendum, a supervised note's supervision_status to " +
          `requires_changes. ${reviewerRules} The signature, when given, must be a PNG (422 otherwise).`,
        access: Access.staff,
        spec: "general §2.3, §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.put("updateAddendum", "/admin/clinic/session_notes/addendums/:id")
      .setPath(idPath)
      .setPayload(UpdateAddendumRequest)
      .addSuccess(AddendumResponse)
      .annotate(BodyLimit, signatureBodyBytes)
      .annotateContext(operationDocs({
        summary: "Answer an addendum",
        description: "The note's provider answers (once): when no addendum is left open the note moves back to " +
          `pending_review (and supervision to pending_supervision). ${reviewerRules}`,
        access: Access.staff,
        spec: "general §2.3, §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.post("createSignOff", "/admin/clinic/session_notes/sign_offs")
      .setPayload(CreateSignOffRequest)
      .addSuccess(SignOffResponse, { status: 201 })
      .annotate(BodyLimit, signatureBodyBytes)
      .annotateContext(operationDocs({
        summary: "Sign off a session note",
        description: "The note's supervisor or an admin signs (PNG signature, stored with the SHA-256 of the content signed). " +
          "A pending_signature note with nothing pending (no open addendum; for a supervised note, the supervisor's " +
          `sign-off of the current content) becomes completed and its content is locked. ${reviewerRules}`,
        access: Access.staff,
        spec: "general §2.3, §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.put("updateSignOff", "/admin/clinic/session_notes/sign_offs/:id")
      .setPath(idPath)
      .setPayload(UpdateSignOffRequest)
      .addSuccess(SignOffResponse)
      .annotateContext(operationDocs({
        summary: "Edit a sign-off",
        description: "The reviewer (or an admin) changes instructions and review_date while the note is not completed. " +
          `${reviewerRules}`,
        access: Access.staff,
        spec: "general §4.3"
      }))
  )
  .add(
    HttpApiEndpoint.del("deleteSignOff", "/admin/clinic/session_notes/sign_offs/:id")
      .setPath(idPath)
      .addSuccess(Schema.Void, { status: 204 })
      .annotateContext(operationDocs({
        summary: "Withdraw a sign-off",
        description: `The reviewer (or an admin) withdraws it while the note is not completed (audited). ${reviewerRules}`,
        access: Access.staff,
        spec: "general §4.3"
      }))
  )
  .middleware(StaffAuthentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Session note reviews",
    description: "Addenda (a reviewer's request for changes and the provider's answer) and sign-offs, with PNG signatures."
  }))
{}

/** Admin supervisors' notes and appointments (general §4.15). */
export class SupervisorSessionNotesApi extends HttpApiGroup.make("supervisorSessionNotes")
  .add(
    HttpApiEndpoint.get("listNotes", "/admin/clinic/supervisors/session_notes")
      .setUrlParams(SupervisorNotesQuery)
      .addSuccess(SupervisorSessionNoteList)
      .annotateContext(operationDocs({
        summary: "List supervised session notes",
        description: `Notes that have a supervisor, with supervision_status and supervision_notes, newest first, ${sessionNotesPageSize} a page by default.`,
        access: Access.admin,
        spec: "general §2.3, §4.15"
      }))
  )
  .add(
    HttpApiEndpoint.get("showNote", "/admin/clinic/supervisors/session_notes/:id")
      .setPath(idPath)
      .addSuccess(SupervisorSessionNoteResponse)
      .annotateContext(operationDocs({
        summary: "Show a supervised session note",
        description: "The note in the supervisor view (the read is audited); 404 for a note without a supervisor.",
        access: Access.admin,
        spec: "general §2.3, §4.15"
      }))
  )
  .add(
    HttpApiEndpoint.get("listAppointments", "/admin/clinic/supervisors/appointments")
      .setUrlParams(SupervisorAppointmentsQuery)
      .addSuccess(SupervisorAppointmentList)
      .annotateContext(operationDocs({
        summary: "List supervised appointments",
        description: "Appointments of supervised providers (or with a supervised note), soonest first, in the §2.7 supervisor " +
          `appointment representation, ${sessionNotesPageSize} a page by default.`,
        access: Access.admin,
        spec: "general §2.7, §4.15"
      }))
  )
  .add(
    HttpApiEndpoint.get("showAppointment", "/admin/clinic/supervisors/appointments/:id")
      .setPath(idPath)
      .addSuccess(SupervisorAppointmentResponse)
      .annotateContext(operationDocs({
        summary: "Show a supervised appointment",
        description: "One appointment in the §2.7 supervisor representation; 404 `Appointment not found` when it has no supervisor.",
        access: Access.admin,
        spec: "general §2.7, §4.15"
      }))
  )
  .middleware(AdminAuthentication)
  .addError(NotFound.schema)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Admin · Supervision",
    description: "Session notes and appointments under supervision, with the supervision status."
  }))
{}
