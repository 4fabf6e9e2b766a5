import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { canonicalJson, isRetryableTransactionError, ObjectNotFound, PropertyType, VersionConflict } from '@app/domain';
import { StoredProperty, ValidatedObject } from './object-validator';

/** What one write did to one object. */
export interface WriteOutcome {
  object: ValidatedObject;
  version: number;
  /** A new version was made. */
  changed: boolean;
  /** The object did not exist (or was deleted) before. */
  created: boolean;
  validFrom: Date;
  firstSighting: Date;
  lastSighting: Date;
}

interface CurrentRow {
  environment_id: string;
  id: string;
  version: number;
  valid_from: Date;
  type: string;
  properties: StoredProperty[];
  links: Record<string, string[]>;
  tags: string[];
  first_sighting: Date;
  last_sighting: Date;
}

const MS = 1;
const key = (environmentId: string, id: string) => `${environmentId}\u0000${id}`;
const later = (a: Date, b: Date) => (a.getTime() >= b.getTime() ? a : b);
const earlier = (a: Date, b: Date) => (a.getTime() <= b.getTime() ? a : b);
const contentOf = (o: { type: string; properties: unknown; links: unknown; tags: unknown }) =>
  canonicalJson({ type: o.type, properties: o.properties, links: o.links, tags: o.tags });

/** The typed column a value goes in, so filters can use a btree on that column. */
function valueColumns(type: PropertyType | undefined, value: unknown) {
  const cols = {
    value_string: null as string | null,
    value_number: null as number | null,
    value_boolean: null as boolean | null,
    value_date: null as string | null,
    value_timestamp: null as string | null,
    value_geo: null as string | null,
  };
  switch (type) {
    case 'string':
      cols.value_string = value as string;
      break;
    case 'long':
    case 'double':
      cols.value_number = value as number;
      break;
    case 'boolean':
      cols.value_boolean = value as boolean;
      break;
    case 'date':
      cols.value_date = value as string;
      break;
    case 'timestamp':
      cols.value_timestamp = value as string;
      break;
    case 'geopoint': {
      const g = value as { lat: number; lon: number };
      cols.value_geo = `(${g.lon},${g.lat})`;
      break;
    }
  }
  return cols;
}

// Row shapes handed to PostgreSQL as one jsonb parameter each (jsonb_to_recordset), so a batch
// of any size is a fixed number of statements.
const OBJECT_COLUMNS = `environment_id text COLLATE "C", id text COLLATE "C", type text, version int, valid_from timestamptz,
  first_sighting timestamptz, last_sighting timestamptz, tags text[], properties jsonb, links jsonb`;
const VERSION_COLUMNS = OBJECT_COLUMNS;

/**
 * Object writes. One transaction per request (a PUT, a DELETE or a whole ingest batch): lock
 * the current rows (FOR UPDATE, in key order so batches cannot deadlock), decide in Node what
 * changes, then write every table with one set-based statement each. A lost insert race
 * (two writers creating one object) surfaces as a unique violation and the transaction runs
 * again, now seeing the other writer's row; so no update is lost and no version number repeats.
 */
@Injectable()
export class ObjectWritesRepository {
  constructor(private readonly dataSource: DataSource) {}

  async write(
    objects: ValidatedObject[],
    propertyTypes: (o: ValidatedObject, propertyId: string) => PropertyType | undefined,
    expectedVersion?: number,
  ): Promise<WriteOutcome[]> {
    return this.retrying(() => this.dataSource.transaction((m) => this.writeInTransaction(m, objects, propertyTypes, expectedVersion)));
  }

  /** Ends the current version of a live object and removes it from the current tables. */
  async delete(environmentId: string, id: string, expectedVersion?: number): Promise<void> {
    await this.retrying(() =>
      this.dataSource.transaction(async (m) => {
        // PK lookup on objects.object, row locked against concurrent writers.
        const rows: { version: number }[] = await m.query(
          `SELECT version FROM objects.object WHERE environment_id = $1 AND id = $2 FOR UPDATE`,
          [environmentId, id],
        );
        if (!rows.length) throw new ObjectNotFound(id, environmentId);
        if (expectedVersion !== undefined && expectedVersion !== rows[0].version) {
          throw new VersionConflict({ objectId: id, environmentId, expectedVersion, actualVersion: rows[0].version });
        }
        // object_version PK; valid_to stays strictly after valid_from.
        await m.query(
          `UPDATE objects.object_version
              SET valid_to = greatest(date_trunc('milliseconds', clock_timestamp()), valid_from + interval '${MS} millisecond')
            WHERE environment_id = $1 AND id = $2 AND version = $3`,
          [environmentId, id, rows[0].version],
        );
        // Property values and links go with it (ON DELETE CASCADE).
        await m.query(`DELETE FROM objects.object WHERE environment_id = $1 AND id = $2`, [environmentId, id]);
      }),
    );
  }

  private async retrying<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fn();
      } catch (e) {
        if (attempt >= attempts || !isRetryableTransactionError(e)) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
      }
    }
  }

  private async writeInTransaction(
    m: EntityManager,
    objects: ValidatedObject[],
    propertyTypes: (o: ValidatedObject, propertyId: string) => PropertyType | undefined,
    expectedVersion?: number,
  ): Promise<WriteOutcome[]> {
    const envs = objects.map((o) => o.environmentId);
    const ids = objects.map((o) => o.id);

    // PK of objects.object; ORDER BY keeps lock order stable across concurrent batches.
    const current: CurrentRow[] = await m.query(
      `SELECT o.environment_id, o.id, o.version, o.valid_from, o.type, o.properties, o.links, o.tags, o.first_sighting, o.last_sighting
         FROM objects.object o
         JOIN unnest($1::text[], $2::text[]) AS k(environment_id, id)
           ON o.environment_id = k.environment_id COLLATE "C" AND o.id = k.id COLLATE "C"
        ORDER BY o.environment_id, o.id
          FOR UPDATE OF o`,
      [envs, ids],
    );
    const currentByKey = new Map(current.map((r) => [key(r.environment_id, r.id), r]));

    // For objects with no current row: the highest version ever (deleted objects continue
    // their numbering) and when it ended. object_version PK range per key.
    const missing = objects.filter((o) => !currentByKey.has(key(o.environmentId, o.id)));
    const past = new Map<string, { version: number; last_time: Date }>();
    if (missing.length) {
      const rows: { environment_id: string; id: string; version: number; last_time: Date }[] = await m.query(
        `SELECT v.environment_id, v.id, max(v.version) AS version, max(coalesce(v.valid_to, v.valid_from)) AS last_time
           FROM objects.object_version v
           JOIN unnest($1::text[], $2::text[]) AS k(environment_id, id)
             ON v.environment_id = k.environment_id COLLATE "C" AND v.id = k.id COLLATE "C"
          GROUP BY v.environment_id, v.id`,
        [missing.map((o) => o.environmentId), missing.map((o) => o.id)],
      );
      for (const r of rows) past.set(key(r.environment_id, r.id), r);
    }

    // The commit time, taken after the locks: later than any committed version of these objects.
    const [{ now }]: { now: Date }[] = await m.query(`SELECT date_trunc('milliseconds', clock_timestamp()) AS now`);

    const outcomes: WriteOutcome[] = [];
    const inserts: unknown[] = [];
    const updates: unknown[] = [];
    const replaced: ValidatedObject[] = [];
    const newValues: ValidatedObject[] = [];
    const closeVersions: { environment_id: string; id: string; version: number; valid_to: string }[] = [];
    const newVersions: unknown[] = [];
    const widenVersions: unknown[] = [];

    for (const o of objects) {
      const cur = currentByKey.get(key(o.environmentId, o.id));
      const actual = cur?.version ?? 0;
      if (expectedVersion !== undefined && expectedVersion !== actual) {
        throw new VersionConflict({ objectId: o.id, environmentId: o.environmentId, expectedVersion, actualVersion: actual });
      }
      const seenFirst = o.sightings?.first ?? now;
      const seenLast = o.sightings?.last ?? now;
      if (!cur) {
        const prev = past.get(key(o.environmentId, o.id));
        const validFrom = prev ? later(now, new Date(prev.last_time.getTime() + 0)) : now;
        const row = this.row(o, (prev?.version ?? 0) + 1, validFrom, seenFirst, seenLast);
        inserts.push(row);
        newVersions.push(row);
        newValues.push(o);
        outcomes.push({ object: o, version: row.version, changed: true, created: true, validFrom, firstSighting: seenFirst, lastSighting: seenLast });
        continue;
      }
      const first = earlier(cur.first_sighting, seenFirst);
      const last = later(cur.last_sighting, seenLast);
      const changed = contentOf(cur) !== contentOf(o);
      if (changed) {
        const validFrom = later(now, new Date(cur.valid_from.getTime() + MS));
        const row = this.row(o, cur.version + 1, validFrom, first, last);
        updates.push(row);
        newVersions.push(row);
        replaced.push(o);
        newValues.push(o);
        closeVersions.push({ environment_id: o.environmentId, id: o.id, version: cur.version, valid_to: validFrom.toISOString() });
        outcomes.push({ object: o, version: row.version, changed: true, created: false, validFrom, firstSighting: first, lastSighting: last });
      } else {
        const same = { ...o, properties: cur.properties, links: cur.links, tags: cur.tags };
        if (first.getTime() !== cur.first_sighting.getTime() || last.getTime() !== cur.last_sighting.getTime()) {
          const row = this.row(same, cur.version, cur.valid_from, first, last);
          updates.push(row);
          widenVersions.push(row);
        }
        outcomes.push({ object: same, version: cur.version, changed: false, created: false, validFrom: cur.valid_from, firstSighting: first, lastSighting: last });
      }
    }

    if (inserts.length) {
      await m.query(
        `INSERT INTO objects.object (environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, properties, links)
         SELECT environment_id, id, type, version, valid_from, first_sighting, last_sighting, tags, properties, links
           FROM jsonb_to_recordset($1::jsonb) AS x(${OBJECT_COLUMNS})`,
        [JSON.stringify(inserts)],
      );
    }
    if (updates.length) {
      // PK of objects.object.
      await m.query(
        `UPDATE objects.object o
            SET type = x.type, version = x.version, valid_from = x.valid_from, first_sighting = x.first_sighting,
                last_sighting = x.last_sighting, tags = x.tags, properties = x.properties, links = x.links
           FROM jsonb_to_recordset($1::jsonb) AS x(${OBJECT_COLUMNS})
          WHERE o.environment_id = x.environment_id AND o.id = x.id`,
        [JSON.stringify(updates)],
      );
    }
    if (replaced.length) {
      const e = replaced.map((o) => o.environmentId);
      const i = replaced.map((o) => o.id);
      // PKs of property_value and link (prefix environment_id, object/source id).
      await m.query(
        `DELETE FROM objects.property_value p USING unnest($1::text[], $2::text[]) AS k(environment_id, id)
          WHERE p.environment_id = k.environment_id COLLATE "C" AND p.object_id = k.id COLLATE "C"`,
        [e, i],
      );
      await m.query(
        `DELETE FROM objects.link l USING unnest($1::text[], $2::text[]) AS k(environment_id, id)
          WHERE l.environment_id = k.environment_id COLLATE "C" AND l.source_id = k.id COLLATE "C"`,
        [e, i],
      );
    }
    if (newValues.length) {
      const values: unknown[] = [];
      const links: [string[], string[], string[], string[]] = [[], [], [], []];
      for (const o of newValues) {
        o.properties.forEach((p, ordinal) => {
          values.push({
            environment_id: o.environmentId,
            object_id: o.id,
            property_id: p.id,
            ordinal,
            origin: p.origin,
            ...valueColumns(propertyTypes(o, p.id), p.value),
          });
        });
        for (const [linkId, targets] of Object.entries(o.links)) {
          for (const t of targets) {
            links[0].push(o.environmentId);
            links[1].push(o.id);
            links[2].push(linkId);
            links[3].push(t);
          }
        }
      }
      if (values.length) {
        await m.query(
          `INSERT INTO objects.property_value
                  (environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo)
           SELECT environment_id, object_id, property_id, ordinal, origin, value_string, value_number, value_boolean, value_date, value_timestamp, value_geo::point
             FROM jsonb_to_recordset($1::jsonb) AS x(environment_id text, object_id text, property_id text, ordinal int, origin text,
                  value_string text, value_number double precision, value_boolean boolean, value_date date, value_timestamp timestamptz, value_geo text)`,
          [JSON.stringify(values)],
        );
      }
      if (links[0].length) {
        await m.query(
          `INSERT INTO objects.link (environment_id, source_id, link_id, target_id)
           SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[])`,
          links,
        );
      }
    }
    if (closeVersions.length) {
      // object_version PK.
      await m.query(
        `UPDATE objects.object_version v SET valid_to = x.valid_to
           FROM jsonb_to_recordset($1::jsonb) AS x(environment_id text COLLATE "C", id text COLLATE "C", version int, valid_to timestamptz)
          WHERE v.environment_id = x.environment_id AND v.id = x.id AND v.version = x.version`,
        [JSON.stringify(closeVersions)],
      );
    }
    if (widenVersions.length) {
      // object_version PK: sightings widen in place on the current version.
      await m.query(
        `UPDATE objects.object_version v SET first_sighting = x.first_sighting, last_sighting = x.last_sighting
           FROM jsonb_to_recordset($1::jsonb) AS x(${VERSION_COLUMNS})
          WHERE v.environment_id = x.environment_id AND v.id = x.id AND v.version = x.version`,
        [JSON.stringify(widenVersions)],
      );
    }
    if (newVersions.length) {
      await m.query(
        `INSERT INTO objects.object_version (environment_id, id, version, valid_from, type, first_sighting, last_sighting, tags, properties, links)
         SELECT environment_id, id, version, valid_from, type, first_sighting, last_sighting, tags, properties, links
           FROM jsonb_to_recordset($1::jsonb) AS x(${VERSION_COLUMNS})`,
        [JSON.stringify(newVersions)],
      );
    }
    return outcomes;
  }

  private row(o: ValidatedObject, version: number, validFrom: Date, first: Date, last: Date) {
    return {
      environment_id: o.environmentId,
      id: o.id,
      type: o.type,
      version,
      valid_from: validFrom.toISOString(),
      first_sighting: first.toISOString(),
      last_sighting: last.toISOString(),
      tags: o.tags,
      properties: o.properties,
      links: o.links,
    };
  }
}
