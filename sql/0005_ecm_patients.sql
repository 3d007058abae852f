-- Patients (the one patient table of the whole system: ECM members and clinic patients), their
-- ECM eligibility records, engagement status history, case loads, and MIF import files.

CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE patients (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The health plan's member identifier (the CIN): unique when present.
  member_id       text,
  cin             text,
  first_name      text NOT NULL,
  last_name       text NOT NULL,
  date_of_birth   date,
  gender          text,
  address         text,
  city            text,
  state           text,
  zip             text,
  -- E.164.
  phone           text,
  email           text,
  language        text NOT NULL DEFAULT 'en',
  active          boolean NOT NULL DEFAULT true,
  -- The guardian's or the patient's own account.
  user_id         integer REFERENCES users (id) ON DELETE SET NULL,
  -- No foreign key until the providers table exists (the providers issue adds it).
  provider_id     integer,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
) WITH (fillfactor = 80); -- room for HOT updates: every import rewrites its members' rows
CREATE UNIQUE INDEX patients_member_id_key ON patients (member_id) WHERE member_id IS NOT NULL;
-- Import matching without a member id (last name + first name + date of birth, any case), and the
-- ECM patient list's order (last name, first name).
CREATE INDEX patients_identity_idx ON patients (lower(last_name), lower(first_name), date_of_birth);
-- Nullable references: only rows that have one are indexed (lookups are by a value).
CREATE INDEX patients_user_id_idx ON patients (user_id) WHERE user_id IS NOT NULL;
CREATE INDEX patients_provider_id_idx ON patients (provider_id) WHERE provider_id IS NOT NULL;
-- Search by name or member id (ILIKE '%…%' on this one expression).
CREATE INDEX patients_search_trgm_idx ON patients
  USING gin ((first_name || ' ' || last_name || ' ' || coalesce(member_id, '')) gin_trgm_ops);

CREATE TABLE mif_files (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  filename          text NOT NULL,
  file_type         text NOT NULL CHECK (file_type IN ('csv', 'xml', 'xlsx')),
  source_type       text NOT NULL CHECK (source_type IN ('base64', 'url', 'path')),
  -- Where the original file is kept in the ObjectStore; null until it is stored.
  object_key        text,
  byte_size         bigint NOT NULL DEFAULT 0,
  records_imported  integer NOT NULL DEFAULT 0,
  import_errors     text,
  status            text NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'processing', 'completed', 'failed')),
  created_by_id     integer REFERENCES users (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX mif_files_created_at_idx ON mif_files (created_at DESC, id DESC);
CREATE INDEX mif_files_created_by_id_idx ON mif_files (created_by_id) WHERE created_by_id IS NOT NULL;
CREATE INDEX mif_files_status_idx ON mif_files (status);

-- One row per imported member record: every mapped field as the file had it.
CREATE TABLE ecm_eligibility_informations (
  id                          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id                  integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  mif_file_id                 integer NOT NULL REFERENCES mif_files (id) ON DELETE CASCADE,
  -- The record's line in the file (the header is line 1).
  line                        integer NOT NULL,
  member_id                   text,
  cin                         text,
  first_name                  text NOT NULL,
  last_name                   text NOT NULL,
  date_of_birth               date NOT NULL,
  gender                      text,
  address                     text,
  city                        text,
  state                       text,
  zip                         text,
  phone                       text,
  ecm_service_auth_id         text,
  ecm_provider_name           text,
  ecm_npi                     text,
  ecm_benefit_auth_eff_date   date,
  ecm_benefit_auth_end_date   date,
  acuity_level                text,
  member_record_status        text NOT NULL,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ecm_eligibility_informations_patient_idx ON ecm_eligibility_informations (patient_id, id DESC);
CREATE INDEX ecm_eligibility_informations_mif_file_idx ON ecm_eligibility_informations (mif_file_id, line);
-- member_record_status is filtered only on each patient's latest record (reached from patients),
-- where an index on every record's status cannot help: none.

-- The patient's latest eligibility record: what the admin ECM patient list shows and filters on.
-- Derived data written only by imports, in the transaction that inserts the record (whose id is
-- drawn first, so the patient row is written once). No foreign key: a constraint trigger would
-- re-check 100,000 ids at the commit of a large import, and eligibility records are never deleted.
ALTER TABLE patients ADD COLUMN ecm_eligibility_information_id integer;
-- Not indexed: it changes on every import of the member, and an unindexed column keeps those
-- updates HOT (the list reaches it by joining on the record's primary key).

-- Engagement status changes of a patient.
CREATE TABLE ecm_status_histories (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id      integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  status          text NOT NULL,
  effective_date  date NOT NULL,
  source          text NOT NULL CHECK (source IN ('mif', 'user', 'system')),
  reason          text,
  actor_id        integer REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ecm_status_histories_patient_idx ON ecm_status_histories (patient_id, effective_date DESC, id DESC);
CREATE INDEX ecm_status_histories_effective_date_idx ON ecm_status_histories (effective_date);
CREATE INDEX ecm_status_histories_actor_idx ON ecm_status_histories (actor_id) WHERE actor_id IS NOT NULL;

-- One per patient: the ECM provider and the lead care managers (lead care managers issue).
-- Until providers exist, imports record the file's ECM_NPI and ECM_PROVIDER_NAME here and
-- provider_id stays null (docs/spec-decisions.md).
CREATE TABLE case_loads (
  id                    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id            integer NOT NULL UNIQUE REFERENCES patients (id) ON DELETE CASCADE,
  provider_id           integer,
  provider_npi          text,
  provider_name         text,
  provider_assigned_at  timestamptz,
  olcm_user_id          integer REFERENCES users (id) ON DELETE SET NULL,
  olcm_assigned_at      timestamptz,
  ilcm_user_id          integer REFERENCES users (id) ON DELETE SET NULL,
  ilcm_assigned_at      timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now()
);
-- Nullable references and lookups: only rows that have a value are indexed.
CREATE INDEX case_loads_provider_id_idx ON case_loads (provider_id) WHERE provider_id IS NOT NULL;
CREATE INDEX case_loads_provider_npi_idx ON case_loads (provider_npi) WHERE provider_npi IS NOT NULL;
CREATE INDEX case_loads_olcm_user_id_idx ON case_loads (olcm_user_id) WHERE olcm_user_id IS NOT NULL;
CREATE INDEX case_loads_ilcm_user_id_idx ON case_loads (ilcm_user_id) WHERE ilcm_user_id IS NOT NULL;
