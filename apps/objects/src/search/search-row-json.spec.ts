import { searchRowJson } from './search-row';

describe('searchRowJson (a search result as the page writes it)', () => {
  it('writes id and environmentId, escaping what JSON must', () => {
    const text = searchRowJson({ env: 'prod', id: 'a "quoted"\\id\n\u0001é', active_ontology_version: 1 });
    expect(text).toBe('{"id":"a \\"quoted\\"\\\\id\\n\\u0001é","environmentId":"prod"}');
    expect(JSON.parse(text)).toEqual({ id: 'a "quoted"\\id\n\u0001é', environmentId: 'prod' });
  });

  it('adds the links text as it came from PostgreSQL when the page loads links', () => {
    const text = searchRowJson({ env: 'prod', id: 'p-1', links: '{"worksFor": ["c-1", "c-2"]}', active_ontology_version: 1 });
    expect(JSON.parse(text)).toEqual({ id: 'p-1', environmentId: 'prod', links: { worksFor: ['c-1', 'c-2'] } });
  });

  it('writes an object without links as an empty links object, not as no links', () => {
    expect(JSON.parse(searchRowJson({ env: 'e', id: 'x', links: '{}', active_ontology_version: 3 }))).toEqual({
      id: 'x',
      environmentId: 'e',
      links: {},
    });
  });
});
