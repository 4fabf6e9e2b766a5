import { Injectable } from '@nestjs/common';
import {
  DependencyUnavailable,
  InvalidArgument,
  InvalidFilter,
  OntologyChangeBreaks,
  OntologyChangeReport,
  OntologyDefinition,
  OntologyIndex,
  OntologyVersion,
  OntologyVersionNotFound,
} from '@app/domain';
import { CallerContext } from '@app/platform';
import { OntologyImpact } from './ontology-impact';
import { checkOntology } from './ontology-rules';
import { OntologyRepository } from './ontology.repository';

/** publishOntology's query (docs/api.md §6): answer the report without publishing, or publish whatever it breaks. */
export interface PublishOptions {
  dryRun?: boolean;
  force?: boolean;
}

/** How often a publish is checked again when another publish made a new version active meanwhile. */
const PUBLISH_ATTEMPTS = 3;

const EMPTY: OntologyVersion = { version: 0, objectTypes: [], linkTypes: [] };

/**
 * Parsed versions kept per replica, least recently used dropped first: reads use the active
 * version (kept as lastActive besides) and the odd older one, and every version can be large.
 */
export const MAX_CACHED_ONTOLOGY_VERSIONS = 8;

/** What a read run by readWithActive returns: its value, and the active ontology version its statement saw. */
export interface ReadOutcome<T> {
  value: T;
  /** ACTIVE_ONTOLOGY_VERSION_SQL as the read's statement saw it; undefined when it could not tell (no rows). */
  activeVersion?: number;
}

/**
 * The ontology: versions are immutable once published, so each is parsed into an
 * OntologyIndex once and cached (the MAX_CACHED_ONTOLOGY_VERSIONS used last). Which version is active is asked of the database by writes
 * (getActiveIndex) and checked inside the statement itself by reads (readWithActive), so every
 * replica answers with the newest published version.
 */
@Injectable()
export class OntologyService {
  private readonly indexes = new Map<number, OntologyIndex>();
  /** The newest version this replica has seen active. */
  private lastActive?: OntologyIndex;

  constructor(
    private readonly repository: OntologyRepository,
    private readonly impact: OntologyImpact,
  ) {}

  /**
   * Runs a read against the version this replica last saw active, without a round trip to ask
   * first. The read's statement reports the version active in its own snapshot; when another
   * replica has published since, the read runs again with that version, so an answer is never
   * computed with an ontology other than the one active when its statement ran. InvalidFilter
   * or InvalidArgument raised against an assumed version (a filter, an order or a metric naming
   * a property just published elsewhere) is rechecked the same way before it reaches the caller.
   */
  async readWithActive<T>(read: (ontology: OntologyIndex) => Promise<ReadOutcome<T>>): Promise<T> {
    let ontology = this.lastActive ?? (await this.getActiveIndex());
    for (;;) {
      let outcome: ReadOutcome<T>;
      try {
        outcome = await read(ontology);
      } catch (e) {
        if (!(e instanceof InvalidFilter || e instanceof InvalidArgument)) throw e;
        const active = await this.getActiveIndex();
        if (active.version === ontology.version) throw e;
        ontology = active;
        continue;
      }
      const version = outcome.activeVersion ?? (await this.repository.activeVersion());
      if (version === ontology.version) return outcome.value;
      ontology = this.sawActive(await this.getIndex(version));
    }
  }

  async getActive(): Promise<OntologyVersion> {
    return (await this.getActiveIndex()).ontology;
  }

  async getActiveIndex(): Promise<OntologyIndex> {
    const version = await this.repository.activeVersion();
    return this.sawActive(await this.getIndex(version));
  }

  async getVersion(version: number): Promise<OntologyVersion> {
    return (await this.getIndex(version)).ontology;
  }

  /**
   * publishOntology (docs/api.md §6). The new version is checked against the active one first
   * (OntologyImpact): one that some current object or saved set definition would no longer fit
   * is refused with 409 OntologyChangeBreaks and its report, unless `force`; `dryRun` answers the
   * report and publishes nothing. It is published only while the ontology it was checked against
   * is still the active one (another publisher may have published another meanwhile: it is
   * checked again).
   */
  async publish(
    caller: CallerContext,
    definition: OntologyDefinition,
    options: PublishOptions = {},
  ): Promise<OntologyVersion | OntologyChangeReport> {
    const checked = checkOntology(definition);
    for (let attempt = 1; ; attempt++) {
      let checkedAgainst: OntologyDefinition | null | undefined;
      if (!options.force) {
        const active = await this.getActiveIndex();
        const report = await this.impact.report(caller, active, checked);
        if (options.dryRun) return report;
        if (report.breaking) throw new OntologyChangeBreaks(report);
        checkedAgainst = active.version === 0 ? null : { objectTypes: active.ontology.objectTypes, linkTypes: active.ontology.linkTypes };
      }
      const published = await this.repository.publish(checked, checkedAgainst);
      if (published) {
        const index = new OntologyIndex(published);
        this.remember(index);
        this.sawActive(index);
        return published;
      }
      // Other ontologies published one after another, each while this one was being checked: rare enough to give up on.
      if (attempt >= PUBLISH_ATTEMPTS) throw new DependencyUnavailable('ontology', 1);
    }
  }

  /** Versions only grow: a version seen active replaces an older one, never a newer one. */
  private sawActive(index: OntologyIndex): OntologyIndex {
    if (!this.lastActive || index.version > this.lastActive.version) this.lastActive = index;
    return index;
  }

  private async getIndex(version: number): Promise<OntologyIndex> {
    const cached = this.indexes.get(version);
    if (cached) {
      // Most recently used last in the Map's order.
      this.indexes.delete(version);
      this.indexes.set(version, cached);
      return cached;
    }
    const found = version === 0 ? EMPTY : await this.repository.findVersion(version);
    if (!found) throw new OntologyVersionNotFound(version);
    return this.remember(new OntologyIndex(found));
  }

  private remember(index: OntologyIndex): OntologyIndex {
    this.indexes.delete(index.version);
    this.indexes.set(index.version, index);
    while (this.indexes.size > MAX_CACHED_ONTOLOGY_VERSIONS) this.indexes.delete(this.indexes.keys().next().value as number);
    return index;
  }

  /** How many parsed versions this replica holds (bounded by MAX_CACHED_ONTOLOGY_VERSIONS). */
  cachedVersions(): number {
    return this.indexes.size;
  }
}
