// The entry point's configuration: shared/config's loader told the MX plugin catalogue's names, so config/plugins.yaml can enable only plugins that exist.
import { loadConfig, type Config, type Env } from '../shared/config/index.js';
import { PLUGIN_NAMES } from '../plugins/index.js';

export function loadMailpathConfig(env: Env = process.env, options: { dev?: boolean } = {}): Config {
  return loadConfig(env, { mxPlugins: PLUGIN_NAMES, ...options });
}
