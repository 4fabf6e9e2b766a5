#!/usr/bin/env node
// The floor: the least a server can do to answer a scenario: node:http + pg, no framework, no
// validation, no auth, the identical SQL statement the product runs (handed over by the bench
// runner, which takes it from the product's own code), and the rows' JSON text written out.
//
//   POST /q/<name>  body {"params": [...], "pageSize"?: n}
//
// Statement shapes: "row" answers the first row's `json` column (404 when there is none or it
// is NULL); "version" answers an object version from the row's version, json, valid_from_ms and
// valid_to_ms with the product's renderObjectVersion; "page" answers {"objects": [json, …],
// "pagingToken"?} from rows that hold the page plus one (each row's `json` column, or for a search
// page, whose rows hold env, id and links, the product's searchRowJson of it), the token being the last row's keyset columns in base64url; "groups" answers an
// aggregation {"groups": [json, …], "truncated": any row's truncated}.
//
// Env: DATABASE_URL, PORT, DB_POOL_SIZE (default the apps' default, defaultDbPoolSize), FLOOR_STATEMENTS (JSON file
// of {name: {sql, shape, keyset?: [column, …], column?: the "row" column, default json,
// prepared?: true where the product runs it as a named prepared statement}}).
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import pg from 'pg';

// The product's own rendering of an object version (shape "version"), of a search row (shape
// "page") and pool size, from the build it runs.
const requireBuilt = createRequire(import.meta.url);
const { searchRowJson } = requireBuilt('../../dist/apps/objects/apps/objects/src/search/search-row.js');
const { renderObjectVersion } = requireBuilt('../../dist/apps/objects/apps/objects/src/object-reads/object-json.sql.js');
const { defaultDbPoolSize } = requireBuilt('../../dist/apps/objects/libs/platform/src/config/app-config.js');

const statements = JSON.parse(readFileSync(process.env.FLOOR_STATEMENTS, 'utf8'));
const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: Number(process.env.DB_POOL_SIZE || defaultDbPoolSize()) });

function send(res, status, text) {
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const server = createServer((req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', async () => {
    const statement = statements[req.url.slice('/q/'.length)];
    if (req.method !== 'POST' || !req.url.startsWith('/q/') || !statement) return send(res, 404, '{"error":"no such statement"}');
    try {
      const { params, pageSize } = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      // Named where the product prepares the statement too (statement.prepared), so both plan it alike.
      const { rows } = await pool.query(statement.prepared ? { name: req.url, text: statement.sql, values: params } : { text: statement.sql, values: params });
      if (statement.shape === 'row') {
        const json = rows[0]?.[statement.column ?? 'json'];
        return json == null ? send(res, 404, '{"error":"not found"}') : send(res, 200, json);
      }
      if (statement.shape === 'version') {
        // An object version (getObjectAtVersion): its stored JSON with version and validity.
        return rows[0] ? send(res, 200, renderObjectVersion(rows[0])) : send(res, 404, '{"error":"not found"}');
      }
      if (statement.shape === 'groups') {
        return send(res, 200, `{"groups":[${rows.map((r) => r.json).join(',')}],"truncated":${rows.some((r) => r.truncated)}}`);
      }
      const page = rows.length > pageSize ? rows.slice(0, pageSize) : rows;
      let text = `{"objects":[${page.map((r) => r.json ?? searchRowJson(r)).join(',')}]`;
      if (rows.length > pageSize) {
        const last = page[page.length - 1];
        text += `,"pagingToken":"${Buffer.from(JSON.stringify(statement.keyset.map((c) => last[c]))).toString('base64url')}"`;
      }
      send(res, 200, `${text}}`);
    } catch (e) {
      send(res, 500, JSON.stringify({ error: e.message }));
    }
  });
});

server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT), '127.0.0.1', () => process.send?.('ready'));
process.on('SIGTERM', () => server.close(() => pool.end().then(() => process.exit(0))));
