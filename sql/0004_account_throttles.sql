-- Account throttles that hold under concurrent requests (issue 8): a per-email sign-in back-off
-- claimed before the password is checked, wrong confirmation codes counted across resends, and
-- emails stored trimmed and lower-cased.

-- One row per email with attempts since its last successful sign-in. Keyed by the SHA-256 of the
-- normalised email, so no personal data is at rest here; unknown emails get rows too, so the
-- throttle does not reveal which emails have accounts.
CREATE TABLE sign_in_throttles (
  email_hash      bytea PRIMARY KEY,
  -- Attempts counted before their password was checked; a successful sign-in deletes the row.
  attempts        integer NOT NULL,
  -- No attempt is checked before this time (the back-off).
  not_before      timestamptz NOT NULL,
  last_attempt_at timestamptz NOT NULL
);
CREATE INDEX sign_in_throttles_last_attempt_idx ON sign_in_throttles (last_attempt_at);

-- Replaced by sign_in_throttles: a count read before the check let concurrent guesses through.
DROP TABLE sign_in_failures;

-- Wrong codes are counted per user over a window that starts at the first wrong try and outlives
-- resends (a resend no longer resets the count).
ALTER TABLE confirmation_codes ADD COLUMN failures_since timestamptz;
UPDATE confirmation_codes SET failures_since = created_at WHERE failed_attempts > 0;

-- Emails were stored trimmed but in the case they were typed; users_email_key (on lower(email))
-- guarantees lower-casing collides with nothing.
UPDATE users SET email = lower(email) WHERE email <> lower(email);
