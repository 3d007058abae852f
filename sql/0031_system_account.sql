-- The system account: the users row that performs what the service records by itself (inbound SMS
-- and calls, follow-up tasks). Migration 0012 created it with the id 2147483647, at the edge of the
-- id range, where a client guessing the largest id finds it. It becomes an account of its own kind
-- (`system`) with an ordinary id, created at start-up after the bootstrap admin (so a fresh database
-- still gives the admin id 1) and found by that flag, not by an id or an email.

ALTER TABLE users ADD COLUMN system boolean NOT NULL DEFAULT false;
-- At most one.
CREATE UNIQUE INDEX users_one_system_account ON users (system) WHERE system;
-- It can never sign in, by construction: no password hash matches '!', it is inactive, and like a
-- deleted account (`deleted_at` set) no sign-in, password reset, user list, count or admin endpoint
-- finds it, so nobody can activate it or give it a password.
ALTER TABLE users ADD CONSTRAINT users_system_cannot_sign_in
  CHECK (NOT system OR (password_hash = '!' AND status = 'inactive' AND deleted_at IS NOT NULL));

-- The old row. In a database in use (other users exist) its work moves to the new account, created
-- here; in a fresh one nothing refers to it, and start-up creates the account. The audit trail is
-- append-only: entries written before this migration keep the id 2147483647.
DO $$
DECLARE
  old_id constant integer := 2147483647;
  new_id integer;
  ref record;
BEGIN
  IF NOT EXISTS (SELECT 1 FROM users WHERE id = old_id) THEN
    RETURN;
  END IF;
  UPDATE users SET email = 'system-' || old_id || '@care-coordination.invalid' WHERE id = old_id;
  IF EXISTS (SELECT 1 FROM users WHERE id <> old_id) THEN
    INSERT INTO users (email, password_hash, first_name, last_name, role, status, confirmed, deleted_at, system)
    VALUES ('system@care-coordination.invalid', '!', 'Care Coordination', 'System', 'support', 'inactive', true, now(), true)
    RETURNING id INTO new_id;
    -- Every single-column foreign key to users.
    FOR ref IN
      SELECT c.conrelid::regclass AS tbl, a.attname AS col
      FROM pg_constraint c
      JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
      WHERE c.contype = 'f' AND c.confrelid = 'users'::regclass AND cardinality(c.conkey) = 1
    LOOP
      EXECUTE format('UPDATE %s SET %I = $1 WHERE %I = $2', ref.tbl, ref.col, ref.col) USING new_id, old_id;
    END LOOP;
  END IF;
  DELETE FROM users WHERE id = old_id;
END $$;
