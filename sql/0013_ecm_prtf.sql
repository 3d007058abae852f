-- PRTF reports and engagement status (issue 16, ECM §2.7, §4.7, docs/prtf.md).

-- Engagement statuses (src/Domain/Ecm/Engagement.ts). MIF imports have written only new_member.
ALTER TABLE ecm_status_histories ADD CONSTRAINT ecm_status_histories_status_check CHECK (status IN
  ('new_member', 'pending_outreach', 'outreach_in_progress', 'enrolled', 'declined', 'unable_to_reach', 'disenrolled'));

-- One generated report: the file lives in the ObjectStore under object_key; rows are never edited.
CREATE TABLE prtf_reports (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  filename        text NOT NULL,
  start_date      date NOT NULL,
  end_date        date NOT NULL,
  -- Null: every provider.
  provider_npi    text CHECK (provider_npi ~ '^[0-9]{10}$'),
  provider_name   text NOT NULL,
  provider_phone  text NOT NULL,
  patient_count   integer NOT NULL CHECK (patient_count >= 0),
  object_key      text NOT NULL,
  byte_size       bigint NOT NULL DEFAULT 0,
  created_by_id   integer REFERENCES users (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  CHECK (end_date > start_date)
);
-- The list: newest first.
CREATE INDEX prtf_reports_created_at_idx ON prtf_reports (created_at DESC, id DESC);
CREATE INDEX prtf_reports_created_by_id_idx ON prtf_reports (created_by_id) WHERE created_by_id IS NOT NULL;

-- The report's one pass over a period's events of all members: an index-only range scan on the
-- day range instead of reading every event of the table (the per-patient index leads with patient_id).
CREATE INDEX ecm_events_occurred_at_idx ON ecm_events (occurred_at) INCLUDE (patient_id, event_type, status, duration);

-- The provider filter through the eligibility record's NPI.
CREATE INDEX ecm_eligibility_informations_npi_idx ON ecm_eligibility_informations (ecm_npi) WHERE ecm_npi IS NOT NULL;
