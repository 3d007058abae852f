-- Crash recovery: which instances and job workers are alive, so that work a crashed process held
-- is released or failed by the others within minutes (src/Services/Heartbeats.ts, Recovery.ts).

-- One row per live holder of work: an app instance (`instance-…`, the owner of its imports) or a
-- job worker pool (graphile-worker's pool id, which its job locks name). Beaten every
-- HEARTBEAT_SECONDS with the database's clock (the clock graphile-worker stamps its locks with); a
-- row silent for HEARTBEAT_STALE_SECONDS is a gone holder, deleted by whoever sweeps first.
CREATE TABLE heartbeats (
  holder_id   text PRIMARY KEY,
  started_at  timestamptz NOT NULL,
  beat_at     timestamptz NOT NULL
);

-- The instance running an import: an unfinished import whose instance is gone is failed.
ALTER TABLE mif_files ADD COLUMN owner_instance text;
CREATE INDEX mif_files_unfinished_idx ON mif_files (id) WHERE status IN ('pending', 'processing');

-- The sweeps look for work left mid-way; these stay tiny.
CREATE INDEX reports_generating_idx ON reports (id) WHERE status = 'generating';
CREATE INDEX appointment_reminders_sending_idx ON appointment_reminders (id)
  WHERE status = 'scheduled' AND delivery_status = 'sending';
