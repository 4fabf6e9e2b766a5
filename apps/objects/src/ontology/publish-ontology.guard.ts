import { CanActivate, ExecutionContext, Injectable } from '@nestjs/common';
import { AppConfig, CallerContext, hasRole } from '@app/platform';
import { InvalidArgument, isPlainObject, PermissionDenied } from '@app/domain';

/** Most properties an ontology may declare over all its object types (10,000 types × 1,000 properties would be 10 million). */
export const MAX_ONTOLOGY_PROPERTIES = 100_000;

/**
 * Publishing replaces the ontology every write and filter is checked against, on every replica:
 * with AUTH_MODE=jwt it needs the role AUTH_ONTOLOGY_ADMIN_ROLE (`ontology-admin`) in the token's
 * roles claim (403 PermissionDenied otherwise). Runs before the validation pipe, as does the
 * bound on the ontology's size, so neither a caller without the role nor an oversized ontology
 * makes the service validate millions of nested objects.
 */
@Injectable()
export class PublishOntologyGuard implements CanActivate {
  constructor(private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const req = context.switchToHttp().getRequest<{ caller: CallerContext; body: unknown }>();
    const role = this.config.authOntologyAdminRole;
    if (!hasRole(req.caller, role)) {
      throw new PermissionDenied(`publishing the ontology needs the role '${role}' in the token's '${this.config.authRolesClaim}' claim`, {
        role,
      });
    }
    const types = isPlainObject(req.body) ? req.body.objectTypes : undefined;
    if (Array.isArray(types)) {
      let properties = 0;
      for (const t of types) if (isPlainObject(t) && Array.isArray(t.properties)) properties += t.properties.length;
      if (properties > MAX_ONTOLOGY_PROPERTIES) {
        throw new InvalidArgument(
          'objectTypes',
          `an ontology declares at most ${MAX_ONTOLOGY_PROPERTIES} properties over all its object types, not ${properties}`,
        );
      }
    }
    return true;
  }
}
