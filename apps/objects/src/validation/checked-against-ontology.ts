import { Allow } from 'class-validator';

/**
 * A body property the validation pipe takes as it is (any JSON) and the service checks against
 * the active ontology, for a read inside the read that uses it (OntologyService.readWithActive): a filter
 * (validateFilter, 400 InvalidFilter), an orderBy (validateOrderBy), groupBy and metrics
 * (validateAggregation). Checked there, not in the pipe, because readWithActive checks them
 * against the version its statement finds active and checks a fault again when another replica
 * published since (a filter naming a property just published elsewhere is no 400); and each
 * validator reports the first fault of one walk over the value, shape and ontology alike, so its
 * shape cannot be checked apart without changing which fault a request is told of.
 */
export const CheckedAgainstOntology = (): PropertyDecorator => Allow();
