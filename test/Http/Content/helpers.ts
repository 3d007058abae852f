/** Families, staff and a hand-built library for the content tests, made through the Api. */
import { Effect } from "effect"
import { clientAs, request } from "../../support/app.js"
import { adminToken, newPatient, signedIn } from "../Patients/helpers.js"

export { adminToken, newPatient, signedIn }

/** A parent with one patient (date of birth given), and the staff who made it (front desk: content assignments are not clinical, and front desk sees every patient's). */
export const family = (dateOfBirth = "2015-06-01") =>
  Effect.gen(function*() {
    const staff = yield* signedIn("support")
    const parent = yield* signedIn("parent")
    const patient = yield* newPatient(staff.token, { user_id: parent.id, date_of_birth: dateOfBirth })
    return { staff, parent, patient }
  })

/** A bundle piece with defaults: an external video for everyone. */
export const piece = (slug: string, fields: Record<string, unknown> = {}) => ({
  slug,
  title: `Title of ${slug}`,
  content_type: "video",
  url: `https://content.test/${slug}`,
  age_group: "all",
  ...fields
})

export const tag = (slug: string, fields: Record<string, unknown> = {}) => ({ slug, name: slug, ...fields })

/** Imports a bundle as the admin: the response body, failing the test unless 200. */
export const importBundle = (bundle: Record<string, unknown>, query = "") =>
  Effect.gen(function*() {
    const token = yield* adminToken
    const response = yield* request("POST", `/v1/admin/content/import${query}`, { token, body: { tags: [], collections: [], pieces: [], ...bundle } })
    if (response.status !== 200) return yield* Effect.dieMessage(`import failed: ${response.status} ${JSON.stringify(response.body)}`)
    return response.body as Record<string, Record<string, number>>
  })

/** Slug → id of every piece (published or not), read from the export order and the list. */
export const pieceIds = Effect.gen(function*() {
  const client = yield* clientAs(yield* adminToken)
  const listed = yield* client.contentLibrary.pieces({ urlParams: { page_size: 100 } })
  return new Map(listed.pieces.map((p) => [p.url?.replace("https://content.test/", ""), p.id]))
}).pipe(Effect.orDie)

export const assign = (token: string, userPiece: Record<string, unknown>) =>
  request("POST", "/v1/content/user_pieces", { token, body: { user_piece: userPiece } })

export const updatePiece = (token: string, id: number, userPiece: Record<string, unknown>) =>
  request("PUT", `/v1/content/user_pieces/${id}`, { token, body: { user_piece: userPiece } })

export const idOf = (body: unknown, key = "user_piece") => (body as Record<string, { id: number }>)[key]!.id
