/**
 * Collaborators and collaborator assessments (general §2.4, §4.4, §5.4, §5.5). Teachers,
 * physicians and family report on a patient through a single-use link, without an account.
 */
import { HttpApiEndpoint, HttpApiGroup, HttpApiMiddleware, OpenApi } from "@effect/platform"
import { Context, type Option, Schema } from "effect"
import {
  AssessmentStatus, AssessmentToken, AssessmentType, Collaborator, CollaboratorAssessment, CollaboratorId,
  CollaboratorStatus, CollaboratorType, Specialization
} from "../../Domain/Collaborators/Collaborator.js"
import { AssessmentQuestion, maxAnswerLength } from "../../Domain/Collaborators/QuestionSets.js"
import { CollaboratorAssessmentIdFromText, CollaboratorIdFromText, PatientId, PatientIdFromText } from "../../Domain/Ids.js"
import { IsoTimestamp } from "../../Domain/Time.js"
import { Access, accessHeading, groupDocs, operationDocs, requestBody, specHeading } from "../Docs.js"
import { Forbidden, NotFound, reportAllErrors, TooManyRequests, Unauthorized, ValidationFailed } from "../Errors.js"
import { listQuery } from "../Lists.js"
import { Pagination } from "../Pagination.js"
import { BooleanFromQuery, BoundedArray, BoundedString, IssuedToken, maxLengths, Name, Phone, RequiredString } from "../Schemas.js"
import { Authentication, type Caller, userToken } from "../Security.js"

export const collaboratorsPageSize = 25
export const assessmentsPageSize = 25
export const maxLinkedPatients = 50
export const maxOrganizationLength = 200
export const maxTitleLength = 100

export const collaboratorMessages = {
  notFound: "Collaborator not found",
  assessmentNotFound: "Collaborator assessment not found",
  invalidLink: "Assessment link is invalid or has expired",
  differentAssessment: "This link is for a different assessment",
  notLinked: "is not linked to this collaborator",
  notActive: "is not active",
  move: (from: string, to: string) => `cannot change from ${from} to ${to}`
} as const

/** The caller when a valid `X-User-Token` came with the request; none otherwise (never a 401 by itself). */
export class MaybeCurrentUser extends Context.Tag("app/MaybeCurrentUser")<MaybeCurrentUser, Option.Option<Caller>>() {}

/** A session is optional: `POST /v1/collaborator_assessments` takes a link token in the body instead. */
export class OptionalAuthentication extends HttpApiMiddleware.Tag<OptionalAuthentication>()("app/OptionalAuthentication", {
  provides: MaybeCurrentUser,
  security: { userToken }
}) {}


const CollaboratorEmail = RequiredString(maxLengths.email).pipe(
  Schema.filter((s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s.trim()), { message: () => "invalid format" })
)
const Organization = RequiredString(maxOrganizationLength)
const PatientIds = BoundedArray(PatientId, maxLinkedPatients).annotations({
  description: `Patients to link (at most ${maxLinkedPatients}): each must be one the caller may see`
})

const optionalFields = {
  phone: Schema.optional(Schema.NullOr(Phone).annotations({ description: "Any common format; stored in E.164" })),
  title: Schema.optional(Schema.NullOr(BoundedString(maxTitleLength))),
  specialization: Schema.optional(Schema.NullOr(Specialization))
}

const collaboratorExample = {
  first_name: "Jordan",
  last_name: "Rivera",
  email: "j.rivera@school.example.org",
  organization: "Lincoln Elementary",
  type: "school",
  phone: "(415) 555-0132",
  title: "Teacher",
  specialization: "general_education",
  patient_ids: [12]
}

export class CreateCollaboratorRequest extends Schema.Class<CreateCollaboratorRequest>("CreateCollaboratorRequest")({
  collaborator: Schema.Struct({
    first_name: Name,
    last_name: Name,
    email: CollaboratorEmail,
    organization: Organization,
    type: CollaboratorType,
    ...optionalFields,
    patient_ids: Schema.optional(PatientIds)
  })
}, requestBody({ collaborator: collaboratorExample })) {}

export class UpdateCollaboratorRequest extends Schema.Class<UpdateCollaboratorRequest>("UpdateCollaboratorRequest")({
  collaborator: Schema.Struct({
    first_name: Schema.optional(Name),
    last_name: Schema.optional(Name),
    email: Schema.optional(CollaboratorEmail),
    organization: Schema.optional(Organization),
    type: Schema.optional(CollaboratorType),
    status: Schema.optional(CollaboratorStatus),
    ...optionalFields,
    patient_ids: Schema.optional(PatientIds.annotations({
      description: "The linked patients among those the caller may see (replaces them); links to patients the caller may not see stay"
    }))
  })
}, requestBody({ collaborator: { title: "Lead teacher", status: "active" } })) {}

export class CollaboratorResponse extends Schema.Class<CollaboratorResponse>("CollaboratorResponse")({ collaborator: Collaborator }) {}

export class CollaboratorList extends Schema.Class<CollaboratorList>("CollaboratorList")({
  collaborators: Schema.Array(Collaborator),
  pagination: Pagination
}) {}

export const ListCollaboratorsQuery = listQuery({
  size: "page_size",
  fields: {
    type: Schema.optional(CollaboratorType),
    status: Schema.optional(CollaboratorStatus),
    organization: Schema.optional(BoundedString(maxOrganizationLength).annotations({ description: "Organization contains this text (any case)" })),
    patient_id: Schema.optional(PatientIdFromText.annotations({ description: "Collaborators linked to this patient" }))
  }
})

export const TokenQuery = Schema.Struct({
  collaborator_id: CollaboratorIdFromText,
  patient_id: PatientIdFromText,
  assessment_type: AssessmentType,
  send: Schema.optional(BooleanFromQuery.annotations({ description: "`true`: email the link to the collaborator" }))
}).annotations(reportAllErrors)

export const FormQuery = Schema.Struct({ token: IssuedToken.annotations({ description: "The token of the assessment link" }) }).annotations(reportAllErrors)

export class AssessmentForm extends Schema.Class<AssessmentForm>("AssessmentForm")({
  assessment: Schema.Struct({
    assessment_type: AssessmentType,
    expires_at: IsoTimestamp,
    collaborator: Schema.Struct({ first_name: Schema.String, last_name: Schema.String }),
    patient: Schema.Struct({ first_name: Schema.String })
  }),
  questions: Schema.Array(AssessmentQuestion)
}) {}

export class DeclineRequest extends Schema.Class<DeclineRequest>("DeclineRequest")({
  token: IssuedToken.annotations({ description: "The token of the assessment link" })
}, requestBody({ token: "q0t3Xb8yJv2mW1sZ9kR4nP7cL5hA6eD0fG3iU8oY2wE" })) {}

export class Declined extends Schema.Class<Declined>("Declined")({
  declined: Schema.Boolean,
  assessment: Schema.Struct({ assessment_type: AssessmentType, status: AssessmentStatus })
}) {}

const Answer = Schema.Struct({
  question_id: RequiredString(64).annotations({ description: "An item id of the type's question set (docs/assessments.md)" }),
  answer: BoundedString(maxAnswerLength).annotations({ description: "An option label for choice items, text, or YYYY-MM-DD for dates" })
})

export class CreateAssessmentRequest extends Schema.Class<CreateAssessmentRequest>("CreateAssessmentRequest")({
  token: Schema.optional(IssuedToken.annotations({
    description: "The link's token: the collaborator answering without an account (it wins over an X-User-Token)"
  })),
  collaborator_assessment: Schema.Struct({
    collaborator_id: Schema.optional(CollaboratorId.annotations({ description: "Required with a session; with a token, must match it" })),
    patient_id: Schema.optional(PatientId.annotations({ description: "Required with a session; with a token, must match it" })),
    assessment_type: Schema.optional(AssessmentType.annotations({ description: "Required with a session; with a token, must match it" })),
    responses: BoundedArray(Answer, 20)
  })
}, requestBody(
  {
    collaborator_assessment: {
      collaborator_id: 4,
      patient_id: 12,
      assessment_type: "social_skills",
      responses: [
        { question_id: "starts_conversations", answer: "Often" },
        { question_id: "takes_turns", answer: "Sometimes" },
        { question_id: "cooperates", answer: "Often" },
        { question_id: "resolves_conflict", answer: "Rarely" },
        { question_id: "empathy", answer: "Almost always" }
      ]
    }
  },
  {
    token: "q0t3Xb8yJv2mW1sZ9kR4nP7cL5hA6eD0fG3iU8oY2wE",
    collaborator_assessment: { responses: [{ question_id: "reading", answer: "At grade level" }] }
  }
)) {}

export class AssessmentResponseBody extends Schema.Class<AssessmentResponseBody>("CollaboratorAssessmentResponse")({
  collaborator_assessment: CollaboratorAssessment
}) {}

export class AssessmentList extends Schema.Class<AssessmentList>("CollaboratorAssessmentList")({
  collaborator_assessments: Schema.Array(CollaboratorAssessment),
  pagination: Pagination
}) {}

export const ListAssessmentsQuery = listQuery({
  size: "page_size",
  fields: {
    patient_id: Schema.optional(PatientIdFromText),
    collaborator_id: Schema.optional(CollaboratorIdFromText),
    assessment_type: Schema.optional(AssessmentType),
    status: Schema.optional(AssessmentStatus)
  }
})

const recordAccess = "Signed in. The collaborator's owner (who added it) and admins; a provider or supervisor with a care " +
  "relationship to a linked patient may read it, and sees the links to the patients they may see. Anyone else: 403 `You are not " +
  "authorized to perform this action.`"
/** Who may assess for a patient: the collaborator's owner, an admin, or a provider or supervisor who sees the patient. */
const assessorAccess = "Signed in: the collaborator's owner, an admin, or a provider or supervisor who may see the patient (below); " +
  "others 403."

/** Collaborators (general §4.4). */
export class CollaboratorsApi extends HttpApiGroup.make("collaborators")
  .add(
    HttpApiEndpoint.get("list", "/collaborators")
      .setUrlParams(ListCollaboratorsQuery)
      .addSuccess(CollaboratorList)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "List collaborators",
        description: `The collaborators the caller may read, newest first, ${collaboratorsPageSize} a page. \`patient_id\` narrows ` +
          "to the patient's collaborators (a provider or supervisor who may see the patient reads all of them).",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.4"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/collaborators")
      .setPayload(CreateCollaboratorRequest)
      .addSuccess(CollaboratorResponse, { status: 201 })
      .annotateContext(operationDocs({
        summary: "Add a collaborator",
        description: "Adds a collaborator (status `pending`) owned by the caller, linked to `patient_ids`. One email per owner; " +
          "a patient that does not exist or that the caller may not see is `must exist`.",
        access: Access.signedIn,
        patients: { records: "general", refusal: "mustExist" },
        spec: "general §4.4, §5.4"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/collaborators/:id")
      .setPath(Schema.Struct({ id: CollaboratorIdFromText }))
      .addSuccess(CollaboratorResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({ summary: "Show a collaborator", description: "One collaborator with the ids of the patients linked to it; 404 `Collaborator not found` for an unknown or deleted one.", access: recordAccess, spec: "general §4.4, §5.4" }))
  )
  .add(
    HttpApiEndpoint.put("update", "/collaborators/:id")
      .setPath(Schema.Struct({ id: CollaboratorIdFromText }))
      .setPayload(UpdateCollaboratorRequest)
      .addSuccess(CollaboratorResponse)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Update a collaborator",
        description: "Changes the given fields (owner or admin). Status moves: pending → active or declined, active ⇄ inactive; " +
          "suspended and back: admins only; suspending revokes open links.",
        access: "Signed in: the collaborator's owner or an admin; others 403. `patient_ids` replaces the links to the patients " +
          "the caller may see (links to others stay).",
        patients: { records: "general", refusal: "mustExist" },
        spec: "general §4.4, §5.4"
      }))
  )
  .add(
    HttpApiEndpoint.del("delete", "/collaborators/:id")
      .setPath(Schema.Struct({ id: CollaboratorIdFromText }))
      .addSuccess(Schema.Void, { status: 204 })
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .annotateContext(operationDocs({
        summary: "Delete a collaborator",
        description: "Soft delete (owner or admin): assessments are kept, open links revoked and pending assessments cancelled.",
        access: "Signed in: the collaborator's owner or an admin; others 403.",
        spec: "general §4.4, §5.4"
      }))
  )
  .middleware(Authentication)
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Collaborators",
    description: "Teachers, physicians, therapists and family who report on a patient through assessment links (no account)."
  }))
{}

/**
 * `operationDocs` plus an optional session: a link token in the body is a way in too, so the
 * document lists "no security" beside the token (`security: [{userToken: []}, {}]`).
 */
const submitDocs = (() => {
  const description = "Either the collaborator with the link's `token` in the body (no session: collaborator, patient and type come " +
    "from the link; ids that differ are 403 `This link is for a different assessment`), or a signed-in owner, admin or a " +
    "provider or supervisor who may see the patient entering phoned answers with all of `collaborator_id`, `patient_id`, " +
    "`assessment_type` (another patient is 404 `Patient not found`). " +
    "A body token wins over a session. The link works once: an unknown, used, expired or revoked one is 401 " +
    "`Assessment link is invalid or has expired`; a 422 leaves it usable. Token callers are rate-limited per address."
  const access = "Anyone with an assessment link; or signed in (owner, admin, a provider or supervisor with a care relationship " +
    "to the patient, or any other patient with a break-glass `X-Access-Reason` header)."
  return OpenApi.annotations({
    summary: "Submit an assessment",
    description: [description, `${accessHeading} ${access}`, `${specHeading} general §4.4, §5.5`].join("\n\n"),
    override: { "x-single-use": "an assessment link is submitted once", security: [{ userToken: [] }, {}] }
  })
})()

/** Collaborator assessments: links (tokens), the public form, decline and submit (general §4.4, §5.5). */
export class CollaboratorAssessmentsApi extends HttpApiGroup.make("collaboratorAssessments")
  .add(
    HttpApiEndpoint.get("token", "/collaborator_assessments/token")
      .setUrlParams(TokenQuery)
      .addSuccess(AssessmentToken)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Issue an assessment link",
        description: "Creates (or reuses) the pending assessment of the collaborator, patient and type and a single-use link to it, " +
          "valid `ASSESSMENT_TOKEN_TTL_HOURS` (7 days). A new link revokes the open one. `send=true` emails it to the collaborator.",
        access: assessorAccess,
        patients: { records: "general" },
        spec: "general §4.4, §2.4"
      }))
  )
  .add(
    HttpApiEndpoint.get("form", "/collaborator_assessments/form")
      .setUrlParams(FormQuery)
      .addSuccess(AssessmentForm)
      .addError(Unauthorized.schema)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Open an assessment link",
        description: "What the collaborator answers: the type, who it is about (first name) and the questions. Does not use the " +
          "link up. 401 `Assessment link is invalid or has expired`. Rate-limited per client address (20 a minute).",
        access: Access.public,
        spec: "general §5.5 (ours)"
      }))
  )
  .add(
    HttpApiEndpoint.post("decline", "/collaborator_assessments/decline")
      .setPayload(DeclineRequest)
      .addSuccess(Declined)
      .addError(Unauthorized.schema)
      .addError(TooManyRequests.schema)
      .annotateContext(operationDocs({
        summary: "Decline through an assessment link",
        description: "The collaborator declines: their status becomes `declined`, the link is used and their pending assessments " +
          "are cancelled. Rate-limited per client address (20 a minute).",
        access: Access.public,
        spec: "general §5.5 (ours)",
        singleUse: "an assessment link is declined once"
      }))
  )
  .add(
    HttpApiEndpoint.post("create", "/collaborator_assessments")
      .setPayload(CreateAssessmentRequest)
      .addSuccess(AssessmentResponseBody, { status: 201 })
      .addError(Unauthorized.schema)
      .addError(Forbidden.schema)
      .addError(NotFound.schema)
      .addError(TooManyRequests.schema)
      .middleware(OptionalAuthentication)
      .annotateContext(submitDocs)
  )
  .add(
    HttpApiEndpoint.get("list", "/collaborator_assessments")
      .setUrlParams(ListAssessmentsQuery)
      .addSuccess(AssessmentList)
      .addError(NotFound.schema)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "List collaborator assessments",
        description: `Assessments the caller may read (the collaborator's owner, admins, the patient's parent, providers and ` +
          `supervisors with a care relationship to the patient), newest first, ${assessmentsPageSize} a page. With \`patient_id\`, ` +
          "a provider or supervisor who may see the patient reads all of the patient's assessments.",
        access: Access.signedIn,
        patients: { records: "general" },
        spec: "general §4.4 (beyond the spec)"
      }))
  )
  .add(
    HttpApiEndpoint.get("show", "/collaborator_assessments/:id")
      .setPath(Schema.Struct({ id: CollaboratorAssessmentIdFromText }))
      .addSuccess(AssessmentResponseBody)
      .addError(NotFound.schema)
      .middleware(Authentication)
      .annotateContext(operationDocs({
        summary: "Show a collaborator assessment",
        description: "One assessment; 404 `Collaborator assessment not found` for one the caller may not read.",
        access: "Signed in: the collaborator's owner, an admin, the patient's parent, or a provider or supervisor with a care " +
          "relationship to the patient.",
        patients: { records: "clinical", refusal: { sentence: "Any other patient's assessment is 404, as an unknown one." } },
        spec: "general §4.4 (beyond the spec)"
      }))
  )
  .addError(ValidationFailed.schema)
  .annotateContext(groupDocs({
    tag: "Collaborator assessments",
    description: "Single-use assessment links, the public form a collaborator answers, and the answers with their scores."
  }))
{}
