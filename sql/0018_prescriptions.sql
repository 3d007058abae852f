-- Medications catalogue, prescriptions and their append-only history (issue 20, general §2.8, §4.8,
-- §4.2 medication_history).

CREATE TABLE medications (
  id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name          text NOT NULL,
  generic_name  text NOT NULL,
  brand_names   text[] NOT NULL DEFAULT '{}',
  strength      text NOT NULL,
  dosage_form   text NOT NULL,
  -- RxNorm concept unique identifier (NLM) of the ingredient when known: digits only.
  rxnorm_cui    text CHECK (rxnorm_cui ~ '^[0-9]{1,10}$'),
  active        boolean NOT NULL DEFAULT true,
  created_at    timestamptz NOT NULL DEFAULT now(),
  updated_at    timestamptz NOT NULL DEFAULT now()
);
-- One row per ingredient, strength and form.
CREATE UNIQUE INDEX medications_product_key ON medications (lower(generic_name), lower(strength), lower(dosage_form));
CREATE INDEX medications_name_idx ON medications (lower(name), id);
CREATE INDEX medications_active_idx ON medications (active);

CREATE TABLE prescriptions (
  id                 integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  patient_id         integer NOT NULL REFERENCES patients (id) ON DELETE CASCADE,
  provider_id        integer NOT NULL REFERENCES providers (id),
  medication_id      integer NOT NULL REFERENCES medications (id),
  dosage             text NOT NULL,
  frequency          text NOT NULL,
  quantity           integer NOT NULL CHECK (quantity > 0),
  refills            integer NOT NULL DEFAULT 0 CHECK (refills BETWEEN 0 AND 11),
  refills_remaining  integer NOT NULL DEFAULT 0 CHECK (refills_remaining >= 0 AND refills_remaining <= refills),
  instructions       text,
  prescription_date  date NOT NULL,
  status             text NOT NULL DEFAULT 'active'
                     CHECK (status IN ('active', 'completed', 'discontinued', 'expired', 'on_hold', 'cancelled')),
  start_date         date,
  end_date           date,
  created_by_id      integer REFERENCES users (id) ON DELETE SET NULL,
  created_at         timestamptz NOT NULL DEFAULT now(),
  updated_at         timestamptz NOT NULL DEFAULT now(),
  CONSTRAINT prescriptions_end_after_start CHECK (start_date IS NULL OR end_date IS NULL OR end_date > start_date)
);
CREATE INDEX prescriptions_patient_id_idx ON prescriptions (patient_id, prescription_date DESC, id DESC);
CREATE INDEX prescriptions_provider_id_idx ON prescriptions (provider_id, prescription_date DESC, id DESC);
CREATE INDEX prescriptions_medication_id_idx ON prescriptions (medication_id);
CREATE INDEX prescriptions_status_idx ON prescriptions (status);
CREATE INDEX prescriptions_created_by_id_idx ON prescriptions (created_by_id);
CREATE INDEX prescriptions_list_idx ON prescriptions (prescription_date DESC, id DESC);
-- The daily expiry job reads active prescriptions by end date.
CREATE INDEX prescriptions_expiry_idx ON prescriptions (end_date) WHERE status = 'active' AND end_date IS NOT NULL;

-- Append-only: one row per creation, change of what is taken (medication, dosage, frequency,
-- quantity, refills, dates) or status, and per refill. Rows are never updated; they go only with
-- their prescription (a patient removed permanently).
CREATE TABLE prescription_history (
  id                 bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  prescription_id    integer NOT NULL REFERENCES prescriptions (id) ON DELETE CASCADE,
  patient_id         integer NOT NULL,
  medication_id      integer NOT NULL REFERENCES medications (id),
  event              text NOT NULL CHECK (event IN ('created', 'changed', 'status_changed', 'refilled')),
  from_status        text,
  status             text NOT NULL,
  dosage             text NOT NULL,
  frequency          text NOT NULL,
  quantity           integer NOT NULL,
  refills_remaining  integer NOT NULL,
  start_date         date,
  end_date           date,
  actor_id           integer REFERENCES users (id) ON DELETE SET NULL,
  recorded_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX prescription_history_prescription_id_idx ON prescription_history (prescription_id, id);
CREATE INDEX prescription_history_patient_id_idx ON prescription_history (patient_id);
CREATE INDEX prescription_history_medication_id_idx ON prescription_history (medication_id);
CREATE INDEX prescription_history_actor_id_idx ON prescription_history (actor_id);

CREATE FUNCTION prescription_history_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  -- A cascade from the prescription (depth 2: the foreign key's own trigger runs this one) may
  -- remove rows; nothing else may change or remove them.
  IF TG_OP = 'DELETE' AND pg_trigger_depth() > 1 THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'prescription_history is append-only' USING ERRCODE = 'restrict_violation';
END
$$;
CREATE TRIGGER prescription_history_append_only BEFORE UPDATE OR DELETE ON prescription_history
  FOR EACH ROW EXECUTE FUNCTION prescription_history_append_only();
CREATE TRIGGER prescription_history_no_truncate BEFORE TRUNCATE ON prescription_history
  FOR EACH STATEMENT EXECUTE FUNCTION prescription_history_append_only();

-- The catalogue a behavioural-health clinic prescribes most. Source: names, strengths and forms
-- as marketed in the US (FDA labels); rxnorm_cui is the NLM RxNorm concept of the ingredient
-- (term type IN; PIN for lithium carbonate and divalproex sodium), left NULL where not verified.
-- Curated by hand for this service, not a copy of a licensed dataset.
INSERT INTO medications (name, generic_name, brand_names, strength, dosage_form, rxnorm_cui) VALUES
  -- SSRIs
  ('Sertraline 25 mg tablet', 'sertraline', '{Zoloft}', '25 mg', 'tablet', '36437'),
  ('Sertraline 50 mg tablet', 'sertraline', '{Zoloft}', '50 mg', 'tablet', '36437'),
  ('Sertraline 100 mg tablet', 'sertraline', '{Zoloft}', '100 mg', 'tablet', '36437'),
  ('Sertraline 20 mg/mL oral concentrate', 'sertraline', '{Zoloft}', '20 mg/mL', 'oral concentrate', '36437'),
  ('Fluoxetine 10 mg capsule', 'fluoxetine', '{Prozac}', '10 mg', 'capsule', '4493'),
  ('Fluoxetine 20 mg capsule', 'fluoxetine', '{Prozac}', '20 mg', 'capsule', '4493'),
  ('Fluoxetine 40 mg capsule', 'fluoxetine', '{Prozac}', '40 mg', 'capsule', '4493'),
  ('Fluoxetine 20 mg/5 mL oral solution', 'fluoxetine', '{Prozac}', '20 mg/5 mL', 'oral solution', '4493'),
  ('Escitalopram 5 mg tablet', 'escitalopram', '{Lexapro}', '5 mg', 'tablet', '321988'),
  ('Escitalopram 10 mg tablet', 'escitalopram', '{Lexapro}', '10 mg', 'tablet', '321988'),
  ('Escitalopram 20 mg tablet', 'escitalopram', '{Lexapro}', '20 mg', 'tablet', '321988'),
  ('Citalopram 10 mg tablet', 'citalopram', '{Celexa}', '10 mg', 'tablet', '2556'),
  ('Citalopram 20 mg tablet', 'citalopram', '{Celexa}', '20 mg', 'tablet', '2556'),
  ('Citalopram 40 mg tablet', 'citalopram', '{Celexa}', '40 mg', 'tablet', '2556'),
  ('Paroxetine 10 mg tablet', 'paroxetine', '{Paxil}', '10 mg', 'tablet', '32937'),
  ('Paroxetine 20 mg tablet', 'paroxetine', '{Paxil}', '20 mg', 'tablet', '32937'),
  ('Fluvoxamine 50 mg tablet', 'fluvoxamine', '{Luvox}', '50 mg', 'tablet', '42355'),
  ('Fluvoxamine 100 mg tablet', 'fluvoxamine', '{Luvox}', '100 mg', 'tablet', '42355'),
  -- SNRIs and other antidepressants
  ('Venlafaxine ER 37.5 mg capsule', 'venlafaxine', '{"Effexor XR"}', '37.5 mg', 'extended-release capsule', '39786'),
  ('Venlafaxine ER 75 mg capsule', 'venlafaxine', '{"Effexor XR"}', '75 mg', 'extended-release capsule', '39786'),
  ('Venlafaxine ER 150 mg capsule', 'venlafaxine', '{"Effexor XR"}', '150 mg', 'extended-release capsule', '39786'),
  ('Duloxetine 20 mg capsule', 'duloxetine', '{Cymbalta}', '20 mg', 'delayed-release capsule', '72625'),
  ('Duloxetine 30 mg capsule', 'duloxetine', '{Cymbalta}', '30 mg', 'delayed-release capsule', '72625'),
  ('Duloxetine 60 mg capsule', 'duloxetine', '{Cymbalta}', '60 mg', 'delayed-release capsule', '72625'),
  ('Desvenlafaxine ER 50 mg tablet', 'desvenlafaxine', '{Pristiq}', '50 mg', 'extended-release tablet', '734064'),
  ('Bupropion XL 150 mg tablet', 'bupropion', '{"Wellbutrin XL"}', '150 mg', 'extended-release tablet', '42347'),
  ('Bupropion XL 300 mg tablet', 'bupropion', '{"Wellbutrin XL"}', '300 mg', 'extended-release tablet', '42347'),
  ('Bupropion SR 150 mg tablet', 'bupropion', '{"Wellbutrin SR"}', '150 mg', 'sustained-release tablet', '42347'),
  ('Mirtazapine 15 mg tablet', 'mirtazapine', '{Remeron}', '15 mg', 'tablet', '15996'),
  ('Mirtazapine 30 mg tablet', 'mirtazapine', '{Remeron}', '30 mg', 'tablet', '15996'),
  ('Vortioxetine 10 mg tablet', 'vortioxetine', '{Trintellix}', '10 mg', 'tablet', '1455099'),
  ('Amitriptyline 25 mg tablet', 'amitriptyline', '{Elavil}', '25 mg', 'tablet', '704'),
  ('Nortriptyline 25 mg capsule', 'nortriptyline', '{Pamelor}', '25 mg', 'capsule', '7531'),
  ('Clomipramine 25 mg capsule', 'clomipramine', '{Anafranil}', '25 mg', 'capsule', '2597'),
  -- ADHD: stimulants
  ('Methylphenidate 10 mg tablet', 'methylphenidate', '{Ritalin}', '10 mg', 'tablet', '6901'),
  ('Methylphenidate ER 18 mg tablet', 'methylphenidate', '{Concerta}', '18 mg', 'extended-release tablet', '6901'),
  ('Methylphenidate ER 27 mg tablet', 'methylphenidate', '{Concerta}', '27 mg', 'extended-release tablet', '6901'),
  ('Methylphenidate ER 36 mg tablet', 'methylphenidate', '{Concerta}', '36 mg', 'extended-release tablet', '6901'),
  ('Methylphenidate ER 54 mg tablet', 'methylphenidate', '{Concerta}', '54 mg', 'extended-release tablet', '6901'),
  ('Dexmethylphenidate ER 10 mg capsule', 'dexmethylphenidate', '{"Focalin XR"}', '10 mg', 'extended-release capsule', NULL),
  ('Lisdexamfetamine 20 mg capsule', 'lisdexamfetamine', '{Vyvanse}', '20 mg', 'capsule', '700810'),
  ('Lisdexamfetamine 30 mg capsule', 'lisdexamfetamine', '{Vyvanse}', '30 mg', 'capsule', '700810'),
  ('Lisdexamfetamine 40 mg capsule', 'lisdexamfetamine', '{Vyvanse}', '40 mg', 'capsule', '700810'),
  ('Mixed amphetamine salts 10 mg tablet', 'dextroamphetamine saccharate, amphetamine aspartate, dextroamphetamine sulfate, amphetamine sulfate', '{Adderall}', '10 mg', 'tablet', NULL),
  ('Mixed amphetamine salts ER 20 mg capsule', 'dextroamphetamine saccharate, amphetamine aspartate, dextroamphetamine sulfate, amphetamine sulfate', '{"Adderall XR"}', '20 mg', 'extended-release capsule', NULL),
  ('Dextroamphetamine 5 mg tablet', 'dextroamphetamine', '{Zenzedi}', '5 mg', 'tablet', '3288'),
  -- ADHD: non-stimulants
  ('Atomoxetine 10 mg capsule', 'atomoxetine', '{Strattera}', '10 mg', 'capsule', '38400'),
  ('Atomoxetine 25 mg capsule', 'atomoxetine', '{Strattera}', '25 mg', 'capsule', '38400'),
  ('Atomoxetine 40 mg capsule', 'atomoxetine', '{Strattera}', '40 mg', 'capsule', '38400'),
  ('Guanfacine ER 1 mg tablet', 'guanfacine', '{Intuniv}', '1 mg', 'extended-release tablet', '40114'),
  ('Guanfacine ER 2 mg tablet', 'guanfacine', '{Intuniv}', '2 mg', 'extended-release tablet', '40114'),
  ('Clonidine ER 0.1 mg tablet', 'clonidine', '{Kapvay}', '0.1 mg', 'extended-release tablet', '2599'),
  ('Clonidine 0.1 mg tablet', 'clonidine', '{Catapres}', '0.1 mg', 'tablet', '2599'),
  -- Atypical antipsychotics
  ('Aripiprazole 2 mg tablet', 'aripiprazole', '{Abilify}', '2 mg', 'tablet', '89013'),
  ('Aripiprazole 5 mg tablet', 'aripiprazole', '{Abilify}', '5 mg', 'tablet', '89013'),
  ('Aripiprazole 10 mg tablet', 'aripiprazole', '{Abilify}', '10 mg', 'tablet', '89013'),
  ('Risperidone 0.5 mg tablet', 'risperidone', '{Risperdal}', '0.5 mg', 'tablet', '35636'),
  ('Risperidone 1 mg tablet', 'risperidone', '{Risperdal}', '1 mg', 'tablet', '35636'),
  ('Risperidone 1 mg/mL oral solution', 'risperidone', '{Risperdal}', '1 mg/mL', 'oral solution', '35636'),
  ('Quetiapine 25 mg tablet', 'quetiapine', '{Seroquel}', '25 mg', 'tablet', '51272'),
  ('Quetiapine 100 mg tablet', 'quetiapine', '{Seroquel}', '100 mg', 'tablet', '51272'),
  ('Quetiapine ER 300 mg tablet', 'quetiapine', '{"Seroquel XR"}', '300 mg', 'extended-release tablet', '51272'),
  ('Olanzapine 5 mg tablet', 'olanzapine', '{Zyprexa}', '5 mg', 'tablet', '61381'),
  ('Olanzapine 10 mg tablet', 'olanzapine', '{Zyprexa}', '10 mg', 'tablet', '61381'),
  ('Ziprasidone 20 mg capsule', 'ziprasidone', '{Geodon}', '20 mg', 'capsule', '115698'),
  ('Lurasidone 40 mg tablet', 'lurasidone', '{Latuda}', '40 mg', 'tablet', '1040028'),
  ('Brexpiprazole 1 mg tablet', 'brexpiprazole', '{Rexulti}', '1 mg', 'tablet', '1658314'),
  ('Clozapine 25 mg tablet', 'clozapine', '{Clozaril}', '25 mg', 'tablet', '2626'),
  ('Haloperidol 5 mg tablet', 'haloperidol', '{Haldol}', '5 mg', 'tablet', '5093'),
  -- Mood stabilisers
  ('Lithium carbonate 300 mg capsule', 'lithium carbonate', '{}', '300 mg', 'capsule', '42351'),
  ('Lithium carbonate ER 300 mg tablet', 'lithium carbonate', '{Lithobid}', '300 mg', 'extended-release tablet', '42351'),
  ('Lamotrigine 25 mg tablet', 'lamotrigine', '{Lamictal}', '25 mg', 'tablet', '28439'),
  ('Lamotrigine 100 mg tablet', 'lamotrigine', '{Lamictal}', '100 mg', 'tablet', '28439'),
  ('Lamotrigine 200 mg tablet', 'lamotrigine', '{Lamictal}', '200 mg', 'tablet', '28439'),
  ('Divalproex sodium DR 250 mg tablet', 'divalproex sodium', '{Depakote}', '250 mg', 'delayed-release tablet', '266856'),
  ('Divalproex sodium DR 500 mg tablet', 'divalproex sodium', '{Depakote}', '500 mg', 'delayed-release tablet', '266856'),
  ('Valproic acid 250 mg capsule', 'valproic acid', '{}', '250 mg', 'capsule', '11118'),
  ('Carbamazepine ER 200 mg tablet', 'carbamazepine', '{Tegretol-XR}', '200 mg', 'extended-release tablet', '2002'),
  ('Oxcarbazepine 300 mg tablet', 'oxcarbazepine', '{Trileptal}', '300 mg', 'tablet', '32624'),
  -- Sleep aids
  ('Trazodone 50 mg tablet', 'trazodone', '{Desyrel}', '50 mg', 'tablet', '10737'),
  ('Trazodone 100 mg tablet', 'trazodone', '{Desyrel}', '100 mg', 'tablet', '10737'),
  ('Zolpidem 5 mg tablet', 'zolpidem', '{Ambien}', '5 mg', 'tablet', '39993'),
  ('Zolpidem 10 mg tablet', 'zolpidem', '{Ambien}', '10 mg', 'tablet', '39993'),
  ('Doxepin 3 mg tablet', 'doxepin', '{Silenor}', '3 mg', 'tablet', '3638'),
  ('Melatonin 3 mg tablet', 'melatonin', '{}', '3 mg', 'tablet', NULL),
  -- Anxiety and other adjuncts
  ('Hydroxyzine hydrochloride 25 mg tablet', 'hydroxyzine', '{Atarax}', '25 mg', 'tablet', '5553'),
  ('Buspirone 10 mg tablet', 'buspirone', '{Buspar}', '10 mg', 'tablet', '1827'),
  ('Clonazepam 0.5 mg tablet', 'clonazepam', '{Klonopin}', '0.5 mg', 'tablet', '2598'),
  ('Lorazepam 1 mg tablet', 'lorazepam', '{Ativan}', '1 mg', 'tablet', '6470'),
  ('Propranolol 10 mg tablet', 'propranolol', '{Inderal}', '10 mg', 'tablet', '8787'),
  ('Prazosin 1 mg capsule', 'prazosin', '{Minipress}', '1 mg', 'capsule', '8629'),
  ('Naltrexone 50 mg tablet', 'naltrexone', '{Revia}', '50 mg', 'tablet', '7243');
