-- Questionnaires (issue 21, general §2.11, §4.12, §4.2): instruments, their questions, patients'
-- responses, self-harm alerts, emailed invites and anonymous public screeners.
--
-- Columns other areas read (stable names: do not rename):
--   questionnaires: id, slug ('phq9', 'phqa', 'gad7', 'psc17'), version (1, 2, … per slug; an edit
--     of the seed makes a new row), active (the current version of a slug is the active one),
--     category, age_group, target_audience ('parents' | 'teens' | 'adults' | NULL).
--   questionnaire_questions: questionnaire_id, position (1-based), key (stable per slug across
--     versions, e.g. 'phq9_9'), type, options ([{"label", "points"}], points NULL when unscored).
--   questionnaire_responses: patient_id, questionnaire_id (the exact version answered), status
--     ('started' | 'in_progress' | 'completed' | 'submitted' | 'reviewed'), score (integer total,
--     NULL until every required question is answered, or when invalid), severity (the band: PHQ-9/
--     PHQ-A 'minimal' | 'mild' | 'moderate' | 'moderately_severe' | 'severe', GAD-7 'minimal' |
--     'mild' | 'moderate' | 'severe', PSC-17 'positive' | 'negative' | 'invalid'; NULL until
--     scored), subscales (jsonb object subscale key → integer score, e.g. PSC-17
--     {"internalizing": 3, "attention": 5, "externalizing": 2}; '{}' when none or not scored),
--     flags (text[]: 'self_harm', and for PSC-17 'positive', 'internalizing_positive',
--     'attention_positive', 'externalizing_positive'), completed_at (set when it became completed,
--     kept through submitted/reviewed, NULL again if an answer is cleared before submission),
--     submitted_at, reviewed_at. "Latest completed" = status IN ('completed', 'submitted',
--     'reviewed') ordered by completed_at DESC.

CREATE TABLE questionnaires (
  id                  integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  slug                text NOT NULL,
  version             integer NOT NULL CHECK (version > 0),
  title               text NOT NULL,
  description         text,
  category            text NOT NULL CHECK (category IN ('screening', 'diagnostic', 'outcome', 'progress', 'satisfaction', 'intake')),
  age_group           text,
  estimated_duration  integer CHECK (estimated_duration > 0),
  active              boolean NOT NULL DEFAULT true,
  attribution         text,
  target_audience     text CHECK (target_audience IN ('parents', 'teens', 'adults')),
  -- The scoring spec of this version (bands, subscales, blanks allowed, self-harm items).
  scoring             jsonb NOT NULL DEFAULT '{}',
  -- SHA-256 of the seed file this version came from: a changed file makes the next version.
  content_hash        text NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now(),
  updated_at          timestamptz NOT NULL DEFAULT now(),
  UNIQUE (slug, version)
);
-- One current version per instrument.
CREATE UNIQUE INDEX questionnaires_active_slug_key ON questionnaires (slug) WHERE active;
CREATE INDEX questionnaires_list_idx ON questionnaires (title, id);
CREATE INDEX questionnaires_category_idx ON questionnaires (category);
CREATE INDEX questionnaires_age_group_idx ON questionnaires (age_group);
CREATE INDEX questionnaires_target_audience_idx ON questionnaires (target_audience) WHERE target_audience IS NOT NULL;

CREATE TABLE questionnaire_questions (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  questionnaire_id  integer NOT NULL REFERENCES questionnaires (id) ON DELETE CASCADE,
  position          integer NOT NULL CHECK (position > 0),
  key               text NOT NULL,
  text              text NOT NULL,
  type              text NOT NULL CHECK (type IN ('multiple_choice', 'scale', 'text', 'yes_no', 'checkbox', 'date')),
  -- [{"label": "Not at all", "points": 0}, …]; points NULL for an unscored option.
  options           jsonb NOT NULL DEFAULT '[]',
  required          boolean NOT NULL DEFAULT true,
  UNIQUE (questionnaire_id, position),
  UNIQUE (questionnaire_id, key)
);

CREATE TABLE questionnaire_invites (
  id                        integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  questionnaire_id          integer NOT NULL REFERENCES questionnaires (id),
  patient_id                integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  email                     text NOT NULL,
  due_date                  date,
  message                   text,
  -- SHA-256 of the emailed token (src/Services/Tokens.ts hashToken); the token itself is never stored.
  token_hash                bytea NOT NULL UNIQUE,
  -- 'expired' is also read from expires_at: a sent/opened invite past it is expired.
  status                    text NOT NULL DEFAULT 'sent' CHECK (status IN ('sent', 'opened', 'completed', 'expired', 'revoked')),
  expires_at                timestamptz NOT NULL,
  opened_at                 timestamptz,
  completed_at              timestamptz,
  revoked_at                timestamptz,
  -- Set by the mail job when it sends the link (claims the invite's mail once).
  mailed_at                 timestamptz,
  invited_by_id             integer REFERENCES users (id) ON DELETE SET NULL,
  created_at                timestamptz NOT NULL DEFAULT now(),
  updated_at                timestamptz NOT NULL DEFAULT now()
);
-- Re-inviting revokes the open invite of the same patient and instrument: at most one open.
CREATE UNIQUE INDEX questionnaire_invites_open_key ON questionnaire_invites (patient_id, questionnaire_id)
  WHERE status IN ('sent', 'opened');
CREATE INDEX questionnaire_invites_questionnaire_id_idx ON questionnaire_invites (questionnaire_id);
CREATE INDEX questionnaire_invites_invited_by_id_idx ON questionnaire_invites (invited_by_id) WHERE invited_by_id IS NOT NULL;

CREATE TABLE questionnaire_responses (
  id                      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  questionnaire_id        integer NOT NULL REFERENCES questionnaires (id),
  questionnaire_version   integer NOT NULL,
  patient_id              integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  status                  text NOT NULL DEFAULT 'started'
                          CHECK (status IN ('started', 'in_progress', 'completed', 'submitted', 'reviewed')),
  -- {"<question id>": answer}: a label, an array of labels (checkbox), text or a YYYY-MM-DD date.
  answers                 jsonb NOT NULL DEFAULT '{}',
  score                   integer,
  severity                text,
  subscales               jsonb NOT NULL DEFAULT '{}',
  flags                   text[] NOT NULL DEFAULT '{}',
  review_notes            text,
  -- Who started it (staff or the parent); NULL for an invite's respondent.
  created_by_id           integer REFERENCES users (id) ON DELETE SET NULL,
  invite_id               integer UNIQUE REFERENCES questionnaire_invites (id) ON DELETE SET NULL,
  reviewed_by_id          integer REFERENCES users (id) ON DELETE SET NULL,
  completed_at            timestamptz,
  submitted_at            timestamptz,
  reviewed_at             timestamptz,
  created_at              timestamptz NOT NULL DEFAULT now(),
  updated_at              timestamptz NOT NULL DEFAULT now()
);
-- A patient's list, newest first (and the latest completed per patient and instrument).
CREATE INDEX questionnaire_responses_patient_idx ON questionnaire_responses (patient_id, created_at DESC, id DESC);
CREATE INDEX questionnaire_responses_patient_completed_idx ON questionnaire_responses (patient_id, completed_at DESC)
  WHERE completed_at IS NOT NULL;
CREATE INDEX questionnaire_responses_questionnaire_id_idx ON questionnaire_responses (questionnaire_id);
CREATE INDEX questionnaire_responses_list_idx ON questionnaire_responses (created_at DESC, id DESC);
CREATE INDEX questionnaire_responses_created_by_id_idx ON questionnaire_responses (created_by_id) WHERE created_by_id IS NOT NULL;
CREATE INDEX questionnaire_responses_reviewed_by_id_idx ON questionnaire_responses (reviewed_by_id) WHERE reviewed_by_id IS NOT NULL;

-- Anonymous public screeners: no account, no patient; purged 180 days after created_at.
CREATE TABLE marketing_questionnaires (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  questionnaire_id  integer NOT NULL REFERENCES questionnaires (id),
  email             text NOT NULL,
  answers           jsonb NOT NULL DEFAULT '{}',
  score             integer,
  severity          text,
  subscales         jsonb NOT NULL DEFAULT '{}',
  flags             text[] NOT NULL DEFAULT '{}',
  -- Set by the job that emails the band (claims the mail once).
  result_mailed_at  timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX marketing_questionnaires_questionnaire_id_idx ON marketing_questionnaires (questionnaire_id);
CREATE INDEX marketing_questionnaires_created_at_idx ON marketing_questionnaires (created_at);

-- A self-harm answer: at most one alert per response (or screener), never retracted; a review
-- acknowledges it.
CREATE TABLE questionnaire_alerts (
  id                          integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  kind                        text NOT NULL DEFAULT 'self_harm' CHECK (kind IN ('self_harm')),
  questionnaire_response_id   integer REFERENCES questionnaire_responses (id) ON DELETE CASCADE,
  marketing_questionnaire_id  integer REFERENCES marketing_questionnaires (id) ON DELETE CASCADE,
  patient_id                  integer REFERENCES patients (id) ON DELETE CASCADE,
  acknowledged_by_id          integer REFERENCES users (id) ON DELETE SET NULL,
  acknowledged_at             timestamptz,
  -- When the alert mail went out (the job claims the alert by setting it).
  notified_at                 timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK ((questionnaire_response_id IS NULL) <> (marketing_questionnaire_id IS NULL))
);
CREATE UNIQUE INDEX questionnaire_alerts_response_key ON questionnaire_alerts (questionnaire_response_id, kind)
  WHERE questionnaire_response_id IS NOT NULL;
CREATE UNIQUE INDEX questionnaire_alerts_marketing_key ON questionnaire_alerts (marketing_questionnaire_id, kind)
  WHERE marketing_questionnaire_id IS NOT NULL;
CREATE INDEX questionnaire_alerts_patient_id_idx ON questionnaire_alerts (patient_id) WHERE patient_id IS NOT NULL;
CREATE INDEX questionnaire_alerts_acknowledged_by_id_idx ON questionnaire_alerts (acknowledged_by_id) WHERE acknowledged_by_id IS NOT NULL;
