import { Injectable } from '@nestjs/common';
import {
  BrokenObjectSet,
  InvalidFilter,
  MAX_ONTOLOGY_REFERENCES_PAGE,
  MAX_REPORT_ITEMS,
  ObjectSetDefinition,
  OntologyChange,
  OntologyChangeReport,
  OntologyDefinition,
  OntologyIndex,
  parameterText,
} from '@app/domain';
import { CallerContext, visibleEnvironmentsParam } from '@app/platform';
import { ObjectSetsClient } from '../clients/object-sets.client';
import { validateFilter } from '../validation/filter.validator';
import { namesLosingMeaning, ontologyChanges } from './ontology-diff';
import { OntologyRepository } from './ontology.repository';

/**
 * What publishing `proposed` over the active version would break (docs/api.md §6, "Safe
 * changes"): the current objects whose values would no longer fit (one SQL statement for every
 * change, BROKEN_OBJECTS_SQL), and the saved sets whose own definitions would no longer fit. The
 * sets live in the object-sets app's schema, so that app is asked, page by page, for the
 * definitions that name an id the new version takes away or retypes, and each is checked here
 * against the new version with the filter validator every read uses: a set is reported exactly
 * when its reads would be refused. An addition breaks nothing and asks nothing of either.
 */
@Injectable()
export class OntologyImpact {
  constructor(
    private readonly repository: OntologyRepository,
    private readonly objectSets: ObjectSetsClient,
  ) {}

  async report(caller: CallerContext, active: OntologyIndex, proposed: OntologyDefinition): Promise<OntologyChangeReport> {
    const next = new OntologyIndex({ version: active.version + 1, ...proposed });
    const planned = ontologyChanges(active.ontology, proposed);
    const checked = planned.filter((c) => c.check);
    const counts = await this.repository.brokenObjects(
      checked.map((c) => c.check!),
      visibleEnvironmentsParam(caller),
    );
    let k = 0;
    const changes: OntologyChange[] = planned.map(({ check, ...change }) => {
      const n = check ? counts[k++] : undefined;
      return { ...change, objectCount: n?.count ?? 0, sample: n?.sample ?? [] };
    });
    const sets = await this.brokenSets(caller, namesLosingMeaning(active, next), next);
    // The changes that break objects first, most objects first; the others in the order of the ontology.
    const ordered = changes
      .map((c, i) => ({ c, i }))
      .sort((a, b) => b.c.objectCount - a.c.objectCount || a.i - b.i)
      .map(({ c }) => c);
    return {
      activeVersion: active.version,
      breaking: changes.some((c) => c.objectCount > 0) || sets.count > 0,
      changes: ordered.slice(0, MAX_REPORT_ITEMS),
      changeCount: changes.length,
      objectSets: sets.items,
      objectSetCount: sets.count,
    };
  }

  /**
   * Every stored set whose own definition names one of `names` and no longer fits `next`: counted
   * all, listed (by id, at most MAX_REPORT_ITEMS) when the caller may see it. The object-sets
   * app answering with an error or not at all is that error or 503 DependencyUnavailable: the
   * check is never skipped (a publish with force skips it on purpose).
   */
  private async brokenSets(
    caller: CallerContext,
    names: string[],
    next: OntologyIndex,
  ): Promise<{ count: number; items: BrokenObjectSet[] }> {
    const items: BrokenObjectSet[] = [];
    let count = 0;
    if (!names.length) return { count, items };
    let after: string | undefined;
    do {
      const page = await this.objectSets.ontologyReferences(caller, {
        names,
        limit: MAX_ONTOLOGY_REFERENCES_PAGE,
        ...(after ? { after } : {}),
      });
      for (const set of page.sets) {
        const fault = definitionFault(set.definition, next);
        if (!fault) continue;
        count++;
        if (set.visible && items.length < MAX_REPORT_ITEMS)
          items.push({ objectSetId: set.id, title: set.title ?? '', ...fault, usedBy: set.usedBy });
      }
      after = page.next;
    } while (after);
    return { count, items };
  }
}

/** Why a stored definition no longer fits `ontology` (the fault its reads would answer), or undefined. */
export function definitionFault(definition: unknown, ontology: OntologyIndex): { path: string; reason: string } | undefined {
  const d = definition as ObjectSetDefinition;
  if (d?.type === 'filter') {
    try {
      validateFilter(d.filter.filter, ontology, 'definition.filter.filter');
    } catch (e) {
      if (!(e instanceof InvalidFilter)) throw e;
      return { path: parameterText(e.parameters.path), reason: parameterText(e.parameters.reason) };
    }
  }
  if (d?.type === 'linkOperation' && !ontology.linkTypes.has(d.linkOperation.linkId)) {
    return {
      path: 'definition.linkOperation.linkId',
      reason: `unknown link type '${d.linkOperation.linkId}' in ontology version ${ontology.version}`,
    };
  }
  return undefined;
}
