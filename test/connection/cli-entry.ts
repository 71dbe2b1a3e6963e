/** `durable-agent` from source (the CLI as src/cli/main.ts has it now), for tests that spawn it with `spawnTs`. */
import { runCli } from '../../src/cli/main';

runCli(process.argv.slice(2));
