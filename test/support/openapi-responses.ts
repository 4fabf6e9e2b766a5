import Ajv, { ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Response as SuperagentResponse } from 'superagent';
import type { Test } from 'supertest';
import type TestAgent from 'supertest/lib/agent';

/**
 * Every response the e2e tests receive from the apps through supertest (test/support/apps.ts) is
 * checked against the committed OpenAPI document of its app (openapi/*.json): its status must be
 * one the operation declares, and its JSON body must match that response's schema. A mismatch
 * fails the request, hence the test, with the operation, the status and what did not match.
 * Requests to paths the document does not describe (health, the internal endpoints, unknown
 * routes) are not checked.
 */

export type ApiName = 'objects' | 'object-sets';

interface ResponseObject {
  content?: Record<string, { schema?: object }>;
}
interface OperationObject {
  operationId: string;
  responses: Record<string, ResponseObject>;
}
interface Document {
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, object> };
}

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  literalSegments: number;
  operation: OperationObject;
}

const SCHEMA_REF = '#/components/schemas/';

class ResponseChecker {
  private readonly ajv = new Ajv({ strict: false, allErrors: true });
  private readonly routes: Route[];
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly name: ApiName) {
    const document = JSON.parse(readFileSync(join(__dirname, '../../openapi', `${name}.json`), 'utf8')) as Document;
    addFormats(this.ajv);
    for (const [schemaName, schema] of Object.entries(document.components.schemas)) {
      this.ajv.addSchema(this.rebase(schema) as object, this.schemaId(schemaName));
    }
    this.routes = Object.entries(document.paths)
      .flatMap(([template, item]) =>
        Object.entries(item).map(([method, operation]) => ({
          method: method.toUpperCase(),
          template,
          pattern: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
          literalSegments: template.split('/').filter((s) => s && !s.startsWith('{')).length,
          operation,
        })),
      )
      // A literal segment wins over a parameter (/objects/bulk before /objects/{id}).
      .sort((a, b) => b.literalSegments - a.literalSegments);
  }

  private schemaId(schemaName: string): string {
    return `https://openapi.test/${this.name}/${schemaName}`;
  }

  /**
   * The schema with its `#/components/schemas/X` references pointing at the schemas added under
   * schemaId, and closed: an object schema that lists its properties and says nothing of others
   * allows no others (a response with a field its schema does not name fails), except as a part
   * of an allOf, which only narrows the other parts.
   */
  private rebase(schema: unknown, inAllOf = false): unknown {
    if (Array.isArray(schema)) return schema.map((s) => this.rebase(s, inAllOf));
    if (!schema || typeof schema !== 'object') return schema;
    // OpenAPI 3.0's `nullable` is JSON Schema's type [t, "null"].
    const { nullable, ...rest } = schema as { nullable?: boolean; type?: string; properties?: object; additionalProperties?: unknown };
    if (nullable && rest.type) return this.rebase({ ...rest, type: [rest.type, 'null'] }, inAllOf);
    const closed = rest.properties && rest.additionalProperties === undefined && !inAllOf ? { ...rest, additionalProperties: false } : rest;
    return Object.fromEntries(
      Object.entries(closed).map(([k, v]) => [
        k,
        k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_REF)
          ? this.schemaId(v.slice(SCHEMA_REF.length))
          : k === 'properties'
            ? this.rebaseEach(v)
            : this.rebase(v, k === 'allOf'),
      ]),
    );
  }

  private rebaseEach(properties: unknown): unknown {
    return Object.fromEntries(Object.entries(properties as Record<string, unknown>).map(([name, s]) => [name, this.rebase(s)]));
  }

  /** What is wrong with `res` as the answer to `method url`, or undefined when it is as documented. */
  check(method: string, url: string, res: AnswerToCheck): string | undefined {
    const path = new URL(url, 'http://localhost').pathname;
    const route = this.routes.find((r) => r.method === method.toUpperCase() && r.pattern.test(path));
    if (!route) return undefined;
    const { operation } = route;
    const at = `${method.toUpperCase()} ${path} (${this.name} ${operation.operationId})`;
    const declared =
      operation.responses[String(res.status)] ?? operation.responses[`${String(res.status)[0]}XX`] ?? operation.responses.default;
    if (!declared) {
      return `${at} answered ${res.status}, which its OpenAPI operation does not declare (it declares ${Object.keys(operation.responses).join(', ')}): ${res.text?.slice(0, 300)}`;
    }
    const schema = declared.content?.['application/json']?.schema;
    if (!schema) return undefined;
    if (!/^application\/json\b/.test(String(res.headers['content-type'] ?? ''))) {
      return `${at} answered ${res.status} with content-type ${res.headers['content-type']}, not the declared application/json`;
    }
    const key = `${route.method} ${route.template} ${res.status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(this.rebase(schema) as object);
      this.validators.set(key, validate);
    }
    if (validate(res.body)) return undefined;
    return `${at} answered ${res.status} with a body its OpenAPI schema does not allow: ${this.ajv.errorsText(validate.errors, { dataVar: 'body' })}\n${res.text?.slice(0, 500)}`;
  }
}

/** What the checker reads of a response: superagent's Response has these, and answerToCheck makes them. */
export interface AnswerToCheck {
  status: number;
  headers: Record<string, string | undefined>;
  /** The parsed JSON body (what the schema is checked against). */
  body: unknown;
  text?: string;
}

const checkers = new Map<ApiName, ResponseChecker>();

function checker(name: ApiName): ResponseChecker {
  let c = checkers.get(name);
  if (!c) {
    c = new ResponseChecker(name);
    checkers.set(name, c);
  }
  return c;
}

/** What is wrong with `res` as the `name` app's answer to `method url` (undefined: as documented). */
export function responseFault(name: ApiName, method: string, url: string, res: AnswerToCheck): string | undefined {
  return checker(name).check(method, url, res);
}

/**
 * The API a gateway serves `path` of: `/object-sets...` the object-sets app's, `/objects...` and
 * `/ontology...` the objects app's; undefined for the gateway's own paths (health, docs, 404s).
 */
export function apiOfGatewayPath(path: string): ApiName | undefined {
  const pathname = new URL(path, 'http://localhost').pathname;
  if (/^\/object-sets(\/|$)/.test(pathname)) return 'object-sets';
  if (/^\/(objects|ontology)(\/|$)/.test(pathname)) return 'objects';
  return undefined;
}

/** An answer read off the wire (fetch, or a raw HTTP exchange) in the form the checker reads. */
export function answerToCheck(status: number, headers: Record<string, string | undefined>, text: string): AnswerToCheck {
  let body: unknown;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])), body, text };
}

/**
 * What is wrong with an answer a gateway (`npm start`'s or nginx) gave to `method path`, checked
 * against the OpenAPI document of the app the path belongs to, whether the app answered it or the
 * gateway itself did (its 404, 503 and 413 answers for API paths). Interim (1xx) answers and
 * paths of no API are not checked.
 */
export function gatewayResponseFault(method: string, path: string, res: AnswerToCheck): string | undefined {
  const api = apiOfGatewayPath(path);
  if (!api || res.status < 200) return undefined;
  return responseFault(api, method, path, res);
}

/**
 * fetch through a gateway at `baseUrl`, every answer checked as gatewayResponseFault says: a
 * mismatch throws. Returns a Response whose body can still be read.
 */
export async function checkedGatewayFetch(baseUrl: string, path: string, init: RequestInit = {}): Promise<Response> {
  const res = await fetch(`${baseUrl}${path}`, init);
  const text = await res.text();
  const headers: Record<string, string> = {};
  res.headers.forEach((v, k) => (headers[k] = v));
  const fault = gatewayResponseFault(init.method ?? 'GET', path, answerToCheck(res.status, headers, text));
  if (fault) throw new Error(`through the gateway: ${fault}`);
  const bodiless = res.status === 204 || res.status === 304 || (init.method ?? 'GET').toUpperCase() === 'HEAD';
  return new Response(bodiless ? null : text, { status: res.status, statusText: res.statusText, headers: res.headers });
}

const METHODS = ['get', 'post', 'put', 'delete', 'patch', 'head', 'options'] as const;

/**
 * `agent` (supertest on one app) with every request's response checked against the app's
 * OpenAPI document (see the top of this file): a response that does not match fails the request
 * as a failed `.expect(...)` would.
 */
export function checkedAgent(agent: TestAgent, name: ApiName): TestAgent {
  for (const method of METHODS) {
    const original = agent[method].bind(agent);
    (agent as unknown as Record<string, (url: string) => Test>)[method] = (url: string) => {
      const test = original(url);
      const end = test.end.bind(test);
      test.end = (callback?: (err: unknown, res: SuperagentResponse) => void) =>
        end((err: unknown, res: SuperagentResponse) => {
          const fault = res ? responseFault(name, method, url, res) : undefined;
          callback?.(fault ? Object.assign(new Error(fault), { response: res }) : err, res);
        });
      return test;
    };
  }
  return agent;
}
