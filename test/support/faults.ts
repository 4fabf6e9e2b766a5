import { InvalidArgument } from '@app/domain';

/** The `{path, reason}` of the InvalidArgument a check throws; fails the test when it throws anything else or nothing. */
export function invalidArgumentOf(check: () => unknown): { path: string; reason: string } {
  try {
    check();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgument);
    const { path, reason } = (e as InvalidArgument).parameters as { path: string; reason: string };
    return { path, reason };
  }
  throw new Error('expected an InvalidArgument');
}
