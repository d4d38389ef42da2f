/**
 * HTML from tagged templates, escaped by default: every interpolated value is text unless it
 * is already Html (made by this tag). Attribute values must be written quoted ("${value}").
 */
export class Html {
  constructor(readonly text: string) {}

  toString(): string {
    return this.text;
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (char) => ESCAPES[char]);

const render = (value: unknown): string => {
  if (value instanceof Html) return value.text;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
};

export const html = (strings: TemplateStringsArray, ...values: unknown[]): Html => {
  let out = strings[0];
  for (let index = 0; index < values.length; index += 1) out += render(values[index]) + strings[index + 1];
  return new Html(out);
};

/** A path segment for a URL we build (ids are UUIDs, folder names are anything). */
export const segment = (value: string | number): string => encodeURIComponent(String(value));
