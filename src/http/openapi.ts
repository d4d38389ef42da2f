import { OPENAPI_SOURCE, SCHEMAS } from '../../schema/index.js';

const componentName = (fileId: string): string => fileId.replace(/\.json$/, '');

/** Rewrites `{"$ref": "x.json"}` to `#/components/schemas/x` and drops `$id`s, recursively. */
const rewriteRefs = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(rewriteRefs);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof item === 'string' && item.endsWith('.json')) {
      out[key] = `#/components/schemas/${componentName(item)}`;
    } else {
      out[key] = rewriteRefs(item);
    }
  }
  return out;
};

/** The served OpenAPI 3.1 document: schema/openapi.json with every schema file inlined. */
export const buildOpenApiDocument = (): Record<string, unknown> => {
  const source = OPENAPI_SOURCE as { components?: Record<string, unknown> };
  const schemas = Object.fromEntries(SCHEMAS.map((schema) => [componentName(schema.$id), rewriteRefs(schema)]));
  const document = rewriteRefs(source) as Record<string, unknown> & { components: Record<string, unknown> };
  document.components = { ...document.components, schemas };
  return document;
};
