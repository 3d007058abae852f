-- Collaborators and tokenised collaborator assessments (issue 22; general §2.4, §4.4, §5.4, §5.5).

CREATE TABLE collaborators (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  -- Whoever added it (staff or parent): reads, edits, deletes and links patients (§5.4).
  owner_id        integer NOT NULL REFERENCES users (id),
  first_name      text NOT NULL,
  last_name       text NOT NULL,
  email           text NOT NULL,
  -- E.164.
  phone           text,
  organization    text NOT NULL,
  title           text,
  type            text NOT NULL CHECK (type IN ('school', 'therapist', 'physician', 'social_worker', 'case_manager', 'family_member', 'other')),
  specialization  text CHECK (specialization IN ('behavioral_support', 'academic_support', 'speech_therapy', 'occupational_therapy',
                    'physical_therapy', 'special_education', 'general_education')),
  status          text NOT NULL DEFAULT 'pending' CHECK (status IN ('active', 'inactive', 'pending', 'declined', 'suspended')),
  created_at      timestamptz NOT NULL DEFAULT now(),
  updated_at      timestamptz NOT NULL DEFAULT now(),
  -- Soft delete: the collaborator's assessments are kept.
  deleted_at      timestamptz
);
-- One address per owner among the collaborators not deleted.
CREATE UNIQUE INDEX collaborators_owner_email_key ON collaborators (owner_id, lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX collaborators_owner_idx ON collaborators (owner_id, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX collaborators_list_idx ON collaborators (id DESC) WHERE deleted_at IS NULL;
CREATE INDEX collaborators_type_idx ON collaborators (type, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX collaborators_status_idx ON collaborators (status, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX collaborators_organization_trgm_idx ON collaborators USING gin (organization gin_trgm_ops) WHERE deleted_at IS NULL;

CREATE TABLE collaborator_patients (
  collaborator_id integer NOT NULL REFERENCES collaborators (id),
  patient_id      integer NOT NULL REFERENCES patients (id),
  added_by        integer REFERENCES users (id),
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (collaborator_id, patient_id)
);
CREATE INDEX collaborator_patients_patient_idx ON collaborator_patients (patient_id, collaborator_id);

-- The seeded, versioned question sets (docs/assessments.md). An assessment records the version it
-- was answered against; a changed set is a new version row, never an edit of an old one.
CREATE TABLE assessment_question_sets (
  assessment_type text NOT NULL,
  version         integer NOT NULL,
  -- [{id, text, type: choice|text|date, options: [{label, points}], required, scored}]
  questions       jsonb NOT NULL,
  -- Ascending score bands [{up_to (null: no upper bound), label}]; [] for an unscored set.
  bands           jsonb NOT NULL DEFAULT '[]',
  created_at      timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (assessment_type, version)
);

CREATE TABLE collaborator_assessments (
  id                integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  collaborator_id   integer NOT NULL REFERENCES collaborators (id),
  patient_id        integer NOT NULL REFERENCES patients (id),
  assessment_type   text NOT NULL,
  question_set_version integer NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'completed', 'expired', 'cancelled')),
  -- [{question_id, question_text, answer, score}]
  responses         jsonb NOT NULL DEFAULT '[]',
  total_score       integer,
  interpretation    text,
  -- When the open link stops working (pending assessments); the hourly job expires them.
  expires_at        timestamptz,
  opened_at         timestamptz,
  completed_at      timestamptz,
  -- The signed-in user who entered the answers (phoned answers); null when the collaborator did.
  submitted_by      integer REFERENCES users (id),
  -- When the incident alert went to the primary provider (the alert job claims it once).
  alerted_at        timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  updated_at        timestamptz NOT NULL DEFAULT now(),
  FOREIGN KEY (assessment_type, question_set_version) REFERENCES assessment_question_sets (assessment_type, version)
);
-- One pending assessment per collaborator, patient and type: a new token reuses it.
CREATE UNIQUE INDEX collaborator_assessments_pending_key ON collaborator_assessments (collaborator_id, patient_id, assessment_type)
  WHERE status = 'pending';
CREATE INDEX collaborator_assessments_collaborator_idx ON collaborator_assessments (collaborator_id, id DESC);
CREATE INDEX collaborator_assessments_patient_idx ON collaborator_assessments (patient_id, id DESC);
CREATE INDEX collaborator_assessments_status_idx ON collaborator_assessments (status, id DESC);
CREATE INDEX collaborator_assessments_expiry_idx ON collaborator_assessments (expires_at) WHERE status = 'pending';
CREATE INDEX collaborator_assessments_submitted_by_idx ON collaborator_assessments (submitted_by) WHERE submitted_by IS NOT NULL;

-- Assessment links: only the SHA-256 of the token is kept. Single use, claimed by one conditional
-- UPDATE … RETURNING in the transaction that saves the answers.
CREATE TABLE collaborator_assessment_tokens (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  assessment_id   integer NOT NULL REFERENCES collaborator_assessments (id),
  token_hash      bytea NOT NULL UNIQUE,
  expires_at      timestamptz NOT NULL,
  used_at         timestamptz,
  revoked_at      timestamptz,
  issued_by       integer REFERENCES users (id),
  -- When the link was emailed (send=true): the mail job claims it once.
  mailed_at       timestamptz,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX collaborator_assessment_tokens_open_idx ON collaborator_assessment_tokens (assessment_id)
  WHERE used_at IS NULL AND revoked_at IS NULL;
CREATE INDEX collaborator_assessment_tokens_issued_by_idx ON collaborator_assessment_tokens (issued_by);

INSERT INTO assessment_question_sets (assessment_type, version, questions, bands) VALUES
('behavioral_observation', 1, '[
  {"id":"following_directions","text":"Has trouble following directions","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"off_task","text":"Is off task","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"disrupts_others","text":"Disrupts others","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"aggression","text":"Shows physical or verbal aggression","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"outbursts","text":"Has emotional outbursts","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"withdraws","text":"Withdraws from others","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"comments","text":"Other observations","type":"text","required":false,"scored":false,"options":[]}
 ]', '[{"up_to":6,"label":"low concern"},{"up_to":14,"label":"moderate concern"},{"up_to":null,"label":"high concern"}]'),
('academic_performance', 1, '[
  {"id":"reading","text":"Reading","type":"choice","required":true,"scored":true,
   "options":[{"label":"Well below grade level","points":1},{"label":"Below grade level","points":2},{"label":"At grade level","points":3},{"label":"Above grade level","points":4},{"label":"Well above grade level","points":5}]},
  {"id":"writing","text":"Writing","type":"choice","required":true,"scored":true,
   "options":[{"label":"Well below grade level","points":1},{"label":"Below grade level","points":2},{"label":"At grade level","points":3},{"label":"Above grade level","points":4},{"label":"Well above grade level","points":5}]},
  {"id":"math","text":"Math","type":"choice","required":true,"scored":true,
   "options":[{"label":"Well below grade level","points":1},{"label":"Below grade level","points":2},{"label":"At grade level","points":3},{"label":"Above grade level","points":4},{"label":"Well above grade level","points":5}]},
  {"id":"completes_work","text":"Completes assigned work","type":"choice","required":true,"scored":true,
   "options":[{"label":"Well below grade level","points":1},{"label":"Below grade level","points":2},{"label":"At grade level","points":3},{"label":"Above grade level","points":4},{"label":"Well above grade level","points":5}]},
  {"id":"participates","text":"Participates in class","type":"choice","required":true,"scored":true,
   "options":[{"label":"Well below grade level","points":1},{"label":"Below grade level","points":2},{"label":"At grade level","points":3},{"label":"Above grade level","points":4},{"label":"Well above grade level","points":5}]},
  {"id":"comments","text":"Other observations","type":"text","required":false,"scored":false,"options":[]}
 ]', '[{"up_to":12,"label":"below grade level"},{"up_to":18,"label":"at grade level"},{"up_to":null,"label":"above grade level"}]'),
('social_skills', 1, '[
  {"id":"starts_conversations","text":"Starts conversations","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"takes_turns","text":"Takes turns","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"cooperates","text":"Cooperates with others","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"resolves_conflict","text":"Resolves conflict calmly","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"empathy","text":"Shows empathy","type":"choice","required":true,"scored":true,
   "options":[{"label":"Never","points":0},{"label":"Rarely","points":1},{"label":"Sometimes","points":2},{"label":"Often","points":3},{"label":"Almost always","points":4}]},
  {"id":"comments","text":"Other observations","type":"text","required":false,"scored":false,"options":[]}
 ]', '[{"up_to":7,"label":"needs support"},{"up_to":14,"label":"developing"},{"up_to":null,"label":"strength"}]'),
('progress_report', 1, '[
  {"id":"behaviour","text":"Behaviour","type":"choice","required":true,"scored":true,
   "options":[{"label":"Much worse","points":-2},{"label":"Worse","points":-1},{"label":"No change","points":0},{"label":"Better","points":1},{"label":"Much better","points":2}]},
  {"id":"mood","text":"Mood","type":"choice","required":true,"scored":true,
   "options":[{"label":"Much worse","points":-2},{"label":"Worse","points":-1},{"label":"No change","points":0},{"label":"Better","points":1},{"label":"Much better","points":2}]},
  {"id":"school_work","text":"School work","type":"choice","required":true,"scored":true,
   "options":[{"label":"Much worse","points":-2},{"label":"Worse","points":-1},{"label":"No change","points":0},{"label":"Better","points":1},{"label":"Much better","points":2}]},
  {"id":"peers","text":"Relationships with peers","type":"choice","required":true,"scored":true,
   "options":[{"label":"Much worse","points":-2},{"label":"Worse","points":-1},{"label":"No change","points":0},{"label":"Better","points":1},{"label":"Much better","points":2}]},
  {"id":"treatment_goals","text":"Progress toward treatment goals","type":"choice","required":true,"scored":true,
   "options":[{"label":"Much worse","points":-2},{"label":"Worse","points":-1},{"label":"No change","points":0},{"label":"Better","points":1},{"label":"Much better","points":2}]},
  {"id":"comments","text":"Other observations","type":"text","required":false,"scored":false,"options":[]}
 ]', '[{"up_to":-1,"label":"worse"},{"up_to":0,"label":"unchanged"},{"up_to":null,"label":"improving"}]'),
('incident_report', 1, '[
  {"id":"date","text":"Date of the incident","type":"date","required":true,"scored":false,"options":[]},
  {"id":"location","text":"Where it happened","type":"text","required":true,"scored":false,"options":[]},
  {"id":"incident_type","text":"Type of incident","type":"choice","required":true,"scored":false,
   "options":[{"label":"aggression","points":null},{"label":"self_harm","points":null},{"label":"elopement","points":null},{"label":"property_damage","points":null},{"label":"bullying","points":null},{"label":"other","points":null}]},
  {"id":"description","text":"What happened","type":"text","required":true,"scored":false,"options":[]},
  {"id":"injuries","text":"Was anyone injured?","type":"choice","required":true,"scored":false,
   "options":[{"label":"yes","points":null},{"label":"no","points":null}]},
  {"id":"action_taken","text":"Action taken","type":"text","required":true,"scored":false,"options":[]}
 ]', '[]'),
('treatment_feedback', 1, '[
  {"id":"understands_goals","text":"I understand the treatment goals","type":"choice","required":true,"scored":true,
   "options":[{"label":"Strongly disagree","points":1},{"label":"Disagree","points":2},{"label":"Neutral","points":3},{"label":"Agree","points":4},{"label":"Strongly agree","points":5}]},
  {"id":"sees_improvement","text":"I see improvement","type":"choice","required":true,"scored":true,
   "options":[{"label":"Strongly disagree","points":1},{"label":"Disagree","points":2},{"label":"Neutral","points":3},{"label":"Agree","points":4},{"label":"Strongly agree","points":5}]},
  {"id":"clinic_communication","text":"The clinic communicates well with me","type":"choice","required":true,"scored":true,
   "options":[{"label":"Strongly disagree","points":1},{"label":"Disagree","points":2},{"label":"Neutral","points":3},{"label":"Agree","points":4},{"label":"Strongly agree","points":5}]},
  {"id":"can_support_plan","text":"I can support the treatment plan","type":"choice","required":true,"scored":true,
   "options":[{"label":"Strongly disagree","points":1},{"label":"Disagree","points":2},{"label":"Neutral","points":3},{"label":"Agree","points":4},{"label":"Strongly agree","points":5}]},
  {"id":"comments","text":"Other comments","type":"text","required":false,"scored":false,"options":[]}
 ]', '[]');
