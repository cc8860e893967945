import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The port of the Redis other people's tests share: a private Redis never uses it. */
const SHARED_PORT = 6379;
/** Longest wait for a started `redis-server` to accept connections, milliseconds. */
const START_TIMEOUT_MS = 10_000;

/**
 * `redis.conf` directives of a private Redis, name → value as on the command
 * line, e.g. `{ appendonly: 'yes', appendfsync: 'always' }`. Unset: a
 * volatile Redis (`save ""`, `appendonly no`).
 */
export type RedisSettings = Readonly<Record<string, string | number>>;

/** Every `redis-server` this process started and has not seen exit: killed when the process exits. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

/**
 * Whether the `redis-server` binary (the Debian package's, on `PATH`) runs.
 * @throws under `CI=true` when it does not: the fault suite must not go green without it.
 */
export async function redisServerAvailable(): Promise<boolean> {
  try {
    await new Promise<void>((resolve, reject) =>
      execFile('redis-server', ['--version'], { timeout: 5000 }, (error) =>
        error ? reject(error) : resolve(),
      ),
    );
    return true;
  } catch (error) {
    const why = `redis-server is not runnable (${String(error)}); install the redis-server package`;
    if (process.env.CI === 'true') throw new Error(`${why}; it is required under CI=true`);
    console.warn(`skipping private-Redis fault tests: ${why}`);
    return false;
  }
}

/** A port no one listens on right now, from the kernel; never the shared 6379. */
async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    if (port !== SHARED_PORT) return port;
  }
}

/**
 * A `redis-server` of one test's own, on a free port of 127.0.0.1 with its
 * data in a temp dir, that the test may stall, kill and restart: faults hit
 * this server only, never the Redis on 6379 that other test runs share.
 *
 * @example
 * ```ts
 * const redis = await PrivateRedis.start({ appendonly: 'yes', appendfsync: 'always' });
 * const client = new Redis(redis.url);
 * redis.stall();               // SIGSTOP: connections stay open, nothing answers
 * redis.resume();              // SIGCONT
 * await redis.kill();          // SIGKILL: no shutdown, no last fsync
 * await redis.restart();       // same port and dir: loads its AOF if it has one
 * await redis.restart({ empty: true }); // same port, data files deleted first
 * await redis.dispose();       // kill and delete the temp dir
 * ```
 */
export class PrivateRedis {
  /** The TCP port it listens on (127.0.0.1). */
  readonly port: number;
  /** Its working directory (`dir`): RDB and `appendonlydir/` live here. */
  readonly dir: string;
  readonly #settings: RedisSettings;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  #log = '';

  private constructor(port: number, dir: string, settings: RedisSettings) {
    this.port = port;
    this.dir = dir;
    this.#settings = settings;
  }

  /**
   * Start a `redis-server` with `settings` over a volatile default
   * (`save ""`, `appendonly no`) on a free port, in a new temp dir.
   * @throws when the binary is missing, or the server exits or does not
   * accept connections within 10 s (the message carries its log).
   */
  static async start(settings: RedisSettings = {}): Promise<PrivateRedis> {
    const dir = await mkdtemp(join(tmpdir(), 'mrtr-redis-'));
    for (let attempt = 1; ; attempt++) {
      const redis = new PrivateRedis(await freePort(), dir, settings);
      try {
        await redis.#spawn();
        return redis;
      } catch (error) {
        // Another process may have taken the port between the probe and the bind: try another.
        if (attempt >= 3 || !/Address already in use/.test(redis.#log)) {
          await rm(dir, { recursive: true, force: true });
          throw error;
        }
      }
    }
  }

  /** `redis://127.0.0.1:<port>`. */
  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** Process id of the running server, `undefined` when it is not running. */
  get pid(): number | undefined {
    return this.#child?.pid;
  }

  /** What the server printed (its log) since it was first started. */
  log(): string {
    return this.#log;
  }

  /** SIGSTOP: the server stops answering but keeps every TCP connection open. */
  stall(): void {
    this.#signal('SIGSTOP');
  }

  /** SIGCONT: a stalled server goes on, answering what waited in its sockets. */
  resume(): void {
    this.#signal('SIGCONT');
  }

  /** SIGKILL and wait for the exit: no shutdown, no last write of its data files. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.#exited;
  }

  /** Graceful SHUTDOWN by SIGTERM (resumed first if stalled) and wait for the exit. */
  async stop(): Promise<void> {
    const child = this.#child;
    if (!child) return;
    child.kill('SIGCONT');
    child.kill('SIGTERM');
    await this.#exited;
  }

  /**
   * Start the server again on the same port and dir, after stopping it
   * (`kill`, or gracefully when `graceful`) if it still runs. It loads what
   * its dir holds (its AOF when `appendonly yes`); with `empty`, the data
   * files are deleted first, as a server that lost its disk.
   */
  async restart(options: { empty?: boolean; graceful?: boolean } = {}): Promise<void> {
    await (options.graceful ? this.stop() : this.kill());
    if (options.empty) {
      for (const name of await readdir(this.dir))
        await rm(join(this.dir, name), { recursive: true, force: true });
    }
    await this.#spawn();
  }

  /** Kill the server and delete its temp dir. Idempotent. */
  async dispose(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  #signal(signal: NodeJS.Signals): void {
    if (!this.#child) throw new Error('the private Redis is not running');
    this.#child.kill(signal);
  }

  async #spawn(): Promise<void> {
    if (this.port === SHARED_PORT) throw new Error('a private Redis never runs on the shared 6379');
    const settings: Record<string, string | number> = {
      save: '',
      appendonly: 'no',
      ...this.#settings,
      // Not overridable: where it listens and keeps its files.
      port: this.port,
      bind: '127.0.0.1',
      dir: this.dir,
      daemonize: 'no',
      logfile: '',
    };
    const args = Object.entries(settings).flatMap(([k, v]) => [`--${k}`, String(v)]);
    const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    this.#child = child;
    running.add(child);
    installExitHook();
    this.#exited = new Promise<void>((resolve) =>
      child.once('exit', () => {
        running.delete(child);
        if (this.#child === child) this.#child = undefined;
        resolve();
      }),
    );
    child.on('error', () => {}); // reported below while starting; later ones (a failed kill) are moot
    this.#log += `--- redis-server ${args.join(' ')}\n`;
    let output: string | undefined = ''; // since this start: only its own "ready" line counts
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(
          new Error(`redis-server did not start within ${START_TIMEOUT_MS} ms:\n${this.#log}`),
        );
      }, START_TIMEOUT_MS);
      const onData = (data: Buffer) => {
        this.#log += data;
        if (output === undefined) return;
        output += data;
        if (/Ready to accept connections/.test(output)) {
          output = undefined;
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`redis-server could not be started: ${error.message}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(
          new Error(`redis-server exited (${code ?? signal}) before it was ready:\n${this.#log}`),
        );
      });
    });
    await ready;
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test run that ends without dispose() must not leave servers behind.
  process.once('exit', () => {
    for (const child of running) child.kill('SIGKILL');
  });
}
