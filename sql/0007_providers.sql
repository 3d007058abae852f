-- Providers, supervisors and provider invites (issue 10, general §2.7, §4.9, §4.15).

-- One profile per user who is (or was) a provider or supervisor: created when the role is given,
-- kept inactive when it is taken away. Names and email live on the user.
CREATE TABLE providers (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id         integer NOT NULL UNIQUE REFERENCES users (id),
  roles           text[] NOT NULL DEFAULT '{}'
                  CHECK (roles <@ ARRAY['provider', 'supervisor', 'admin', 'trainee', 'consultant']::text[]),
  specialty       text,
  license_number  text,
  -- 10 digits, Luhn-checked with the 80840 prefix (src/Domain/Providers/Npi.ts).
  npi             text CHECK (npi ~ '^[0-9]{10}$'),
  supervisor_id   integer REFERENCES providers (id),
  active          boolean NOT NULL DEFAULT true,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (supervisor_id IS NULL OR supervisor_id <> id)
);
CREATE UNIQUE INDEX providers_npi_key ON providers (npi) WHERE npi IS NOT NULL;
CREATE INDEX providers_supervisor_id_idx ON providers (supervisor_id);
CREATE INDEX providers_roles_idx ON providers USING gin (roles);
CREATE INDEX providers_specialty_idx ON providers (specialty);
CREATE INDEX providers_license_number_idx ON providers (license_number);
CREATE INDEX providers_active_idx ON providers (active);
CREATE INDEX providers_created_at_idx ON providers (created_at);
CREATE INDEX providers_updated_at_idx ON providers (updated_at);

-- Users who already hold the roles get their profile now.
INSERT INTO providers (user_id, roles, active)
SELECT id, ARRAY[role], deleted_at IS NULL FROM users WHERE role IN ('provider', 'supervisor');

-- Invites: one pending invite per address (a new invite replaces it: new token, new expiry).
-- The token is stored as its SHA-256 only.
CREATE TABLE provider_invites (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  email           text NOT NULL,
  first_name      text NOT NULL,
  last_name       text NOT NULL,
  role            text NOT NULL CHECK (role IN ('provider', 'supervisor')),
  supervisor_id   integer REFERENCES providers (id),
  token_hash      bytea NOT NULL UNIQUE,
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'accepted')),
  invited_by      integer REFERENCES users (id),
  user_id         integer REFERENCES users (id),
  expires_at      timestamptz NOT NULL,
  accepted_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX provider_invites_pending_email_key ON provider_invites (lower(email)) WHERE status = 'pending';
CREATE INDEX provider_invites_supervisor_id_idx ON provider_invites (supervisor_id);
CREATE INDEX provider_invites_invited_by_idx ON provider_invites (invited_by);
CREATE INDEX provider_invites_user_id_idx ON provider_invites (user_id);

-- ECM patients and case loads name providers (0005 left these without a foreign key until now).
ALTER TABLE patients ADD CONSTRAINT patients_provider_id_fkey FOREIGN KEY (provider_id) REFERENCES providers (id);
ALTER TABLE case_loads ADD CONSTRAINT case_loads_provider_id_fkey FOREIGN KEY (provider_id) REFERENCES providers (id);
