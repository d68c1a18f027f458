// config/plugins.yaml: the MX plugins enabled, their order and priorities, and the hook timeouts.
import { z } from 'zod';

/** The MX session's hook phases, in order (Haraka's model); `queue` is the phase that stores an accepted message. */
export const MX_PHASES = ['connect', 'helo', 'mail', 'rcpt', 'data', 'queue'] as const;

/**
 * The schema of config/plugins.yaml. Plugin names are checked against `catalogue` (the names of
 * plugins/index.ts, which the entry point passes in); without one only their form is checked, and
 * the MX refuses an unknown name when it starts.
 */
export function pluginsSchema(catalogue?: readonly string[]) {
  const name =
    catalogue && catalogue.length > 0 ? z.enum(catalogue as [string, ...string[]]) : z.string().regex(/^[a-z][a-z0-9-]{0,63}$/, 'expected a plugin name');
  return z.strictObject({
    hook_timeout_ms: z.number().int().min(10).max(600_000),
    phase_timeout_ms: z.partialRecord(z.enum(MX_PHASES), z.number().int().min(10).max(600_000)).default({}),
    plugins: z
      .array(z.strictObject({ name, priority: z.number().int().min(0).max(1000) }))
      .refine((list) => new Set(list.map((p) => p.name)).size === list.length, 'a plugin is listed twice'),
  });
}

export type PluginsConfig = z.infer<ReturnType<typeof pluginsSchema>>;
