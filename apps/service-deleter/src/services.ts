import { quoted } from '@mrtr/gate';
import type { Database, Queryable } from './db.js';

/** A volume attached to a service; sizes are in gigabytes (GB). */
export interface Volume {
  id: string;
  sizeGb: number;
  /**
   * The team that owns the volume, when read from the database: a volume
   * keeps its own team (handed over, or made before volumes kept theirs), so
   * destroying it with its service takes membership of that team too.
   */
  teamId?: string;
}

/** A deployed service as the tools see it. */
export interface Service {
  id: string;
  name: string;
  environment: string;
  instances: number;
  dnsRecords: string[];
  volumes: Volume[];
  /** Bumped on every change of the service (`scale_to_zero`). */
  revision: number;
  /**
   * Which rows these are: the service's number, and its volumes' in the
   * order of `volumes`. Ids are the client's to choose, so a service or
   * volume deleted and created again under its id looks the same in every
   * other field; but each row takes a number never used before from one
   * sequence (`incarnations`). The questions state these numbers, so a row
   * made again changes the question and the gate asks afresh.
   */
  incarnation: { service: string; volumes: string[] };
  /** The team that owns the service; only its members may operate it. */
  teamId: string;
}

/** The team that owns the seeded services, and every service created without a team. */
export const DEFAULT_TEAM = 'platform';

/**
 * Create the schema if missing and seed a new database with `svc_8f21c`
 * "api-prod" (3 instances, api.example.com, `vol_31ab` of 48 GB) and a
 * staging service, both owned by team `platform`; every principal in
 * `members` is made a member of `platform` (on every start, so new tokens
 * can operate the demo services).
 */
export async function migrate(db: Database, members: readonly string[] = []): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['mrtr-service-deleter-migrate']);
    await tx.query(`CREATE TABLE IF NOT EXISTS teams (id text PRIMARY KEY)`);
    await tx.query(`CREATE TABLE IF NOT EXISTS team_members (
      team_id text NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
      principal text NOT NULL,
      PRIMARY KEY (team_id, principal))`);
    await tx.query('INSERT INTO teams (id) VALUES ($1) ON CONFLICT DO NOTHING', [DEFAULT_TEAM]);
    for (const m of members)
      await tx.query(
        'INSERT INTO team_members (team_id, principal) VALUES ($1, $2) ON CONFLICT DO NOTHING',
        [DEFAULT_TEAM, m],
      );
    await tx.query(`CREATE TABLE IF NOT EXISTS services (
      id text PRIMARY KEY,
      name text NOT NULL,
      environment text NOT NULL,
      instances integer NOT NULL CHECK (instances >= 0),
      revision integer NOT NULL DEFAULT 1)`);
    await tx.query(
      `ALTER TABLE services ADD COLUMN IF NOT EXISTS team_id text NOT NULL DEFAULT '${DEFAULT_TEAM}' REFERENCES teams(id)`,
    );
    await tx.query(`CREATE TABLE IF NOT EXISTS dns_records (
      service_id text NOT NULL REFERENCES services(id) ON DELETE CASCADE,
      hostname text NOT NULL,
      PRIMARY KEY (service_id, hostname))`);
    await tx.query(`CREATE TABLE IF NOT EXISTS volumes (
      id text PRIMARY KEY,
      service_id text REFERENCES services(id) ON DELETE SET NULL,
      size_gb integer NOT NULL CHECK (size_gb > 0))`);
    // Which incarnation of an id a confirmation was asked about (see Service.incarnation). On a
    // database made before, the rows there get numbers of their own.
    await tx.query('CREATE SEQUENCE IF NOT EXISTS incarnations');
    for (const table of ['services', 'volumes'])
      await tx.query(
        `ALTER TABLE ${table} ADD COLUMN IF NOT EXISTS incarnation bigint NOT NULL DEFAULT nextval('incarnations')`,
      );
    // A volume keeps its team when its service goes (ON DELETE SET NULL): ownership is its own.
    await tx.query(
      'ALTER TABLE volumes ADD COLUMN IF NOT EXISTS team_id text REFERENCES teams(id)',
    );
    await tx.query(
      'UPDATE volumes v SET team_id = s.team_id FROM services s WHERE v.service_id = s.id AND v.team_id IS NULL',
    );
    await tx.query(`CREATE TABLE IF NOT EXISTS deploys (
      id serial PRIMARY KEY,
      service_id text NOT NULL,
      ref text NOT NULL,
      requested_by text NOT NULL,
      requested_at timestamptz NOT NULL DEFAULT now())`);
    await tx.query(`CREATE TABLE IF NOT EXISTS services_schema (
      version integer PRIMARY KEY, seeded_at timestamptz NOT NULL DEFAULT now())`);
    const fresh = await tx.query(
      'INSERT INTO services_schema (version) VALUES (1) ON CONFLICT DO NOTHING RETURNING version',
    );
    if (fresh.rows.length === 0) return;
    await insertService(tx, {
      id: 'svc_8f21c',
      name: 'api-prod',
      environment: 'production',
      instances: 3,
      dnsRecords: ['api.example.com'],
      volumes: [{ id: 'vol_31ab', sizeGb: 48 }],
    });
    await insertService(tx, {
      id: 'svc_2d7e0',
      name: 'api-staging',
      environment: 'staging',
      instances: 1,
      dnsRecords: ['staging.api.example.com'],
      volumes: [{ id: 'vol_9c4d', sizeGb: 10 }],
    });
  });
}

/** Insert a service with its DNS records and volumes (team `platform` unless `teamId` says otherwise). */
export async function insertService(
  tx: Queryable,
  s: Omit<Service, 'revision' | 'teamId' | 'incarnation'> & { teamId?: string },
): Promise<void> {
  await tx.query(
    'INSERT INTO services (id, name, environment, instances, team_id) VALUES ($1, $2, $3, $4, $5)',
    [s.id, s.name, s.environment, s.instances, s.teamId ?? DEFAULT_TEAM],
  );
  for (const h of s.dnsRecords) {
    await tx.query('INSERT INTO dns_records (service_id, hostname) VALUES ($1, $2)', [s.id, h]);
  }
  for (const v of s.volumes) {
    await tx.query(
      'INSERT INTO volumes (id, service_id, size_gb, team_id) VALUES ($1, $2, $3, $4)',
      [v.id, s.id, v.sizeGb, s.teamId ?? DEFAULT_TEAM],
    );
  }
}

interface ServiceRow {
  id: string;
  name: string;
  environment: string;
  instances: number;
  revision: number;
  team_id: string;
  /** bigint: text from `pg`, a number or bigint from PGlite. */
  incarnation: string | number | bigint;
}

/**
 * The service of `row` with its DNS records and volumes; with `lock`, their
 * rows stay locked until the transaction ends too: a volume updated in
 * place by a transaction still open would otherwise be read as it was and
 * deleted as it is once that commits.
 */
async function hydrate(q: Queryable, row: ServiceRow, lock = false): Promise<Service> {
  const forUpdate = lock ? ' FOR UPDATE' : '';
  const dns = await q.query<{ hostname: string }>(
    `SELECT hostname FROM dns_records WHERE service_id = $1 ORDER BY hostname${forUpdate}`,
    [row.id],
  );
  const vols = await q.query<VolumeRow>(
    `SELECT id, size_gb, team_id, incarnation FROM volumes WHERE service_id = $1 ORDER BY id${forUpdate}`,
    [row.id],
  );
  return serviceOf(row, dns.rows, vols.rows);
}

interface VolumeRow {
  id: string;
  size_gb: number;
  team_id: string | null;
  incarnation: ServiceRow['incarnation'];
}

/**
 * A service, its DNS records and its volumes in one statement, so in one
 * snapshot (READ COMMITTED takes one per statement): read in three, a service
 * being deleted could be read with its DNS records and volumes already gone,
 * and a question would describe a service that never was (helper-162 M1).
 * Without locks: inside a claim {@link hydrate} reads and locks them.
 */
const SERVICE_SNAPSHOT = `SELECT s.*,
  COALESCE((SELECT json_agg(d.hostname ORDER BY d.hostname) FROM dns_records d WHERE d.service_id = s.id), '[]'::json) AS dns_json,
  COALESCE((SELECT json_agg(json_build_object('id', v.id, 'size_gb', v.size_gb, 'team_id', v.team_id, 'incarnation', v.incarnation::text) ORDER BY v.id)
    FROM volumes v WHERE v.service_id = s.id), '[]'::json) AS volumes_json
  FROM services s`;

type SnapshotRow = ServiceRow & { dns_json: unknown; volumes_json: unknown };

/** The service of a {@link SERVICE_SNAPSHOT} row (`json` columns parsed by the driver, or text). */
function fromSnapshot(row: SnapshotRow): Service {
  const parse = (v: unknown) => (typeof v === 'string' ? JSON.parse(v) : v);
  const { dns_json, volumes_json, ...service } = row;
  const dns = (parse(dns_json) as string[]).map((hostname) => ({ hostname }));
  return serviceOf(service, dns, parse(volumes_json) as VolumeRow[]);
}

function serviceOf(
  row: ServiceRow,
  dns: readonly { hostname: string }[],
  vols: readonly VolumeRow[],
): Service {
  const { team_id, incarnation, ...rest } = row;
  return {
    ...rest,
    teamId: team_id,
    dnsRecords: dns.map((r) => r.hostname),
    volumes: vols.map((v) => ({
      id: v.id,
      sizeGb: Number(v.size_gb),
      teamId: v.team_id ?? NO_TEAM,
    })),
    incarnation: {
      service: String(incarnation),
      volumes: vols.map((v) => String(v.incarnation)),
    },
  };
}

/** The services of the teams `principal` belongs to, by name. */
export async function listServices(q: Queryable, principal: string): Promise<Service[]> {
  const { rows } = await q.query<SnapshotRow>(
    `${SERVICE_SNAPSHOT} JOIN team_members m ON m.team_id = s.team_id AND m.principal = $1
     ORDER BY s.name, s.id`,
    [principal],
  );
  return rows.map(fromSnapshot);
}

/** Whether `principal` is a member of team `teamId`. */
export async function isTeamMember(
  q: Queryable,
  principal: string,
  teamId: string,
): Promise<boolean> {
  const { rows } = await q.query(
    'SELECT 1 FROM team_members WHERE team_id = $1 AND principal = $2',
    [teamId, principal],
  );
  return rows.length > 0;
}

/**
 * Make sure team `teamId` exists; a new team gets `principal` as its only
 * member. @returns whether `principal` is (now) a member.
 */
export async function joinOrCreateTeam(
  q: Queryable,
  principal: string,
  teamId: string,
): Promise<boolean> {
  const created = await q.query(
    'INSERT INTO teams (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id',
    [teamId],
  );
  if (created.rows.length > 0) {
    await q.query('INSERT INTO team_members (team_id, principal) VALUES ($1, $2)', [
      teamId,
      principal,
    ]);
    return true;
  }
  return isTeamMember(q, principal, teamId);
}

/** One service, optionally locking its row until the transaction ends. */
export async function getService(
  q: Queryable,
  id: string,
  lock = false,
): Promise<Service | undefined> {
  if (!lock) {
    const { rows } = await q.query<SnapshotRow>(`${SERVICE_SNAPSHOT} WHERE s.id = $1`, [id]);
    return rows[0] ? fromSnapshot(rows[0]) : undefined;
  }
  const rows = await lockedRead(lock, () =>
    q.query<ServiceRow>('SELECT * FROM services WHERE id = $1 FOR UPDATE', [id]),
  );
  return rows[0] ? hydrate(q, rows[0], lock) : undefined;
}

/** Reads of {@link lockedRead}: each one more makes a row again under its id while it waits. */
const LOCKED_READS = 5;

/**
 * Run `read`; with `lock`, again while it finds nothing, up to
 * {@link LOCKED_READS} times. A `FOR UPDATE` that waited for a transaction
 * which deleted the row skips it, and does not see a row that transaction
 * made again under the same id: its snapshot was taken before (READ
 * COMMITTED, PostgreSQL §13.2.1). The next statement takes a new one, so a
 * row made again is found, and asked about afresh, rather than answered
 * "No service". A row that is not there is read that many times, each
 * quick.
 */
async function lockedRead<R>(lock: boolean, read: () => Promise<{ rows: R[] }>): Promise<R[]> {
  let { rows } = await read();
  for (let n = 1; rows.length === 0 && lock && n < LOCKED_READS; n++) rows = (await read()).rows;
  return rows;
}

/** A volume, the service it is attached to (if any), and the team that owns it (the service's, or `platform` when detached). */
/** The team of a volume whose owner is unknown: no principal is a member, so no one may delete it. */
const NO_TEAM = '(no team)';

export interface VolumeRecord {
  id: string;
  sizeGb: number;
  serviceId: string | null;
  teamId: string;
  /** Never used before: tells this volume from one created again under its id (see Service.incarnation). */
  incarnation: string;
}

/** The volume with its service and owning team. */
export async function getVolume(
  q: Queryable,
  id: string,
  lock = false,
): Promise<VolumeRecord | undefined> {
  const rows = await lockedRead(lock, () =>
    q.query<{
      id: string;
      size_gb: number;
      service_id: string | null;
      team_id: string | null;
      incarnation: ServiceRow['incarnation'];
    }>(
      `SELECT v.id, v.size_gb, v.service_id, v.team_id, v.incarnation FROM volumes v WHERE v.id = $1${lock ? ' FOR UPDATE' : ''}`,
      [id],
    ),
  );
  const v = rows[0];
  return v
    ? {
        id: v.id,
        sizeGb: Number(v.size_gb),
        serviceId: v.service_id,
        // A volume of no team (made before volumes kept theirs, detached since) is nobody's to delete.
        teamId: v.team_id ?? NO_TEAM,
        incarnation: String(v.incarnation),
      }
    : undefined;
}

/** Scale a service to zero instances. */
export async function scaleToZero(tx: Queryable, id: string): Promise<void> {
  await tx.query('UPDATE services SET instances = 0, revision = revision + 1 WHERE id = $1', [id]);
}

/** Record a deploy request (this demo platform only records it). */
export async function recordDeploy(q: Queryable, serviceId: string, ref: string, by: string) {
  const { rows } = await q.query<{ id: number }>(
    'INSERT INTO deploys (service_id, ref, requested_by) VALUES ($1, $2, $3) RETURNING id',
    [serviceId, ref, by],
  );
  return rows[0]?.id as number;
}

/** A sentence for people: "3 running instances, the DNS record api.example.com, and 1 volume (48 GB)". */
export function describeBlastRadius(
  s: Pick<Service, 'instances' | 'dnsRecords' | 'volumes'>,
): string {
  const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;
  const parts = [`${plural(s.instances, 'running instance')}`];
  if (s.dnsRecords.length > 0) {
    parts.push(
      `the DNS ${s.dnsRecords.length === 1 ? 'record' : 'records'} ${s.dnsRecords.join(', ')}`,
    );
  }
  if (s.volumes.length > 0)
    parts.push(`${plural(s.volumes.length, 'volume')} (${volumeList(s.volumes, true)})`);
  return parts.length > 1
    ? `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`
    : (parts[0] as string);
}

/**
 * What deleting `s` does, for the confirmation question: the instances and
 * DNS records it removes, then its volumes, which are kept unless the person
 * also chooses to destroy them (the form's `deleteVolumes`, default no). The
 * question must not promise a loss the default answer does not cause.
 */
export function describeDeletion(
  s: Pick<Service, 'instances' | 'dnsRecords' | 'volumes'> & { teamId?: string },
): string {
  const removed =
    s.instances === 0 && s.dnsRecords.length === 0
      ? 'the service (it runs no instances and has no DNS records)'
      : describeBlastRadius({ ...s, volumes: [] });
  if (s.volumes.length === 0) return `This removes ${removed}.`;
  const one = s.volumes.length === 1;
  return `This removes ${removed}. ${one ? 'Its volume' : `Its ${s.volumes.length} volumes`} (${volumeList(s.volumes, !one, s.teamId)}) ${one ? 'is' : 'are'} kept unless you also choose to destroy ${one ? 'it' : 'them'}.`;
}

/**
 * `vol_1 10 GB, vol_2 5 GB`, and with `total` `; 15 GB in all`; a volume
 * owned by another team than `team` (the service's) says whose it is.
 */
function volumeList(
  volumes: readonly { id: string; sizeGb: number; teamId?: string }[],
  total: boolean,
  team?: string,
): string {
  const list = volumes
    .map((v) =>
      v.teamId !== undefined && team !== undefined && v.teamId !== team
        ? `${v.id} ${v.sizeGb} GB of team ${quoted(v.teamId, 63)}`
        : `${v.id} ${v.sizeGb} GB`,
    )
    .join(', ');
  return total ? `${list}; ${volumes.reduce((sum, v) => sum + v.sizeGb, 0)} GB in all` : list;
}
