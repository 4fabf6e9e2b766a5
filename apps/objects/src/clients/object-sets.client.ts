import { Injectable, Logger } from '@nestjs/common';
import { AppConfig, callService, CallerContext } from '@app/platform';
import {
  CompiledFilterResponse,
  DependencyUnavailable,
  DomainError,
  ObjectSetNotFound,
  objectSetFilterPath,
  ONTOLOGY_REFERENCES_PATH,
  OntologyReferencesRequest,
  OntologyReferencesResponse,
} from '@app/domain';

const TIMEOUT_MS = 10_000;

/**
 * The objects app's view of the object set service (the contract: internal-api.contract.ts): resolves a `startingSet` to its compiled
 * membership filter through the internal endpoint `GET /object-sets/internal/{id}/filter`
 * (as of an instant with `?asOf`: the definitions as they were then, docs/api.md §10), and
 * pages through the stored definitions an ontology change may break
 * (`POST /object-sets/internal/ontology-references`, docs/api.md §6), on behalf of the caller
 * (see callService).
 */
@Injectable()
export class ObjectSetsClient {
  private readonly logger = new Logger(ObjectSetsClient.name);

  constructor(private readonly config: AppConfig) {}

  async compiledFilter(caller: CallerContext, objectSetId: string, asOf?: Date): Promise<unknown> {
    let text: string;
    try {
      text = await callService({
        dependency: 'object-sets',
        baseUrl: this.config.objectSetsUrl,
        method: 'GET',
        path: objectSetFilterPath(objectSetId, asOf),
        caller,
        timeoutMs: TIMEOUT_MS,
        logger: this.logger,
      });
    } catch (e) {
      // Whatever the set service's 404 says, for searchObjects it is this starting set that is missing.
      if (e instanceof DomainError && e.status === 404) throw new ObjectSetNotFound(objectSetId);
      throw e;
    }
    const body = (() => {
      try {
        return JSON.parse(text) as Partial<CompiledFilterResponse>;
      } catch {
        return undefined;
      }
    })();
    if (body?.filter !== undefined) return body.filter;
    this.logger.warn(`object set service answered without a filter for ${objectSetId}`);
    throw new DependencyUnavailable('object-sets');
  }

  /** One page of the stored sets whose definitions name any of `request.names`; 503 when the object set service cannot answer. */
  async ontologyReferences(caller: CallerContext, request: OntologyReferencesRequest): Promise<OntologyReferencesResponse> {
    const text = await callService({
      dependency: 'object-sets',
      baseUrl: this.config.objectSetsUrl,
      method: 'POST',
      path: ONTOLOGY_REFERENCES_PATH,
      caller,
      body: request,
      timeoutMs: TIMEOUT_MS,
      logger: this.logger,
    });
    try {
      const body = JSON.parse(text) as OntologyReferencesResponse;
      if (Array.isArray(body.sets)) return body;
    } catch {
      // answered below
    }
    this.logger.warn('object set service answered the ontology references without a list of sets');
    throw new DependencyUnavailable('object-sets');
  }
}
