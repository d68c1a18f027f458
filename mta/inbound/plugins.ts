// Builds the MX plugins config/plugins.yaml enables, in its order, with their priorities, from the catalogue the entry point hands over (plugins/index.ts).
import type { Plugin } from '../hooks/phases.js';
import type { EnabledPlugin } from '../hooks/runner.js';
import type { MxDeps } from './deps.js';

export type PluginFactory = (deps: MxDeps) => Plugin | Promise<Plugin>;

/** The plugins the MX can run, by name. */
export type PluginCatalogue = Readonly<Record<string, PluginFactory>>;

export async function loadPlugins(deps: MxDeps, catalogue: PluginCatalogue): Promise<EnabledPlugin[]> {
  const enabled: EnabledPlugin[] = [];
  try {
    for (const { name, priority } of deps.config.plugins.plugins) {
      const factory = catalogue[name];
      if (!factory) throw new Error(`unknown MX plugin ${name}: not in the plugin catalogue (plugins/index.ts)`);
      enabled.push({ plugin: await factory(deps), priority });
    }
  } catch (err) {
    await Promise.allSettled(enabled.map((e) => e.plugin.close?.()));
    throw err;
  }
  return enabled;
}
