/** Claims (general §4.6): decode, take the caller, call the billing services. */
import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../../Api/Api.js"
import { claimsPageSize } from "../../../Api/Billing/Claims.js"
import { visitCriteriaOf } from "../../../Api/Lists.js"
import { pageRequest } from "../../../Api/Pagination.js"
import { CurrentUser } from "../../../Api/Security.js"
import { ClaimDocuments } from "../../../Services/Billing/ClaimDocuments.js"
import { Claims } from "../../../Services/Billing/Claims.js"
import { EdiBatches } from "../../../Services/Billing/EdiBatches.js"

export const HttpClaimsLive = HttpApiBuilder.group(Api, "claims", (handlers) =>
  Effect.gen(function*() {
    const claims = yield* Claims
    const documents = yield* ClaimDocuments
    const edi = yield* EdiBatches
    const asCaller = <A, E, R>(f: (actorId: number) => Effect.Effect<A, E, R>) => Effect.flatMap(CurrentUser, (caller) => f(caller.id))
    return handlers
      .handle("list", ({ urlParams }) =>
        claims.list({
          status: urlParams.status,
          patientId: urlParams.patient_id,
          providerId: urlParams.provider_id,
          sortBy: urlParams.sort_by,
          sortDir: urlParams.sort_dir
        }, pageRequest(urlParams, claimsPageSize)))
      .handle("filter", ({ payload }) =>
        claims.filter({
          ...visitCriteriaOf(payload),
          status: payload.filters?.status,
          insurancePlanId: payload.filters?.insurance_plan_id,
          appointmentId: payload.filters?.appointment_id
        }, pageRequest(payload, claimsPageSize)))
      .handle("filters", () => claims.filters)
      .handle("generateEdi", ({ payload }) => asCaller((id) => edi.generate(id, payload.claim_ids, payload.batch_name)))
      .handle("create", ({ payload }) => asCaller((id) => claims.create(id, payload.claim)).pipe(Effect.map((claim) => ({ claim }))))
      .handle("show", ({ path }) => Effect.map(claims.show(path.id), (claim) => ({ claim })))
      .handle("update", ({ path, payload }) =>
        asCaller((id) => claims.update(id, path.id, payload.claim)).pipe(Effect.map((claim) => ({ claim }))))
      .handle("delete", ({ path }) => asCaller((id) => claims.remove(id, path.id)))
      .handle("listDocuments", ({ path }) => documents.list(path.claim_id))
      .handle("createDocument", ({ path, payload }) =>
        asCaller((id) => documents.create(id, path.claim_id, payload.document)).pipe(Effect.map((document) => ({ document }))))
      .handle("showDocument", ({ path }) => Effect.map(documents.show(path.claim_id, path.id), (document) => ({ document })))
      .handle("updateDocument", ({ path, payload }) =>
        asCaller((id) => documents.update(id, path.claim_id, path.id, payload.document)).pipe(Effect.map((document) => ({ document }))))
      .handle("deleteDocument", ({ path }) => asCaller((id) => documents.remove(id, path.claim_id, path.id)))
  }))
