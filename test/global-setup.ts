// Placeholder until the Temporal test server wiring lands; DA_SKIP_TEMPORAL=1 skips it for unit-only runs.
export default async function globalSetup(): Promise<void> {}
