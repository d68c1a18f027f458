// Runs one render job where it is handed over (a render thread): sources parsed once per thread (a bounded cache by hash), each item rendered within what is
// left of the job's budget.
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { parseTemplate, RenderFailure, renderTemplate, type ParsedTemplate } from './liquid.js';
import { overBudget, type ItemOutcome, type LiquidSource, type RenderJob, type RenderReport } from './renderer.js';

/** Parsed sources a thread keeps, most recently used last; bounded by count and by their sources' size. */
const CACHE_ENTRIES = 256;
const CACHE_BYTES = 32 * 1024 * 1024;
const cache = new Map<string, { parsed: ParsedTemplate; bytes: number }>();
let cachedBytes = 0;

function parsedOf(s: LiquidSource): ParsedTemplate {
  const key = createHash('sha256').update(s.part).update('\0').update(s.source).digest('base64');
  const hit = cache.get(key);
  if (hit) {
    cache.delete(key);
    cache.set(key, hit);
    return hit.parsed;
  }
  const parsed = parseTemplate(s.source, s.part);
  const bytes = s.source.length;
  cache.set(key, { parsed, bytes });
  cachedBytes += bytes;
  for (const [oldest, entry] of cache) {
    if (cache.size <= CACHE_ENTRIES && cachedBytes <= CACHE_BYTES) break;
    cache.delete(oldest);
    cachedBytes -= entry.bytes;
  }
  return parsed;
}

/** Where the job is, for whoever stops it: [0] the item being rendered, [1] its source (-1 before the first). */
export type JobProgress = Int32Array;

function failure(field: string, err: unknown): Extract<ItemOutcome, { ok: false }> {
  if (err instanceof RenderFailure) return { ok: false, field, message: `${field}${err.message.slice(err.part.length)}`, overBudget: err.overBudget };
  if (err instanceof Error && 'slug' in err) return { ok: false, field, message: `${field}${err.message.slice(err.message.indexOf(':'))}`, overBudget: false };
  throw err;
}

/**
 * Renders every item in order. Each render may use what is left of the job's budget (at most a part's own limit,
 * RENDER_LIMIT_MS); once the budget is spent, or a render reached a limit, the remaining items fail over budget
 * without rendering.
 */
export function runRenderJob(job: RenderJob, progress?: JobProgress): RenderReport {
  const started = performance.now();
  const left = () => job.budgetMs - (performance.now() - started);
  const items: ItemOutcome[] = [];
  for (let i = 0; i < job.items.length; i++) {
    const item = job.items[i]!;
    const outputs: string[] = [];
    let outcome: ItemOutcome | undefined;
    for (const index of item.sources) {
      const source = job.sources[index]!;
      if (progress) {
        progress[0] = i;
        progress[1] = index;
      }
      if (left() <= 0) {
        outcome = overBudget(source.field, job.budgetMs);
        break;
      }
      try {
        outputs.push(renderTemplate(parsedOf(source), item.context, left()));
      } catch (err) {
        outcome = failure(source.field, err);
        break;
      }
    }
    items.push(outcome ?? { ok: true, outputs });
    // A limit reached is the template's cost: the rest of the job would only spend more of it.
    if (outcome && !outcome.ok && outcome.overBudget) {
      for (let rest = i + 1; rest < job.items.length; rest++) items.push(overBudget(outcome.field, job.budgetMs));
      break;
    }
  }
  return { items, elapsedMs: performance.now() - started };
}
