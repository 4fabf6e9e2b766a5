import { BadRequestException, NotFoundException, PayloadTooLargeException, ServiceUnavailableException } from '@nestjs/common';
import { ObjectNotFound } from '@app/domain';
import { toDomainError } from './conjure-exception.filter';

describe('mapping exceptions to API errors', () => {
  it('keeps domain errors as they are', () => {
    const e = new ObjectNotFound('p-1', 'prod');
    expect(toDomainError(e)).toBe(e);
    expect(e).toMatchObject({
      status: 404,
      errorCode: 'NOT_FOUND',
      errorName: 'ObjectNotFound',
      parameters: { objectId: 'p-1', environmentId: 'prod' },
    });
  });

  it('maps framework exceptions', () => {
    expect(toDomainError(new NotFoundException(), 'GET', '/x')).toMatchObject({ status: 404, errorName: 'NotFound' });
    expect(toDomainError(new PayloadTooLargeException())).toMatchObject({ status: 413, errorName: 'PayloadTooLarge' });
    expect(toDomainError(new BadRequestException('bad'))).toMatchObject({ status: 400, errorName: 'InvalidArgument' });
    expect(toDomainError(new ServiceUnavailableException())).toMatchObject({ status: 503, errorName: 'DependencyUnavailable' });
  });

  it('maps body-parser failures', () => {
    expect(toDomainError({ type: 'entity.too.large', status: 413, limit: 10 })).toMatchObject({
      status: 413,
      errorName: 'PayloadTooLarge',
    });
    expect(toDomainError({ type: 'entity.parse.failed', status: 400 })).toMatchObject({ status: 400, errorName: 'InvalidArgument' });
  });

  it('maps an unreachable database to 503 with Retry-After', () => {
    const e = toDomainError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    expect(e).toMatchObject({ status: 503, errorName: 'DependencyUnavailable' });
    expect(e.headers['Retry-After']).toBeDefined();
  });

  it.each<[string, unknown]>([
    ['a server shutting down (57P01)', { code: '57P01', message: 'terminating connection due to administrator command' }],
    ['a server starting up (57P03)', { code: '57P03', message: 'the database system is starting up' }],
    ['a connection exception (class 08)', { code: '08006' }],
    ['too many connections (53300)', { code: '53300' }],
    ['a lost socket', { message: 'Connection terminated unexpectedly' }],
    ['a connect timeout', { message: 'Connection terminated due to connection timeout' }],
    ['an exhausted pool', new Error('timeout exceeded when trying to connect')],
    ['a statement past its statement_timeout (57014)', { code: '57014', message: 'canceling statement due to statement timeout' }],
    ['a broken client', new Error('Client has encountered a connection error and is not queryable')],
    ['TypeORM wrapping the driver error', Object.assign(new Error('x'), { name: 'QueryFailedError', driverError: { code: '57P01' } })],
    [
      'a statement of a transaction whose connection was released after an error',
      Object.assign(new Error('released'), { name: 'QueryRunnerProviderAlreadyReleasedError' }),
    ],
    [
      'the commit of a transaction whose connection was released after an error',
      Object.assign(new Error('released'), { name: 'QueryRunnerAlreadyReleasedError' }),
    ],
    ['an error caused by a refused connect', new Error('failed', { cause: { code: 'ECONNREFUSED' } })],
    ['every address of a connect refused', new AggregateError([{ code: 'ECONNREFUSED' }, { code: 'ECONNREFUSED' }])],
  ])('maps %s to 503 DependencyUnavailable', (_name, error) => {
    const e = toDomainError(error);
    expect(e).toMatchObject({
      status: 503,
      errorCode: 'UNAVAILABLE',
      errorName: 'DependencyUnavailable',
      parameters: { dependency: 'database' },
    });
    expect(Number(e.headers['Retry-After'])).toBeGreaterThan(0);
  });

  it('maps an index entry too large for PostgreSQL to 400 InvalidArgument', () => {
    const driverError = {
      code: '54000',
      message: 'index row size 3096 exceeds btree version 4 maximum 2704 for index "property_value_pkey"',
    };
    const e = toDomainError(Object.assign(new Error(driverError.message), { name: 'QueryFailedError', driverError }));
    expect(e).toMatchObject({ status: 400, errorName: 'InvalidArgument', parameters: { path: 'request' } });
    expect(JSON.stringify(e.parameters)).not.toContain('property_value_pkey');
    expect(toDomainError({ code: '54000', message: 'target lists can have at most 1664 entries' })).toMatchObject({ status: 500 });
  });

  it('keeps faults of a statement as Internal', () => {
    expect(toDomainError(Object.assign(new Error('x'), { name: 'QueryFailedError', driverError: { code: '42P01' } }))).toMatchObject({
      status: 500,
    });
    // A protocol violation (class 08, but the server is there): sending it again fails again.
    const protocol = toDomainError({
      code: '08P01',
      message: 'bind message supplies 29464 parameters, but prepared statement "" requires 94905',
    });
    expect(protocol).toMatchObject({ status: 500, errorCode: 'INTERNAL', errorName: 'Internal' });
    expect(protocol.headers['Retry-After']).toBeUndefined();
    expect(toDomainError({ code: '23505', message: 'duplicate key' })).toMatchObject({ status: 500 });
  });

  it('never exposes the message of an unknown error', () => {
    const e = toDomainError(new Error('relation "secret_table" does not exist'));
    expect(e).toMatchObject({ status: 500, errorCode: 'INTERNAL', errorName: 'Internal', parameters: {} });
    expect(JSON.stringify(e.parameters)).not.toContain('secret_table');
  });
});
