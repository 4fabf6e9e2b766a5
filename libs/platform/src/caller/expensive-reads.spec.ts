import { TooManyRequests } from '@app/domain';
import { AppConfig } from '../config/app-config';
import { ExpensiveReads } from './expensive-reads';

const reads = (limit: number) => new ExpensiveReads(Object.assign(new AppConfig(), { expensiveReadsPerCaller: limit }));
const caller = (userId: string) => ({ userId, environments: '*' as const });

describe('ExpensiveReads', () => {
  it('lets `limit` reads of one caller run at once, refuses the next with 429 and Retry-After, and counts callers apart', async () => {
    const r = reads(2);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const running = [r.run(caller('ada'), () => held), r.run(caller('ada'), () => held)];
    const refused = await r.run(caller('ada'), async () => 'ran').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(TooManyRequests);
    expect(refused).toMatchObject({
      status: 429,
      errorCode: 'TOO_MANY_REQUESTS',
      headers: { 'Retry-After': '1' },
      parameters: { limit: 2 },
    });
    expect(await r.run(caller('bob'), async () => 'bob ran')).toBe('bob ran');
    release();
    await Promise.all(running);
    expect(await r.run(caller('ada'), async () => 'ran again')).toBe('ran again');
  });

  it('gives a slot back when the read fails', async () => {
    const r = reads(1);
    await expect(r.run(caller('ada'), async () => Promise.reject(new Error('statement failed')))).rejects.toThrow('statement failed');
    expect(await r.run(caller('ada'), async () => 'ran')).toBe('ran');
  });
});
