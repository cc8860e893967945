/** The arguments of the service deleter's tools, declared once with zod (validation and `inputSchema`). */
import { singleLineText, storableText } from '@mrtr/example-kit';
import { z } from 'zod';
import { DEFAULT_TEAM } from './services.js';

/** The JSON Schema of what a caller may send (`io: 'input'`: fields with a default are optional). */
export function schema(s: z.ZodObject): { type: 'object'; [k: string]: unknown } {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io: 'input' }) as Record<
    string,
    unknown
  >;
  return { ...rest, type: 'object' };
}

const Id = storableText(64);

/**
 * A DNS name as a record names it (RFC 1035 §2.3.1 with RFC 2181 §11's
 * leniency for `_`, a leading `*.` wildcard and a trailing root dot): labels
 * of 1 to 63 letters, digits, `_` and `-`, not starting or ending with `-`,
 * at most 253 characters in all. Records are quoted in the delete question,
 * so free text there would let whoever created the service write sentences
 * that read as the server's.
 */
const HostName = z
  .string()
  .max(253)
  .regex(
    /^(?:\*\.)?[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?)*\.?$/,
    'a DNS name: labels of 1 to 63 letters, digits, _ and - separated by dots',
  );

/** Whether no two items of a list have the same `key`. */
function distinct<T>(key: (item: T) => string): (items: T[]) => boolean {
  return (items) => new Set(items.map(key)).size === items.length;
}
export const CreateArgs = z.strictObject({
  id: Id.regex(/^svc_[a-z0-9]+$/).describe('Service id, e.g. svc_1a2b3'),
  // Quoted in the questions: one line, no bidi controls (see singleLineText).
  name: singleLineText(63),
  environment: z.enum(['production', 'staging', 'development']),
  instances: z.number().int().min(0).max(100),
  // Each record and volume once: a repeat is the caller's mistake, not a conflict with stored rows.
  dnsRecords: z
    .array(HostName)
    .max(10)
    .refine(
      distinct((h: string) => h),
      'each DNS record once',
    )
    .default([]),
  volumes: z
    .array(
      z.strictObject({
        id: Id.regex(/^vol_[a-z0-9]+$/),
        sizeGb: z.number().int().min(1).max(16384),
      }),
    )
    .max(10)
    .refine(
      distinct((v: { id: string }) => v.id),
      'each volume id once',
    )
    .default([]),
  team: singleLineText(64)
    .optional()
    .describe(
      `Owning team (default ${DEFAULT_TEAM}); a new team is created with you as its member`,
    ),
});
export const DeleteServiceArgs = z.strictObject({
  serviceId: Id,
  name: storableText(63).describe('The service name, as a cross-check'),
});
export const ScaleArgs = z.strictObject({
  serviceId: Id,
  confirm: storableText(63)
    .optional()
    .describe('Only for clients that cannot show a confirmation form: the service name'),
});
export const DeployArgs = z.strictObject({ serviceId: Id, ref: storableText(200) });
export const VolumeArgs = z.strictObject({ volumeId: Id });
