-- Accounts: confirmation codes, password resets, sign-in throttling, rate limits, audit trail.

ALTER TABLE users ADD COLUMN deleted_at timestamptz;
-- Status to restore on unarchive.
ALTER TABLE users ADD COLUMN status_before_archive text;

-- One live code per user; replaced on resend.
CREATE TABLE confirmation_codes (
  user_id      integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  code_hash    bytea NOT NULL,
  expires_at   timestamptz NOT NULL,
  failed_attempts integer NOT NULL DEFAULT 0,
  created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE password_reset_tokens (
  token_hash   bytea PRIMARY KEY,
  user_id      integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  expires_at   timestamptz NOT NULL,
  used_at      timestamptz,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX password_reset_tokens_user_id_idx ON password_reset_tokens (user_id);

-- Failed sign-ins per email (lower-cased, hashed: no personal data at rest here).
CREATE TABLE sign_in_failures (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email_hash   bytea NOT NULL,
  created_at   timestamptz NOT NULL
);
CREATE INDEX sign_in_failures_email_idx ON sign_in_failures (email_hash, created_at);

-- Fixed-window counters shared by every instance (e.g. email checks per client address).
CREATE TABLE rate_limits (
  bucket       text NOT NULL,
  window_start timestamptz NOT NULL,
  hits         integer NOT NULL,
  PRIMARY KEY (bucket, window_start)
);

-- Append-only audit trail: ids and action names only, never personal data.
CREATE TABLE audit_events (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  actor_id     integer,
  action       text NOT NULL,
  target_type  text NOT NULL,
  target_id    integer,
  trace_id     text,
  created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX audit_events_created_at_idx ON audit_events (created_at DESC);
CREATE INDEX audit_events_actor_idx ON audit_events (actor_id);
CREATE INDEX audit_events_target_idx ON audit_events (target_type, target_id);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'audit_events is append-only';
END $$;
CREATE TRIGGER audit_events_no_update BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
