-- Clinic videos (issue 24, general §2.9, §4.10): records, resumable multipart uploads, ffmpeg
-- processing and playback. Files live in the object store under videos/<id>/ (source while
-- uploading and processing; playback.mp4 and thumbnail.jpg once completed).

CREATE TABLE videos (
  id                    integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  title                 text NOT NULL,
  description           text,
  category              text NOT NULL CHECK (category IN
                          ('therapy_session', 'consultation', 'group_session', 'educational', 'assessment', 'training')),
  status                text NOT NULL DEFAULT 'uploading' CHECK (status IN
                          ('uploading', 'processing', 'completed', 'failed', 'archived', 'deleted')),
  patient_id            integer REFERENCES patients (id),
  provider_id           integer REFERENCES providers (id),
  appointment_id        integer REFERENCES appointments (id),
  -- As given, then as probed (seconds, fractional).
  duration_seconds      double precision CHECK (duration_seconds >= 0),
  -- Parents see a completed video of their own patient only when this is set.
  shared_with_family    boolean NOT NULL DEFAULT false,
  created_by_id         integer NOT NULL REFERENCES users (id),
  -- The upload: the store's multipart id, the declared file and when its last part was seen.
  upload_id             text,
  filename              text,
  content_type          text,
  size_bytes            bigint CHECK (size_bytes > 0),
  part_size             integer,
  upload_started_at     timestamptz,
  -- Bytes the store held at the last look (ListParts at most every 10 s, status polls).
  uploaded_bytes        bigint NOT NULL DEFAULT 0,
  uploaded_checked_at   timestamptz,
  upload_activity_at    timestamptz,
  -- The assembled upload is in the store (videos/<id>/source) until processing completes.
  source_stored         boolean NOT NULL DEFAULT false,
  -- ffprobe's JSON (format and streams), ids and numbers only.
  probe                 jsonb,
  progress              integer NOT NULL DEFAULT 0 CHECK (progress BETWEEN 0 AND 100),
  processing_started_at timestamptz,
  completed_at          timestamptz,
  playback_key          text,
  thumbnail_key         text,
  error_message         text,
  deleted_at            timestamptz,
  created_at            timestamptz NOT NULL DEFAULT now(),
  updated_at            timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'deleted') = (deleted_at IS NOT NULL))
);
CREATE INDEX videos_patient_id_idx ON videos (patient_id) WHERE patient_id IS NOT NULL;
CREATE INDEX videos_provider_id_idx ON videos (provider_id) WHERE provider_id IS NOT NULL;
CREATE INDEX videos_appointment_id_idx ON videos (appointment_id) WHERE appointment_id IS NOT NULL;
CREATE INDEX videos_created_by_id_idx ON videos (created_by_id);
CREATE INDEX videos_category_idx ON videos (category);
CREATE INDEX videos_status_idx ON videos (status);
CREATE INDEX videos_created_at_idx ON videos (created_at, id);
-- The hourly sweep of abandoned uploads.
CREATE INDEX videos_upload_activity_idx ON videos (upload_activity_at) WHERE status = 'uploading';
