import type { z } from 'zod';
import type { Tool } from './types';

/**
 * Identity helper that lets TypeScript infer `execute`'s input type from the zod schema, so a tool
 * is written once and its arguments are typed by the same schema the registry validates with.
 */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  return tool;
}
