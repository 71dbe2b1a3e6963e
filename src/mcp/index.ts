/**
 * MCP on the worker: configuration (Claude Code's `mcpServers`), trust (workspace servers run
 * sandboxed), pooled connections and durable calls. See docs/mcp.md.
 */
export {
  closeAllMcpConnections,
  createMcpRuntime,
  McpRuntime,
  type McpWorkerOptions,
  type McpCallContext,
} from './runtime';
export { MCP_CONFIG_ENV_VAR, WORKSPACE_MCP_FILE, parseMcpConfig, readMcpConfigFile } from './config';
export { expandConfig } from './expand';
export { DEFAULT_MCP_CONNECT_TIMEOUT_MS, DEFAULT_MCP_IDLE_TIMEOUT_MS, McpPool } from './pool';
