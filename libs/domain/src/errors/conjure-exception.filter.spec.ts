import { BadRequestException, NotFoundException, PayloadTooLargeException, ServiceUnavailableException } from '@nestjs/common';
import { ObjectNotFound } from './domain-error';
import { toDomainError } from './conjure-exception.filter';

describe('mapping exceptions to API errors', () => {
  it('keeps domain errors as they are', () => {
    const e = new ObjectNotFound('p-1', 'prod');
    expect(toDomainError(e)).toBe(e);
    expect(e).toMatchObject({ status: 404, errorCode: 'NOT_FOUND', errorName: 'ObjectNotFound', parameters: { objectId: 'p-1', environmentId: 'prod' } });
  });

  it('maps framework exceptions', () => {
    expect(toDomainError(new NotFoundException(), 'GET', '/x')).toMatchObject({ status: 404, errorName: 'NotFound' });
    expect(toDomainError(new PayloadTooLargeException())).toMatchObject({ status: 413, errorName: 'PayloadTooLarge' });
    expect(toDomainError(new BadRequestException('bad'))).toMatchObject({ status: 400, errorName: 'InvalidArgument' });
    expect(toDomainError(new ServiceUnavailableException())).toMatchObject({ status: 503, errorName: 'DependencyUnavailable' });
  });

  it('maps body-parser failures', () => {
    expect(toDomainError({ type: 'entity.too.large', status: 413, limit: 10 })).toMatchObject({ status: 413, errorName: 'PayloadTooLarge' });
    expect(toDomainError({ type: 'entity.parse.failed', status: 400 })).toMatchObject({ status: 400, errorName: 'InvalidArgument' });
  });

  it('maps an unreachable database to 503 with Retry-After', () => {
    const e = toDomainError({ code: 'ECONNREFUSED', message: 'connect ECONNREFUSED' });
    expect(e).toMatchObject({ status: 503, errorName: 'DependencyUnavailable' });
    expect(e.headers['Retry-After']).toBeDefined();
  });

  it('never exposes the message of an unknown error', () => {
    const e = toDomainError(new Error('relation "secret_table" does not exist'));
    expect(e).toMatchObject({ status: 500, errorCode: 'INTERNAL', errorName: 'Internal', parameters: {} });
    expect(JSON.stringify(e.parameters)).not.toContain('secret_table');
  });
});
