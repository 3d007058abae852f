-- Scheduling (issue 15, general §2.5, §2.13, §4.5, §4.14): provider availability, books and appointments.
-- Every conflict is settled here, by constraints, never by reading first: two requests that check
-- "is this free?" at the same moment both see yes.
CREATE EXTENSION IF NOT EXISTS btree_gist;

-- A recurring series: its rule and first occurrence, and how far ahead its slots exist. The daily
-- job `availability.extend_series` materialises the occurrences up to the 90-day horizon.
CREATE TABLE slot_series (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider_id         integer NOT NULL REFERENCES providers (id),
  first_start_time    timestamptz NOT NULL,
  first_end_time      timestamptz NOT NULL,
  appointment_type    text,
  recurrence_pattern  text NOT NULL CHECK (recurrence_pattern IN ('daily', 'weekly', 'biweekly', 'monthly', 'custom')),
  recurrence_rule     text,
  generated_until     timestamptz NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX slot_series_provider_id_idx ON slot_series (provider_id);
CREATE INDEX slot_series_generated_until_idx ON slot_series (generated_until);

-- One row per slot; a recurring series is materialised (the spec exposes slot ids), its rows
-- sharing `series_id`.
CREATE TABLE available_slots (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  provider_id         integer NOT NULL REFERENCES providers (id),
  start_time          timestamptz NOT NULL,
  end_time            timestamptz NOT NULL,
  appointment_type    text CHECK (appointment_type IN
                        ('therapy', 'consultation', 'follow_up', 'assessment', 'group_therapy', 'medication_review')),
  available           boolean NOT NULL DEFAULT true,
  -- True while a confirmed book holds the slot: checked in the WHERE of every move, delete and
  -- booking, so the row lock settles races (a booked slot is never moved or deleted).
  booked              boolean NOT NULL DEFAULT false,
  recurring           boolean NOT NULL DEFAULT false,
  recurrence_pattern  text CHECK (recurrence_pattern IN ('daily', 'weekly', 'biweekly', 'monthly', 'custom')),
  recurrence_rule     text,
  series_id           integer REFERENCES slot_series (id),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT available_slots_end_after_start CHECK (end_time > start_time),
  -- A slot becomes one appointment, and appointments last at most a day.
  CONSTRAINT available_slots_at_most_a_day CHECK (end_time - start_time <= interval '24 hours'),
  CONSTRAINT available_slots_booked_unavailable CHECK (NOT booked OR NOT available),
  -- Half-open ranges: a slot ending at 10:00 and one starting at 10:00 do not overlap.
  CONSTRAINT available_slots_no_overlap
    EXCLUDE USING gist (provider_id WITH =, tstzrange(start_time, end_time, '[)') WITH &&)
);
CREATE INDEX available_slots_provider_start_idx ON available_slots (provider_id, start_time);
CREATE INDEX available_slots_start_time_idx ON available_slots (start_time);
CREATE INDEX available_slots_series_id_idx ON available_slots (series_id);

-- Adding minutes to a timestamptz does not depend on the time zone (unlike adding days or
-- months), so this is truly immutable, as an exclusion constraint's expression must be.
CREATE FUNCTION appointment_end(scheduled_at timestamptz, duration_minutes integer) RETURNS timestamptz
  LANGUAGE sql IMMUTABLE PARALLEL SAFE
  AS $$ SELECT scheduled_at + make_interval(mins => duration_minutes) $$;

CREATE TABLE appointments (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id          integer NOT NULL REFERENCES patients (id),
  provider_id         integer NOT NULL REFERENCES providers (id),
  available_slot_id   integer REFERENCES available_slots (id) ON DELETE SET NULL,
  scheduled_at        timestamptz NOT NULL,
  duration_minutes    integer NOT NULL CHECK (duration_minutes BETWEEN 1 AND 1440),
  status              text NOT NULL DEFAULT 'scheduled' CHECK (status IN
                        ('scheduled', 'confirmed', 'in_progress', 'completed', 'cancelled', 'no_show', 'rescheduled')),
  appointment_type    text CHECK (appointment_type IN
                        ('therapy', 'consultation', 'follow_up', 'assessment', 'group_therapy', 'medication_review')),
  notes               text,
  no_show             boolean NOT NULL DEFAULT false,
  telephony_room_sid  text,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  -- A provider is in one session at a time: appointments that hold (or held) the time overlap no other.
  CONSTRAINT appointments_provider_no_overlap
    EXCLUDE USING gist (provider_id WITH =, tstzrange(scheduled_at, appointment_end(scheduled_at, duration_minutes), '[)') WITH &&)
    WHERE (status IN ('scheduled', 'confirmed', 'in_progress', 'completed', 'rescheduled'))
);
CREATE INDEX appointments_patient_id_idx ON appointments (patient_id);
CREATE INDEX appointments_provider_scheduled_idx ON appointments (provider_id, scheduled_at);
CREATE INDEX appointments_available_slot_id_idx ON appointments (available_slot_id);
CREATE INDEX appointments_scheduled_at_idx ON appointments (scheduled_at);
CREATE INDEX appointments_status_idx ON appointments (status);
CREATE INDEX appointments_appointment_type_idx ON appointments (appointment_type);
CREATE INDEX appointments_created_at_idx ON appointments (created_at);
CREATE INDEX appointments_updated_at_idx ON appointments (updated_at);
CREATE INDEX appointments_duration_minutes_idx ON appointments (duration_minutes);

CREATE TABLE books (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Only unbooked slots can be deleted, so only cancelled books lose their slot.
  available_slot_id   integer REFERENCES available_slots (id) ON DELETE SET NULL,
  patient_id          integer NOT NULL REFERENCES patients (id),
  appointment_id      integer REFERENCES appointments (id),
  appointment_type    text CHECK (appointment_type IN
                        ('therapy', 'consultation', 'follow_up', 'assessment', 'group_therapy', 'medication_review')),
  notes               text,
  status              text NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed', 'cancelled')),
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
-- A slot is booked at most once at a time: the second of two concurrent bookings fails here.
CREATE UNIQUE INDEX books_confirmed_slot_key ON books (available_slot_id) WHERE status = 'confirmed';
CREATE INDEX books_available_slot_id_idx ON books (available_slot_id);
CREATE INDEX books_patient_id_idx ON books (patient_id);
CREATE INDEX books_appointment_id_idx ON books (appointment_id);
CREATE INDEX books_created_at_idx ON books (created_at);

-- The history of an appointment's moves and status changes, with the old and new values: the
-- audit trail holds ids and action names only, so a back-office move into the past (a walk-in
-- recorded afterwards) keeps its old and new time here. Append-only.
CREATE TABLE appointment_changes (
  id                    bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  appointment_id        integer NOT NULL REFERENCES appointments (id),
  actor_id              integer REFERENCES users (id) ON DELETE SET NULL,
  old_scheduled_at      timestamptz NOT NULL,
  new_scheduled_at      timestamptz NOT NULL,
  old_duration_minutes  integer NOT NULL,
  new_duration_minutes  integer NOT NULL,
  old_provider_id       integer NOT NULL,
  new_provider_id       integer NOT NULL,
  old_status            text NOT NULL,
  new_status            text NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX appointment_changes_appointment_id_idx ON appointment_changes (appointment_id);
CREATE INDEX appointment_changes_actor_id_idx ON appointment_changes (actor_id);

CREATE FUNCTION appointment_changes_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'appointment_changes is append-only';
END $$;
CREATE TRIGGER appointment_changes_no_update BEFORE UPDATE OR DELETE ON appointment_changes
  FOR EACH ROW EXECUTE FUNCTION appointment_changes_append_only();
