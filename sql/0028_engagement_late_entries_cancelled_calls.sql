-- Engagement status recorded late (docs/prtf.md "Engagement status"): an entry may take effect
-- before entries already written. Each entry keeps what it replaced on its day (the entry then in
-- force), so the history shows who entered what, when, and over what; automatic outreach moves a
-- late entry makes untrue are moved to ecm_status_history_withdrawals, never silently lost.
ALTER TABLE ecm_status_histories
  ADD COLUMN replaced_id integer,
  ADD COLUMN replaced_status text,
  ADD COLUMN replaced_effective_date date;

CREATE TABLE ecm_status_history_withdrawals (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The withdrawn entry as it was (its id is no longer in ecm_status_histories).
  entry_id                integer NOT NULL UNIQUE,
  patient_id              integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  status                  text NOT NULL,
  effective_date          date NOT NULL,
  source                  text NOT NULL,
  reason                  text,
  actor_id                integer REFERENCES users (id) ON DELETE SET NULL,
  entered_at              timestamptz NOT NULL,
  -- The late entry that withdrew it, who recorded that, and when.
  withdrawn_by_entry_id   integer NOT NULL REFERENCES ecm_status_histories (id) ON DELETE CASCADE,
  withdrawn_by_actor_id   integer REFERENCES users (id) ON DELETE SET NULL,
  withdrawn_at            timestamptz NOT NULL
);
CREATE INDEX ecm_status_history_withdrawals_patient_idx ON ecm_status_history_withdrawals (patient_id);
CREATE INDEX ecm_status_history_withdrawals_entry_idx ON ecm_status_history_withdrawals (withdrawn_by_entry_id);
CREATE INDEX ecm_status_history_withdrawals_actor_idx ON ecm_status_history_withdrawals (withdrawn_by_actor_id)
  WHERE withdrawn_by_actor_id IS NOT NULL;
CREATE INDEX ecm_status_history_withdrawals_actor_id_idx ON ecm_status_history_withdrawals (actor_id) WHERE actor_id IS NOT NULL;

-- Calls Twilio reported `canceled` (hung up before anyone answered) used to leave their activity
-- open, so their events counted as outreach attempts; the voice status webhook now cancels them
-- (docs/prtf.md "The rule"). Bring the calls already recorded in line.
UPDATE ecm_activities a SET status = 'cancelled', updated_at = now()
  FROM voice_calls c WHERE c.activity_id = a.id AND c.status = 'canceled' AND a.status = 'created';
UPDATE ecm_events e SET status = 'cancelled', updated_at = now()
  FROM voice_calls c WHERE c.activity_id = e.activity_id AND c.status = 'canceled' AND e.status = 'attempted';
