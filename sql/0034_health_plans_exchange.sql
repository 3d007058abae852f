-- Health plans and the state's return files (docs/ecm-exchange.md): the plans that send member
-- information files, the staff-kept member fields the files need, each plan's exchange profiles,
-- and the Return Transmission / Outreach Tracker files generated through the job queue.

CREATE TABLE health_plans (
  id             integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name           text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  -- DHCS's identifier of the managed care plan: the files' Primary Payer (MCP) Identifier.
  mcp_id         text NOT NULL CHECK (length(mcp_id) BETWEEN 1 AND 50),
  contact_name   text CHECK (length(contact_name) <= 200),
  contact_email  text CHECK (length(contact_email) <= 254),
  contact_phone  text CHECK (length(contact_phone) <= 50),
  active         boolean NOT NULL DEFAULT true,
  -- Our ECM provider NPIs contracted with the plan: an import whose records name one of them
  -- (and no other plan's) is the plan's by default.
  provider_npis  text[] NOT NULL DEFAULT '{}' CHECK (cardinality(provider_npis) <= 100),
  -- What the files say of us for this plan (the plan's contract): TIN and provider type.
  provider_tin   text CHECK (length(provider_tin) <= 20),
  provider_type  text CHECK (length(provider_type) <= 100),
  created_at     timestamptz NOT NULL,
  updated_at     timestamptz NOT NULL
);
CREATE UNIQUE INDEX health_plans_mcp_id_key ON health_plans (mcp_id);
CREATE INDEX health_plans_name_idx ON health_plans (lower(name), id);
CREATE INDEX health_plans_provider_npis_idx ON health_plans USING gin (provider_npis);

-- The plan that sent the file (null: not named and no single plan's NPI in it).
ALTER TABLE mif_files ADD COLUMN health_plan_id integer REFERENCES health_plans (id) ON DELETE RESTRICT;
CREATE INDEX mif_files_health_plan_id_idx ON mif_files (health_plan_id) WHERE health_plan_id IS NOT NULL;

-- Values the record cannot know, kept by staff; null is blank in the files (never invented).
ALTER TABLE patients
  ADD COLUMN homelessness_indicator text CHECK (homelessness_indicator IN ('Y', 'N')),
  ADD COLUMN pof_indicator text CHECK (pof_indicator IN ('Y', 'N')),
  ADD COLUMN pof text CHECK (length(pof) <= 200);

-- A plan's variant of one file: columns (source and header, in file order), date format,
-- delimiter, file format and file name pattern. At most one per plan and file.
CREATE TABLE exchange_profiles (
  id                 integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  health_plan_id     integer NOT NULL REFERENCES health_plans (id) ON DELETE CASCADE,
  file_kind          text NOT NULL CHECK (file_kind IN ('rtf', 'otf')),
  columns            jsonb NOT NULL CHECK (jsonb_typeof(columns) = 'array'),
  date_format        text NOT NULL CHECK (date_format IN ('YYYY-MM-DD', 'MM/DD/YYYY', 'YYYYMMDD')),
  delimiter          text NOT NULL CHECK (delimiter IN ('comma', 'pipe', 'tab')),
  file_format        text NOT NULL CHECK (file_format IN ('csv', 'xlsx')),
  file_name_pattern  text NOT NULL CHECK (length(file_name_pattern) BETWEEN 1 AND 200),
  created_at         timestamptz NOT NULL,
  updated_at         timestamptz NOT NULL,
  UNIQUE (health_plan_id, file_kind)
);

-- One generated file. `profile` is the profile as it was when the report was requested, so a
-- later profile change never rewrites a generated file.
CREATE TABLE exchange_reports (
  id              integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  file_kind       text NOT NULL CHECK (file_kind IN ('rtf', 'otf')),
  health_plan_id  integer NOT NULL REFERENCES health_plans (id) ON DELETE RESTRICT,
  start_date      date NOT NULL,
  end_date        date NOT NULL,
  profile         jsonb NOT NULL,
  status          text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'generating', 'completed', 'failed')),
  failure_reason  text,
  rows_total      integer,
  rows_written    integer NOT NULL DEFAULT 0,
  filename        text,
  object_key      text UNIQUE,
  byte_size       bigint,
  created_by_id   integer REFERENCES users (id) ON DELETE SET NULL,
  started_at      timestamptz,
  generated_at    timestamptz,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  CHECK (end_date >= start_date),
  CONSTRAINT exchange_reports_completed_has_file CHECK (status <> 'completed' OR (object_key IS NOT NULL AND filename IS NOT NULL)),
  CONSTRAINT exchange_reports_failed_has_reason CHECK (status <> 'failed' OR failure_reason IS NOT NULL)
);
-- The lists: one file kind, newest first.
CREATE INDEX exchange_reports_kind_created_idx ON exchange_reports (file_kind, created_at DESC, id DESC);
CREATE INDEX exchange_reports_health_plan_id_idx ON exchange_reports (health_plan_id);
CREATE INDEX exchange_reports_created_by_id_idx ON exchange_reports (created_by_id) WHERE created_by_id IS NOT NULL;
