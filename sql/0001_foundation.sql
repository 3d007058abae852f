-- Users, their session tokens and the audit trail.

CREATE TABLE users (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email           text NOT NULL,
  password_hash   text NOT NULL,
  first_name      text NOT NULL,
  last_name       text NOT NULL,
  phone           text,
  date_of_birth   date,
  language        text NOT NULL DEFAULT 'en',
  role            text NOT NULL DEFAULT 'parent'
                  CHECK (role IN ('parent', 'provider', 'supervisor', 'admin', 'support', 'billing')),
  status          text NOT NULL DEFAULT 'active'
                  CHECK (status IN ('active', 'inactive', 'archived', 'pending', 'suspended')),
  clinical        boolean NOT NULL DEFAULT false,
  confirmed       boolean NOT NULL DEFAULT false,
  template        boolean NOT NULL DEFAULT false,
  native_signup   boolean NOT NULL DEFAULT false,
  last_login      timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
-- Emails are unique whatever their case.
CREATE UNIQUE INDEX users_email_key ON users (lower(email));
CREATE INDEX users_role_idx ON users (role);
CREATE INDEX users_status_idx ON users (status);
CREATE INDEX users_created_at_idx ON users (created_at);

-- Raw tokens are never stored: only their SHA-256.
CREATE TABLE user_tokens (
  token_hash  bytea PRIMARY KEY,
  user_id     integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX user_tokens_user_id_idx ON user_tokens (user_id);
