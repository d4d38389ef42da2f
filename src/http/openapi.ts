import { OPENAPI_SOURCE, SCHEMAS } from '../../schema/index.js';

const componentName = (fileId: string): string => fileId.replace(/\.json$/, '');

/**
 * Rewrites `{"$ref": "x.json"}` to `#/components/schemas/x` and drops `$id`s, recursively.
 * Inside schema file `home`, a local `#/$defs/y` becomes `#/components/schemas/home/$defs/y`
 * so it still resolves once the file is inlined.
 */
const rewriteRefs = (value: unknown, home?: string): unknown => {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, home));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === '$ref' && typeof item === 'string' && item.endsWith('.json')) {
      out[key] = `#/components/schemas/${componentName(item)}`;
    } else if (key === '$ref' && typeof item === 'string' && home && item.startsWith('#/$defs/')) {
      out[key] = `#/components/schemas/${home}${item.slice(1)}`;
    } else {
      out[key] = rewriteRefs(item, home);
    }
  }
  return out;
};

/** The served OpenAPI 3.1 document: schema/openapi.json with every schema file inlined. */
export const buildOpenApiDocument = (): Record<string, unknown> => {
  const source = OPENAPI_SOURCE as { components?: Record<string, unknown> };
  const schemas = Object.fromEntries(SCHEMAS.map((schema) => [componentName(schema.$id), rewriteRefs(schema, componentName(schema.$id))]));
  const document = rewriteRefs(source) as Record<string, unknown> & { components: Record<string, unknown> };
  document.components = { ...document.components, schemas };
  return document;
};
