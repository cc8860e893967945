/**
 * How the JSON-lines sink hands a line to its destination without ever
 * blocking the event loop: a file descriptor written through libuv's thread
 * pool, or a Node.js stream (a pipe on stdout is asynchronous on POSIX), both
 * behind a bound on how long and how much may wait.
 */
import { fsync, write } from 'node:fs';
import type { Writable } from 'node:stream';

/** Hands one whole line over; resolves once the destination took it, rejects when it cannot. */
export type LineSender = (line: string) => Promise<void>;

const EAGAIN_RETRY_MS = 10;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

function writeSome(fd: number, bytes: Buffer, offset: number): Promise<number> {
  return new Promise((resolve, reject) => {
    write(fd, bytes, offset, bytes.length - offset, null, (error, written) =>
      error ? reject(error) : resolve(written),
    );
  });
}

/**
 * Lines appended to `fd` one after another (in the order given) with
 * `fs.write`, and `fs.fsync` after each when `sync`: both run on libuv's
 * thread pool, never on the event loop. A non-blocking descriptor that is
 * full (`EAGAIN`) is retried every 10 ms until `giveUpMs` after the line's
 * turn came, then the line fails; any other error fails the line at once.
 * A failed line does not stop the next one.
 */
export function fdLines(fd: number, sync: boolean, giveUpMs: number): LineSender {
  let tail: Promise<unknown> = Promise.resolve();
  const send = async (line: string) => {
    const bytes = Buffer.from(line, 'utf8');
    const deadline = Date.now() + giveUpMs;
    let offset = 0;
    while (offset < bytes.length) {
      try {
        offset += await writeSome(fd, bytes, offset);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || Date.now() >= deadline)
          throw error;
        await sleep(EAGAIN_RETRY_MS);
      }
    }
    if (sync)
      await new Promise<void>((resolve, reject) =>
        fsync(fd, (error) => (error ? reject(error) : resolve())),
      );
  };
  return (line) => {
    const sent = tail.then(() => send(line));
    tail = sent.catch(() => {});
    return sent;
  };
}

const listened = new WeakSet<Writable>();

/**
 * Lines written to a Node.js stream (e.g. `process.stdout`, a `net.Socket`);
 * a line is taken once the stream's write callback says it was handed to the
 * operating system. A stream error fails the lines it concerns (the stream
 * gets an `'error'` listener, so an error never ends the process).
 */
export function streamLines(stream: Writable): LineSender {
  if (!listened.has(stream)) {
    listened.add(stream);
    stream.on('error', () => {}); // reported through the callbacks of the writes it failed
  }
  return (line) =>
    new Promise<void>((resolve, reject) => {
      if (stream.destroyed || stream.writableEnded)
        return reject(new Error('the audit destination stream is closed'));
      stream.write(line, (error) => (error ? reject(error) : resolve()));
    });
}

/** Thrown (as a rejection) when a line could not be handed to the destination in time or in room. */
export class AuditDestinationBusyError extends Error {
  override readonly name = 'AuditDestinationBusyError';
}

/**
 * `send` behind two bounds, so a destination that takes nothing (a pipe nobody
 * reads, a stalled disk) fails the records written to it instead of holding
 * their rounds, or the server's memory, without end:
 * - a line not taken within `timeoutMs` milliseconds fails with
 *   {@link AuditDestinationBusyError} (it stays handed over: it may still
 *   reach the destination later);
 * - a line that would bring the bytes waiting for the destination above
 *   `maxPendingBytes` fails at once, without being handed over (a single line
 *   is let through when nothing waits, whatever its size).
 */
export function bounded(
  send: LineSender,
  limits: { timeoutMs: number; maxPendingBytes: number },
): { send: LineSender; settled(): Promise<void> } {
  let pending = 0;
  const inFlight = new Set<Promise<void>>();
  return {
    send(line) {
      const size = Buffer.byteLength(line, 'utf8');
      if (pending > 0 && pending + size > limits.maxPendingBytes)
        return Promise.reject(
          new AuditDestinationBusyError(
            `the audit destination is not taking lines: ${pending} bytes are still waiting (limit ${limits.maxPendingBytes})`,
          ),
        );
      pending += size;
      const sent = send(line).finally(() => {
        pending -= size;
        inFlight.delete(sent);
      });
      inFlight.add(sent);
      sent.catch(() => {}); // the caller gets it below, or gave up on it at the timeout
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new AuditDestinationBusyError(
                `the audit destination took no line for ${limits.timeoutMs} ms`,
              ),
            ),
          limits.timeoutMs,
        );
        timer.unref();
      });
      return Promise.race([sent, late]).finally(() => clearTimeout(timer));
    },
    async settled() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
