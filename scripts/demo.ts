/**
 * `npm run demo`: fills a running install (started with `npm start` and a bootstrap admin) with a
 * small demo clinic through the public API, then prints who can sign in and what to look at.
 * Reads the same variables as the server: BOOTSTRAP_ADMIN_EMAIL, BOOTSTRAP_ADMIN_PASSWORD and
 * PORT (or DEMO_BASE_URL for another address).
 */
import { FetchHttpClient } from "@effect/platform"
import { Effect } from "effect"
import { demoDomain, demoPassword, loadDemo } from "./demo/loadDemo.js"

const email = process.env["BOOTSTRAP_ADMIN_EMAIL"]
const password = process.env["BOOTSTRAP_ADMIN_PASSWORD"]
const baseUrl = process.env["DEMO_BASE_URL"] ?? `http://localhost:${process.env["PORT"] ?? "3000"}`

if (!email || !password) {
  console.error("npm run demo signs in as the bootstrap admin: set BOOTSTRAP_ADMIN_EMAIL and BOOTSTRAP_ADMIN_PASSWORD as for npm start")
  process.exit(2)
}

const program = loadDemo({ baseUrl, admin: { email, password }, now: new Date() }).pipe(
  Effect.provide(FetchHttpClient.layer),
  Effect.map((demo) => [
    `Demo clinic loaded at ${baseUrl}. Every demo account signs in with the password "${demoPassword}":`,
    `  supervisor@${demoDomain} (supervisor), sam.okafor@${demoDomain} and lee.tran@${demoDomain} (providers),`,
    `  maria.lopez@${demoDomain} and james.chen@${demoDomain} (families).`,
    `Clinic patients ${demo.clinicPatientIds.join(", ")}; ECM members ${demo.ecmPatientIds.join(", ")} (MIF file ${demo.mifFileId});`,
    `appointments ${[...demo.appointmentIds, demo.heldAppointmentId].join(", ")}; PRTF report ${demo.prtfReportId}; claim ${demo.claimId}.`,
    "Texts, calls and mails it sent: npm run outbox"
  ].join("\n"))
)

Effect.runPromise(program).then(
  (text) => console.log(text),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : String(error))
    if (error instanceof Error && /fetch failed|ECONNREFUSED/.test(String(error.cause ?? error.message))) {
      console.error(`Is the server running at ${baseUrl}? Start it with npm start (with the same BOOTSTRAP_ADMIN_* variables).`)
    }
    process.exit(1)
  }
)
