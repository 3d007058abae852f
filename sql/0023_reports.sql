-- Admin reports (issue 25, general §2.12, §4.13): the provider's department (a weekly metrics
-- filter) and report files generated through the job queue.

ALTER TABLE providers ADD COLUMN department text CHECK (length(department) <= 100);
-- Weekly metrics filter on it, any case.
CREATE INDEX providers_department_idx ON providers (lower(department)) WHERE department IS NOT NULL;

CREATE TABLE reports (
  id                    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The public id: unguessable (a random 256-bit token, base64url), never the row id.
  report_id             text NOT NULL UNIQUE CHECK (length(report_id) BETWEEN 16 AND 64),
  report_type           text NOT NULL CHECK (report_type IN ('patient_follow_up', 'provider_appointments')),
  format                text NOT NULL CHECK (format IN ('pdf', 'excel', 'csv', 'json')),
  -- The request's report_params, validated.
  parameters            jsonb NOT NULL,
  status                text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'generating', 'completed', 'failed', 'expired')),
  failure_reason        text,
  -- Progress: rows counted before writing, rows written so far.
  rows_total            integer,
  rows_written          integer NOT NULL DEFAULT 0,
  -- provider_appointments: {total_appointments, total_revenue, average_rate} when requested.
  summary               jsonb,
  object_key            text UNIQUE,
  byte_size             bigint,
  requested_by_id       integer REFERENCES users (id) ON DELETE SET NULL,
  estimated_completion  timestamptz,
  started_at            timestamptz,
  generated_at          timestamptz,
  expires_at            timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT reports_completed_has_file CHECK (status <> 'completed' OR (object_key IS NOT NULL AND expires_at IS NOT NULL)),
  CONSTRAINT reports_failed_has_reason CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
);
CREATE INDEX reports_requested_by_id_idx ON reports (requested_by_id) WHERE requested_by_id IS NOT NULL;
-- The daily expiry job: completed reports past their expiry.
CREATE INDEX reports_expiry_idx ON reports (expires_at) WHERE status = 'completed';

-- Appointments with rates joins an appointment's claim that is not denied (the unique index
-- claims_active_appointment_key of 0016 serves it); follow-up schedules look up each patient's
-- next and last appointment by time.
CREATE INDEX appointments_patient_scheduled_idx ON appointments (patient_id, scheduled_at);
