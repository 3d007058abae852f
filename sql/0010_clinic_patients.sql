-- Clinic patients and their records (issue 13, general §4.2): the clinic's view of the one
-- `patients` table (0005), help requests, treatment plans, waitlist spots and documents.

-- The clinic list's search: names, member id and phone (E.164, so phone digits typed in any
-- format match as a substring). One trigram expression: the search is `expr ILIKE '%text%'`, and
-- the digits of the search text `expr LIKE '%digits%'`, both served by this index.
CREATE INDEX patients_clinic_search_trgm_idx ON patients
  USING gin ((first_name || ' ' || last_name || ' ' || coalesce(member_id, '') || ' ' || coalesce(phone, '')) gin_trgm_ops);

-- The clinic list's sort columns (each with id as the tie-break, so a page boundary is stable).
CREATE INDEX patients_first_name_sort_idx ON patients (lower(first_name), id);
CREATE INDEX patients_last_name_sort_idx ON patients (lower(last_name), id);
CREATE INDEX patients_date_of_birth_sort_idx ON patients (date_of_birth, id);
CREATE INDEX patients_created_at_sort_idx ON patients (created_at, id);

-- A family's question to the clinic; creating one emails the clinic's support address.
CREATE TABLE help_requests (
  id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id  integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  -- Who asked (the parent, or staff on the family's behalf).
  user_id     integer REFERENCES users (id) ON DELETE SET NULL,
  subject     text NOT NULL,
  message     text NOT NULL,
  status      text NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'resolved')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX help_requests_patient_idx ON help_requests (patient_id, created_at DESC, id DESC);
CREATE INDEX help_requests_user_id_idx ON help_requests (user_id) WHERE user_id IS NOT NULL;

CREATE TABLE treatment_plans (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id        integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  provider_id       integer REFERENCES providers (id),
  title             text NOT NULL,
  diagnosis_codes   text[] NOT NULL DEFAULT '{}',
  -- [{description, target_date, status}]: read and written whole with the plan.
  goals             jsonb NOT NULL DEFAULT '[]',
  interventions     text[] NOT NULL DEFAULT '{}',
  start_date        date,
  end_date          date,
  status            text NOT NULL DEFAULT 'draft' CHECK (status IN ('draft', 'active', 'completed', 'discontinued')),
  created_by_id     integer REFERENCES users (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK (end_date IS NULL OR start_date IS NULL OR end_date >= start_date)
);
CREATE INDEX treatment_plans_patient_idx ON treatment_plans (patient_id, created_at DESC, id DESC);
CREATE INDEX treatment_plans_provider_id_idx ON treatment_plans (provider_id) WHERE provider_id IS NOT NULL;
CREATE INDEX treatment_plans_created_by_id_idx ON treatment_plans (created_by_id) WHERE created_by_id IS NOT NULL;

-- A place on the clinic's waitlist for a program.
CREATE TABLE spots (
  id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id    integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  program       text NOT NULL,
  status        text NOT NULL DEFAULT 'waiting'
                CHECK (status IN ('waiting', 'offered', 'accepted', 'declined', 'expired')),
  notes         text,
  requested_at  timestamptz NOT NULL DEFAULT now(),
  offered_at    timestamptz,
  responded_at  timestamptz,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- One open (waiting or offered) spot per patient and program: a second is a 409, settled here.
CREATE UNIQUE INDEX spots_open_patient_program_key ON spots (patient_id, program) WHERE status IN ('waiting', 'offered');
CREATE INDEX spots_patient_idx ON spots (patient_id, requested_at DESC, id DESC);
-- Positions: a waiting spot's place among the waiting spots of its program.
CREATE INDEX spots_waiting_queue_idx ON spots (program, requested_at, id) WHERE status = 'waiting';

-- A patient's files; the bytes live in the ObjectStore under object_key.
CREATE TABLE patient_documents (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id      integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  name            text NOT NULL,
  content_type    text NOT NULL,
  size            bigint NOT NULL CHECK (size >= 0),
  object_key      text NOT NULL UNIQUE,
  uploaded_by_id  integer REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX patient_documents_patient_idx ON patient_documents (patient_id, created_at DESC, id DESC);
CREATE INDEX patient_documents_uploaded_by_id_idx ON patient_documents (uploaded_by_id) WHERE uploaded_by_id IS NOT NULL;
