import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import type { AuditWriter, GateAuditEvent } from '@mrtr/gate';
import { type DestinationStream, type Logger, pino } from 'pino';

/** A destination that takes one whole line per call, synchronously, and throws when it cannot write it. */
export interface LineDestination {
  write(line: string): unknown;
}

/** Options of {@link JsonLinesAuditSink}. */
export interface JsonLinesAuditSinkOptions {
  /**
   * Where the lines go: `'stdout'` (default), `'stderr'`, a file path
   * (appended, created with its directory, mode 0600), or a
   * {@link LineDestination} (its `write` must be synchronous and throw on failure).
   */
  destination?: 'stdout' | 'stderr' | string | LineDestination;
  /**
   * `fsync` the file after each record, so a record is on disk before the
   * gate goes on to the mutation (default `true` for a file path, ignored otherwise).
   */
  fsync?: boolean;
  /** Fields on every line (default pino's: `pid` and `hostname`); `null` for none. */
  base?: Record<string, unknown> | null;
}

/** The `msg` of every audit line: `jq 'select(.msg == "mrtr.audit")'` picks them out of a mixed stream. */
export const AUDIT_LINE_MESSAGE = 'mrtr.audit';

/** Milliseconds to wait before retrying a write a non-blocking pipe refused (`EAGAIN`). */
const RETRY_MS = 10;
/** Give up on a pipe that stayed full this many times in a row (about 5 seconds). */
const MAX_RETRIES = 500;
const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * A synchronous writer on a file descriptor that throws when a line cannot be
 * written. pino's own destination (sonic-boom) reports write errors as an
 * `'error'` event and retries the line later; an audit sink must instead fail
 * the round that wrote it, so the gate stops before the mutation.
 */
function fdDestination(fd: number, fsync: boolean): LineDestination {
  return {
    write(line: string) {
      const bytes = Buffer.from(line, 'utf8');
      let offset = 0;
      let retries = 0;
      while (offset < bytes.length) {
        try {
          offset += writeSync(fd, bytes, offset);
          retries = 0;
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EAGAIN' || ++retries > MAX_RETRIES)
            throw error;
          Atomics.wait(pause, 0, 0, RETRY_MS);
        }
      }
      if (fsync) fsyncSync(fd);
    },
  };
}

/**
 * An audit sink that writes each `GateAuditEvent` of `@mrtr/gate` as one JSON
 * line through pino: pino's fields (`level`, `time` as ISO 8601, `pid`,
 * `hostname`), then the record's own fields, then `"msg":"mrtr.audit"`.
 * The write is synchronous: when it throws (disk full, file removed from
 * under a closed descriptor, pipe closed), the gate's round fails closed.
 * Not transactional: the `completed` record is written after the replay
 * store commits, and the `accepted` record before the claim.
 *
 * @example
 * ```ts
 * const trail = new JsonLinesAuditSink({ destination: process.env.MRTR_AUDIT_FILE ?? 'stdout' });
 * const gate = new ConfirmationGate({ sealer, store, audit: trail });
 * // {"level":"info","time":"2026-08-01T09:30:00.000Z","pid":7,"hostname":"web-1","outcome":"asked",…,"msg":"mrtr.audit"}
 * ```
 */
export class JsonLinesAuditSink implements AuditWriter {
  readonly transactional = false;
  readonly #logger: Logger;
  readonly #fd: number | undefined;

  /**
   * @throws the file system's error when the file cannot be opened (at construction, not at the first record).
   */
  constructor(options: JsonLinesAuditSinkOptions = {}) {
    const where = options.destination ?? 'stdout';
    let destination: LineDestination;
    if (typeof where !== 'string') {
      destination = where;
    } else if (where === 'stdout' || where === 'stderr') {
      destination = fdDestination(where === 'stdout' ? 1 : 2, false);
    } else {
      mkdirSync(dirname(where), { recursive: true });
      this.#fd = openSync(where, 'a', 0o600);
      destination = fdDestination(this.#fd, options.fsync ?? true);
    }
    this.#logger = pino(
      {
        ...(options.base !== undefined ? { base: options.base } : {}),
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
      },
      destination as DestinationStream,
    );
  }

  /**
   * Write one record as one line.
   * @throws what the destination throws; nothing is buffered for later.
   */
  write(event: GateAuditEvent): void {
    this.#logger.info(event, AUDIT_LINE_MESSAGE);
  }

  /** Close the file this sink opened (a no-op for stdout, stderr and given destinations). */
  close(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
  }
}
