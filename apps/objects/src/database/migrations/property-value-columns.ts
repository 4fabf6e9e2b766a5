/**
 * The columns of a property value row, in the column of its type: objects.property_value
 * (InitialSchema) and objects.property_value_history (SearchRowHistory) start with the same ones.
 * The text is what both migrations ran (indented for their CREATE TABLE): never change it.
 */
export const PROPERTY_VALUE_COLUMNS = `environment_id text COLLATE "C" NOT NULL,
      object_id text COLLATE "C" NOT NULL,
      property_id text COLLATE "C" NOT NULL,
      ordinal integer NOT NULL,
      origin text COLLATE "C" NOT NULL,
      value_string text COLLATE "C",
      value_number double precision,
      value_boolean boolean,
      value_date date,
      value_timestamp timestamptz,
      value_geo point,`;
