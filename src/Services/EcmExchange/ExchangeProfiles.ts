/** Exchange profiles (docs/ecm-exchange.md "Profiles"): validated, audited; the DHCS standard fills what is absent. */
import { Effect, Option } from "effect"
import type { CreateExchangeProfileRequest, UpdateExchangeProfileRequest } from "../../Api/EcmExchange/ExchangeProfiles.js"
import { ExchangeProfile, ExchangeProfileList } from "../../Api/EcmExchange/ExchangeProfiles.js"
import { ecmInvalid, ecmNotFound } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { type FileKind, profileProblems, standardProfile } from "../../Domain/EcmExchange/Files.js"
import { AuditLog } from "../AuditLog.js"
import { now } from "../Time.js"
import { ExchangeProfilesRepo, type ProfileRow, type ProfileSettings } from "./ExchangeProfilesRepo.js"
import { HealthPlansRepo } from "./HealthPlansRepo.js"

export const exchangeProfilesPageSize = 25

const toProfile = (row: ProfileRow) => ExchangeProfile.make(row, true)

type SettingsInput = UpdateExchangeProfileRequest

/** The settings given, the base's for the rest; trimmed. */
const settingsOf = (input: SettingsInput, base: ProfileSettings): ProfileSettings => ({
  columns: input.columns === undefined
    ? base.columns
    : input.columns.map((c) => ({ source: c.source.trim(), header: c.header.trim() })),
  date_format: input.date_format ?? base.date_format,
  delimiter: input.delimiter ?? base.delimiter,
  file_format: input.file_format ?? base.file_format,
  file_name_pattern: input.file_name_pattern?.trim() ?? base.file_name_pattern
})

const checked = (kind: FileKind, settings: ProfileSettings) => {
  const problems = profileProblems(kind, settings)
  return problems.length > 0 ? Effect.fail(ecmInvalid(problems)) : Effect.succeed(settings)
}

export class ExchangeProfiles extends Effect.Service<ExchangeProfiles>()("app/EcmExchangeProfiles", {
  dependencies: [ExchangeProfilesRepo.Default, HealthPlansRepo.Default],
  effect: Effect.gen(function*() {
    const profiles = yield* ExchangeProfilesRepo
    const plans = yield* HealthPlansRepo
    const audit = yield* AuditLog

    const create = Effect.fn("ExchangeProfiles.create")(function*(actorId: number, body: CreateExchangeProfileRequest) {
      const settings = yield* checked(body.file_kind, settingsOf(body, standardProfile(body.file_kind)))
      if (Option.isNone(yield* plans.find(body.health_plan_id))) return yield* Effect.fail(ecmInvalid(["Health plan must exist"]))
      const row = yield* profiles.insert(body.health_plan_id, body.file_kind, settings, yield* now)
      yield* audit.record({ actorId, action: "exchange_profile.create", targetType: "exchange_profile", targetId: row.id })
      return toProfile(row)
    })

    const found = (id: number) =>
      Effect.flatMap(profiles.find(id), Option.match({ onNone: () => Effect.fail(ecmNotFound("Exchange profile")), onSome: Effect.succeed }))

    const update = Effect.fn("ExchangeProfiles.update")(function*(actorId: number, id: number, body: UpdateExchangeProfileRequest) {
      yield* Effect.annotateCurrentSpan({ "exchange_profile.id": id })
      const current = yield* found(id)
      const settings = yield* checked(current.file_kind, settingsOf(body, current))
      const row = yield* profiles.update(id, settings, yield* now)
      if (Option.isNone(row)) return yield* Effect.fail(ecmNotFound("Exchange profile"))
      yield* audit.record({ actorId, action: "exchange_profile.update", targetType: "exchange_profile", targetId: id })
      return toProfile(row.value)
    })

    const show = (id: number) => Effect.map(found(id), toProfile)

    const list = (page: PageRequest) =>
      Effect.map(profiles.list(page), ({ pagination, rows }) =>
        ExchangeProfileList.make({ exchange_profiles: rows.map(toProfile), pagination }, true))

    return { create, update, show, list } as const
  })
}) {}
