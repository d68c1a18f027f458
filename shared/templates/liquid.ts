// The one Liquid engine of Mailpath (no file access, strict filters, lenient variables, DoS limits) and the parse/render of template parts.
import { filters, Liquid, LiquidError, type Context, type FS, type Template } from 'liquidjs';
import { AppError, validationError } from '../errors.js';

/** The Liquid-enabled parts of a template; each is parsed and rendered on its own. */
export type TemplatePart = 'subject' | 'body_html' | 'body_text';
export const TEMPLATE_PARTS: readonly TemplatePart[] = ['subject', 'body_html', 'body_text'];

/** Largest source of one part, in UTF-8 bytes. */
export const MAX_PART_BYTES = 512 * 1024;
/** Time budget of one render of one part: a hostile loop stops here instead of holding the event loop. */
export const RENDER_LIMIT_MS = 500;
/** liquidjs allocation units one render may use (characters of built strings, array and range elements). */
export const MEMORY_LIMIT = 10_000_000;
/**
 * Largest rendered part, in characters. liquidjs does not count what a template writes out, so a loop
 * over a large literal is caught here; the length of the unflattened result costs nothing to read.
 */
export const MAX_RENDERED_CHARS = 5 * 1024 * 1024;

/** Included, rendered and layout templates would be read through this; nothing is ever found. */
const noFiles: FS = {
  exists: async () => false,
  existsSync: () => false,
  readFile: async () => {
    throw new Error('templates cannot read files');
  },
  readFileSync: () => {
    throw new Error('templates cannot read files');
  },
  resolve: (_dir, file) => file,
};

/**
 * Scopes of body_html renders. Escaping is decided per render rather than per engine so that one engine,
 * with one set of limits, serves every part; a WeakSet keeps the mark out of reach of template code.
 */
const htmlScopes = new WeakSet<object>();
const escapeHtml = filters['escape'] as (this: unknown, value: unknown) => string;

function escapeInHtml(this: { context: Context }, value: unknown): string {
  return htmlScopes.has(this.context.environments) ? escapeHtml.call(this, value) : (value as string);
}

const engine = new Liquid({
  fs: noFiles,
  root: [],
  partials: [],
  layouts: [],
  relativeReference: false,
  cache: false,
  strictFilters: true,
  strictVariables: false,
  ownPropertyOnly: true,
  outputEscape: escapeInHtml,
  // Renders must not depend on the host: dates in UTC, English names.
  timezoneOffset: 0,
  locale: 'en-US',
  parseLimit: MAX_PART_BYTES,
  renderLimit: RENDER_LIMIT_MS,
  memoryLimit: MEMORY_LIMIT,
});

// Refused when parsed, so a template that tries to load another one is never saved.
for (const tag of ['include', 'render', 'layout']) {
  engine.registerTag(tag, {
    parse(token) {
      throw new Error(`the ${token.name} tag is not supported: templates cannot load other templates or files`);
    },
    render() {
      return undefined;
    },
  });
}

export interface ParsedTemplate {
  readonly part: TemplatePart;
  readonly templates: Template[];
}

export interface ContactInput {
  email: string;
  first_name?: string | null | undefined;
  last_name?: string | null | undefined;
  custom_fields?: Record<string, unknown> | null | undefined;
}

export interface RenderInput {
  variables?: Record<string, unknown> | undefined;
  contact?: ContactInput | undefined;
}

/** What templates see: the caller's variables plus the reserved `contact` and `custom_fields`. */
export type TemplateContext = Record<string, unknown> & {
  contact: Partial<ContactInput> & { custom_fields: Record<string, unknown> };
  custom_fields: Record<string, unknown>;
};

/**
 * Builds the render context. `contact` and `custom_fields` are reserved: they always come from the
 * contact (empty without one), so `{{ contact.email }}` and `{{ custom_fields.plan }}` mean the recipient.
 */
export function renderContext(input: RenderInput = {}): TemplateContext {
  const c = input.contact;
  const customFields = { ...(c?.custom_fields ?? {}) };
  const contact = c
    ? { email: c.email, first_name: c.first_name ?? null, last_name: c.last_name ?? null, custom_fields: customFields }
    : { custom_fields: customFields };
  return { ...(input.variables ?? {}), contact, custom_fields: customFields };
}

/** A Liquid failure as a 422 naming the part and, when liquidjs knows it, the line and column. */
function liquidFailure(part: TemplatePart, what: string, err: unknown): AppError {
  if (err instanceof LiquidError) {
    const [line, column] = err.token?.getPosition() ?? [];
    const reason = (err.originalError?.message ?? err.message).replace(/, line:\d+, col:\d+$/, '');
    const where = line !== undefined ? ` at line ${line}, column ${column}` : '';
    return validationError(part, `${what}${where}: ${reason}`);
  }
  // Too deep a nesting or too long a string: the template's doing, not the server's.
  if (err instanceof RangeError) return validationError(part, `${what}: ${err.message}`);
  throw err;
}

/** Parses one part; a syntax error, an unknown filter or a file-loading tag is a 422 naming the part with its position. */
export function parseTemplate(source: string, part: TemplatePart): ParsedTemplate {
  if (Buffer.byteLength(source, 'utf8') > MAX_PART_BYTES) {
    throw validationError(part, `must be at most ${MAX_PART_BYTES / 1024} KiB (${MAX_PART_BYTES} bytes of UTF-8)`);
  }
  try {
    return { part, templates: engine.parse(source) };
  } catch (err) {
    throw liquidFailure(part, 'Liquid syntax error', err);
  }
}

/** A header value on one line: CR and LF in a rendered subject would let a variable inject headers. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/**
 * Renders one part. Output in body_html is HTML-escaped (`| raw` opts out); subject and body_text are
 * written as they are, and the subject is kept on one line. A render that fails or exceeds a limit is a 422 naming the part.
 */
export function renderTemplate(template: ParsedTemplate, context: TemplateContext): string;
export function renderTemplate(source: string, context: TemplateContext, part: TemplatePart): string;
export function renderTemplate(template: ParsedTemplate | string, context: TemplateContext, part?: TemplatePart): string {
  const parsed = typeof template === 'string' ? parseTemplate(template, part ?? 'body_text') : template;
  // A fresh scope per render: the same context renders the subject and the bodies.
  const scope = { ...context };
  if (parsed.part === 'body_html') htmlScopes.add(scope);
  let out: string;
  try {
    out = String(engine.renderSync(parsed.templates, scope));
  } catch (err) {
    throw liquidFailure(parsed.part, 'could not render', err);
  }
  if (out.length > MAX_RENDERED_CHARS) throw validationError(parsed.part, `renders to more than ${MAX_RENDERED_CHARS} characters`);
  return parsed.part === 'subject' ? oneLine(out) : out;
}
