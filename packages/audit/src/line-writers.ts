/**
 * How the JSON-lines sink hands a line to its destination without ever
 * blocking the event loop: a file descriptor written through libuv's thread
 * pool, or a Node.js stream (a pipe on stdout is asynchronous on POSIX), both
 * behind a bound on how long and how much may wait.
 */
import {
  close,
  constants,
  promises as fsp,
  fstat,
  fstatSync,
  fsync,
  ftruncate,
  mkdirSync,
  open as openFile,
  openSync,
  type Stats,
  write,
} from 'node:fs';
import { dirname } from 'node:path';
import type { Writable } from 'node:stream';

/** Hands one whole line over; resolves once the destination took it, rejects when it cannot. */
export type LineSender = (line: string) => Promise<void>;

const EAGAIN_RETRY_MS = 10;
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const codeOf = (error: unknown) => (error as NodeJS.ErrnoException)?.code;

/**
 * Open flags of the file: appended, created, and non-blocking, so that a
 * FIFO nobody reads fails to open (`ENXIO`) instead of blocking the process,
 * and a full pipe is `EAGAIN` (retried) instead of a stuck thread.
 */
const FLAGS = constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NONBLOCK;

/** `fs.fstat` of `fd`, on the thread pool. */
function statOf(fd: number): Promise<Stats> {
  return new Promise((resolve, reject) =>
    fstat(fd, (error, st) => (error ? reject(error) : resolve(st))),
  );
}

function writeSome(fd: number, bytes: Buffer, offset: number): Promise<number> {
  return new Promise((resolve, reject) => {
    write(fd, bytes, offset, bytes.length - offset, null, (error, written) =>
      error ? reject(error) : resolve(written),
    );
  });
}

/** The lines of a file path, and how to close what they hold open. */
export interface FileLines {
  send: LineSender;
  /** Refuse every line not yet started (they reject), and close the file once the line in flight settles. */
  close(): void;
}

/**
 * Lines appended to the file at `path` (created with its directory, mode
 * 0600) one after another, in the order given, with `fs.write` and, for a
 * regular file when `sync`, `fs.fsync` after each: on libuv's thread pool,
 * never on the event loop. A failed line does not stop the next one.
 *
 * For a regular file, before each line:
 * - the path is looked at again: a file renamed or removed since it was
 *   opened (log rotation) is closed, and the path opened anew, so no record
 *   goes to a name that no longer reaches it;
 * - after a line that failed half written (a full disk, a file-size limit),
 *   the file is cut back to where that line began, so every line stays
 *   whole; if it cannot be cut back (another writer appended since), the
 *   next line starts on a line of its own.
 *
 * A pipe or device path (a FIFO, `/dev/full`) is written as it is: no
 * `fsync` (a pipe has nothing to flush), no rotation. A full pipe
 * (`EAGAIN`) is retried every 10 ms until `giveUpMs` after the line's turn
 * came, then the line fails with {@link AuditDestinationBusyError} (the
 * `EAGAIN` as its `cause`); any other error fails the line at once.
 * @throws at once (opening): the file system's error, e.g. `EISDIR`, or
 *   `ENXIO` for a FIFO that no process reads.
 */
export function fileLines(path: string, sync: boolean, giveUpMs: number): FileLines {
  const described = (fd: number, st: Stats) => ({
    fd,
    regular: st.isFile(),
    dev: st.dev,
    ino: st.ino,
  });
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, FLAGS, 0o600);
  let file = described(fd, fstatSync(fd));
  /** The line before failed half written and could not be cut back. */
  let torn = false;
  let closed = false;

  /**
   * The file at `path` now, opened again if the one held is no longer there,
   * and its size before this line (one `stat` of the path serves both).
   */
  const current = async (): Promise<{ fd: number; regular: boolean; start?: number }> => {
    if (!file.regular) return file;
    const there = await fsp.stat(path).catch((error: unknown) => {
      if (codeOf(error) === 'ENOENT') return undefined;
      throw error;
    });
    if (there && there.dev === file.dev && there.ino === file.ino)
      return { ...file, start: there.size };
    await fsp.mkdir(dirname(path), { recursive: true });
    const fresh = await new Promise<number>((resolve, reject) =>
      openFile(path, FLAGS, 0o600, (error, opened) => (error ? reject(error) : resolve(opened))),
    );
    const old = file;
    const st = await statOf(fresh);
    file = described(fresh, st);
    close(old.fd, () => {});
    torn = false;
    return { ...file, start: st.size };
  };

  const send = async (line: string) => {
    if (closed)
      throw new Error(`the audit file ${path} is closed: no line is written after close()`);
    const { fd, regular, start } = await current();
    const bytes = Buffer.from(torn ? `\n${line}` : line, 'utf8');
    const deadline = Date.now() + giveUpMs;
    let offset = 0;
    try {
      while (offset < bytes.length) {
        try {
          offset += await writeSome(fd, bytes, offset);
        } catch (error) {
          if (codeOf(error) !== 'EAGAIN') throw error;
          // A pipe still full when the line's time is up is the busy destination `bounded` reports,
          // whichever of its timer and this check a loaded event loop runs first.
          if (Date.now() >= deadline)
            throw new AuditDestinationBusyError(
              `the audit destination took no line for ${giveUpMs} ms`,
              { cause: error },
            );
          await sleep(EAGAIN_RETRY_MS);
        }
      }
    } catch (error) {
      if (offset > 0 && regular) torn = !(await cutBack(fd, start, offset));
      throw error;
    }
    torn = false;
    if (sync && regular)
      await new Promise<void>((resolve, reject) =>
        fsync(fd, (error) => (error ? reject(error) : resolve())),
      );
  };
  let tail: Promise<unknown> = Promise.resolve();
  return {
    send(line) {
      const sent = tail.then(() => send(line));
      tail = sent.catch(() => {});
      return sent;
    },
    close() {
      // A second close would close whatever file took the descriptor's number since.
      if (closed) return;
      closed = true;
      // Closed once the line in flight (if any) settles, never under it: the number of a closed
      // descriptor goes to the next file opened, which would receive that line.
      void tail.then(() => close(file.fd, () => {}));
    },
  };
}

/**
 * Cut the file open as `fd` back to `start` bytes, when it ends exactly with
 * the `written` bytes of a failed line (no other writer appended since).
 * @returns whether it was cut back.
 */
async function cutBack(fd: number, start: number | undefined, written: number): Promise<boolean> {
  if (start === undefined) return false;
  const size = await statOf(fd).then(
    (st) => st.size,
    () => undefined,
  );
  if (size !== start + written) return false;
  return new Promise((resolve) => {
    ftruncate(fd, start, (error) => resolve(!error));
  });
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
