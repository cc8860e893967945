import {
  type ConfirmationGate,
  confirm,
  flag,
  type LevelPolicy,
  preview,
  quoted,
  typeToConfirm,
  withoutAsking,
} from '@mrtr/gate';
import type { AnyToolDefinition, ToolCallContext, ToolDefinition } from '@mrtr/server';
import { type CallToolResult, supportsFormElicitation, textResult } from '@mrtr/wire';
import type { z } from 'zod';
import type { Database, Queryable } from './db.js';
import { execute } from './execute.js';
import type { ServiceExecutor } from './executor.js';
import { POLICY, strongerLevel } from './policy.js';
import {
  DEFAULT_TEAM,
  describeBlastRadius,
  describeDeletion,
  getService,
  getVolume,
  insertService,
  isTeamMember,
  joinOrCreateTeam,
  listServices,
  recordDeploy,
  type Service,
  scaleToZero,
} from './services.js';
import {
  CreateArgs,
  DeleteServiceArgs,
  DeployArgs,
  ScaleArgs,
  schema,
  VolumeArgs,
} from './tool-args.js';

/**
 * The last sentence of a question: the numbers of the rows it is about
 * (see `Service.incarnation`). A service or volume deleted and created again
 * under its id has another, so the question changes and the gate asks
 * afresh (its old ticket spent) rather than let a "yes" given for one act
 * on the other, whichever instance or version minted the ticket.
 */
const records = (what: string) => `Checked again before it runs: it is ${what}.`;
const serviceRecords = (s: Service, volumes: boolean) =>
  records(
    `service record ${s.incarnation.service}${
      volumes && s.volumes.length > 0
        ? ` with volume ${s.volumes.length === 1 ? 'record' : 'records'} ${s.incarnation.volumes.join(', ')}`
        : ''
    }`,
  );

/** PostgreSQL SQLSTATE 23505 (`unique_violation`), as `pg` and PGlite report it. */
const isUniqueViolation = (error: unknown) =>
  typeof error === 'object' && error !== null && (error as { code?: unknown }).code === '23505';
// Ids and names come from the client: shown as previews (controls, bidi and hidden characters as codes).
/**
 * A stored service name as text for a person reads it: a one-line
 * {@link preview} of at most 63 characters. `create_service` checks names,
 * but rows written before that check (or by other tools) can hold line
 * breaks, bidi overrides or hidden characters; data (`structuredContent`)
 * keeps the name as stored.
 */
// In quotes, its own `"` escaped: a stored name cannot close the quote and go on as the question.
const shownName = (name: string) => quoted(name, 63);
const notFound = (id: string) => textResult(`No service ${preview(id, 64)}.`, { isError: true });
/** `team` is whatever name its creator chose: quoted, as every name someone else chose. */
const notYours = (what: string, team: string) =>
  textResult(
    `You are not a member of team ${quoted(team, 64)}, which owns ${what}. Nothing was changed.`,
    {
      isError: true,
    },
  );

/**
 * The service deleter's tools. Confirmation follows {@link POLICY}; every
 * gated tool re-authorizes (team membership) and re-reads the service each
 * round and inside the claim, where `tx` is the transaction the nonce is
 * claimed in. The deletions themselves are the `executor`'s, which acts only
 * on the signed approval receipt the gate hands to `perform`.
 */
export function serviceTools(
  db: Database,
  gate: ConfirmationGate<Queryable>,
  executor: ServiceExecutor,
): AnyToolDefinition[] {
  /** The level a policy asks for, or `form` on a gate without an approval page (tests, the bare endpoint). */
  const level = (policy: { production: LevelPolicy; other: LevelPolicy }, environment: string) =>
    gate.approvals ? (environment === 'production' ? policy.production : policy.other) : 'form';

  /** The service `id` if `principal` may operate it, else the result that says why not. */
  const authorized = async (q: Queryable, principal: string, id: string, lock = false) => {
    const s = await getService(q, id, lock);
    if (!s) return { refused: notFound(id) };
    if (!(await isTeamMember(q, principal, s.teamId)))
      return { refused: notYours(quoted(id, 64), s.teamId) };
    return { service: s };
  };

  const list: ToolDefinition = {
    name: 'list_services',
    title: 'List services',
    description: 'List the services of your teams with their instances, DNS records and volumes.',
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: { readOnlyHint: true },
    async handler(_args, ctx) {
      const services = await listServices(db, ctx.principal.id);
      return textResult(
        services
          .map((s) => `${s.id}  ${shownName(s.name)} (${s.environment}): ${describeBlastRadius(s)}`)
          .join('\n') || '(no services)',
        // Incarnations are the server's own bookkeeping, not the service's data.
        { structuredContent: { services: services.map(({ incarnation: _, ...s }) => s) } },
      );
    },
  };

  const create: ToolDefinition<z.infer<typeof CreateArgs>> = {
    name: 'create_service',
    title: 'Create a service',
    description:
      'Register a service with its instances, DNS records and volumes (for demos and tests).',
    inputSchema: schema(CreateArgs),
    parse: (a) => CreateArgs.parse(a),
    async handler(args, ctx) {
      const { team = DEFAULT_TEAM, ...service } = args;
      try {
        const made = await db.transaction(async (tx) => {
          if (!(await joinOrCreateTeam(tx, ctx.principal.id, team))) return false;
          await insertService(tx, { ...service, teamId: team });
          return true;
        });
        if (!made) return notYours(`services of team ${quoted(team, 64)}`, team);
      } catch (error) {
        // Only a unique violation means it exists; a lost database is the db's 503, not this.
        if (!isUniqueViolation(error)) throw error;
        return textResult(
          `Could not create ${preview(args.id, 64)}: the service or one of its volumes already exists.`,
          {
            isError: true,
          },
        );
      }
      return textResult(`Created ${quoted(args.name, 63)} (${preview(args.id, 64)}).`, {
        structuredContent: { service: args },
      });
    },
  };

  const remove = gate.tool({
    name: 'delete_service',
    title: 'Delete a service',
    description: `Delete a service. A person confirms by typing the service name in a form; a service with volumes is approved instead on this server's approval page, and a production service there with a passkey. ${POLICY.delete_service.why}`,
    args: DeleteServiceArgs,
    key: 'confirm_delete',
    form: {
      serviceName: typeToConfirm({ title: 'Service name' }),
      deleteVolumes: flag({ title: 'Also destroy the attached volumes', default: false }),
    },
    async ask({ args, principal, tx }) {
      const found = await authorized(tx ?? db, principal, args.serviceId, tx !== undefined);
      if (!found.service) return withoutAsking(found.refused);
      const s = found.service;
      if (s.name !== args.name)
        return withoutAsking(
          textResult(
            `Service ${s.id} is named ${shownName(s.name)}, not ${quoted(args.name, 63)}. Nothing was deleted.`,
            {
              isError: true,
            },
          ),
        );
      return {
        // Stored text, checked when created but quoted here as a preview all the same.
        message: `Delete ${shownName(s.name)} (${s.id}, ${s.environment})? ${describeDeletion(s)} It cannot be undone. ${serviceRecords(s, true)}`,
        view: s,
        expect: { serviceName: s.name },
      };
    },
    // The form offers to destroy the volumes too: that takes delete_volume's level as well.
    level: (view) =>
      view.volumes.length > 0
        ? strongerLevel(
            level(POLICY.delete_service.level, view.environment),
            level(POLICY.delete_volume.level, view.environment),
          )
        : level(POLICY.delete_service.level, view.environment),
    async perform({ args, principal, content, tx, receipt }): Promise<CallToolResult> {
      // The answer's content goes to the executor as received: it reads deleteVolumes
      // from it only after the receipt's content digest matched.
      const done = await execute(() =>
        executor.deleteService(receipt, args, { content, principal }, tx),
      );
      if (done.refused) return done.refused;
      const { deleted: s, volumes } = done.outcome;
      const list = (vs: { id: string; sizeGb: number }[]) =>
        vs.map((v) => `${v.id} (${v.sizeGb} GB)`).join(', ');
      const kept =
        volumes.destroyed.length > 0
          ? ` Volumes destroyed: ${list(volumes.destroyed)}.`
          : volumes.retained.length > 0
            ? ` Volumes retained: ${list(volumes.retained)}.`
            : '';
      return textResult(
        `Deleted ${shownName(s.name)} (${s.id}): ${s.instances} ${s.instances === 1 ? 'instance' : 'instances'} stopped, ${s.dnsRecords.length === 0 ? 'no DNS records to remove' : `DNS ${s.dnsRecords.join(', ')} removed`}.${kept}`,
        {
          structuredContent: {
            deleted: {
              id: s.id,
              name: s.name,
              instances: s.instances,
              dnsRecords: s.dnsRecords,
              volumes: volumes.destroyed,
            },
            retained: { volumes: volumes.retained },
            ...(receipt !== undefined ? { receipt } : {}),
          },
        },
      );
    },
    declined: (args) =>
      textResult(
        `Not deleted: deleting ${quoted(args.name, 63)} was declined. Nothing was changed.`,
      ),
  });

  const scaleByPerson = gate.tool({
    name: 'scale_to_zero',
    description: 'scale_to_zero, confirmed by a person',
    args: ScaleArgs,
    key: 'confirm_scale',
    form: { confirm: confirm({ title: 'Yes, stop every instance' }) },
    async ask({ args, principal, tx }) {
      const found = await authorized(tx ?? db, principal, args.serviceId, tx !== undefined);
      if (!found.service) return withoutAsking(found.refused);
      const s = found.service;
      return {
        // Scaling does not touch the volumes: only the service row counts.
        message: `Scale ${shownName(s.name)} (${s.id}, ${s.environment}) to zero? This stops ${s.instances} running ${s.instances === 1 ? 'instance' : 'instances'}; the service is offline until scaled up again. ${serviceRecords(s, false)}`,
        view: s,
      };
    },
    async perform({ view: s, tx }) {
      await scaleToZero(tx, s.id);
      return textResult(
        `Scaled ${shownName(s.name)} (${s.id}) from ${s.instances} to 0 instances, confirmed by a person.`,
        {
          structuredContent: {
            scaled: { id: s.id, from: s.instances, to: 0 },
            confirmedBy: 'person',
          },
        },
      );
    },
  });

  const scale: ToolDefinition<z.infer<typeof ScaleArgs>> = {
    name: 'scale_to_zero',
    title: 'Scale a service to zero',
    description: `Stop every instance of a service. A person confirms through a form; a client that cannot show one may pass confirm: "<service name>" instead. ${POLICY.scale_to_zero.why}`,
    inputSchema: scaleByPerson.inputSchema,
    annotations: { destructiveHint: true, idempotentHint: true },
    parse: (a) => scaleByPerson.parse(a),
    async handler(args, ctx: ToolCallContext) {
      if (supportsFormElicitation(ctx.capabilities)) return scaleByPerson.handler(args, ctx);
      // The weaker path the policy allows: the caller repeats the name. A model can do that by itself.
      return db.transaction(async (q) => {
        const found = await authorized(q, ctx.principal.id, args.serviceId, true);
        if (!found.service) return found.refused;
        const s = found.service as Service;
        if (args.confirm !== s.name) {
          const given =
            args.confirm === undefined
              ? ''
              : ` The ${POLICY.scale_to_zero.argument} given is not the name of ${s.id}.`;
          return textResult(
            `scale_to_zero needs a confirmation.${given} This client cannot show a form, so pass ${POLICY.scale_to_zero.argument}: "<the service name>" to confirm. Nothing was changed.`,
            { isError: true },
          );
        }
        await scaleToZero(q, s.id);
        return textResult(
          `Scaled ${shownName(s.name)} (${s.id}) from ${s.instances} to 0 instances. Confirmed by the caller's "${POLICY.scale_to_zero.argument}" argument, not by a person.`,
          {
            structuredContent: {
              scaled: { id: s.id, from: s.instances, to: 0 },
              confirmedBy: 'argument',
            },
          },
        );
      });
    },
  };

  const deploy: ToolDefinition<z.infer<typeof DeployArgs>> = {
    name: 'trigger_deploy',
    title: 'Trigger a deploy',
    description: `Deploy a git ref to a service. Not gated: ${POLICY.trigger_deploy.why}`,
    inputSchema: schema(DeployArgs),
    parse: (a) => DeployArgs.parse(a),
    async handler(args, ctx) {
      const found = await authorized(db, ctx.principal.id, args.serviceId);
      if (!found.service) return found.refused;
      const s = found.service as Service;
      const id = await recordDeploy(db, s.id, args.ref, ctx.principal.id);
      // The ref is kept as sent (structuredContent); the text shows it as a person should read it.
      return textResult(
        `Deploy #${id} of ${preview(args.ref, 80)} to ${shownName(s.name)} queued.`,
        {
          structuredContent: { deploy: { id, serviceId: s.id, ref: args.ref } },
        },
      );
    },
  };

  const destroyVolume = gate.tool({
    name: 'delete_volume',
    title: 'Destroy a volume',
    description: `Destroy a volume and its data. A signed-in person approves it on this server's approval page. ${POLICY.delete_volume.why}`,
    args: VolumeArgs,
    key: 'confirm_volume',
    level: () => level(POLICY.delete_volume.level, 'production'),
    // Asked only where the policy allows a form: on the approval page (POLICY's `url`), Approve is
    // the consent and the gate leaves consent fields out of the page.
    form: { volumeId: typeToConfirm({ title: 'Volume id' }) },
    async ask({ args, principal, tx }) {
      const q = tx ?? db;
      const v = await getVolume(q, args.volumeId, tx !== undefined);
      if (!v)
        return withoutAsking(
          textResult(`No volume ${preview(args.volumeId, 64)}.`, { isError: true }),
        );
      if (!(await isTeamMember(q, principal, v.teamId)))
        return withoutAsking(notYours(quoted(args.volumeId, 64), v.teamId));
      return {
        message: `Destroy volume ${v.id} (${v.sizeGb} GB${v.serviceId ? `, attached to ${v.serviceId}` : ', detached'})? Its data cannot be recovered. ${records(`volume record ${v.incarnation}`)}`,
        view: v,
        expect: { volumeId: v.id },
      };
    },
    async perform({ args, principal, content, tx, receipt }) {
      const done = await execute(() =>
        executor.deleteVolume(receipt, args, { content, principal }, tx),
      );
      if (done.refused) return done.refused;
      const v = done.outcome.destroyed;
      return textResult(`Destroyed volume ${v.id} (${v.sizeGb} GB).`, {
        structuredContent: {
          destroyed: { id: v.id, sizeGb: v.sizeGb },
          ...(receipt !== undefined ? { receipt } : {}),
        },
      });
    },
  });

  return [list, create, remove, scale, deploy, destroyVolume] as AnyToolDefinition[];
}
