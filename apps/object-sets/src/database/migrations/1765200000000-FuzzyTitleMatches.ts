import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fuzzy title search through the trigram index (object_set_title_trgm_idx on lower(title)).
 *
 * A fuzzy title matches when the title contains the query (case-insensitive) or when pg_trgm's
 * `word_similarity(query, title)` is at least 0.4 (both lower-cased). 0.4 keeps typos
 * ('quartely report' → 'Quarterly Report 2026': 0.74, 'markting' → 'Marketing plan': 0.58) and
 * drops titles that only share a few letters ('sales' → 'Safety audit': 0.33).
 *
 * Written as `strpos(...) > 0 OR word_similarity(...) >= 0.4`, as it was, no index can serve it:
 * every set's title was compared with every fuzzy query of a request. The index serves `LIKE`
 * and pg_trgm's `<%` operator, but `<%` compares with the server setting
 * `pg_trgm.word_similarity_threshold` (0.6 unless configured), not with a constant. So the match
 * is this function, whose own `SET` clause fixes the threshold at 0.4 while it runs, whatever the
 * server's configuration: its statement scans the index for both halves (a BitmapOr of two bitmap
 * index scans) and rechecks the similarity exactly. Set search asks it for the ids of the
 * matching sets once per fuzzy predicate (`s.id IN (SELECT object_sets.fuzzy_title_matches($n))`),
 * so a fuzzy search costs in proportion to the sets that match, not to all sets.
 *
 * A `SET` clause keeps PostgreSQL from inlining the function (which would lose the setting), and
 * makes it parallel restricted (it runs in the leader).
 */
export class FuzzyTitleMatches1765200000000 implements MigrationInterface {
  name = 'FuzzyTitleMatches1765200000000';

  async up(q: QueryRunner): Promise<void> {
    // LIKE's escape character is the backslash: the query's own \, % and _ match themselves.
    await q.query(`CREATE FUNCTION object_sets.fuzzy_title_matches(query text) RETURNS SETOF text
      LANGUAGE sql STABLE PARALLEL RESTRICTED
      SET pg_trgm.word_similarity_threshold = 0.4
      AS $$
        SELECT s.id FROM object_sets.object_set s
         WHERE NOT s.ephemeral
           AND (lower(s.title) LIKE '%' || replace(replace(replace(lower(query), '\\', '\\\\'), '%', '\\%'), '_', '\\_') || '%'
                OR (lower(query) <% lower(s.title) AND word_similarity(lower(query), lower(s.title)) >= 0.4))
      $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP FUNCTION object_sets.fuzzy_title_matches(text)`);
  }
}
