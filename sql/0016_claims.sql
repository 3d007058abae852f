-- Claims, insurance and 837P batches (issue 19, general §2.6, §4.6).
-- Uniqueness (claim numbers, one active claim per appointment, control numbers) is settled by
-- sequences and constraints, never by reading first.

-- Payers the clinic bills. claim_filing_indicator is 837P SBR09.
CREATE TABLE insurance_plans (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name                    text NOT NULL,
  payer_id                text NOT NULL,
  claim_filing_indicator  text NOT NULL CHECK (claim_filing_indicator IN
                            ('11', '12', '13', '14', '15', '16', '17', 'AM', 'BL', 'CH', 'CI', 'DS', 'FI', 'HM',
                             'LM', 'MA', 'MB', 'MC', 'OF', 'TV', 'VA', 'WC', 'ZZ')),
  active                  boolean NOT NULL DEFAULT true,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX insurance_plans_name_idx ON insurance_plans (lower(name), id);

-- A patient's (primary) coverage: one per patient. The subscriber is the patient (relationship
-- 'self') or a named guardian/spouse, whose name and date of birth are required then.
CREATE TABLE patient_coverages (
  id                        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id                integer NOT NULL UNIQUE REFERENCES patients (id) ON DELETE CASCADE,
  insurance_plan_id         integer NOT NULL REFERENCES insurance_plans (id),
  member_id                 text NOT NULL,
  group_number              text,
  relationship              text NOT NULL DEFAULT 'self' CHECK (relationship IN ('self', 'child', 'spouse', 'other')),
  subscriber_first_name     text,
  subscriber_last_name      text,
  subscriber_date_of_birth  date,
  subscriber_gender         text CHECK (subscriber_gender IN ('F', 'M', 'U')),
  subscriber_address        text,
  subscriber_city           text,
  subscriber_state          text,
  subscriber_zip            text,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT patient_coverages_subscriber_named CHECK (relationship = 'self' OR
    (subscriber_first_name IS NOT NULL AND subscriber_last_name IS NOT NULL AND subscriber_date_of_birth IS NOT NULL))
);
CREATE INDEX patient_coverages_insurance_plan_id_idx ON patient_coverages (insurance_plan_id);

-- ISA13: nine digits, never reused (no CYCLE: the 999,999,999th batch is the last one).
CREATE SEQUENCE edi_interchange_control_numbers AS integer MINVALUE 1 MAXVALUE 999999999 NO CYCLE;
-- Claim numbers: CLM + 8 digits or more, at most 20 characters.
CREATE SEQUENCE claim_numbers AS bigint MINVALUE 1 MAXVALUE 99999999999999999 NO CYCLE;
CREATE FUNCTION next_claim_number() RETURNS text LANGUAGE sql VOLATILE AS $$
  SELECT 'CLM' || CASE WHEN n < 100000000 THEN lpad(n::text, 8, '0') ELSE n::text END FROM nextval('claim_numbers') AS n
$$;

CREATE TABLE edi_batches (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The public id: EDI + the nine-digit interchange control number.
  batch_id                text NOT NULL UNIQUE,
  interchange_control_number integer NOT NULL UNIQUE,
  batch_name              text,
  format                  text NOT NULL DEFAULT '837P' CHECK (format = '837P'),
  object_key              text NOT NULL,
  claim_count             integer NOT NULL CHECK (claim_count > 0),
  total_amount            numeric(14, 2) NOT NULL,
  created_by_id           integer REFERENCES users (id) ON DELETE SET NULL,
  generated_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX edi_batches_created_by_id_idx ON edi_batches (created_by_id);

CREATE TABLE claims (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  claim_number      text NOT NULL UNIQUE DEFAULT next_claim_number()
                    CHECK (length(claim_number) <= 20),
  patient_id        integer NOT NULL REFERENCES patients (id),
  provider_id       integer NOT NULL REFERENCES providers (id),
  appointment_id    integer NOT NULL REFERENCES appointments (id),
  cpt_code          text NOT NULL,
  modifiers         text[] NOT NULL DEFAULT '{}' CHECK (cardinality(modifiers) <= 4),
  place_of_service  text NOT NULL DEFAULT '11' CHECK (place_of_service IN ('11', '02', '10')),
  -- ICD-10-CM, upper case, without the dot.
  diagnosis_codes   text[] NOT NULL CHECK (cardinality(diagnosis_codes) BETWEEN 1 AND 12),
  service_date      date NOT NULL,
  amount            numeric(10, 2) NOT NULL CHECK (amount > 0),
  status            text NOT NULL DEFAULT 'draft' CHECK (status IN
                      ('draft', 'ready', 'submitted', 'pending', 'approved', 'paid', 'denied', 'rejected')),
  submission_date   date,
  payment_amount    numeric(10, 2) CHECK (payment_amount >= 0),
  payment_date      date,
  denial_reason     text,
  -- The plan billed: the patient's coverage when the claim was last saved or submitted.
  insurance_plan_id integer REFERENCES insurance_plans (id),
  edi_batch_id      integer REFERENCES edi_batches (id),
  created_by_id     integer REFERENCES users (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT claims_submitted_in_a_batch CHECK (status IN ('draft', 'ready') OR edi_batch_id IS NOT NULL)
);
-- One active claim per appointment: a denied one frees it for a corrected claim.
CREATE UNIQUE INDEX claims_active_appointment_key ON claims (appointment_id) WHERE status <> 'denied';
CREATE INDEX claims_appointment_id_idx ON claims (appointment_id);
CREATE INDEX claims_patient_id_idx ON claims (patient_id);
CREATE INDEX claims_provider_id_idx ON claims (provider_id);
CREATE INDEX claims_status_idx ON claims (status);
CREATE INDEX claims_service_date_idx ON claims (service_date);
CREATE INDEX claims_insurance_plan_id_idx ON claims (insurance_plan_id);
CREATE INDEX claims_edi_batch_id_idx ON claims (edi_batch_id);
CREATE INDEX claims_created_by_id_idx ON claims (created_by_id);
CREATE INDEX claims_created_at_idx ON claims (created_at);
CREATE INDEX claims_updated_at_idx ON claims (updated_at);
CREATE INDEX claims_amount_idx ON claims (amount);
CREATE INDEX claims_cpt_code_idx ON claims (cpt_code);

CREATE TABLE claim_documents (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  claim_id        integer NOT NULL REFERENCES claims (id) ON DELETE CASCADE,
  name            text NOT NULL,
  content_type    text NOT NULL CHECK (content_type IN ('application/pdf', 'image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/tiff')),
  size            integer NOT NULL CHECK (size > 0),
  kind            text NOT NULL CHECK (kind IN ('superbill', 'eob', 'clinical_note', 'other')),
  object_key      text NOT NULL UNIQUE,
  created_by_id   integer REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX claim_documents_claim_id_idx ON claim_documents (claim_id, created_at);
CREATE INDEX claim_documents_created_by_id_idx ON claim_documents (created_by_id);
