/**
 * How a client-side command notices that the Temporal server went away and came back, and says so
 * once instead of crashing. The run itself is unaffected: it is durable on the server.
 */

/** gRPC status UNAVAILABLE: the server is unreachable (or restarting). */
const GRPC_UNAVAILABLE = 14;

/** True when an error from a Temporal client call means the server could not be reached. */
export function isServerUnavailable(err: unknown): boolean {
  let current: unknown = err;
  for (let depth = 0; current !== null && typeof current === 'object' && depth < 8; depth++) {
    const { code, message } = current as { code?: unknown; message?: unknown };
    if (code === GRPC_UNAVAILABLE) return true;
    if (typeof message === 'string' && /\b(UNAVAILABLE|ECONNREFUSED|No connection established)\b/.test(message)) {
      return true;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return false;
}

/** The address a client handle talks to, when its connection says (for messages and probes). */
export function serverAddressOf(handle: { client?: { connection?: unknown } }): string | undefined {
  const options = (handle.client?.connection as { options?: { address?: unknown } } | undefined)?.options;
  return typeof options?.address === 'string' ? options.address : undefined;
}

/** Tracks contact with the server and prints one line when it is lost, a reminder now and then, one when back. */
export class ServerContact {
  private awaySince: number | undefined;
  private remindedAt = 0;

  constructor(
    private readonly out: (line: string) => void,
    private readonly address: string | undefined,
    private readonly hint: string,
    private readonly reminderMs = 30_000,
    private readonly now: () => number = Date.now,
  ) {}

  get away(): boolean {
    return this.awaySince !== undefined;
  }

  lost(reason: unknown): void {
    const now = this.now();
    const where = this.address ? ` at ${this.address}` : '';
    if (this.awaySince === undefined) {
      this.awaySince = this.remindedAt = now;
      this.out(`(lost contact with the Temporal server${where}: ${firstLine(reason)}. ${this.hint})`);
    } else if (now - this.remindedAt >= this.reminderMs) {
      this.remindedAt = now;
      this.out(`(still no Temporal server${where} after ${seconds(now - this.awaySince)}; waiting)`);
    }
  }

  back(): void {
    if (this.awaySince === undefined) return;
    this.out(`(Temporal server back after ${seconds(this.now() - this.awaySince)})`);
    this.awaySince = undefined;
  }
}

function seconds(ms: number): string {
  return `${Math.max(1, Math.round(ms / 1000))} s`;
}

function firstLine(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.split('\n')[0] ?? text;
}
