-- Least privilege for health data (docs/spec-decisions.md "Who sees which patient"): documents say
-- whether they are clinical, and every break-glass access (a staff member opening a patient outside
-- their care relationships, with a reason) is kept for review.

-- Front desk and billing see the documents that are not clinical (an insurance card, a consent
-- form). Documents uploaded before this column existed were never classified: they count as
-- clinical, the safe side.
ALTER TABLE patient_documents ADD COLUMN clinical boolean NOT NULL DEFAULT true;

-- One row per break-glass access, beside its audit entry (`patient.break_glass`, ids only): the
-- reason the caller gave and the request it opened. No foreign keys to users or patients: like the
-- audit trail, the record outlives them.
CREATE TABLE break_glass_accesses (
  id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  audit_event_id  bigint NOT NULL REFERENCES audit_events (id),
  user_id         integer NOT NULL,
  patient_id      integer NOT NULL,
  reason          text NOT NULL CHECK (length(reason) BETWEEN 1 AND 500),
  request_method  text NOT NULL,
  request_path    text NOT NULL,
  created_at      timestamptz NOT NULL
);
CREATE INDEX break_glass_accesses_created_at_idx ON break_glass_accesses (created_at DESC, id DESC);
CREATE INDEX break_glass_accesses_audit_event_id_idx ON break_glass_accesses (audit_event_id);
CREATE INDEX break_glass_accesses_user_idx ON break_glass_accesses (user_id, created_at DESC, id DESC);
CREATE INDEX break_glass_accesses_patient_idx ON break_glass_accesses (patient_id, created_at DESC, id DESC);
