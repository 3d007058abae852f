-- ECM communications (ECM §2.9, §3.3, §3.4, §4.3): SMS and call records of the telephony provider
-- (Twilio), inbound and outbound, SMS opt-outs, and the system user inbound activities are
-- performed by. docs/communications.md describes the flows.

-- The system user: performs the activities the service records by itself (inbound SMS and calls,
-- follow-up tasks). It cannot sign in (no valid password hash, inactive) and, like a deleted
-- account (`deleted_at` set), no user list or admin endpoint shows or changes it. Found by email.
-- Its id is the largest integer, outside the identity sequence's range in practice, so the users
-- created after this migration (the bootstrap admin first) keep the ids they would have had.
INSERT INTO users (id, email, password_hash, first_name, last_name, role, status, confirmed, deleted_at)
OVERRIDING SYSTEM VALUE
VALUES (2147483647, 'system@care-coordination.invalid', '!', 'Care Coordination', 'System', 'support', 'inactive', true, now())
ON CONFLICT DO NOTHING;

-- Inbound messages and calls are matched to patients by their E.164 phone.
CREATE INDEX patients_phone_idx ON patients (phone) WHERE phone IS NOT NULL;

CREATE TABLE sms_messages (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Null: an inbound message from a number no patient has (kept, listed to admins).
  patient_id      integer REFERENCES patients (id) ON DELETE SET NULL,
  direction       text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  -- Twilio's MessageSid. Null only while an outbound message is being handed to the provider
  -- (the row is written first: docs/communications.md "Never lose a message").
  telephony_sid   text UNIQUE,
  to_number       text NOT NULL,
  from_number     text NOT NULL,
  body            text NOT NULL,
  media_urls      text[] NOT NULL DEFAULT '{}',
  -- §3.3, plus `sending` before the provider answers, `received` for inbound messages.
  status          text NOT NULL CHECK (status IN ('queued', 'sending', 'sent', 'delivered', 'undelivered', 'failed',
                    'received', 'accepted', 'scheduled', 'canceled', 'read', 'receiving')),
  error_code      text,
  error_message   text,
  segments        integer NOT NULL DEFAULT 1,
  sent_by_id      integer REFERENCES users (id) ON DELETE SET NULL,
  activity_id     integer REFERENCES ecm_activities (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_messages_patient_idx ON sms_messages (patient_id, created_at DESC) WHERE patient_id IS NOT NULL;
-- The admin list of unmatched inbound messages.
CREATE INDEX sms_messages_unmatched_idx ON sms_messages (created_at DESC, id DESC) WHERE patient_id IS NULL;
CREATE INDEX sms_messages_activity_idx ON sms_messages (activity_id) WHERE activity_id IS NOT NULL;
CREATE INDEX sms_messages_sent_by_idx ON sms_messages (sent_by_id) WHERE sent_by_id IS NOT NULL;
-- Reconciliation: outbound rows the provider call never completed.
CREATE INDEX sms_messages_unsent_idx ON sms_messages (created_at) WHERE telephony_sid IS NULL;

CREATE TABLE voice_calls (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id        integer REFERENCES patients (id) ON DELETE SET NULL,
  direction         text NOT NULL CHECK (direction IN ('outbound', 'inbound')),
  telephony_sid     text UNIQUE,
  to_number         text NOT NULL,
  from_number       text NOT NULL,
  -- §3.4, plus `initiated` (Twilio's first status callback event).
  status            text NOT NULL CHECK (status IN ('queued', 'initiated', 'ringing', 'in-progress', 'completed', 'busy',
                      'no-answer', 'failed', 'canceled')),
  error_code        text,
  error_message     text,
  duration_seconds  integer CHECK (duration_seconds >= 0),
  recording_url     text,
  transcript        text,
  -- Where an inbound call was forwarded (the lead care manager's phone), if anywhere.
  forwarded_to      text,
  placed_by_id      integer REFERENCES users (id) ON DELETE SET NULL,
  activity_id       integer REFERENCES ecm_activities (id) ON DELETE SET NULL,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX voice_calls_patient_idx ON voice_calls (patient_id, created_at DESC) WHERE patient_id IS NOT NULL;
CREATE INDEX voice_calls_unmatched_idx ON voice_calls (created_at DESC, id DESC) WHERE patient_id IS NULL;
CREATE INDEX voice_calls_activity_idx ON voice_calls (activity_id) WHERE activity_id IS NOT NULL;
CREATE INDEX voice_calls_placed_by_idx ON voice_calls (placed_by_id) WHERE placed_by_id IS NOT NULL;
CREATE INDEX voice_calls_unsent_idx ON voice_calls (created_at) WHERE telephony_sid IS NULL;

-- Numbers that answered STOP (and its synonyms) and have not answered START since. Per number,
-- as the carrier and Twilio enforce it; a patient is opted out when their phone is listed.
CREATE TABLE sms_opt_outs (
  phone_number    text PRIMARY KEY,
  -- The inbound message that opted the number out.
  sms_message_id  integer REFERENCES sms_messages (id) ON DELETE SET NULL,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX sms_opt_outs_sms_message_idx ON sms_opt_outs (sms_message_id) WHERE sms_message_id IS NOT NULL;

-- Follow-up tasks opened when a message or call fails: one per record, whatever the retries.
CREATE TABLE communication_follow_ups (
  activity_id      integer PRIMARY KEY REFERENCES ecm_activities (id) ON DELETE CASCADE,
  sms_message_id   integer UNIQUE REFERENCES sms_messages (id) ON DELETE CASCADE,
  voice_call_id    integer UNIQUE REFERENCES voice_calls (id) ON DELETE CASCADE,
  CHECK ((sms_message_id IS NULL) <> (voice_call_id IS NULL))
);
