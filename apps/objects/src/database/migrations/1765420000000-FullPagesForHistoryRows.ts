import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Fill factor 100 (PostgreSQL's default for tables) again on objects.property_value_history and
 * objects.link_history.
 *
 * SearchRowHistory kept 10 % of their pages free, as ValuesOntologyVersion did on object_version so
 * that closing a row (setting valid_to) could stay on its page as a HOT update. But valid_to is a
 * column of their indexes (each typed value index of property_value_history and
 * link_history_target_idx end with it), so closing a row is never a HOT update, and the reserve only spread the rows over more pages: on the 100,000-object data
 * of `npm run bench:storage`, property_value_history's heap took 104.9 and 105.9 MiB with fill
 * factor 100 against 111.4 MiB in two runs with 90, link_history's 16.4 against 18.3 MiB
 * (bench/results/2026-11-27-100000-storage*.md), about 75 bytes per object in all.
 * object_version keeps its fill factor 90 (ValuesOntologyVersion): closing a version is not HOT
 * either, but its heap moved between 280 and 307 MiB from run to run whatever its fill factor, so
 * no effect of it could be measured.
 *
 * Only a storage parameter changes: no rewrite, so it runs on a loaded database at once. Pages
 * filled from now on are filled whole; pages written before keep their free space until their rows
 * are rewritten (VACUUM FULL, or pg_repack without the exclusive lock).
 */
export class FullPagesForHistoryRows1765420000000 implements MigrationInterface {
  name = 'FullPagesForHistoryRows1765420000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.property_value_history RESET (fillfactor)`);
    await q.query(`ALTER TABLE objects.link_history RESET (fillfactor)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE objects.property_value_history SET (fillfactor = 90)`);
    await q.query(`ALTER TABLE objects.link_history SET (fillfactor = 90)`);
  }
}
