/**
 * The per client address limits of the public endpoints, as RateLimiter rules: the counts are
 * settings (RATE_LIMIT_*, defaults in src/Layers/Config.ts), the windows fixed.
 */
import type { AddressLimitSettings } from "./AppConfig.js"
import type { Limit } from "./RateLimiter.js"

export const addressLimits = (settings: AddressLimitSettings) => ({
  /** Sign-in attempts (password spraying); a successful sign-in gives its hit back. */
  signIn: { limit: settings.signInsPerMinute, window: "1 minute" },
  /** Registrations: each may text a phone number, and "taken" reveals an account. */
  registration: { limit: settings.registrationsPerHour, window: "1 hour" },
  /** Resends without a token: each one tells whether an id goes with an email. */
  anonymousResend: { limit: settings.confirmationResendsPerHour, window: "1 hour" },
  /** "Does this email have an account?": each answer reveals one. */
  emailCheck: { limit: settings.emailChecksPerMinute, window: "1 minute" },
  /** Password reset requests: each one sends an email. */
  passwordReset: { limit: settings.passwordResetsPerMinute, window: "1 minute" },
  /** Provider invite validations, and acceptances, each. */
  providerInvite: { limit: settings.providerInvitesPerMinute, window: "1 minute" },
  /** Collaborator assessment link form, decline and submit, each. */
  assessmentLink: { limit: settings.assessmentLinksPerMinute, window: "1 minute" },
  questionnaireInvite: { limit: settings.questionnaireInvitesPerMinute, window: "1 minute" },
  screener: { limit: settings.screenersPerHour, window: "1 hour" }
}) satisfies Record<string, Limit>
