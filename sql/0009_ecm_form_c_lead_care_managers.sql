-- Form C submissions and lead care manager assignments (issue 12, ECM §2.5, §2.8, §4.4, §4.5, §4.8).

-- One Form C assessment of a patient: the 23 named sections as a JSON object (validated by
-- src/Domain/Ecm/FormC.ts before it gets here). Submissions are never edited or deleted.
CREATE TABLE form_c_submissions (
  id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id  integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  -- The author. Users are soft-deleted (users.deleted_at), so the reference always resolves.
  user_id     integer NOT NULL REFERENCES users (id),
  form_data   jsonb NOT NULL CHECK (jsonb_typeof(form_data) = 'object'),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
-- A patient's submissions newest first (clinic list, admin list filtered by patient), and the PRTF
-- report's "latest Form C submission date per patient": `max(created_at) … GROUP BY patient_id`
-- or a LATERAL `ORDER BY created_at DESC LIMIT 1` reads the first entry of each patient here.
CREATE INDEX form_c_submissions_patient_idx ON form_c_submissions (patient_id, created_at DESC, id DESC);
-- The admin list without a patient filter: newest first.
CREATE INDEX form_c_submissions_created_at_idx ON form_c_submissions (created_at DESC, id DESC);
CREATE INDEX form_c_submissions_user_id_idx ON form_c_submissions (user_id);

-- Who assigned or removed which lead care manager of a patient, from whom to whom: the audit trail
-- (audit_events) keeps ids and an action only, so the before/after of each role change lives here.
-- Rows are never edited (like audit_events); they go only with their patient or case load
-- (ON DELETE CASCADE), so the trigger refuses UPDATE alone.
CREATE TABLE case_load_changes (
  id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  case_load_id  integer NOT NULL REFERENCES case_loads (id) ON DELETE CASCADE,
  patient_id    integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  role          text NOT NULL CHECK (role IN ('olcm', 'ilcm')),
  from_user_id  integer REFERENCES users (id),
  to_user_id    integer REFERENCES users (id),
  actor_id      integer REFERENCES users (id),
  -- assign (POST), update (PUT), remove (DELETE) or bulk_assign.
  via           text NOT NULL CHECK (via IN ('assign', 'update', 'remove', 'bulk_assign')),
  created_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (from_user_id IS DISTINCT FROM to_user_id)
);
CREATE INDEX case_load_changes_case_load_idx ON case_load_changes (case_load_id, id);
CREATE INDEX case_load_changes_patient_idx ON case_load_changes (patient_id, id);
CREATE INDEX case_load_changes_from_user_idx ON case_load_changes (from_user_id) WHERE from_user_id IS NOT NULL;
CREATE INDEX case_load_changes_to_user_idx ON case_load_changes (to_user_id) WHERE to_user_id IS NOT NULL;
CREATE INDEX case_load_changes_actor_idx ON case_load_changes (actor_id) WHERE actor_id IS NOT NULL;

CREATE FUNCTION case_load_changes_unchangeable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'case_load_changes rows are never updated';
END $$;
CREATE TRIGGER case_load_changes_no_update BEFORE UPDATE ON case_load_changes
  FOR EACH ROW EXECUTE FUNCTION case_load_changes_unchangeable();
