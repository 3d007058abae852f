-- Sessions that end (#7.5) and confirmed email changes (#8.6).

-- Last use of a session token, for the idle timeout. The token lookup moves it forward at most
-- once a minute, so a busy session does not write on every request. Tokens issued before this
-- migration start their idle period now.
ALTER TABLE user_tokens ADD COLUMN last_used_at timestamptz NOT NULL DEFAULT now();

-- A requested email change waits here until the code sent to the new address confirms it: one
-- pending change per user, replaced by a new request. The code is stored hashed.
CREATE TABLE email_changes (
  user_id         integer PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
  new_email       text NOT NULL,
  code_hash       bytea NOT NULL,
  expires_at      timestamptz NOT NULL,
  failed_attempts integer NOT NULL DEFAULT 0,
  created_at      timestamptz NOT NULL
);
