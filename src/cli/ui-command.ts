import type { TemporalConfig } from '../client/config';
import { connectClient } from '../client';
import { startInspector, type Inspector } from '../inspector/server';
import { forgetInspector, noteInspector } from './inspector-note';
import { webUiLink } from './web-ui';

/** `durable-agent ui` tries this port first, then the next few, then any free port. */
export const DEFAULT_INSPECTOR_PORT = 8234;
const PORTS_TRIED = 10;

export interface UiFlags {
  port?: number;
  host?: string;
  readOnly: boolean;
}

/**
 * `durable-agent ui [--port N] [--host H] [--read-only]`: serves the inspector and prints one line,
 * its URL with the access token, then runs until SIGINT/SIGTERM.
 */
export async function uiCommand(flags: UiFlags, config: TemporalConfig, say: (line: string) => void): Promise<number> {
  const client = await connectClient(config);
  const options = {
    client,
    readOnly: flags.readOnly,
    ...(flags.host !== undefined ? { host: flags.host } : {}),
    webUiLink: (id: string) => webUiLink(config.address, config.namespace, id),
  };
  let inspector: Inspector | undefined;
  if (flags.port !== undefined) inspector = await startInspector({ ...options, port: flags.port });
  else {
    for (let port = DEFAULT_INSPECTOR_PORT; !inspector && port < DEFAULT_INSPECTOR_PORT + PORTS_TRIED; port++) {
      inspector = await startInspector({ ...options, port }).catch((e: NodeJS.ErrnoException) => {
        if (e.code === 'EADDRINUSE') return undefined;
        throw e;
      });
    }
    inspector ??= await startInspector({ ...options, port: 0 });
  }
  say(`Inspector: ${inspector.url}${flags.readOnly ? '  (read-only)' : ''}`);
  noteInspector(config.address, inspector.url);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  forgetInspector(config.address, inspector.url);
  await inspector.close();
  await client.connection.close();
  return 0;
}
