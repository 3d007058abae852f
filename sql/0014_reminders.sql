-- Appointment reminders (issue 17, general §2.14, §4.16) and the push devices they reach.

-- SMS opt-outs (STOP/START) are the communications issue's (migration 0012: numbers that answered
-- STOP, keyed by E.164 number); reminders only read them. Created here, in its shape, only where
-- that migration is not applied, so either branch may land first.
CREATE TABLE IF NOT EXISTS sms_opt_outs (
  phone_number    text PRIMARY KEY,
  sms_message_id  integer,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- One row per reminder and channel (`all` is expanded when it is created). A row is sent by its
-- job (`reminders.send`, job key `appointment_reminder:<id>`), which first claims it with a
-- compare-and-swap on (status, delivery_status): a retry or a second worker sends nothing twice.
CREATE TABLE appointment_reminders (
  id               integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  appointment_id   integer NOT NULL REFERENCES appointments (id) ON DELETE CASCADE,
  reminder_type    text NOT NULL CHECK (reminder_type IN ('sms', 'email', 'push', 'voice')),
  status           text NOT NULL DEFAULT 'scheduled'
                     CHECK (status IN ('scheduled', 'sent', 'delivered', 'failed', 'cancelled')),
  delivery_status  text NOT NULL DEFAULT 'pending'
                     CHECK (delivery_status IN ('pending', 'sending', 'delivered', 'failed', 'bounced', 'unsubscribed')),
  send_at          timestamptz NOT NULL,
  -- How long before the appointment it goes out: a rescheduled appointment moves it by this lead.
  lead_seconds     bigint NOT NULL,
  sent_at          timestamptz,
  -- The caller's own text (null: the catalogue's message in `language`).
  message          text,
  language         text NOT NULL DEFAULT 'en',
  -- Why it failed or was cancelled (fixed texts of ours, or the provider's reason).
  status_reason    text,
  -- When a send claimed it: a claim older than the send timeout is taken again (a crash between
  -- claim and send), never one that is fresh.
  claimed_at       timestamptz,
  -- The job run (graphile job id) holding the claim: a retry of that same job may take it over.
  claimed_by       text,
  attempts         integer NOT NULL DEFAULT 0,
  -- The provider's id of the message or call (Twilio SID, SMTP message id, FCM message name).
  provider_message_id text,
  -- Created by a booking (true) or through the API (false).
  automatic        boolean NOT NULL DEFAULT false,
  created_by_id    integer REFERENCES users (id) ON DELETE SET NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  updated_at       timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT appointment_reminders_sent_has_time CHECK (status NOT IN ('sent', 'delivered') OR sent_at IS NOT NULL)
);
CREATE INDEX appointment_reminders_appointment_id_idx ON appointment_reminders (appointment_id);
CREATE INDEX appointment_reminders_created_by_id_idx ON appointment_reminders (created_by_id) WHERE created_by_id IS NOT NULL;
CREATE INDEX appointment_reminders_send_at_idx ON appointment_reminders (send_at);
-- Delivery callbacks find their reminder by the provider's id.
CREATE UNIQUE INDEX appointment_reminders_provider_message_id_key ON appointment_reminders (provider_message_id)
  WHERE provider_message_id IS NOT NULL;

-- Push devices of a user account (not in the spec; needed for push reminders). A device token
-- belongs to one account at a time: registering it again moves it.
CREATE TABLE user_devices (
  id          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id     integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  token       text NOT NULL,
  platform    text NOT NULL CHECK (platform IN ('ios', 'android', 'web')),
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX user_devices_token_key ON user_devices (token);
CREATE INDEX user_devices_user_id_idx ON user_devices (user_id);
