import type { z } from 'zod';
import { toolNameProblem } from '../shared/tool-name';
import type { Tool } from './types';

/**
 * Identity helper that lets TypeScript infer `execute`'s input type from the zod schema, so a tool
 * is written once and its arguments are typed by the same schema the registry validates with. The
 * name is checked as the providers check it (`src/shared/tool-name.ts`).
 */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  // A name the providers refuse would fail every run that offers the tool: refused here, at once.
  const problem = toolNameProblem(tool.name);
  if (problem) throw new Error(`defineTool: ${problem}.`);
  return tool;
}
