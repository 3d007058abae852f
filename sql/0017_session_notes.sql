-- Session notes, their versions, addenda and sign-offs (issue 18, general §2.3, §4.2, §4.3, §4.15).
-- A note is the legal record of a session: once signed (`locked_at`) its content never changes
-- (a trigger refuses it); corrections are addenda. Signature images live in the object store;
-- each row keeps the signer, the time and the SHA-256 of the note content they signed.

CREATE TABLE session_notes (
  id                    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id            integer NOT NULL REFERENCES patients (id),
  provider_id           integer NOT NULL REFERENCES providers (id),
  -- One note per appointment: the second of two concurrent creations fails here.
  appointment_id        integer NOT NULL UNIQUE REFERENCES appointments (id),
  content               jsonb NOT NULL,
  content_sha256        text NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  status                text NOT NULL DEFAULT 'draft' CHECK (status IN
                          ('draft', 'pending_review', 'pending_signature', 'completed', 'requires_addendum', 'archived')),
  supervision_required  boolean NOT NULL DEFAULT false,
  supervisor_id         integer REFERENCES providers (id),
  supervision_status    text CHECK (supervision_status IN ('pending_supervision', 'approved', 'requires_changes', 'escalated')),
  supervision_notes     text,
  -- Set when the note is first completed (signed off): the content is locked from then on.
  locked_at             timestamptz,
  created_by_id         integer REFERENCES users (id),
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CHECK (supervision_required = (supervision_status IS NOT NULL))
);
CREATE INDEX session_notes_patient_id_idx ON session_notes (patient_id, created_at);
CREATE INDEX session_notes_provider_id_idx ON session_notes (provider_id);
CREATE INDEX session_notes_supervisor_id_idx ON session_notes (supervisor_id);
CREATE INDEX session_notes_status_idx ON session_notes (status);
CREATE INDEX session_notes_supervision_status_idx ON session_notes (supervision_status);
CREATE INDEX session_notes_created_by_id_idx ON session_notes (created_by_id);
CREATE INDEX session_notes_created_at_idx ON session_notes (created_at);
CREATE INDEX session_notes_updated_at_idx ON session_notes (updated_at);

CREATE FUNCTION session_notes_locked_content() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF OLD.locked_at IS NOT NULL AND (NEW.content IS DISTINCT FROM OLD.content OR NEW.content_sha256 IS DISTINCT FROM OLD.content_sha256) THEN
    RAISE EXCEPTION 'session note % is signed: its content is locked', OLD.id;
  END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER session_notes_locked_content BEFORE UPDATE ON session_notes
  FOR EACH ROW EXECUTE FUNCTION session_notes_locked_content();

-- Every content the note has had, oldest first: who wrote it, when, and its hash. Append-only.
CREATE TABLE session_note_versions (
  id                bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_note_id   integer NOT NULL REFERENCES session_notes (id) ON DELETE CASCADE,
  version           integer NOT NULL CHECK (version > 0),
  content           jsonb NOT NULL,
  content_sha256    text NOT NULL,
  edited_by_id      integer REFERENCES users (id),
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (session_note_id, version)
);
CREATE INDEX session_note_versions_edited_by_id_idx ON session_note_versions (edited_by_id);

CREATE TABLE session_note_addendums (
  id                              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_note_id                 integer NOT NULL REFERENCES session_notes (id) ON DELETE CASCADE,
  instructions                    text NOT NULL,
  signature_key                   text,
  signature_sha256                text,
  signed_content_sha256           text,
  signed_at                       timestamptz,
  instructions_response           text,
  responded_signature_key         text,
  responded_signature_sha256      text,
  responded_content_sha256        text,
  responded_signed_at             timestamptz,
  created_by_id                   integer REFERENCES users (id),
  responded_by_id                 integer REFERENCES users (id),
  responded_at                    timestamptz,
  created_at                      timestamptz NOT NULL DEFAULT now(),
  updated_at                      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_note_addendums_note_idx ON session_note_addendums (session_note_id, id);
CREATE INDEX session_note_addendums_created_by_id_idx ON session_note_addendums (created_by_id);
CREATE INDEX session_note_addendums_responded_by_id_idx ON session_note_addendums (responded_by_id);
-- Open addenda (not yet answered): "nothing pending" is one indexed look-up.
CREATE INDEX session_note_addendums_open_idx ON session_note_addendums (session_note_id) WHERE responded_at IS NULL;

CREATE TABLE session_note_sign_offs (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  session_note_id         integer NOT NULL REFERENCES session_notes (id) ON DELETE CASCADE,
  reviewer_id             integer NOT NULL REFERENCES users (id),
  review_date             timestamptz NOT NULL,
  instructions            text,
  signature_key           text NOT NULL,
  signature_sha256        text NOT NULL,
  signed_content_sha256   text NOT NULL,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_note_sign_offs_note_idx ON session_note_sign_offs (session_note_id, id);
CREATE INDEX session_note_sign_offs_reviewer_id_idx ON session_note_sign_offs (reviewer_id);
