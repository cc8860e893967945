import type { LevelPolicy } from '@mrtr/gate';

/**
 * Which tools need a person's confirmation, and how: one declared policy, so
 * the rule for each tool sits in one place and can be reviewed as a table.
 *
 * The axis is irreversibility × blast radius, not the verb in the name:
 * - `person`: only a person can say yes, at the `level` given per
 *   environment (`form`: a form the client shows; `url`: this server's
 *   approval page, signed in as the caller; `presence`: that page, with a
 *   passkey assertion over this very action). A client that cannot show the
 *   mode the level needs gets `-32021` and nothing happens.
 * - `person-or-argument`: a person through a form when the client can show
 *   one; otherwise the caller may confirm by repeating the target in an
 *   argument. That proves intent, not consent (a model can fill the argument
 *   in itself), so the result says where the confirmation came from.
 * - `none`: routine and reversible; gating it would train people to click
 *   yes without reading.
 */
export type ConfirmationMode =
  | { mode: 'person'; level: { production: LevelPolicy; other: LevelPolicy }; why: string }
  | { mode: 'person-or-argument'; argument: string; why: string }
  | { mode: 'none'; why: string };

/** The service deleter's policy. */
export const POLICY = {
  delete_service: {
    mode: 'person',
    level: { production: 'presence', other: 'form' },
    why: "Irreversible: stops every instance, removes DNS, and may destroy volumes (a service with volumes takes at least delete_volume's level).",
  },
  delete_volume: {
    mode: 'person',
    level: { production: 'url', other: 'url' },
    why: 'Irreversible: the data on the volume is gone.',
  },
  scale_to_zero: {
    mode: 'person-or-argument',
    argument: 'confirm',
    why: 'Reversible by scaling up again, but takes the service offline meanwhile.',
  },
  trigger_deploy: {
    mode: 'none',
    why: 'Routine and reversible by rolling back; done many times a day.',
  },
  list_services: { mode: 'none', why: 'Read-only.' },
  create_service: { mode: 'none', why: 'Adds, removes nothing.' },
} as const satisfies Record<string, ConfirmationMode>;

/** The tools the service deleter serves. */
export type ServiceToolName = keyof typeof POLICY;

/** How much each level proves: a form (or either) < the approval page < the page with a passkey. */
const STRENGTH: Record<LevelPolicy, number> = { form: 0, 'form-or-url': 0, url: 1, presence: 2 };

/**
 * The stronger of two levels: `delete_service` may destroy volumes, so a
 * service that has any takes at least `delete_volume`'s level, or one tool
 * would do what the other guards more strictly.
 */
export function strongerLevel(a: LevelPolicy, b: LevelPolicy): LevelPolicy {
  // Equal strength (form and form-or-url prove the same: a form at least): `a` stands.
  return STRENGTH[b] > STRENGTH[a] ? b : a;
}
