const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/**
 * A one-line spinner on stderr while something is in flight (a model call). Only on a terminal:
 * piped or redirected output stays plain lines. Progress lines clear it before they print.
 */
export class Spinner {
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private label = '';
  private readonly enabled: boolean;

  constructor(private readonly stream: NodeJS.WriteStream = process.stderr) {
    this.enabled = stream.isTTY === true && process.env.TERM !== 'dumb';
  }

  start(label: string): void {
    if (!this.enabled) return;
    this.label = label;
    if (this.timer) return;
    this.timer = setInterval(() => this.draw(), 100);
    this.timer.unref();
    this.draw();
  }

  /** Removes the spinner line (before a progress line is printed, or for good). */
  clear(): void {
    if (this.enabled && this.timer) this.stream.write('\r\x1b[K');
  }

  stop(): void {
    this.clear();
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private draw(): void {
    this.frame = (this.frame + 1) % FRAMES.length;
    this.stream.write(`\r\x1b[K${FRAMES[this.frame]} ${this.label}`);
  }
}
