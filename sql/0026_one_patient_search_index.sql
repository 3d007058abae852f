-- One trigram index for patient searches. The ECM list's expression (names, member id: 0005) is
-- the beginning of the clinic list's (names, member id, phone: 0010), so the ECM search filters on
-- the clinic expression too and keeps its own as a recheck. Each trigram index cost an import of
-- 100,000 members ~0.8 s (issue 9's bench).
DROP INDEX patients_search_trgm_idx;
ALTER INDEX patients_clinic_search_trgm_idx RENAME TO patients_search_trgm_idx;
