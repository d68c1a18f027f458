// The Liquid engines of Mailpath (no file access, strict filters, lenient variables, DoS limits; HTML escaping for body_html) and the parse/render of
// template parts.
import { Liquid, LiquidError, type FS, type Template } from 'liquidjs';
import { AppError, validationError } from '../../kernel/errors.js';

/** The Liquid-enabled parts of a template (and a campaign's preheader); each is parsed and rendered on its own. */
export type TemplatePart = 'subject' | 'body_html' | 'body_text' | 'preheader_text';

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
 * Two engines with the same limits, differing only in escaping: output in body_html is HTML-escaped,
 * subject and body_text are written as they are.
 */
function makeEngine(escapeHtml: boolean): Liquid {
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
    ...(escapeHtml ? { outputEscape: 'escape' as const } : {}),
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
  return engine;
}

const htmlEngine = makeEngine(true);
const plainEngine = makeEngine(false);
const engineFor = (part: TemplatePart) => (part === 'body_html' ? htmlEngine : plainEngine);

export interface ParsedTemplate {
  readonly part: TemplatePart;
  readonly templates: Template[];
}

export interface ContactInput {
  email: string;
  first_name?: string | null | undefined;
  last_name?: string | null | undefined;
  custom_fields?: Record<string, unknown> | null | undefined;
  /** Further profile columns (country, city, …): `contact.<column>` (a campaign renders for a stored contact). */
  profile?: Record<string, string | null> | undefined;
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
    ? { ...(c.profile ?? {}), email: c.email, first_name: c.first_name ?? null, last_name: c.last_name ?? null, custom_fields: customFields }
    : { custom_fields: customFields };
  return { ...(input.variables ?? {}), contact, custom_fields: customFields };
}

/**
 * A render failure: a 422 naming the part. `overBudget` when a limit stopped it (time, memory, output size, a string
 * or nesting too large): the template's cost, not the recipient's data; a campaign pauses on these instead of skipping.
 */
export class RenderFailure extends AppError {
  constructor(
    readonly part: TemplatePart,
    problem: string,
    readonly overBudget: boolean,
  ) {
    super('validation_error', `${part}: ${problem}`);
  }
}

const LIMIT_REACHED = /limit exceeded$/;

/** A Liquid failure as a 422 naming the part and, when liquidjs knows it, the line and column. */
function liquidFailure(part: TemplatePart, what: string, err: unknown): AppError {
  if (err instanceof LiquidError) {
    const [line, column] = err.token?.getPosition() ?? [];
    const reason = (err.originalError?.message ?? err.message).replace(/, line:\d+, col:\d+$/, '');
    const where = line !== undefined ? ` at line ${line}, column ${column}` : '';
    return new RenderFailure(part, `${what}${where}: ${reason}`, LIMIT_REACHED.test(reason));
  }
  // Too deep a nesting or too long a string: the template's doing, not the server's.
  if (err instanceof RangeError) return new RenderFailure(part, `${what}: ${err.message}`, true);
  throw err;
}

/** Parses one part; a syntax error, an unknown filter or a file-loading tag is a 422 naming the part with its position. */
export function parseTemplate(source: string, part: TemplatePart): ParsedTemplate {
  if (Buffer.byteLength(source, 'utf8') > MAX_PART_BYTES) {
    throw validationError(part, `must be at most ${MAX_PART_BYTES / 1024} KiB (${MAX_PART_BYTES} bytes of UTF-8)`);
  }
  try {
    return { part, templates: engineFor(part).parse(source) };
  } catch (err) {
    throw liquidFailure(part, 'Liquid syntax error', err);
  }
}

/** A header value on one line: CR and LF in a rendered subject would let a variable inject headers. */
function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/**
 * Renders one part. Output in body_html is HTML-escaped (`| raw` opts out); subject, preheader and body_text are
 * written as they are, and the subject and preheader are kept on one line. A render that fails or exceeds a limit is a
 * RenderFailure (422) naming the part. `limitMs` (at most RENDER_LIMIT_MS) is what is left of a caller's budget.
 * Tenant templates run only on the render threads (shared/sending/templates/renderer.ts), never on an event loop that serves requests.
 */
export function renderTemplate(template: ParsedTemplate, context: TemplateContext, limitMs?: number): string;
export function renderTemplate(source: string, context: TemplateContext, part: TemplatePart): string;
export function renderTemplate(template: ParsedTemplate | string, context: TemplateContext, option?: TemplatePart | number): string {
  const parsed = typeof template === 'string' ? parseTemplate(template, typeof option === 'string' ? option : 'body_text') : template;
  const renderLimit = typeof option === 'number' ? Math.max(0, Math.min(RENDER_LIMIT_MS, option)) : RENDER_LIMIT_MS;
  let out: string;
  try {
    // A copy: the same context renders the subject and both bodies, and a render never writes into it.
    out = String(engineFor(parsed.part).renderSync(parsed.templates, { ...context }, { renderLimit }));
  } catch (err) {
    const failure = liquidFailure(parsed.part, 'could not render', err);
    // The time limit is named: it is the part's own or what was left of the caller's budget.
    if (failure.message.endsWith('template render limit exceeded'))
      throw new RenderFailure(parsed.part, `${failure.message.slice(parsed.part.length + 2)} (${renderLimit} ms)`, true);
    throw failure;
  }
  if (out.length > MAX_RENDERED_CHARS) throw new RenderFailure(parsed.part, `renders to more than ${MAX_RENDERED_CHARS} characters`, true);
  return parsed.part === 'subject' || parsed.part === 'preheader_text' ? oneLine(out) : out;
}
