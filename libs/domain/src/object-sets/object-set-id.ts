/** An object set id: a non-empty string of at most 256 characters (the service makes them as a RID prefix and a UUID; older or imported ids may differ). */
export const isObjectSetId = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
