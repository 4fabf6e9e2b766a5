import { InvalidArgument } from '../errors/domain-error';
import { environmentIdFault, identifierFault } from './identifier';

/** An identifier from a path or query parameter; else 400 InvalidArgument naming `field`. */
export function checkIdentifierParam(field: string, value: unknown): void {
  const fault = identifierFault(value);
  if (fault) throw new InvalidArgument(field, `${field} ${fault}`);
}

/** An environment id from a path or query parameter (`versioned` is reserved); else 400 InvalidArgument. */
export function checkEnvironmentIdParam(value: unknown): void {
  const fault = environmentIdFault(value);
  if (fault) throw new InvalidArgument('environmentId', `environmentId ${fault}`);
}
