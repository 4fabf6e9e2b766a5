import { InvalidArgument, InvalidFilter, OntologyDefinition, OntologyIndex, OntologyVersion, OntologyVersionNotFound } from '@app/domain';
import { FakeSqlExecutor } from '../../../../test/support/fake-sql-executor';
import { CallerContext } from '@app/platform';
import { MAX_CACHED_ONTOLOGY_VERSIONS, OntologyService } from './ontology.service';
import { OntologyRepository } from './ontology.repository';
import { OntologyImpact } from './ontology-impact';

const admin: CallerContext = { userId: 'ada', environments: '*' };
/** The impact check of a publish, here one that finds nothing broken (its own tests: test/objects/ontology/safe-changes.e2e-spec.ts). */
const nothingBreaks = { report: () => Promise.resolve({ breaking: false }) } as unknown as OntologyImpact;

const definition = (...types: string[]): OntologyDefinition => ({
  objectTypes: types.map((id) => ({ id, properties: [{ id: 'name', type: 'string' }] })),
  linkTypes: [],
});

/**
 * The service over its real repository and an in-memory objects.ontology_version: what another
 * replica publishes is a row the fake adds behind the service's back.
 */
function setUp() {
  const versions: OntologyVersion[] = [];
  const sql = new FakeSqlExecutor()
    .on(/^SELECT \(SELECT coalesce\(max\(version\), 0\) FROM objects\.ontology_version\) AS version$/, () => [{ version: versions.length }])
    .on(/FROM objects\.ontology_version WHERE version = \$1/, ([v]) =>
      versions.filter((o) => o.version === v).map(({ version, ...d }) => ({ version, definition: d })),
    )
    .on(/pg_advisory_xact_lock/, () => [])
    .on(/INSERT INTO objects\.ontology_version/, ([json]) => {
      versions.push({ version: versions.length + 1, ...(JSON.parse(json as string) as OntologyDefinition) });
      return [{ version: versions.length }];
    });
  const publishedElsewhere = (d: OntologyDefinition) => versions.push({ version: versions.length + 1, ...d });
  return { service: new OntologyService(new OntologyRepository(sql.executor), nothingBreaks), sql, versions, publishedElsewhere };
}

describe('OntologyService (over an in-memory executor)', () => {
  it('publishes versions 1, 2, … and checks a definition before any statement', async () => {
    const { service, sql } = setUp();
    expect(((await service.publish(admin, definition('person'))) as OntologyVersion).version).toBe(1);
    expect(((await service.publish(admin, definition('person', 'company'))) as OntologyVersion).version).toBe(2);
    sql.sent.length = 0;
    await expect(service.publish(admin, definition('person', 'person'))).rejects.toBeInstanceOf(InvalidArgument);
    expect(sql.sent).toEqual([]);
    expect((await service.getActive()).objectTypes.map((t) => t.id)).toEqual(['person', 'company']);
  });

  it('answers version 0, the empty ontology, without a statement, and an unknown version with OntologyVersionNotFound', async () => {
    const { service, sql } = setUp();
    expect(await service.getVersion(0)).toEqual({ version: 0, objectTypes: [], linkTypes: [] });
    expect(sql.sent).toEqual([]);
    await expect(service.getVersion(3)).rejects.toBeInstanceOf(OntologyVersionNotFound);
  });

  it('runs a read on the version it last saw active, and again on the version the read saw when another replica published', async () => {
    const { service, sql, publishedElsewhere } = setUp();
    await service.publish(admin, definition('person'));
    publishedElsewhere(definition('person', 'ship'));
    sql.sent.length = 0;
    const seen: number[] = [];
    // The read's own statement tells the active version (ACTIVE_ONTOLOGY_VERSION_SQL): 2 now.
    const value = await service.readWithActive(async (ontology: OntologyIndex) => {
      seen.push(ontology.version);
      return { value: [...ontology.objectTypes.keys()], activeVersion: 2 };
    });
    expect({ seen, value }).toEqual({ seen: [1, 2], value: ['person', 'ship'] });
    // No round trip to ask first: only version 2 was loaded.
    expect(sql.sent.map((s) => s.params)).toEqual([[2]]);
    // From now on version 2 is assumed.
    expect(await service.readWithActive(async (o: OntologyIndex) => ({ value: o.version, activeVersion: 2 }))).toBe(2);
  });

  it('checks a filter refused against an assumed version again on the active one, and refuses it when that is the same', async () => {
    const { service, publishedElsewhere } = setUp();
    await service.publish(admin, definition('person'));
    publishedElsewhere(definition('person', 'ship'));
    const read = async (ontology: OntologyIndex) => {
      if (!ontology.objectTypes.has('ship')) throw new InvalidFilter('filter.objectType.types[0]', 'unknown object type ship');
      return { value: 'found', activeVersion: ontology.version };
    };
    expect(await service.readWithActive(read)).toBe('found');
    const never = async (): Promise<{ value: string }> => {
      throw new InvalidFilter('filter', 'refused on every version');
    };
    await expect(service.readWithActive(never)).rejects.toBeInstanceOf(InvalidFilter);
  });

  it(`keeps at most ${MAX_CACHED_ONTOLOGY_VERSIONS} parsed versions, the least recently used dropped first`, async () => {
    const { service, sql } = setUp();
    for (let i = 1; i <= 12; i++) await service.publish(admin, definition(`type${i}`));
    expect(service.cachedVersions()).toBe(MAX_CACHED_ONTOLOGY_VERSIONS);
    sql.sent.length = 0;
    await service.getVersion(12);
    await service.getVersion(5);
    expect(sql.sent).toEqual([]);
    // Version 1 was dropped: read again, and then it is the most recently used (version 6 goes).
    expect((await service.getVersion(1)).objectTypes[0].id).toBe('type1');
    expect(sql.sent.map((s) => s.params)).toEqual([[1]]);
    await service.getVersion(5);
    await service.getVersion(6);
    expect(sql.sent.map((s) => s.params)).toEqual([[1], [6]]);
    expect(service.cachedVersions()).toBe(MAX_CACHED_ONTOLOGY_VERSIONS);
  });
});
