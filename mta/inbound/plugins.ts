// The catalogue of MX plugins (plugins/*.ts) and the loader that builds those config/plugins.yaml enables, in its order, with their priorities.
import type { MxPluginName } from '../../shared/config.js';
import type { Plugin } from '../hooks/phases.js';
import type { EnabledPlugin } from '../hooks/runner.js';
import type { MxDeps } from './deps.js';
import limits from '../../plugins/limits.js';
import queue from '../../plugins/queue.js';
import recipientDomains from '../../plugins/recipient-domains.js';
import senderAuth from '../../plugins/sender-auth.js';

export type PluginFactory = (deps: MxDeps) => Plugin | Promise<Plugin>;

export const PLUGIN_CATALOG: Record<MxPluginName, PluginFactory> = {
  limits,
  'recipient-domains': recipientDomains,
  'sender-auth': senderAuth,
  queue,
};

export async function loadPlugins(deps: MxDeps, catalog: Record<string, PluginFactory> = PLUGIN_CATALOG): Promise<EnabledPlugin[]> {
  const enabled: EnabledPlugin[] = [];
  try {
    for (const { name, priority } of deps.config.plugins.plugins) {
      const factory = catalog[name];
      if (!factory) throw new Error(`unknown MX plugin ${name}`);
      enabled.push({ plugin: await factory(deps), priority });
    }
  } catch (err) {
    await Promise.allSettled(enabled.map((e) => e.plugin.close?.()));
    throw err;
  }
  return enabled;
}
