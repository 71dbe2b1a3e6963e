/**
 * A run's contract with its clients and its next execution, one concern per module: the run input
 * (`input.ts`), the built-in tools and permissions it names (`tool-policy.ts`), its result and live state
 * (`result.ts`), its progress events (`events.ts`) and the state it carries across continue-as-new
 * (`continuation.ts`). Hot code imports those modules themselves; this barrel is for the package's
 * entry points and type imports.
 */
export * from './tool-policy';
export * from './input';
export * from './result';
export * from './events';
export * from './continuation';
