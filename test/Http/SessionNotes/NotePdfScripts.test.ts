/**
 * The signed session-note PDF draws every name, whatever its script: read back with pdf.js, the
 * patient's name and each sample name in the note's content are there whole, and the text around
 * them (Helvetica) is intact.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { SqlClient } from "@effect/sql"
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestApp } from "../../support/app.js"
import { fullName, pdfItems, sampleNames } from "../../support/pdfText.js"
import { adminNotesPath, adminToken, content, noteIn, setting } from "./helpers.js"

const pdfOf = (id: number, token: string) =>
  Effect.gen(function*() {
    const http = yield* HttpClient.HttpClient
    const response = yield* http.execute(HttpClientRequest.get(`${adminNotesPath}/${id}/pdf`).pipe(HttpClientRequest.setHeader("x-user-token", token)))
    expect(response.status).toBe(200)
    return new Uint8Array(yield* response.arrayBuffer)
  }).pipe(Effect.orDie)

layer(TestApp())("session-note PDF in every script", (it) => {
  it.effect("the patient's name and each sample name of the note's content come back whole", () =>
    Effect.gen(function*() {
      const admin = yield* adminToken
      const s = yield* setting(admin)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE patients SET first_name = 'Nguyễn', last_name = 'Thị Minh Khai' WHERE id = ${s.patientId}`.pipe(Effect.orDie)
      const names = sampleNames.map(fullName)
      const id = yield* noteIn(s, "completed", {
        content: {
          ...content,
          // One name a line (each comes back as one piece of text), then a paragraph mixing scripts and directions.
          subjective: `Family present:\n${names.join("\n")}`,
          assessment: `Interpreter محمد علي (Farsi) explained the plan to 王 小明 and 김 민준; ${"長い文章".repeat(60)}`
        }
      })
      const bytes = yield* pdfOf(id, admin)
      const items = yield* Effect.promise(() => pdfItems(bytes))
      const texts = items.map((item) => item.str)
      expect(texts).toContain(`Patient: Nguyễn Thị Minh Khai (id ${s.patientId})`)
      for (const name of names) expect(texts, name).toContain(name)
      // The mixed paragraph: its Latin, Arabic (logical order: pdf.js puts right-to-left text back), Chinese and Korean pieces.
      const mixed = texts.join(" ")
      for (const piece of ["Interpreter", "محمد علي", "(Farsi) explained the plan to", "王 小明", "김 민준"]) expect(mixed, piece).toContain(piece)
      // The long Japanese run wraps onto lines without losing a character.
      expect(mixed.replace(/\s+/g, "")).toContain("長い文章".repeat(60))
      // Text in the standard font around the names is intact.
      for (const expected of ["Subjective", "Family present:", content.objective, content.plan, "Sign-offs", "matches the stored content"]) {
        expect(mixed, expected).toContain(expected)
      }
    }))
})
