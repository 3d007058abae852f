/**
 * The only SQL on `exchange_reports` (ARCHITECTURE "Persistence"): rows decoded, SQL errors
 * defects. A report's status moves only here: queued → generating (claimed by its job) →
 * completed or failed.
 */
import { SqlClient } from "@effect/sql"
import { Effect, type Option, Schema } from "effect"
import type { PageRequest } from "../../Api/Pagination.js"
import { dateFormats, delimiters, fileFormats, type FileKind, fileKinds } from "../../Domain/EcmExchange/Files.js"
import { makeListPage } from "../Lists.js"
import { orDefect, SqlSchema } from "../Repository.js"
import { ProfileColumns } from "./ExchangeProfilesRepo.js"

/** The profile a report is written with, as stored with it. */
export const ProfileSnapshot = Schema.Struct({
  id: Schema.NullOr(Schema.Int),
  columns: ProfileColumns,
  date_format: Schema.Literal(...dateFormats),
  delimiter: Schema.Literal(...delimiters),
  file_format: Schema.Literal(...fileFormats),
  file_name_pattern: Schema.String
})
export type ProfileSnapshot = typeof ProfileSnapshot.Type

export const ReportRow = Schema.Struct({
  id: Schema.Int,
  file_kind: Schema.Literal(...fileKinds),
  health_plan_id: Schema.Int,
  health_plan_name: Schema.String,
  mcp_id: Schema.String,
  provider_tin: Schema.NullOr(Schema.String),
  provider_type: Schema.NullOr(Schema.String),
  start_date: Schema.String,
  end_date: Schema.String,
  profile: ProfileSnapshot,
  status: Schema.Literal("queued", "generating", "completed", "failed"),
  failure_reason: Schema.NullOr(Schema.String),
  rows_total: Schema.NullOr(Schema.Int),
  rows_written: Schema.Int,
  filename: Schema.NullOr(Schema.String),
  object_key: Schema.NullOr(Schema.String),
  created_by_id: Schema.NullOr(Schema.Int),
  created_at: Schema.DateFromSelf,
  generated_at: Schema.NullOr(Schema.DateFromSelf)
})
export type ReportRow = typeof ReportRow.Type

const NewReport = Schema.Struct({
  kind: Schema.Literal(...fileKinds),
  healthPlanId: Schema.Int,
  startDate: Schema.String,
  endDate: Schema.String,
  profile: ProfileSnapshot,
  createdById: Schema.Int,
  at: Schema.DateFromSelf
})
export type NewReport = typeof NewReport.Type

const Completion = Schema.Struct({
  id: Schema.Int,
  written: Schema.Int,
  filename: Schema.String,
  objectKey: Schema.String,
  byteSize: Schema.Int,
  at: Schema.DateFromSelf
})

const columns = `r.id, r.file_kind, r.health_plan_id, h.name AS health_plan_name, h.mcp_id, h.provider_tin, h.provider_type,
  to_char(r.start_date, 'YYYY-MM-DD') AS start_date, to_char(r.end_date, 'YYYY-MM-DD') AS end_date, r.profile, r.status,
  r.failure_reason, r.rows_total, r.rows_written, r.filename, r.object_key, r.created_by_id, r.created_at, r.generated_at`

const Id = Schema.Struct({ id: Schema.Int })

export class ExchangeReportsRepo extends Effect.Service<ExchangeReportsRepo>()("app/EcmExchangeReportsRepo", {
  effect: Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const listPage = yield* makeListPage
    const select = sql.literal(columns)

    const insertOne = SqlSchema.single({
      Request: NewReport,
      Result: Id,
      execute: (r) =>
        sql`INSERT INTO exchange_reports (file_kind, health_plan_id, start_date, end_date, profile, created_by_id, created_at, updated_at)
          VALUES (${r.kind}, ${r.healthPlanId}, ${r.startDate}::date, ${r.endDate}::date, ${JSON.stringify(r.profile)}::jsonb,
            ${r.createdById}, ${r.at}, ${r.at})
          RETURNING id`
    })

    const findOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, kind: Schema.NullOr(Schema.Literal(...fileKinds)) }),
      Result: ReportRow,
      execute: ({ id, kind }) =>
        sql`SELECT ${select} FROM exchange_reports r JOIN health_plans h ON h.id = r.health_plan_id
          WHERE r.id = ${id} AND (${kind}::text IS NULL OR r.file_kind = ${kind})`
    })

    /** Queued, or generating left by a crashed run of the same job: now generating. */
    const claimOne = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.Int, at: Schema.DateFromSelf }),
      Result: Id,
      execute: ({ at, id }) =>
        sql`UPDATE exchange_reports SET status = 'generating', started_at = ${at}, rows_written = 0, updated_at = ${at}
          WHERE id = ${id} AND status IN ('queued', 'generating') RETURNING id`
    })

    const recordTotal = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, total: Schema.Int }),
      execute: ({ id, total }) => sql`UPDATE exchange_reports SET rows_total = ${total} WHERE id = ${id}`
    })

    const recordProgress = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, written: Schema.Int, at: Schema.DateFromSelf }),
      execute: ({ at, id, written }) =>
        sql`UPDATE exchange_reports SET rows_written = ${written}, updated_at = ${at} WHERE id = ${id} AND status = 'generating'`
    })

    const completeOne = SqlSchema.findOne({
      Request: Completion,
      Result: Id,
      execute: (c) =>
        sql`UPDATE exchange_reports SET status = 'completed', rows_written = ${c.written}, rows_total = ${c.written},
            filename = ${c.filename}, object_key = ${c.objectKey}, byte_size = ${c.byteSize}, generated_at = ${c.at},
            updated_at = ${c.at}
          WHERE id = ${c.id} AND status = 'generating' RETURNING id`
    })

    const failOne = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.Int, reason: Schema.String, at: Schema.DateFromSelf }),
      execute: ({ at, id, reason }) =>
        sql`UPDATE exchange_reports SET status = 'failed', failure_reason = ${reason}, updated_at = ${at}
          WHERE id = ${id} AND status = 'generating'`
    })

    return {
      /** Records a queued report; its id. */
      insert: (report: NewReport) => Effect.map(orDefect(insertOne(report)), (row) => row.id),
      /** The report (of that file, when given), if it exists. */
      find: (id: number, kind: FileKind | null = null): Effect.Effect<Option.Option<ReportRow>> => orDefect(findOne({ id, kind })),
      /** Whether the run may generate the report (it was queued, or left generating by a crash). */
      claim: (id: number, at: Date) => Effect.map(orDefect(claimOne({ id, at })), (row) => row._tag === "Some"),
      recordTotal: (id: number, total: number) => orDefect(recordTotal({ id, total })),
      recordProgress: (id: number, written: number, at: Date) => orDefect(recordProgress({ id, written, at })),
      /** Marks the report completed with its file; false when another run took it over meanwhile. */
      complete: (completion: typeof Completion.Type) => Effect.map(orDefect(completeOne(completion)), (row) => row._tag === "Some"),
      markFailed: (id: number, reason: string, at: Date) => orDefect(failOne({ id, reason, at })),
      /** A page of one file's reports, newest first. */
      list: (kind: FileKind, page: PageRequest) =>
        listPage({
          select,
          from: sql`exchange_reports r JOIN health_plans h ON h.id = r.health_plan_id`,
          row: ReportRow,
          filters: [sql`r.file_kind = ${kind}`],
          sort: { columns: { created_at: sql`r.created_at` }, by: "created_at", dir: "DESC", id: sql`r.id` }
        }, page)
    } as const
  })
}) {}
