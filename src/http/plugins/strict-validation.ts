// Request validation without silent repairs. fastify's default Ajv coerces types ("5" → 5,
// true → 1) and removes unknown properties, so a typo like "certficate_id" vanished and the task
// quietly used the default certificate. Bodies are JSON and mean exactly what they say: no
// coercion, and `additionalProperties: false` refuses unknown fields by name. Query strings,
// path parameters and headers are text by nature and keep coercion ("?limit=20" is a number).
import { Ajv, type Options } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS with its function as `default` of the module object.
const addFormats = ((addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule) as unknown as (ajv: Ajv) => Ajv;

const COMMON: Options = { allErrors: false, useDefaults: true, removeAdditional: false, strict: false, addUsedSchema: false };

export function installStrictValidation(app: FastifyInstance): void {
  const body = addFormats(new Ajv({ ...COMMON, coerceTypes: false }));
  const text = addFormats(new Ajv({ ...COMMON, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body : text).compile(schema));
}
