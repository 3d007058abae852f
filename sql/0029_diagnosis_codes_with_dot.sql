-- Claims return diagnosis codes as they were sent; until now they were stored without the dot
-- (the 837P form). Where the dot was cannot be known for those rows, but ICD-10-CM always puts it
-- after the third character, so a code longer than three characters gets it back there
-- (F329 → F32.9; R69 stays R69). updated_at is left alone: nobody changed the claim.
UPDATE claims
SET diagnosis_codes = ARRAY(
  SELECT CASE WHEN length(code) > 3 AND strpos(code, '.') = 0 THEN left(code, 3) || '.' || substr(code, 4) ELSE code END
  FROM unnest(diagnosis_codes) WITH ORDINALITY AS t(code, n)
  ORDER BY n
)
WHERE EXISTS (SELECT 1 FROM unnest(diagnosis_codes) AS code WHERE length(code) > 3 AND strpos(code, '.') = 0);
