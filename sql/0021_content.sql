-- Content library (issue 23, general §2.10, §4.11): tags, collections, pieces, per-account
-- assignments (user pieces, user collections), the nightly popularity figures and the
-- questionnaire signal rules the recommendations read (docs/content.md).

CREATE TABLE content_tags (
  id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- The import key (`anxiety`, `sleep-hygiene`).
  slug          text NOT NULL UNIQUE,
  name          text NOT NULL,
  display_name  text NOT NULL,
  category      text,
  description   text,
  color         text CHECK (color ~ '^#[0-9A-Fa-f]{6}$'),
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX content_tags_name_idx ON content_tags (name, id);
CREATE INDEX content_tags_category_idx ON content_tags (category, name, id);

CREATE TABLE content_collections (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slug                text NOT NULL UNIQUE,
  title               text NOT NULL,
  description         text,
  age_group           text NOT NULL CHECK (age_group IN ('child', 'teen', 'adult', 'all')),
  -- Minutes.
  estimated_duration  integer CHECK (estimated_duration >= 0),
  published           boolean NOT NULL DEFAULT true,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX content_collections_list_idx ON content_collections (created_at DESC, id DESC) WHERE published;
CREATE INDEX content_collections_age_group_idx ON content_collections (age_group) WHERE published;

-- Files uploaded for pieces (`POST /v1/admin/content/files`): what a bundle's `file_key` may name.
CREATE TABLE content_files (
  object_key    text PRIMARY KEY,
  filename      text NOT NULL,
  content_type  text NOT NULL,
  size          bigint NOT NULL,
  created_by_id integer REFERENCES users (id) ON DELETE SET NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE content_pieces (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slug                    text NOT NULL UNIQUE,
  title                   text NOT NULL,
  description             text,
  content_type            text NOT NULL CHECK (content_type IN ('video', 'article', 'audio', 'interactive', 'worksheet', 'quiz')),
  duration_minutes        integer CHECK (duration_minutes >= 0),
  -- The piece is either an external https link or a stored file; its thumbnail likewise (or none).
  external_url            text CHECK (external_url LIKE 'https://%'),
  object_key              text REFERENCES content_files (object_key),
  thumbnail_external_url  text CHECK (thumbnail_external_url LIKE 'https://%'),
  thumbnail_object_key    text REFERENCES content_files (object_key),
  age_group               text NOT NULL CHECK (age_group IN ('child', 'teen', 'adult', 'all')),
  difficulty_level        text NOT NULL DEFAULT 'beginner' CHECK (difficulty_level IN ('beginner', 'intermediate', 'advanced')),
  published               boolean NOT NULL DEFAULT true,
  -- The piece's place in the last imported bundle: the export lists pieces in this order.
  bundle_position         integer,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now(),
  CHECK ((external_url IS NULL) <> (object_key IS NULL)),
  CHECK (thumbnail_external_url IS NULL OR thumbnail_object_key IS NULL)
);
-- Newest first (the list's default and the recommendations' tie-break), per type and age group.
CREATE INDEX content_pieces_list_idx ON content_pieces (created_at DESC, id DESC) WHERE published;
CREATE INDEX content_pieces_type_idx ON content_pieces (content_type, created_at DESC, id DESC) WHERE published;
CREATE INDEX content_pieces_age_group_idx ON content_pieces (age_group) WHERE published;
CREATE INDEX content_pieces_object_key_idx ON content_pieces (object_key) WHERE object_key IS NOT NULL;
CREATE INDEX content_pieces_thumbnail_object_key_idx ON content_pieces (thumbnail_object_key) WHERE thumbnail_object_key IS NOT NULL;

CREATE TABLE content_piece_tags (
  piece_id  integer NOT NULL REFERENCES content_pieces (id) ON DELETE CASCADE,
  tag_id    integer NOT NULL REFERENCES content_tags (id) ON DELETE CASCADE,
  PRIMARY KEY (piece_id, tag_id)
);
CREATE INDEX content_piece_tags_tag_idx ON content_piece_tags (tag_id, piece_id);

CREATE TABLE content_collection_tags (
  collection_id  integer NOT NULL REFERENCES content_collections (id) ON DELETE CASCADE,
  tag_id         integer NOT NULL REFERENCES content_tags (id) ON DELETE CASCADE,
  PRIMARY KEY (collection_id, tag_id)
);
CREATE INDEX content_collection_tags_tag_idx ON content_collection_tags (tag_id, collection_id);

CREATE TABLE content_collection_pieces (
  collection_id  integer NOT NULL REFERENCES content_collections (id) ON DELETE CASCADE,
  piece_id       integer NOT NULL REFERENCES content_pieces (id) ON DELETE CASCADE,
  position       integer NOT NULL CHECK (position > 0),
  PRIMARY KEY (collection_id, piece_id)
);
CREATE INDEX content_collection_pieces_order_idx ON content_collection_pieces (collection_id, position, piece_id);
CREATE INDEX content_collection_pieces_piece_idx ON content_collection_pieces (piece_id);

-- A collection assigned to an account (optionally for a patient): its pieces are user pieces,
-- linked through content_user_collection_pieces; its status is derived from theirs.
CREATE TABLE content_user_collections (
  id                     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  content_collection_id  integer NOT NULL REFERENCES content_collections (id),
  user_id                integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  patient_id             integer REFERENCES patients (id) ON DELETE CASCADE,
  assigned_by            integer REFERENCES users (id) ON DELETE SET NULL,
  assigned_at            timestamptz NOT NULL DEFAULT now(),
  due_date               date,
  notes                  text,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX content_user_collections_user_idx ON content_user_collections (user_id, assigned_at DESC, id DESC);
CREATE INDEX content_user_collections_patient_idx ON content_user_collections (patient_id, assigned_at DESC, id DESC) WHERE patient_id IS NOT NULL;
CREATE INDEX content_user_collections_list_idx ON content_user_collections (assigned_at DESC, id DESC);
CREATE INDEX content_user_collections_collection_idx ON content_user_collections (content_collection_id);
CREATE INDEX content_user_collections_assigned_by_idx ON content_user_collections (assigned_by) WHERE assigned_by IS NOT NULL;

CREATE TABLE content_user_pieces (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  content_piece_id  integer NOT NULL REFERENCES content_pieces (id),
  user_id           integer NOT NULL REFERENCES users (id) ON DELETE CASCADE,
  patient_id        integer REFERENCES patients (id) ON DELETE CASCADE,
  status            text NOT NULL DEFAULT 'assigned'
                      CHECK (status IN ('assigned', 'started', 'in_progress', 'completed', 'skipped')),
  assigned_by       integer REFERENCES users (id) ON DELETE SET NULL,
  assigned_at       timestamptz NOT NULL DEFAULT now(),
  due_date          date,
  completed_at      timestamptz,
  rating            smallint CHECK (rating BETWEEN 1 AND 5),
  feedback          text,
  notes             text,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'completed') = (completed_at IS NOT NULL)),
  CHECK (rating IS NULL OR status = 'completed')
);
-- One open assignment of a piece per account and patient: the constraint, never a look first.
CREATE UNIQUE INDEX content_user_pieces_open_key ON content_user_pieces (user_id, coalesce(patient_id, 0), content_piece_id)
  WHERE status IN ('assigned', 'started', 'in_progress');
CREATE INDEX content_user_pieces_user_idx ON content_user_pieces (user_id, assigned_at DESC, id DESC);
CREATE INDEX content_user_pieces_patient_idx ON content_user_pieces (patient_id, content_piece_id) WHERE patient_id IS NOT NULL;
CREATE INDEX content_user_pieces_patient_list_idx ON content_user_pieces (patient_id, assigned_at DESC, id DESC) WHERE patient_id IS NOT NULL;
CREATE INDEX content_user_pieces_list_idx ON content_user_pieces (assigned_at DESC, id DESC);
CREATE INDEX content_user_pieces_piece_idx ON content_user_pieces (content_piece_id);
CREATE INDEX content_user_pieces_completed_idx ON content_user_pieces (completed_at, content_piece_id) WHERE status = 'completed';
CREATE INDEX content_user_pieces_assigned_by_idx ON content_user_pieces (assigned_by) WHERE assigned_by IS NOT NULL;

CREATE TABLE content_user_collection_pieces (
  user_collection_id  integer NOT NULL REFERENCES content_user_collections (id) ON DELETE CASCADE,
  user_piece_id       integer NOT NULL REFERENCES content_user_pieces (id) ON DELETE CASCADE,
  position            integer NOT NULL,
  PRIMARY KEY (user_collection_id, user_piece_id)
);
CREATE INDEX content_user_collection_pieces_piece_idx ON content_user_collection_pieces (user_piece_id);

-- Completions per piece in the last 90 days and their popularity (ln(1 + n) / ln(1 + max)),
-- refreshed nightly by the `content.refresh_stats` job.
CREATE TABLE content_piece_stats (
  piece_id         integer PRIMARY KEY REFERENCES content_pieces (id) ON DELETE CASCADE,
  completions_90d  integer NOT NULL DEFAULT 0,
  popularity       double precision NOT NULL DEFAULT 0 CHECK (popularity BETWEEN 0 AND 1),
  refreshed_at     timestamptz NOT NULL DEFAULT now()
);

-- Questionnaire results that weigh tags (docs/content.md): the latest completed response of
-- `questionnaire_slug` (at most 180 days old) whose `measure` ('score' or a subscale key) lies in
-- [min_value, max_value] adds `weight` to the tag `tag_slug`. Data, not code: edit the rows.
CREATE TABLE content_signal_rules (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  questionnaire_slug  text NOT NULL,
  -- Shown in the reason: "matches a recent GAD-7 result".
  questionnaire_label text NOT NULL,
  measure             text NOT NULL DEFAULT 'score',
  min_value           integer NOT NULL,
  max_value           integer,
  tag_slug            text NOT NULL,
  weight              integer NOT NULL,
  UNIQUE (questionnaire_slug, measure, min_value, tag_slug)
);

INSERT INTO content_signal_rules (questionnaire_slug, questionnaire_label, measure, min_value, max_value, tag_slug, weight) VALUES
  ('phq9', 'PHQ-9', 'score', 10, NULL, 'depression', 2),
  ('phq9', 'PHQ-9', 'score', 5, 9, 'depression', 1),
  ('phqa', 'PHQ-A', 'score', 10, NULL, 'depression', 2),
  ('phqa', 'PHQ-A', 'score', 5, 9, 'depression', 1),
  ('gad7', 'GAD-7', 'score', 10, NULL, 'anxiety', 2),
  ('gad7', 'GAD-7', 'score', 5, 9, 'anxiety', 1),
  -- PSC-17 subscale cut-offs: internalizing ≥ 5, attention ≥ 7, externalizing ≥ 7.
  ('psc17', 'PSC-17', 'internalizing', 5, NULL, 'anxiety', 1),
  ('psc17', 'PSC-17', 'internalizing', 5, NULL, 'depression', 1),
  ('psc17', 'PSC-17', 'attention', 7, NULL, 'adhd', 2),
  ('psc17', 'PSC-17', 'externalizing', 7, NULL, 'behavior', 2);
