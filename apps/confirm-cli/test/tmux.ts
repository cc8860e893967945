/**
 * Drive a program in a real terminal: tmux gives it a pty, `send-keys`
 * types, `capture-pane` reads the screen. Each session gets its own tmux
 * server socket (`tmux -L`), so tests never share state and a crash leaves
 * nothing behind once `kill()` runs.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Whether tmux can run here. Under `CI=true` a missing tmux is an error, never
 * a skip: CI must not go green without the terminal tests.
 */
export function tmuxAvailable(): boolean {
  const probe = spawnSync('tmux', ['-V'], { encoding: 'utf8' });
  if (probe.status === 0) return true;
  if (process.env.CI === 'true') {
    throw new Error(
      'tmux is not installed, and CI=true requires the terminal tests to run (apt-get install -y tmux)',
    );
  }
  console.warn('skipping terminal tests: tmux is not installed');
  return false;
}

let counter = 0;

/** Options of a {@link TmuxSession}. */
export interface TmuxOptions {
  /**
   * Also record every byte the program writes to the terminal, escape
   * sequences included, for {@link TmuxSession.raw}: what the screen shows
   * after tmux interpreted them cannot tell a title change or a clear screen.
   */
  recordRaw?: boolean;
}

/** One tmux session running `command` in a 140×50 terminal. */
export class TmuxSession {
  readonly socket = `mrtr-test-${process.pid}-${++counter}`;
  private readonly rawDir: string | undefined;

  constructor(command: string[], env: Record<string, string>, options: TmuxOptions = {}) {
    const envFlags = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`]);
    // Recording: the program starts on a first Enter, once the pane's output is piped to the file.
    const wait = options.recordRaw ? 'read _go; ' : '';
    // The pane outlives the program (sleep) so its last screen and exit status can still be read.
    const script = `${wait}${command.map(quote).join(' ')}; echo "[mrtr exited $?]"; sleep 600`;
    // -u and a UTF-8 locale: the screen keeps the prompt symbols whatever the CI locale is.
    this.tmux(
      [
        '-u',
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        'main',
        '-x',
        '140',
        '-y',
        '50',
        ...envFlags,
        'sh',
        '-c',
        script,
      ],
      { ...process.env, LANG: 'C.UTF-8', ...env },
    );
    if (options.recordRaw) {
      this.rawDir = mkdtempSync(join(tmpdir(), 'mrtr-raw-'));
      this.tmux(['pipe-pane', '-t', 'main', `cat >> ${quote(join(this.rawDir, 'out'))}`]);
      this.keys(['Enter']);
    }
  }

  /** Every byte written to the terminal since the program started (sessions made with `recordRaw`). */
  raw(): Buffer {
    if (!this.rawDir) throw new Error('this session does not record its raw output (recordRaw)');
    return readFileSync(join(this.rawDir, 'out'));
  }

  private tmux(args: string[], env: NodeJS.ProcessEnv = process.env): string {
    const r = spawnSync('tmux', ['-L', this.socket, ...args], { encoding: 'utf8', env });
    if (r.status !== 0) throw new Error(`tmux ${args[0]} failed: ${r.stderr}`);
    return r.stdout;
  }

  /** The whole screen and scrollback, wrapped lines joined. */
  screen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-S', '-500', '-t', 'main']);
  }

  /** Only what the terminal shows now (its 50 lines, wrapped lines joined), without the scrollback. */
  visibleScreen(): string {
    return this.tmux(['capture-pane', '-p', '-J', '-t', 'main']);
  }

  /** Type keys: tmux key names (`Enter`, `Down`, `C-c`, `Escape`) or, with `literal`, text. */
  keys(keys: string[], literal = false): void {
    this.tmux(['send-keys', '-t', 'main', ...(literal ? ['-l'] : []), ...keys]);
  }

  /** Wait until the screen matches `pattern`, polling; fail with the screen after `timeoutMs`. */
  async waitFor(pattern: RegExp, timeoutMs = 20_000): Promise<string> {
    const deadline = Date.now() + timeoutMs;
    let last = '';
    while (Date.now() < deadline) {
      last = this.screen();
      if (pattern.test(last)) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`timed out waiting for ${pattern} on screen:\n${last}`);
  }

  /** End the session and its tmux server, and remove the socket file tmux leaves behind. */
  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server']);
    const dir = process.env.TMUX_TMPDIR || '/tmp';
    rmSync(join(dir, `tmux-${process.getuid?.() ?? 0}`, this.socket), { force: true });
    if (this.rawDir) rmSync(this.rawDir, { recursive: true, force: true });
  }
}

function quote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}
