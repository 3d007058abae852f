/** Collaborators and collaborator assessments: handlers and the optional-session middleware. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect, Layer, Option, Redacted } from "effect"
import { Api } from "../../../Api/Api.js"
import { AssessmentForm, MaybeCurrentUser, OptionalAuthentication } from "../../../Api/Collaborators/Collaborators.js"
import { CurrentUser } from "../../../Api/Security.js"
import { Auth } from "../../../Services/Auth.js"
import { Assessments } from "../../../Services/Collaborators/Assessments.js"
import { Collaborators } from "../../../Services/Collaborators/Collaborators.js"
import { clientAddress } from "../Forwarded.js"

/** The session when a valid token came; none otherwise (the body's link token may still admit the caller). */
export const OptionalAuthenticationLive = Layer.effect(OptionalAuthentication, Effect.gen(function*() {
  const auth = yield* Auth
  return {
    userToken: (token: Redacted.Redacted<string>) =>
      Redacted.value(token) === "" ? Effect.succeed(Option.none()) : auth.authenticate(token)
  }
}))

export const HttpCollaboratorsLive = HttpApiBuilder.group(Api, "collaborators", (handlers) =>
  Effect.gen(function*() {
    const collaborators = yield* Collaborators
    return handlers
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => collaborators.list(caller, urlParams)))
      .handle("create", ({ payload }) =>
        Effect.flatMap(CurrentUser, (caller) => collaborators.create(caller, payload.collaborator)).pipe(Effect.map((collaborator) => ({ collaborator }))))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => collaborators.show(caller, path.id)).pipe(Effect.map((collaborator) => ({ collaborator }))))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(CurrentUser, (caller) => collaborators.update(caller, path.id, payload.collaborator)).pipe(
          Effect.map((collaborator) => ({ collaborator }))
        ))
      .handle("delete", ({ path }) => Effect.flatMap(CurrentUser, (caller) => collaborators.remove(caller, path.id)))
  }))

export const HttpCollaboratorAssessmentsLive = HttpApiBuilder.group(Api, "collaboratorAssessments", (handlers) =>
  Effect.gen(function*() {
    const assessments = yield* Assessments
    return handlers
      .handle("token", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => assessments.issueToken(caller, urlParams)))
      .handle("form", ({ urlParams }) =>
        Effect.flatMap(clientAddress, (address) => assessments.form(address, urlParams.token)).pipe(
          Effect.map((form) => AssessmentForm.make(form, true))
        ))
      .handle("decline", ({ payload }) => Effect.flatMap(clientAddress, (address) => assessments.decline(address, payload.token)))
      .handle("create", ({ payload }) =>
        Effect.gen(function*() {
          const address = yield* clientAddress
          const caller = yield* MaybeCurrentUser
          return { collaborator_assessment: yield* assessments.submit(address, caller, payload) }
        }))
      .handle("list", ({ urlParams }) => Effect.flatMap(CurrentUser, (caller) => assessments.list(caller, urlParams)))
      .handle("show", ({ path }) =>
        Effect.flatMap(CurrentUser, (caller) => assessments.show(caller, path.id)).pipe(
          Effect.map((collaborator_assessment) => ({ collaborator_assessment }))
        ))
  }))

export const HttpCollaboratorsAreaLive = Layer.mergeAll(HttpCollaboratorsLive, HttpCollaboratorAssessmentsLive).pipe(
  Layer.provide(OptionalAuthenticationLive)
)
