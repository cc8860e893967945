import { ReplayStoreUnavailableError } from '@mrtr/replay';
import type { Cluster, Redis } from 'ioredis';
import { describeError, withTimeout } from './timeout.js';

/**
 * What a Redis server must do so that it never forgets a claim, which the
 * operator of a `RedisReplayStore` chooses by name (option `durability`):
 *
 * - `'aof-always'` (default): the append-only file is on (`appendonly yes`)
 *   and fsynced before every reply (`appendfsync always`). A crash of Redis
 *   or of its host loses no claim that was answered.
 * - `'aof-everysec'`: also accept `appendfsync everysec`. A crash of the
 *   host (power, kernel), or of Redis while its disk lags behind, loses the
 *   claims of the last second or two.
 * - `'volatile'`: accept any server, including one without persistence or
 *   whose settings the store cannot read. A restart, failover or eviction
 *   then forgets claims, and an identical retry of a completed confirmation
 *   can run its mutation a second time. For tests and for operators who
 *   checked the settings themselves.
 *
 * Under the first two, the store also refuses a server that may evict claims
 * (`maxmemory` set and `maxmemory-policy` other than `noeviction`) and a
 * primary with replicas when option `replicas` is 0 (a failover could
 * promote a replica that never got a claim).
 */
export type RedisDurability = 'aof-always' | 'aof-everysec' | 'volatile';

/** The names {@link RedisDurability} takes. */
export const REDIS_DURABILITIES: readonly RedisDurability[] = [
  'aof-always',
  'aof-everysec',
  'volatile',
];

/** The persistence of one Redis server, as it reported it (`INFO`, `CONFIG GET`). */
export interface RedisServerDurability {
  /** `host:port` the client reached. */
  server: string;
  /** `redis_version` of `INFO server`. */
  version: string;
  /** `role` of `INFO replication`: `master` or `slave`. */
  role: string;
  /** `aof_enabled` of `INFO persistence`. */
  aofEnabled: boolean;
  /** `CONFIG GET appendfsync`; `undefined` when the server refused CONFIG (managed Redis). */
  appendfsync: string | undefined;
  /** Why CONFIG GET was refused, when it was. */
  configRefused?: string;
  /** `maxmemory` of `INFO memory`, bytes (0: no limit, nothing is evicted). */
  maxmemory: number;
  /** `maxmemory_policy` of `INFO memory`. */
  maxmemoryPolicy: string;
  /** `connected_slaves` of `INFO replication`. */
  connectedReplicas: number;
  /** Whether the server has `WAITAOF` (Redis ≥ 7.2): `COMMAND INFO`, else the version. */
  waitaof: boolean;
}

/** What `RedisReplayStore.checkDurability` read and accepted. */
export interface RedisDurabilityReport {
  /** The level the store was asked to require. */
  durability: RedisDurability;
  /** Replicas that must acknowledge each claim and outcome (option `replicas`). */
  replicas: number;
  /** Each server read: the one of a standalone client, every primary of a `Cluster`. */
  servers: RedisServerDurability[];
}

/**
 * Thrown (by `connect`, `checkDurability`, and `once` before anything runs)
 * when the server does not keep claims as durably as option `durability`
 * requires. `message` names the settings to change and the opt-in; a
 * {@link ReplayStoreUnavailableError}, so a gate fails closed on it.
 */
export class RedisDurabilityError extends ReplayStoreUnavailableError {
  /** Its own brand: `instanceof RedisDurabilityError` must not take every unavailable store. */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && DURABILITY_BRAND in value;
  }

  /** One sentence per setting that falls short. */
  readonly problems: readonly string[];
  /** What the store read. */
  readonly report: RedisDurabilityReport;

  constructor(problems: readonly string[], report: RedisDurabilityReport) {
    const servers = report.servers.map((s) => s.server).join(', ');
    const optIn =
      report.durability === 'volatile'
        ? ''
        : " To accept the risk instead, name it: the store option durability: 'volatile'.";
    super(
      `Redis at ${servers} cannot keep replay claims as the store requires (durability '${report.durability}'): ${problems.join('; ')}. A claim that Redis forgets lets an identical retry of a completed confirmation run its mutation again.${optIn}`,
    );
    this.problems = problems;
    this.report = report;
    Object.defineProperty(this, 'name', { value: 'RedisDurabilityError', configurable: true });
    Object.defineProperty(this, DURABILITY_BRAND, { value: true });
  }
}

const DURABILITY_BRAND = Symbol.for('@mrtr/replay-redis/RedisDurabilityError');

/**
 * Thrown by `connect` when Redis answered the connection with a refusal of its
 * own (`WRONGPASS`, `NOAUTH`, `NOPERM`: the reply is the `message` and the
 * `cause`) rather than being out of reach: waiting will not change it. A
 * {@link ReplayStoreUnavailableError}, so a gate fails closed on it.
 */
export class RedisRefusedConnectionError extends ReplayStoreUnavailableError {
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === 'object' && value !== null && REFUSED_BRAND in value;
  }

  constructor(reply: Error) {
    super(`Redis replay store refused the connection: ${reply.message}`, { cause: reply });
    Object.defineProperty(this, 'name', {
      value: 'RedisRefusedConnectionError',
      configurable: true,
    });
    Object.defineProperty(this, REFUSED_BRAND, { value: true });
  }
}

const REFUSED_BRAND = Symbol.for('@mrtr/replay-redis/RedisRefusedConnectionError');

/** The servers to read: the client itself, or every primary of a `Cluster`. */
export function serversOf(client: Redis | Cluster): Redis[] {
  if (!client.isCluster) return [client as Redis];
  const masters = (client as Cluster).nodes('master');
  if (masters.length === 0) throw new ReplayStoreUnavailableError('Redis Cluster has no primary');
  return masters;
}

/**
 * Read one server's persistence in one round trip; `onTimeout` is called
 * when it gives no reply within `timeoutMs`, before the error.
 * @throws {ReplayStoreUnavailableError} when it does not answer `INFO` within `timeoutMs`.
 */
export async function readDurability(
  client: Redis,
  timeoutMs: number,
  onTimeout?: () => void,
): Promise<RedisServerDurability> {
  const server = `${client.options.host ?? '?'}:${client.options.port ?? '?'}`;
  let replies: [Error | null, unknown][];
  try {
    const pipeline = client
      .pipeline()
      .call('INFO', 'server', 'persistence', 'memory', 'replication')
      .call('CONFIG', 'GET', 'appendfsync')
      .call('COMMAND', 'INFO', 'WAITAOF');
    replies = ((await withTimeout(pipeline.exec(), timeoutMs, onTimeout)) ?? []) as [
      Error | null,
      unknown,
    ][];
  } catch (error) {
    throw unreadable(server, error);
  }
  const [info, config, command] = replies;
  if (!info || info[0] || typeof info[1] !== 'string') throw unreadable(server, info?.[0], true);
  const fields = new Map<string, string>();
  for (const line of info[1].split(/\r?\n/)) {
    const at = line.indexOf(':');
    if (at > 0) fields.set(line.slice(0, at), line.slice(at + 1).trim());
  }
  const version = fields.get('redis_version') ?? '0';
  const [major = 0, minor = 0] = version.split('.').map(Number);
  // CONFIG may be renamed away (managed Redis): then the fsync policy is unknown.
  const pair = config && !config[0] && Array.isArray(config[1]) ? config[1] : undefined;
  const appendfsync = typeof pair?.[1] === 'string' ? pair[1] : undefined;
  // COMMAND INFO answers [null] for an unknown command; if COMMAND is refused, go by the version.
  const known = command && !command[0] && Array.isArray(command[1]) ? command[1] : undefined;
  return {
    server,
    version,
    role: fields.get('role') ?? 'unknown',
    aofEnabled: fields.get('aof_enabled') === '1',
    appendfsync,
    ...(appendfsync === undefined
      ? { configRefused: describeError(config?.[0] ?? 'no reply to CONFIG GET') }
      : {}),
    maxmemory: Number(fields.get('maxmemory') ?? 0),
    maxmemoryPolicy: fields.get('maxmemory_policy') ?? 'unknown',
    connectedReplicas: Number(fields.get('connected_slaves') ?? 0),
    waitaof: known ? known[0] != null : major > 7 || (major === 7 && minor >= 2),
  };
}

/** `answered`: Redis replied, with an error (INFO refused, e.g. by an ACL), rather than not at all. */
function unreadable(server: string, error: unknown, answered = false): ReplayStoreUnavailableError {
  const what = answered
    ? `Redis at ${server} refused to tell its persistence settings (INFO)`
    : `Redis replay store could not reach ${server} to read its persistence settings`;
  return new ReplayStoreUnavailableError(
    `${what}, which it checks before the first claim and after each reconnect: ${describeError(error ?? 'no reply')}`,
    { cause: error },
  );
}

/** The sentences saying where `s` falls short of `durability` with `replicas` acknowledging. */
export function durabilityProblems(
  s: RedisServerDurability,
  durability: RedisDurability,
  replicas: number,
): string[] {
  const problems: string[] = [];
  if (s.role !== 'master')
    problems.push(`${s.server} is a replica (role:${s.role}): point the store at the primary`);
  if (durability === 'volatile') return problems;
  const always = 'set appendonly yes and appendfsync always';
  if (!s.aofEnabled) {
    problems.push(`${s.server} keeps no append-only file (aof_enabled:0): ${always}`);
  } else if (s.appendfsync === undefined) {
    problems.push(
      `${s.server} refused CONFIG GET appendfsync (${s.configRefused}), so the fsync policy of its append-only file cannot be checked: allow CONFIG GET to the store's user, or, having checked appendfsync always yourself, opt in by name`,
    );
  } else if (
    s.appendfsync !== 'always' &&
    !(s.appendfsync === 'everysec' && durability === 'aof-everysec')
  ) {
    problems.push(
      `${s.server} fsyncs its append-only file ${s.appendfsync === 'everysec' ? 'once a second' : 'when the OS decides'} (appendfsync ${s.appendfsync}): set appendfsync always${s.appendfsync === 'everysec' ? ", or accept it with durability: 'aof-everysec'" : ''}`,
    );
  }
  if (s.maxmemory > 0 && s.maxmemoryPolicy !== 'noeviction')
    problems.push(
      `${s.server} may evict claims (maxmemory ${s.maxmemory} bytes, maxmemory-policy ${s.maxmemoryPolicy}): set maxmemory-policy noeviction`,
    );
  if (s.connectedReplicas > 0 && replicas === 0)
    problems.push(
      `${s.server} has ${s.connectedReplicas} replica(s) that a failover could promote without the latest claims: set the store option replicas to how many must acknowledge each claim (WAIT)`,
    );
  return problems;
}
