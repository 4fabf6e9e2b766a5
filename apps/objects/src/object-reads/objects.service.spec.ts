import { DomainError, InvalidPagingToken, PagingTokenCodec } from '@app/domain';
import { CallerContext, ReadContext } from '@app/platform';
import { FakeSqlExecutor } from '../../../../test/support/fake-sql-executor';
import { ObjectsRepository } from './objects.repository';
import { ObjectsService } from './objects.service';

interface Stored {
  env: string;
  id: string;
  versions: number;
}

const json = (o: { env: string; id: string }, version?: number) =>
  JSON.stringify({ environmentId: o.env, id: o.id, ...(version ? { version } : {}) });

/**
 * The read service over its real repository and an in-memory store answering its named prepared
 * statements (objects.findById, objects.bulk, objects.history, objects.everExisted) the way their
 * SQL does: the caller's visible environments as a parameter (null: all), keyset positions, limits.
 */
function setUp(stored: Stored[]) {
  const visible = (env: string, v: unknown) => v === null || (v as string[]).includes(env);
  const sql = new FakeSqlExecutor()
    .on('objects.findById', ([id, env, v]) =>
      stored.filter((o) => o.id === id && (env === null || o.env === env) && visible(o.env, v)).map((o) => ({ env: o.env, json: json(o) })),
    )
    .on('objects.bulk', ([ids, afterOrd, afterEnv, v, limit]) =>
      (ids as string[])
        .flatMap((id, i) =>
          stored
            .filter((o) => o.id === id && visible(o.env, v))
            .sort((a, b) => a.env.localeCompare(b.env))
            .map((o) => ({ ord: String(i + 1), env: o.env, json: json(o) })),
        )
        .filter(
          (r) => afterOrd === null || Number(r.ord) > (afterOrd as number) || (Number(r.ord) === afterOrd && r.env > (afterEnv as string)),
        )
        .slice(0, limit as number),
    )
    .on('objects.history', ([env, id, , , after, limit]) => {
      const o = stored.find((s) => s.env === env && s.id === id);
      return Array.from({ length: o?.versions ?? 0 }, (_, i) => ({ version: i + 1, json: json(o!, i + 1) }))
        .filter((r) => r.version > (after as number))
        .slice(0, limit as number);
    })
    .on('objects.everExisted', ([env, id]) => [{ known: stored.some((o) => o.env === env && o.id === id) }]);
  return { service: new ObjectsService(new ObjectsRepository(sql.executor), new PagingTokenCodec('unit-test-secret')), sql };
}

const everyone: CallerContext = { userId: 'ada', environments: '*' };
const prodOnly: CallerContext = { userId: 'bob', environments: ['prod'] };

/** The error a call is refused with, as the Conjure filter would name it. */
async function refusal(call: Promise<unknown>): Promise<{ errorName: string; parameters: Record<string, unknown> }> {
  try {
    await call;
  } catch (e) {
    if (e instanceof DomainError) return { errorName: e.errorName, parameters: e.parameters };
    throw e;
  }
  throw new Error('not refused');
}

const WINDOW = { startTime: new Date('2000-01-01T00:00:00Z'), endTime: new Date('2100-01-01T00:00:00Z') };

describe('ObjectsService (over an in-memory executor)', () => {
  const stored: Stored[] = [
    { env: 'prod', id: 'p-1', versions: 3 },
    { env: 'staging', id: 'p-1', versions: 1 },
    { env: 'prod', id: 'p-2', versions: 1 },
    { env: 'staging', id: 'p-3', versions: 2 },
  ];

  describe('load', () => {
    it('answers the stored JSON as it is', async () => {
      const { service } = setUp(stored);
      expect((await service.load(everyone, 'p-2')).text).toBe(json({ env: 'prod', id: 'p-2' }));
    });

    it('is ObjectIdAmbiguous for an id in two visible environments, and not for a caller who sees one', async () => {
      const { service } = setUp(stored);
      expect(await refusal(service.load(everyone, 'p-1'))).toEqual({
        errorName: 'ObjectIdAmbiguous',
        parameters: { objectId: 'p-1', environmentIds: ['prod', 'staging'] },
      });
      expect((await service.load(prodOnly, 'p-1')).text).toBe(json({ env: 'prod', id: 'p-1' }));
    });

    it('is ObjectNotFound for an object the caller cannot see, without a statement when it names a hidden environment', async () => {
      const { service, sql } = setUp(stored);
      expect(await refusal(service.load(prodOnly, 'p-3'))).toEqual({ errorName: 'ObjectNotFound', parameters: { objectId: 'p-3' } });
      sql.sent.length = 0;
      expect(await refusal(service.load(prodOnly, 'p-3', 'staging'))).toEqual({
        errorName: 'ObjectNotFound',
        parameters: { objectId: 'p-3', environmentId: 'staging' },
      });
      expect(sql.sent).toEqual([]);
    });

    it('as of an instant: the statement of versions, asOf added to the object, and the read held to a replica that replayed up to it', async () => {
      const sql = new FakeSqlExecutor().on('objects.findByIdAsOf', () => [{ env: 'prod', json: '{"id":"p-2"}' }]);
      const service = new ObjectsService(new ObjectsRepository(sql.executor), new PagingTokenCodec('unit-test-secret'));
      const consistency = new ReadContext(undefined);
      const asOf = new Date('2026-01-02T03:04:05.006Z');
      expect((await service.load({ ...everyone, consistency }, 'p-2', undefined, asOf)).text).toBe(
        '{"id":"p-2","asOf":"2026-01-02T03:04:05.006Z"}',
      );
      expect({ atTime: consistency.atTime, params: sql.sent[0].params }).toEqual({
        atTime: asOf.getTime(),
        params: ['p-2', null, null, asOf.toISOString()],
      });
    });
  });

  describe('bulk', () => {
    it('pages in request order, each id in every visible environment, each id once', async () => {
      const { service } = setUp(stored);
      const ids = ['p-3', 'p-1', 'p-1', 'p-9', 'p-2'];
      const first = JSON.parse((await service.bulk(everyone, ids, 2)).text) as {
        objects: { environmentId: string; id: string }[];
        pagingToken: string;
      };
      expect(first.objects).toEqual([
        { environmentId: 'staging', id: 'p-3' },
        { environmentId: 'prod', id: 'p-1' },
      ]);
      const second = JSON.parse((await service.bulk(everyone, ids, 2, first.pagingToken)).text) as {
        objects: unknown[];
        pagingToken?: string;
      };
      expect(second).toEqual({
        objects: [
          { environmentId: 'staging', id: 'p-1' },
          { environmentId: 'prod', id: 'p-2' },
        ],
      });
    });

    it('refuses a token of another list of ids, before any statement', async () => {
      const { service, sql } = setUp(stored);
      const first = JSON.parse((await service.bulk(everyone, ['p-1', 'p-2'], 1)).text) as { pagingToken: string };
      sql.sent.length = 0;
      await expect(service.bulk(everyone, ['p-2', 'p-1'], 1, first.pagingToken)).rejects.toBeInstanceOf(InvalidPagingToken);
      expect(sql.sent).toEqual([]);
    });
  });

  describe('history', () => {
    it('pages the versions, and asks whether the object ever existed only for an empty first page', async () => {
      const { service, sql } = setUp(stored);
      const first = JSON.parse((await service.history(everyone, 'prod', 'p-1', WINDOW, 2)).text) as {
        objects: { version: number }[];
        pagingToken: string;
      };
      expect(first.objects.map((o) => o.version)).toEqual([1, 2]);
      const second = JSON.parse((await service.history(everyone, 'prod', 'p-1', WINDOW, 2, first.pagingToken)).text) as {
        objects: { version: number }[];
        pagingToken?: string;
      };
      expect(second).toEqual({ objects: [{ environmentId: 'prod', id: 'p-1', version: 3 }] });
      expect(sql.names()).toEqual(['objects.history', 'objects.history']);
    });

    it('is ObjectNotFound for an object never written, and in an environment the caller cannot see, without a statement', async () => {
      const { service, sql } = setUp(stored);
      expect(await refusal(service.history(everyone, 'prod', 'p-9', WINDOW, 10))).toEqual({
        errorName: 'ObjectNotFound',
        parameters: { objectId: 'p-9', environmentId: 'prod' },
      });
      expect(sql.names()).toEqual(['objects.history', 'objects.everExisted']);
      sql.sent.length = 0;
      expect(await refusal(service.history(prodOnly, 'staging', 'p-3', WINDOW, 10))).toEqual({
        errorName: 'ObjectNotFound',
        parameters: { objectId: 'p-3', environmentId: 'staging' },
      });
      expect(sql.sent).toEqual([]);
    });
  });
});
