-- A provider's delivery report (SMS or call status callback) that arrived before the reminder it
-- is about recorded the provider's id: Twilio may call back before its answer to our send has
-- been handled. The sender applies it when it records that id, and deletes it. Reports of ids no
-- reminder ever takes are dropped after a day.
CREATE TABLE reminder_delivery_reports (
  provider_message_id text PRIMARY KEY,
  delivery_status     text NOT NULL CHECK (delivery_status IN ('delivered', 'failed', 'bounced', 'unsubscribed')),
  status_reason       text,
  received_at         timestamptz NOT NULL
);
CREATE INDEX reminder_delivery_reports_received_at_idx ON reminder_delivery_reports (received_at);
