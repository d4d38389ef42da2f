import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { buildOpenApiDocument } from '../../src/http/openapi.js';

interface Operation {
  responses: Record<string, { content?: { 'application/json'?: { schema: unknown } }; $ref?: string }>;
}
type PathItem = Record<string, Operation>;

const document = buildOpenApiDocument() as {
  paths: Record<string, PathItem>;
  components: { schemas: Record<string, unknown>; responses: Record<string, unknown> };
};

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);
ajv.addSchema({ $id: 'openapi', components: document.components });

// Literal paths before templated ones, so /outbound/suppressions is not read as /outbound/{id}.
const templates = Object.keys(document.paths)
  .sort((a, b) => a.split('{').length - b.split('{').length)
  .map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));

const validators = new Map<string, ValidateFunction>();

const resolveResponse = (response: Operation['responses'][string]): Operation['responses'][string] => {
  if (!response.$ref) return response;
  const name = response.$ref.split('/').pop() as string;
  return document.components.responses[name] as Operation['responses'][string];
};

/** Fails when a REST response does not match the OpenAPI document (docs/design.md rule 4). */
export const assertMatchesOpenApi = (method: string, path: string, status: number, body: unknown): void => {
  const pathname = path.split('?')[0];
  const match = templates.find((candidate) => candidate.regex.test(pathname));
  if (!match) throw new Error(`${method} ${pathname} is not in the OpenAPI document`);
  const operation = document.paths[match.template][method.toLowerCase()];
  if (!operation) throw new Error(`${method} ${match.template} is not in the OpenAPI document`);
  const declared = operation.responses[String(status)] ?? operation.responses.default;
  if (!declared) throw new Error(`${method} ${match.template} does not document status ${status}`);
  const response = resolveResponse(declared);
  const schema = response.content?.['application/json']?.schema;
  if (!schema) {
    if (body !== undefined && body !== '') throw new Error(`${method} ${match.template} ${status} documents no body`);
    return;
  }
  const key = `${method} ${match.template} ${status}`;
  let validate = validators.get(key);
  if (!validate) {
    validate = ajv.compile(rebase(schema));
    validators.set(key, validate);
  }
  if (!validate(body)) {
    throw new Error(`${key} does not match the OpenAPI schema: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 500)}`);
  }
};

/** Points local component refs at the document registered as "openapi". */
const rebase = (schema: unknown): Record<string, unknown> =>
  JSON.parse(JSON.stringify(schema).replaceAll('"#/components/', '"openapi#/components/')) as Record<string, unknown>;
