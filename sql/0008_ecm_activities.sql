-- ECM activities (ECM §2.2), their comments (§2.3) and the events derived from them (§2.4, §6).

CREATE TABLE ecm_activities (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id        integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  activity_type     text NOT NULL
                    CHECK (activity_type IN ('task', 'note', 'sms', 'call', 'email', 'in_person_appointment')),
  status            text NOT NULL DEFAULT 'created' CHECK (status IN ('created', 'complete', 'cancelled')),
  message           text,
  subject           text,
  body              text,
  occurred_at       timestamptz NOT NULL,
  booked_at         timestamptz,
  email_to          text,
  email_attachments text[] NOT NULL DEFAULT '{}',
  transcript        text,
  -- Minutes; copied to the event of calls and appointments (docs/spec-decisions.md, issue 11).
  duration          integer CHECK (duration >= 0),
  -- Null for activities the system records (inbound webhooks, communications issue).
  performed_by_id   integer REFERENCES users (id) ON DELETE SET NULL,
  assigned_to_id    integer NOT NULL REFERENCES users (id),
  -- A subtask's task: deleting the task makes its subtasks standalone tasks.
  parent_id         integer REFERENCES ecm_activities (id) ON DELETE SET NULL,
  -- The one activity that blocks this one. `blocking_id` of the representation is the reverse
  -- of this column (the activity whose blocked_by_id is this one), so the two sides can never
  -- disagree; UNIQUE: an activity blocks at most one other. Deleting the blocker unblocks.
  blocked_by_id     integer UNIQUE REFERENCES ecm_activities (id) ON DELETE SET NULL,
  -- Telephony records of the communications issue; no foreign key until their tables exist.
  voice_call_id     integer,
  text_message_id   integer,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK (blocked_by_id IS DISTINCT FROM id),
  CHECK (parent_id IS DISTINCT FROM id)
);
-- The list: a patient's activities newest first, optionally by type, status or assignee.
CREATE INDEX ecm_activities_patient_idx ON ecm_activities (patient_id, occurred_at DESC, id DESC);
CREATE INDEX ecm_activities_patient_type_idx ON ecm_activities (patient_id, activity_type, occurred_at DESC, id DESC);
CREATE INDEX ecm_activities_patient_status_idx ON ecm_activities (patient_id, status, occurred_at DESC, id DESC);
CREATE INDEX ecm_activities_assigned_to_idx ON ecm_activities (assigned_to_id, occurred_at DESC, id DESC);
CREATE INDEX ecm_activities_performed_by_idx ON ecm_activities (performed_by_id) WHERE performed_by_id IS NOT NULL;
CREATE INDEX ecm_activities_parent_idx ON ecm_activities (parent_id) WHERE parent_id IS NOT NULL;

CREATE TABLE ecm_activity_comments (
  id           integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  activity_id  integer NOT NULL REFERENCES ecm_activities (id) ON DELETE CASCADE,
  user_id      integer REFERENCES users (id) ON DELETE SET NULL,
  body         text NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX ecm_activity_comments_activity_idx ON ecm_activity_comments (activity_id, created_at, id);
CREATE INDEX ecm_activity_comments_user_idx ON ecm_activity_comments (user_id) WHERE user_id IS NOT NULL;

-- The compliance record: one per activity that is not a note, written only by the EventGenerator
-- in the activity's transaction. patient_id is the activity's, kept here so lists and counts of a
-- patient's events read one index.
CREATE TABLE ecm_events (
  id           integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id   integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  activity_id  integer NOT NULL UNIQUE REFERENCES ecm_activities (id) ON DELETE CASCADE,
  event_type   text NOT NULL CHECK (event_type IN ('sms', 'call', 'task', 'email', 'appointment', 'meeting')),
  status       text NOT NULL CHECK (status IN ('scheduled', 'attempted', 'complete', 'cancelled')),
  occurred_at  timestamptz NOT NULL,
  subject      text,
  body         text,
  duration     integer,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now()
);
-- List (newest first) and counts over a date range; the second serves `event_type` filters.
-- INCLUDE lets counts run as index-only scans.
CREATE INDEX ecm_events_patient_idx ON ecm_events (patient_id, occurred_at DESC, id DESC)
  INCLUDE (event_type, status, duration);
CREATE INDEX ecm_events_patient_type_idx ON ecm_events (patient_id, event_type, occurred_at DESC, id DESC);
