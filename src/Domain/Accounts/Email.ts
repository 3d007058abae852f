/**
 * Emails are kept and compared trimmed and lower-cased (as Devise does), so `" Ann@Example.org"`
 * and `"ann@example.org"` are one account and one sign-in throttle.
 */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()
