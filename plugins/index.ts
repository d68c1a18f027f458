// The MX plugins, one catalogue: the entry point hands it to the MX, and config/plugins.yaml may enable only the names listed here.
import type { PluginFactory } from '../mta/inbound/plugins.js';
import limits from './limits.js';
import recipientDomains from './recipient-domains.js';
import seedPlacement from './seed-placement.js';
import senderAuth from './sender-auth.js';
import store from './store.js';

export const PLUGINS = {
  limits,
  'recipient-domains': recipientDomains,
  'sender-auth': senderAuth,
  'seed-placement': seedPlacement,
  store,
} satisfies Record<string, PluginFactory>;

export type PluginName = keyof typeof PLUGINS;

/** The names config/plugins.yaml may use (loadConfig's mxPlugins). */
export const PLUGIN_NAMES = Object.keys(PLUGINS) as PluginName[];
