-- Recommendations at scale (issue 23, docs/content.md): a piece's popularity moves onto the piece,
-- so one index hands out the pieces of an age group and level in ranking order (popularity, then
-- newest, then the lowest id). The statement then reads a few rows of each such stream instead of
-- scoring every candidate of a 50,000-piece library. content_piece_stats keeps the counts.

ALTER TABLE content_pieces ADD COLUMN popularity double precision NOT NULL DEFAULT 0 CHECK (popularity BETWEEN 0 AND 1);
UPDATE content_pieces cp SET popularity = s.popularity FROM content_piece_stats s WHERE s.piece_id = cp.id AND s.popularity <> 0;
ALTER TABLE content_piece_stats DROP COLUMN popularity;

CREATE INDEX content_pieces_ranking_idx ON content_pieces (age_group, difficulty_level, popularity DESC, created_at DESC, id)
  WHERE published;
-- Its leading column covers what this one did.
DROP INDEX content_pieces_age_group_idx;
