/**
 * The one key of an object in Node maps and sets: its environment id and object id joined by
 * NUL, which neither may contain (identifiers refuse control characters), so distinct pairs
 * never share a key.
 */
export const objectKey = (environmentId: string, id: string): string => `${environmentId}\u0000${id}`;
