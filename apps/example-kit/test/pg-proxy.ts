/**
 * A TCP proxy in front of PostgreSQL for the fault tests of the example
 * servers (imported by the apps' tests too): it can keep back the answer to a
 * statement the server ran (the client never hears back, the connection stays
 * open until the client's deadline closes it), cut a connection right after a
 * statement, hold every new connection without an answer, or refuse
 * connections, so faults hit the test's own pool only and never the server
 * other tests share.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { expect, vi } from 'vitest';

/** The PostgreSQL server the tests use: `DATABASE_URL` when it is a `postgres://` URL, else the local standard port. */
export const POSTGRES_URL =
  process.env.DATABASE_URL && /^postgres(ql)?:\/\//.test(process.env.DATABASE_URL)
    ? process.env.DATABASE_URL
    : 'postgres://postgres@127.0.0.1:5432/test';

/** How a trigger acts on the connection that sent its text. */
type Fault = 'mute' | 'cut';

/** One connection through the proxy: the client's socket, PostgreSQL's, and whether answers still pass. */
interface Pair {
  client: Socket;
  upstream: Socket;
  muted: boolean;
}

/** A fault proxy in front of one PostgreSQL server (see the module's comment). */
export class PgFaultProxy {
  readonly #target: URL;
  #server: Server | undefined;
  readonly #pairs = new Set<Pair>();
  /** Text still waiting to be seen → what to do to the first connection that sends it. */
  readonly #triggers = new Map<string, Fault>();
  #holdNew = false;
  /** The texts whose fault was applied, in order. */
  readonly fired: string[] = [];
  port = 0;

  /** @param targetUrl the `postgres://` URL of the real server. */
  constructor(targetUrl = POSTGRES_URL) {
    this.#target = new URL(targetUrl);
  }

  /** `targetUrl` (default the target's) with host and port replaced by the proxy's. */
  url(targetUrl = this.#target.toString()): string {
    const url = new URL(targetUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Listen (again, on the same port after {@link refuse}). */
  async start(): Promise<void> {
    const server = createServer((client) => this.#accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /**
   * Once for each of `texts`: the first connection that sends bytes holding
   * it gets nothing back from then on, while what it sends still passes (the
   * server runs the statement and commits what it commits), and is left open.
   */
  muteAfter(...texts: string[]): void {
    for (const text of texts) this.#triggers.set(text, 'mute');
  }

  /**
   * Once for each of `texts`: the first connection that sends bytes holding
   * it gets nothing back, and is closed 50 ms later (the server reads what
   * came before the close and runs it): a connection lost on the way back.
   */
  cutAfter(...texts: string[]): void {
    for (const text of texts) this.#triggers.set(text, 'cut');
  }

  /** Whether new connections are held: accepted, and nothing passes either way (a start-up never answered). */
  holdNew(hold: boolean): void {
    this.#holdNew = hold;
  }

  /** Close every connection open now (the pool's idle ones with them). */
  cutAll(): void {
    for (const pair of this.#pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
  }

  /** Close every connection and stop listening: a connection is refused until {@link start}. */
  async refuse(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    this.cutAll();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  #accept(client: Socket): void {
    client.on('error', () => {});
    if (this.#holdNew) {
      // Accepted and never answered: no upstream at all.
      client.pause();
      const hold = { client, upstream: client, muted: true };
      this.#pairs.add(hold);
      client.on('close', () => this.#pairs.delete(hold));
      return;
    }
    const upstream = connect(Number(this.#target.port || 5432), this.#target.hostname);
    upstream.on('error', () => {});
    const pair: Pair = { client, upstream, muted: false };
    this.#pairs.add(pair);
    client.on('close', () => {
      this.#pairs.delete(pair);
      // The server must still read what was passed on: end, never reset.
      upstream.end();
    });
    upstream.on('close', () => {
      this.#pairs.delete(pair);
      client.destroy();
    });
    client.on('data', (chunk: Buffer) => {
      upstream.write(chunk);
      for (const [text, fault] of this.#triggers) {
        if (!chunk.includes(text)) continue;
        this.#triggers.delete(text);
        this.fired.push(text);
        pair.muted = true;
        if (fault === 'cut') setTimeout(() => client.destroy(), 50);
      }
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!pair.muted) client.write(chunk);
    });
  }
}

/**
 * Start a server (`start`) while the proxy keeps back or cuts the statements
 * `stalled` and `dropped` name, with `console.warn` captured; then expect each
 * of them to have fired and each of `steps` (the `what` of `atStartUp`) to have
 * been told as not reachable yet (once, or more on a loaded host).
 * @returns what `start` resolved to, and the lines told.
 */
export async function startThroughFaults<T>(
  proxy: PgFaultProxy,
  faults: { stalled: string[]; dropped: string[]; steps: string[] },
  start: () => Promise<T>,
): Promise<{ started: T; told: string[] }> {
  proxy.muteAfter(...faults.stalled);
  proxy.cutAfter(...faults.dropped);
  const lines: string[] = [];
  const warn = vi
    .spyOn(console, 'warn')
    .mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  let started: T;
  try {
    started = await start();
  } finally {
    warn.mockRestore();
  }
  expect(proxy.fired.toSorted()).toEqual([...faults.stalled, ...faults.dropped].toSorted());
  const told = lines.filter((line) => line.includes(' is not reachable yet ('));
  // At least once each: on a loaded host a healthy retry can miss the deadline too, and is told.
  for (const step of faults.steps)
    expect(
      told.filter((line) => line.includes(`(${step}) is not reachable yet`)).length,
      step,
    ).toBeGreaterThanOrEqual(1);
  return { started, told };
}
