import { OPENAPI_SOURCE, schemaById as fileSchema, type JsonSchema } from '../../schema/index.js';

type SchemaSource = (schemaId: string) => JsonSchema;

const componentName = (fileId: string): string => fileId.replace(/\.json$/, '');

/** `x.json` (a whole schema file) or `x.json#/properties/y` (a place inside one). */
const FILE_REF = /^([A-Za-z0-9_.-]+\.json)(#\/.*)?$/;

const pointerInto = (schema: unknown, pointer: string): unknown =>
  pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((node, token) => {
      const key = token.replaceAll('~1', '/').replaceAll('~0', '~');
      if (typeof node !== 'object' || node === null || !(key in node)) throw new Error(`no ${pointer} in a schema file`);
      return (node as Record<string, unknown>)[key];
    }, schema);

/**
 * Rewrites schema-file refs for the one served document, recursively, dropping `$id`s:
 * `{"$ref": "x.json"}` becomes `#/components/schemas/x` and `x` is noted in `seen`, to be
 * inlined; `{"$ref": "x.json#/properties/y"}` (a query parameter taking its rule from the
 * file that validates the query string) is replaced by that part of the file, so the file
 * is no component of its own. Inside file `home`, a local `#/$defs/y` becomes
 * `#/components/schemas/home/$defs/y`, which needs `home` inlined.
 */
const rewriteRefs = (value: unknown, seen: Set<string>, schemaById: SchemaSource, home?: string): unknown => {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, seen, schemaById, home));
  if (typeof value !== 'object' || value === null) return value;
  const ref = (value as { $ref?: unknown }).$ref;
  const fileRef = typeof ref === 'string' ? FILE_REF.exec(ref) : null;
  if (fileRef?.[2]) return rewriteRefs(pointerInto(schemaById(fileRef[1]), fileRef[2].slice(1)), seen, schemaById, componentName(fileRef[1]));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    if (key === '$id') continue;
    if (key === '$ref' && fileRef) {
      seen.add(fileRef[1]);
      out[key] = `#/components/schemas/${componentName(fileRef[1])}`;
    } else if (key === '$ref' && typeof item === 'string' && home && item.startsWith('#/$defs/')) {
      seen.add(`${home}.json`);
      out[key] = `#/components/schemas/${home}${item.slice(1)}`;
    } else {
      out[key] = rewriteRefs(item, seen, schemaById, home);
    }
  }
  return out;
};

/**
 * The served OpenAPI 3.1 document: schema/openapi.json with every schema it refers to (the
 * files, or the app's copies with its limits) inlined under components.schemas (transitively),
 * and no other: a schema only MCP uses
 * (a tool's inputSchema) would be an unused component of the REST description.
 */
export const buildOpenApiDocument = (schemaById: SchemaSource = fileSchema): Record<string, unknown> => {
  const seen = new Set<string>();
  const document = rewriteRefs(OPENAPI_SOURCE, seen, schemaById) as Record<string, unknown> & { components: Record<string, unknown> };
  const schemas: Record<string, unknown> = {};
  for (let pending = [...seen]; pending.length > 0; pending = [...seen].filter((id) => !(componentName(id) in schemas))) {
    for (const id of pending) schemas[componentName(id)] = rewriteRefs(schemaById(id), seen, schemaById, componentName(id));
  }
  document.components = { ...document.components, schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) };
  return document;
};
