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
