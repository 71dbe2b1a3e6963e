/**
 * The tool registry and the built-in tools. The activity layer builds one registry per worker with
 * {@link createDefaultRegistry} and calls `registry.run(name, input, ctx)` for each tool call and
 * `registry.specs(names)` for the tool definitions of a model request.
 */
import { createBashTool, type BashToolOptions } from './bash';
import { createDoneTool } from './done';
import { createEditFileTool } from './edit-file';
import { createGlobTool, type GlobToolOptions } from './glob';
import { createGrepTool, type GrepToolOptions } from './grep';
import { createReadFileTool } from './read-file';
import { ToolRegistry } from './registry';
import type { Tool } from './types';
import { createWriteFileTool } from './write-file';

export interface BuiltinToolOptions {
  bash?: BashToolOptions;
  glob?: GlobToolOptions;
  grep?: GrepToolOptions;
}

/** The six built-in tools, in the order of `BUILTIN_TOOL_NAMES`, then the opt-in `done` tool. */
export function createBuiltinTools(options: BuiltinToolOptions = {}): Tool[] {
  return [
    createBashTool(options.bash),
    createReadFileTool(),
    createWriteFileTool(),
    createEditFileTool(),
    createGlobTool(options.glob),
    createGrepTool(options.grep),
    createDoneTool(),
  ];
}

/** A registry holding the built-in tools. */
export function createDefaultRegistry(options: BuiltinToolOptions = {}): ToolRegistry {
  return new ToolRegistry(createBuiltinTools(options));
}

export { ToolRegistry } from './registry';
export { defineTool } from './define-tool';
export { resolveInWorkspace, realWorkspace, workspaceRelative, WorkspaceError } from '../safe-fs/workspace';
export { globToRegExp } from './search/glob-pattern';
export { createBashTool, BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS, type BashToolOptions } from './bash';
export { createReadFileTool } from './read-file';
export { createDoneTool } from './done';
export { createWriteFileTool } from './write-file';
export { createEditFileTool } from './edit-file';
export { createGlobTool, type GlobToolOptions } from './glob';
export { createGrepTool, type GrepToolOptions } from './grep';
export type { SideEffect, Tool, ToolContext, ToolOutput, ToolResult } from './types';
