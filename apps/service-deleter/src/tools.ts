import { type ConfirmationGate, StaleTargetError } from '@mrtr/gate';
import type { AnyToolDefinition, ToolCallContext, ToolDefinition } from '@mrtr/server';
import { type CallToolResult, supportsFormElicitation, textResult } from '@mrtr/wire';
import { z } from 'zod';
import type { Database, Queryable } from './db.js';
import { POLICY } from './policy.js';
import {
  deleteService,
  deleteVolume,
  describeBlastRadius,
  getService,
  getVolume,
  insertService,
  listServices,
  recordDeploy,
  type Service,
  scaleToZero,
} from './services.js';

function schema(s: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s) as Record<string, unknown>;
  return { ...rest, type: 'object' };
}

const Id = z.string().min(1).max(64);
const CreateArgs = z.object({
  id: Id.regex(/^svc_[a-z0-9]+$/).describe('Service id, e.g. svc_1a2b3'),
  name: z.string().min(1).max(63),
  environment: z.enum(['production', 'staging', 'development']),
  instances: z.number().int().min(0).max(100),
  dnsRecords: z.array(z.string().min(1).max(253)).max(10).default([]),
  volumes: z
    .array(
      z.object({ id: Id.regex(/^vol_[a-z0-9]+$/), sizeGb: z.number().int().min(1).max(16384) }),
    )
    .max(10)
    .default([]),
});
const DeleteServiceArgs = z.object({
  serviceId: Id,
  name: z.string().min(1).describe('The service name, as a cross-check'),
});
const ScaleArgs = z.object({
  serviceId: Id,
  confirm: z
    .string()
    .optional()
    .describe('Only for clients that cannot show a confirmation form: the service name'),
});
const DeployArgs = z.object({ serviceId: Id, ref: z.string().min(1).max(200) });
const VolumeArgs = z.object({ volumeId: Id });

/** What the person was shown about a service, sealed in the ticket and compared with the live row before acting. */
type Snapshot = {
  name: string;
  env: string;
  inst: number;
  dns: string[];
  vols: [string, number][];
  rev: number;
};

const snapshot = (s: Service): Snapshot => ({
  name: s.name,
  env: s.environment,
  inst: s.instances,
  dns: s.dnsRecords,
  vols: s.volumes.map((v) => [v.id, v.sizeGb]),
  rev: s.revision,
});
const sameAsShown = (s: Service | undefined, shown: Snapshot) =>
  s !== undefined && JSON.stringify(snapshot(s)) === JSON.stringify(shown);
const fromSnapshot = (x: Snapshot) => ({
  instances: x.inst,
  dnsRecords: x.dns,
  volumes: x.vols.map(([id, sizeGb]) => ({ id, sizeGb })),
});

const notFound = (id: string) => textResult(`No service ${id}.`, { isError: true });

/**
 * The service deleter's tools. Confirmation follows {@link POLICY}: the gate
 * runs the person's confirmation; `tx` is the replay store's transaction when
 * it has one, so the claim and the mutation commit together.
 */
export function serviceTools(
  db: Database,
  gate: ConfirmationGate<Queryable | undefined>,
): AnyToolDefinition[] {
  /** Run `fn` in the store's transaction when it gives one, else in a transaction of our own. */
  const inTx = <T>(tx: Queryable | undefined, fn: (q: Queryable) => Promise<T>): Promise<T> =>
    tx ? fn(tx) : db.transaction(fn);

  const list: ToolDefinition = {
    name: 'list_services',
    title: 'List services',
    description: 'List the deployed services with their instances, DNS records and volumes.',
    inputSchema: { type: 'object', properties: {} },
    annotations: { readOnlyHint: true },
    async handler() {
      const services = await listServices(db);
      return textResult(
        services
          .map((s) => `${s.id}  ${s.name} (${s.environment}): ${describeBlastRadius(s)}`)
          .join('\n') || '(no services)',
        { structuredContent: { services } },
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
    async handler(args) {
      try {
        await db.transaction((tx) => insertService(tx, args));
      } catch {
        return textResult(
          `Could not create ${args.id}: the service or one of its volumes already exists.`,
          {
            isError: true,
          },
        );
      }
      return textResult(`Created ${args.name} (${args.id}).`, {
        structuredContent: { service: args },
      });
    },
  };

  const remove: ToolDefinition<z.infer<typeof DeleteServiceArgs>> = {
    name: 'delete_service',
    title: 'Delete a service',
    description: `Delete a service. A person confirms by typing the service name. ${POLICY.delete_service.why}`,
    inputSchema: schema(DeleteServiceArgs),
    annotations: { destructiveHint: true, idempotentHint: false },
    parse: (a) => DeleteServiceArgs.parse(a),
    handler: (args, ctx: ToolCallContext) =>
      gate.run<Snapshot>(ctx, {
        key: 'confirm_delete',
        async prepare() {
          const s = await getService(db, args.serviceId);
          if (!s) return { result: notFound(args.serviceId) };
          if (s.name !== args.name) {
            return {
              result: textResult(
                `Service ${s.id} is named ${s.name}, not ${args.name}. Nothing was deleted.`,
                {
                  isError: true,
                },
              ),
            };
          }
          return { app: snapshot(s) };
        },
        question(sealed, notice) {
          const shown = sealed.app;
          const text = `Delete ${shown.name} (${args.serviceId}, ${shown.env})? This removes ${describeBlastRadius(fromSnapshot(shown))}. It cannot be undone. Type the service name to confirm.`;
          return {
            message: notice ? `${notice} ${text}` : text,
            requestedSchema: {
              type: 'object',
              properties: {
                serviceName: { type: 'string', title: 'Service name', minLength: 1 },
                deleteVolumes: {
                  type: 'boolean',
                  title: `Also destroy the attached ${shown.vols.length === 1 ? 'volume' : 'volumes'}`,
                  default: false,
                },
              },
              required: ['serviceName'],
            },
          };
        },
        check: (content, { app }) =>
          content.serviceName === app.name
            ? undefined
            : `The name you typed did not match: type ${app.name} exactly to delete it.`,
        // Typing the service name (checked above) is the consent; deleteVolumes only widens it.
        consents: () => true,
        declined: ({ app }) =>
          textResult(`Not deleted: deleting ${app.name} was declined. Nothing was changed.`),
        async perform({ content, sealed, tx }): Promise<CallToolResult> {
          const destroyVolumes = content.deleteVolumes === true;
          return inTx(tx, async (q) => {
            const live = await getService(q, args.serviceId, true);
            if (!sameAsShown(live, sealed.app)) {
              throw new StaleTargetError(`${args.serviceId} changed since the question was asked`);
            }
            const s = live as Service;
            await deleteService(q, s, destroyVolumes);
            const volumes = s.volumes.map((v) => `${v.id} (${v.sizeGb} GB)`).join(', ');
            const kept =
              s.volumes.length === 0
                ? ''
                : destroyVolumes
                  ? ` Volumes destroyed: ${volumes}.`
                  : ` Volumes retained: ${volumes}.`;
            return textResult(
              `Deleted ${s.name} (${s.id}): ${s.instances} ${s.instances === 1 ? 'instance' : 'instances'} stopped, DNS ${s.dnsRecords.join(', ') || 'none'} removed.${kept}`,
              {
                structuredContent: {
                  deleted: {
                    id: s.id,
                    name: s.name,
                    instances: s.instances,
                    dnsRecords: s.dnsRecords,
                    volumes: destroyVolumes ? s.volumes : [],
                  },
                  retained: { volumes: destroyVolumes ? [] : s.volumes },
                },
              },
            );
          });
        },
      }),
  };

  const scale: ToolDefinition<z.infer<typeof ScaleArgs>> = {
    name: 'scale_to_zero',
    title: 'Scale a service to zero',
    description: `Stop every instance of a service. A person confirms through a form; a client that cannot show one may pass confirm: "<service name>" instead. ${POLICY.scale_to_zero.why}`,
    inputSchema: schema(ScaleArgs),
    annotations: { destructiveHint: true, idempotentHint: true },
    parse: (a) => ScaleArgs.parse(a),
    async handler(args, ctx) {
      if (!supportsFormElicitation(ctx.capabilities)) {
        // The weaker path the policy allows: the caller repeats the name. A model can do that by itself.
        return db.transaction(async (q) => {
          const s = await getService(q, args.serviceId, true);
          if (!s) return notFound(args.serviceId);
          if (args.confirm !== s.name) {
            return textResult(
              `scale_to_zero needs a confirmation. This client cannot show a form, so pass ${POLICY.scale_to_zero.argument}: "<the service name>" to confirm. Nothing was changed.`,
              { isError: true },
            );
          }
          await scaleToZero(q, s.id);
          return textResult(
            `Scaled ${s.name} (${s.id}) from ${s.instances} to 0 instances. Confirmed by the caller's "${POLICY.scale_to_zero.argument}" argument, not by a person.`,
            {
              structuredContent: {
                scaled: { id: s.id, from: s.instances, to: 0 },
                confirmedBy: 'argument',
              },
            },
          );
        });
      }
      return gate.run<Snapshot>(ctx, {
        key: 'confirm_scale',
        async prepare() {
          const s = await getService(db, args.serviceId);
          if (!s) return { result: notFound(args.serviceId) };
          return { app: snapshot(s) };
        },
        question: ({ app }, notice) => ({
          message: `${notice ? `${notice} ` : ''}Scale ${app.name} (${args.serviceId}, ${app.env}) to zero? This stops ${app.inst} running instances; the service is offline until scaled up again.`,
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', title: `Yes, stop ${app.name}` } },
            required: ['confirm'],
          },
        }),
        consents: (content) => content.confirm === true,
        async perform({ sealed, tx }) {
          return inTx(tx, async (q) => {
            const live = await getService(q, args.serviceId, true);
            if (!sameAsShown(live, sealed.app)) throw new StaleTargetError('service changed');
            await scaleToZero(q, args.serviceId);
            return textResult(
              `Scaled ${sealed.app.name} (${args.serviceId}) from ${sealed.app.inst} to 0 instances, confirmed by a person.`,
              {
                structuredContent: {
                  scaled: { id: args.serviceId, from: sealed.app.inst, to: 0 },
                  confirmedBy: 'person',
                },
              },
            );
          });
        },
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
      const s = await getService(db, args.serviceId);
      if (!s) return notFound(args.serviceId);
      const id = await recordDeploy(db, s.id, args.ref, ctx.principal.id);
      return textResult(`Deploy #${id} of ${args.ref} to ${s.name} queued.`, {
        structuredContent: { deploy: { id, serviceId: s.id, ref: args.ref } },
      });
    },
  };

  const destroyVolume: ToolDefinition<z.infer<typeof VolumeArgs>> = {
    name: 'delete_volume',
    title: 'Destroy a volume',
    description: `Destroy a volume and its data. A person confirms by typing the volume id. ${POLICY.delete_volume.why}`,
    inputSchema: schema(VolumeArgs),
    annotations: { destructiveHint: true, idempotentHint: false },
    parse: (a) => VolumeArgs.parse(a),
    handler: (args, ctx) =>
      gate.run<{ gb: number; svc: string | null }>(ctx, {
        key: 'confirm_volume',
        async prepare() {
          const v = await getVolume(db, args.volumeId);
          if (!v) return { result: textResult(`No volume ${args.volumeId}.`, { isError: true }) };
          return { app: { gb: v.sizeGb, svc: v.serviceId } };
        },
        question: ({ app }, notice) => ({
          message: `${notice ? `${notice} ` : ''}Destroy volume ${args.volumeId} (${app.gb} GB${app.svc ? `, attached to ${app.svc}` : ', detached'})? Its data cannot be recovered. Type the volume id to confirm.`,
          requestedSchema: {
            type: 'object',
            properties: { volumeId: { type: 'string', title: 'Volume id' } },
            required: ['volumeId'],
          },
        }),
        check: (content) =>
          content.volumeId === args.volumeId
            ? undefined
            : `The id you typed did not match: type ${args.volumeId} exactly.`,
        // Typing the volume id (checked above) is the consent: the form has no yes/no box.
        consents: () => true,
        async perform({ sealed, tx }) {
          return inTx(tx, async (q) => {
            const v = await getVolume(q, args.volumeId, true);
            if (!v || v.sizeGb !== sealed.app.gb || v.serviceId !== sealed.app.svc) {
              throw new StaleTargetError('volume changed');
            }
            await deleteVolume(q, args.volumeId);
            return textResult(`Destroyed volume ${args.volumeId} (${v.sizeGb} GB).`, {
              structuredContent: { destroyed: { id: args.volumeId, sizeGb: v.sizeGb } },
            });
          });
        },
      }),
  };

  return [list, create, remove, scale, deploy, destroyVolume] as AnyToolDefinition[];
}
