/**
 * `node dist/scripts/cluster/main.js [--mtls]`: starts the cluster the tests use (Temporal server on
 * PostgreSQL, TLS on) in a temporary directory, prints the environment that connects to it, and
 * keeps it up until Ctrl-C, which tears everything down.
 *
 *   node dist/scripts/cluster/main.js --ensure   only build/cache the server and sql tool, then exit
 */
import { ensureServerBinaries } from './binaries';
import { startCluster } from './cluster';

const log = (m: string) => process.stderr.write(`[cluster] ${m}\n`);

async function main(argv: string[]): Promise<void> {
  if (argv.includes('--ensure')) {
    const found = await ensureServerBinaries(log);
    log(`server ${found.server}, sql ${found.sql}, schema ${found.schemaDir}`);
    return;
  }
  const cluster = await startCluster({ log, mtls: argv.includes('--mtls') });
  process.stdout.write(
    `${Object.entries(cluster.env)
      .map(([k, v]) => `export ${k}=${v}`)
      .join('\n')}\n`,
  );
  log(`up; files in ${cluster.dir}. Ctrl-C stops it.`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  log('stopping…');
  await cluster.stop();
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`[cluster] ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
