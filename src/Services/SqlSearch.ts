/** Search text in SQL: LIKE patterns and person-name matching shared by the list endpoints. */
import type { Statement } from "@effect/sql"
import type { SqlClient } from "@effect/sql/SqlClient"

/** `%`, `_` and `\` match themselves in the LIKE pattern built from search text. */
export const likePattern = (text: string): string => `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`

/** The first name, the last name or "first last" (columns named by `first`, `last`) contain `text`. */
export const nameMatches = (sql: SqlClient, first: string, last: string, text: string): Statement.Fragment => {
  const pattern = likePattern(text)
  return sql`(${sql.literal(first)} ILIKE ${pattern} ESCAPE '\\' OR ${sql.literal(last)} ILIKE ${pattern} ESCAPE '\\'
    OR (${sql.literal(first)} || ' ' || ${sql.literal(last)}) ILIKE ${pattern} ESCAPE '\\')`
}

/**
 * A patient's searchable text (alias `p`): names, member id and phone (E.164). The expression of
 * the one trigram index on patients, patients_search_trgm_idx (sql/0026): every patient search
 * filters on it, so the index serves it.
 */
export const patientSearchText = (sql: SqlClient): Statement.Fragment =>
  sql`(p.first_name || ' ' || p.last_name || ' ' || coalesce(p.member_id, '') || ' ' || coalesce(p.phone, ''))`
