-- Report file cells formatted by PostgreSQL (issue 25, src/Services/Reports/ReportCells.ts): the
-- report cursor hands the app one finished line a row instead of a dozen values to decode and
-- format. Each function is the SQL twin of the app's own rule, and a test compares them on
-- random text: change both together.

-- A CSV text cell (src/Domain/Csv.ts `csvCell`): a cell a spreadsheet would run as a formula gets
-- a leading ' and quotes; one with a comma, quote, CR, LF, or leading or trailing white space is
-- quoted; quotes doubled. The bracket lists JavaScript's \s (PostgreSQL's \s depends on the locale).
CREATE FUNCTION report_csv_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value ~ '^[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]*[=+\-@]|^[\t\r]'
      THEN '"''' || replace(value, '"', '""') || '"'
    WHEN value ~ '[",\r\n]|^[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]|[\t\n\v\f\r \u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000\ufeff]$'
      THEN '"' || replace(value, '"', '""') || '"'
    ELSE value
  END
$$;

-- XML character data as exceljs writes it (its utils.xmlEncode): the five entities escaped, the
-- control characters XML 1.0 forbids (all below 0x20 but tab, LF and CR; and 0x7F) dropped.
CREATE FUNCTION report_xml_text(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value ~ '[<>&''"\x01-\x08\x0B\x0C\x0E-\x1F\x7F]'
      THEN regexp_replace(
        replace(replace(replace(replace(replace(value, '&', '&amp;'), '<', '&lt;'), '>', '&gt;'), '''', '&apos;'), '"', '&quot;'),
        '[\x01-\x08\x0B\x0C\x0E-\x1F\x7F]', '', 'g')
    ELSE value
  END
$$;
