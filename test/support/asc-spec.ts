// The App Store Connect OpenAPI subset (../shared/asc-openapi, read at test time, never copied
// into the repo) as a validator for the fake in asc-server.ts: request query parameters and
// bodies against the operation's schema, responses against the declared response schema, with
// the device status enum opened up (live Apple returns PROCESSING and INELIGIBLE, which the 3.7.0
// spec does not list; distribution-protocols.md §4.1).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { repoRoot } from './fixtures.ts';

const SPEC_PATH = path.resolve(repoRoot, '..', 'shared', 'asc-openapi', 'asc-provisioning-subset-3.7.0.json');
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/** `{ skip }` for node:test when the OpenAPI subset is absent (it lives beside the checkout). */
export function needsAscSpec(): { skip: string | false } {
  if (existsSync(SPEC_PATH)) return { skip: false };
  console.log(`NOTICE: ${SPEC_PATH} is absent; App Store Connect tests are skipped.`);
  return { skip: 'App Store Connect OpenAPI subset (../shared/asc-openapi) not present' };
}

interface Operation { method: string; pattern: RegExp; template: string }

export class AscSpec {
  readonly #spec: any;
  readonly #requestAjv: Ajv;
  readonly #responseAjv: Ajv;
  readonly #operations: Operation[];

  constructor() {
    this.#spec = JSON.parse(readFileSync(SPEC_PATH, 'utf8'));
    const relaxed = structuredClone(this.#spec);
    delete relaxed.components.schemas.Device.properties.attributes.properties.status.enum;
    this.#requestAjv = makeAjv(this.#spec);
    this.#responseAjv = makeAjv(relaxed);
    this.#operations = Object.entries(this.#spec.paths as Record<string, Record<string, unknown>>).flatMap(([template, ops]) =>
      Object.keys(ops)
        .filter((m) => m !== 'parameters')
        .map((method) => ({ method: method.toUpperCase(), template, pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`) })),
    );
  }

  /** A violation message, or null when the request matches its operation. */
  checkRequest(method: string, url: URL, body: unknown): string | null {
    return this.#validateRequest(method, url, body);
  }

  /** A violation message, or null when the response matches the declared schema. */
  checkResponse(method: string, pathname: string, status: number, body: unknown): string | null {
    const found = this.#operation(method, pathname);
    const schema = found?.op.responses?.[String(status)]?.content?.['application/json']?.schema;
    if (!schema) return status === 429 ? null : `response ${status} of ${method} ${pathname} is not in the spec`;
    const validate: ValidateFunction = this.#responseAjv.compile(schema);
    return validate(body) ? null : `response of ${method} ${pathname}: ${this.#responseAjv.errorsText(validate.errors)}`;
  }

  #operation(method: string, pathname: string): { op: any; template: string; params: string[] } | null {
    for (const candidate of this.#operations) {
      const match = candidate.method === method ? candidate.pattern.exec(pathname) : null;
      if (match) return { op: this.#spec.paths[candidate.template][method.toLowerCase()], template: candidate.template, params: match.slice(1) };
    }
    return null;
  }

  /** Checks query parameters and body against the spec; returns a violation message or null. */
  #validateRequest(method: string, url: URL, body: unknown): string | null {
    const found = this.#operation(method, url.pathname);
    if (!found) return `${method} ${url.pathname} is not an operation of the spec subset`;
    const declared = new Map<string, any>();
    for (const p of [...(this.#spec.paths[found.template].parameters ?? []), ...(found.op.parameters ?? [])]) if (p.in === 'query') declared.set(p.name, p);
    for (const [name, raw] of url.searchParams) {
      if (name === 'cursor') continue; // the opaque pagination cursor of links.next
      const param = declared.get(name);
      if (!param) return `query parameter ${name} is not defined for ${method} ${found.template}`;
      const value = param.schema.type === 'array' ? raw.split(',') : param.schema.type === 'integer' ? Number(raw) : raw;
      const validate = this.#requestAjv.compile(param.schema);
      if (!validate(value)) return `query parameter ${name}=${raw}: ${this.#requestAjv.errorsText(validate.errors)}`;
    }
    const schema = found.op.requestBody?.content?.['application/json']?.schema;
    if (schema) {
      const validate = this.#requestAjv.compile(schema);
      if (!validate(body)) return `request body of ${method} ${found.template}: ${this.#requestAjv.errorsText(validate.errors)}`;
    } else if (body !== undefined) {
      return `${method} ${found.template} takes no body`;
    }
    return null;
  }


}

function makeAjv(spec: unknown): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: true });
  addFormats(ajv);
  ajv.addSchema(spec as object, 'spec');
  // The spec's internal references are "#/components/…"; compiled fragments resolve them against it.
  const originalCompile = ajv.compile.bind(ajv);
  const cache = new Map<string, ValidateFunction>();
  (ajv as { compile: (schema: object) => ValidateFunction }).compile = (schema: object) => {
    const key = JSON.stringify(schema);
    let validate = cache.get(key);
    if (!validate) {
      validate = originalCompile(JSON.parse(key.replace(/"#\/components\//g, '"spec#/components/')));
      cache.set(key, validate);
    }
    return validate;
  };
  return ajv;
}
