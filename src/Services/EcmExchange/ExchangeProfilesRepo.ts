/** The only SQL on `exchange_profiles` (ARCHITECTURE "Persistence"): rows decoded, SQL errors defects. */
import { SqlClient } from "@effect/sql"
import { Effect, Option, Schema } from "effect"
import { ecmInvalid } from "../../Api/Errors.js"
import type { PageRequest } from "../../Api/Pagination.js"
import { dateFormats, delimiters, fileFormats, type FileKind, fileKinds } from "../../Domain/EcmExchange/Files.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { isUniqueViolation } from "../SqlErrors.js"

export const ProfileColumns = Schema.Array(Schema.Struct({ source: Schema.String, header: Schema.String }))

export const ProfileRow = Schema.Struct({
  id: Schema.Int,
  health_plan_id: Schema.Int,
  file_kind: Schema.Literal(...fileKinds),
  columns: ProfileColumns,
  date_format: Schema.Literal(...dateFormats),
  delimiter: Schema.Literal(...delimiters),
  file_format: Schema.Literal(...fileFormats),
  file_name_pattern: Schema.String,
  created_at: Schema.DateFromSelf,
  updated_at: Schema.DateFromSelf
})
export type ProfileRow = typeof ProfileRow.Type

const Settings = ProfileRow.pipe(Schema.pick("columns", "date_format", "delimiter", "file_format", "file_name_pattern"))
export type ProfileSettings = typeof Settings.Type

const columnsJson = (columns: ProfileSettings["columns"]) => JSON.stringify(columns)

export class ExchangeProfilesRepo extends Effect.Service<ExchangeProfilesRepo>()("app/EcmExchangeProfilesRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage

    const insertOne = SqlSchema.single({
      Request: Schema.Struct({ healthPlanId: Schema.Int, kind: Schema.Literal(...fileKinds), settings: Settings, at: Schema.DateFromSelf }),
      Result: ProfileRow,
      execute: ({ at, healthPlanId, kind, settings: s }) =>
        sql`INSERT INTO exchange_profiles (health_plan_id, file_kind, columns, date_format, delimiter, file_format,
            file_name_pattern, created_at, updated_at)
          VALUES (${healthPlanId}, ${kind}, ${columnsJson(s.columns)}::jsonb, ${s.date_format}, ${s.delimiter},
            ${s.file_format}, ${s.file_name_pattern}, ${at}, ${at})
          RETURNING *`
    })

    const updateOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, settings: Settings, at: Schema.DateFromSelf }),
      Result: ProfileRow,
      execute: ({ at, id, settings: s }) =>
        sql`UPDATE exchange_profiles SET columns = ${columnsJson(s.columns)}::jsonb, date_format = ${s.date_format},
            delimiter = ${s.delimiter}, file_format = ${s.file_format}, file_name_pattern = ${s.file_name_pattern},
            updated_at = ${at}
          WHERE id = ${id} RETURNING *`
    })

    const findById = SqlSchema.findOne({
      Request: Schema.Int,
      Result: ProfileRow,
      execute: (id) => sql`SELECT * FROM exchange_profiles WHERE id = ${id}`
    })

    const findForPlan = SqlSchema.findOne({
      Request: Schema.Struct({ healthPlanId: Schema.Int, kind: Schema.Literal(...fileKinds) }),
      Result: ProfileRow,
      execute: ({ healthPlanId, kind }) => sql`SELECT * FROM exchange_profiles WHERE health_plan_id = ${healthPlanId} AND file_kind = ${kind}`
    })

    return {
      /** Records a plan's profile of a file; 422 when the plan has one for that file, or does not exist. */
      insert: (healthPlanId: number, kind: FileKind, settings: ProfileSettings, at: Date) =>
        orDefect(insertOne({ healthPlanId, kind, settings, at }).pipe(
          Effect.catchIf((error) => isUniqueViolation(error), () =>
            Effect.fail(ecmInvalid([`The health plan already has a ${kind.toUpperCase()} profile`])))
        )),
      update: (id: number, settings: ProfileSettings, at: Date) => orDefect(updateOne({ id, settings, at })),
      find: (id: number): Effect.Effect<Option.Option<ProfileRow>> => orDefect(findById(id)),
      /** The plan's profile of the file, if it has one. */
      forPlan: (healthPlanId: number, kind: FileKind): Effect.Effect<Option.Option<ProfileRow>> =>
        orDefect(findForPlan({ healthPlanId, kind })),
      /** A page of profiles by plan and file. */
      list: (page: PageRequest) =>
        listPage({
          select: sql`*`,
          from: sql`exchange_profiles`,
          row: ProfileRow,
          sort: { columns: { plan: sql`health_plan_id` }, by: "plan", dir: "ASC", id: sql`id` }
        }, page)
    } as const
  })
}) {}
