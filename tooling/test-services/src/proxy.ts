import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy in front of the real Redis (or PostgreSQL: a `postgres://` URL
 * works the same) that a test can take down, stall or cut, so faults hit one
 * client only and never the server other tests share.
 */
export class FaultProxy {
  readonly #target: { host: string; port: number };
  #server: Server | undefined;
  #sockets = new Set<Socket>();
  #stalled = false;
  /** Set by {@link cutAfter}: the bytes that, once passed on, cut their connection. */
  #cutAfter: Buffer | undefined;
  port = 0;

  constructor(targetUrl: string) {
    const url = new URL(targetUrl);
    this.#target = { host: url.hostname, port: Number(url.port || 6379) };
  }

  /** `redis://` URL of the proxy (same credentials and database path as the target). */
  url(targetUrl: string): string {
    const url = new URL(targetUrl);
    url.hostname = '127.0.0.1';
    url.port = String(this.port);
    return url.toString();
  }

  /** Listen (again) on the same port. */
  async start(): Promise<void> {
    const server = createServer((client) => {
      const upstream = connect(this.#target.port, this.#target.host);
      let cut = false;
      for (const s of [client, upstream]) {
        this.#sockets.add(s);
        s.on('error', () => {});
        s.on('close', () => {
          this.#sockets.delete(s);
          client.destroy();
          // After a cut the server must still read what was passed on: end, never reset.
          if (cut) upstream.end();
          else upstream.destroy();
        });
        if (this.#stalled) s.pause();
      }
      client.on('data', (chunk: Buffer) => {
        if (!client.destroyed) upstream.write(chunk);
        if (!cut && this.#cutAfter && chunk.includes(this.#cutAfter)) {
          this.#cutAfter = undefined;
          cut = true; // no answer goes back from now on
          // The rest of the statement's messages (a driver may write them in several chunks,
          // e.g. Execute and Sync after the Parse that names it) still pass for a moment;
          // the server reads all that came before the end, and runs the statement.
          setTimeout(() => {
            client.destroy();
            upstream.end();
          }, 50);
        }
      });
      client.on('end', () => upstream.end());
      upstream.on('data', (chunk: Buffer) => {
        if (!cut) client.write(chunk);
      });
      upstream.on('end', () => client.end());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as { port: number }).port;
    this.#server = server;
  }

  /** Cut every connection and stop listening: Redis is unreachable through the proxy. */
  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    for (const s of this.#sockets) s.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Whether the proxy accepts connections. */
  async isListening(): Promise<boolean> {
    return this.#server?.listening === true;
  }

  /** Stop moving bytes in both directions; they wait in the socket buffers. */
  stall(): void {
    this.#stalled = true;
    for (const s of this.#sockets) s.pause();
  }

  /**
   * Stop moving bytes on the connections open now, in both directions, while
   * new connections pass: one connection that hangs (a half-open TCP
   * connection, a stuck middlebox) in front of a server that still answers.
   * {@link resume} moves the held bytes on.
   */
  wedge(): void {
    for (const s of this.#sockets) s.pause();
  }

  /**
   * Once: from the next bytes a client sends that hold `text` (e.g. `COMMIT`)
   * nothing more comes back to that client, what it sends in the next 50 ms
   * is passed on, and then its connection is cut: the server runs the
   * statement, and the client never hears its answer (a connection lost on
   * the way back).
   */
  cutAfter(text: string): void {
    this.#cutAfter = Buffer.from(text);
  }

  /**
   * After {@link stall}: let new connections pass again, while those open now
   * stay held (a handshake that never gets its reply, then a server that
   * answers the next connection).
   */
  admit(): void {
    this.#stalled = false;
  }

  /** Move the held bytes on. */
  resume(): void {
    this.#stalled = false;
    for (const s of this.#sockets) s.resume();
  }
}
