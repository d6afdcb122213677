import { z } from 'zod';
import { CHART_RANGES, SETTINGS_MAX_BYTES, THEME_CHOICES, type SettingsRequests } from '../api/settings';
import { ROLES } from '../domain';
import { alertRuleSchema } from './dashboard';
import { retentionBytes } from './recording';
import { restartSettingsPatch } from './restart';
import { empty, role } from './common';

type Args<K extends keyof SettingsRequests> = Parameters<SettingsRequests[K]>[0];

// The same characters ssh/shell.ts lets through as a unit name: it ends up in systemctl arguments.
const unitName = z
  .string()
  .regex(/^[A-Za-z0-9@:._][A-Za-z0-9@:._-]{0,199}$/, 'a systemd unit name (letters, digits, @ : . _ -)');
const hostId = z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'a host id (letters, digits, . _ -)');

const ruleList = z
  .array(alertRuleSchema)
  .max(100)
  .superRefine((rules, ctx) => {
    const seen = new Set<string>();
    rules.forEach((r, i) => {
      if (seen.has(r.id))
        ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `rule id "${r.id}" is used twice` });
      seen.add(r.id);
    });
  });

/**
 * The settings file, format version 1. Every section and field may be left out (a hand-written file with only
 * `"ui": {"theme": "dark"}` is fine): the app fills in its defaults. Unknown keys are errors, so a typo is
 * reported at its line instead of being silently ignored.
 */
export const settingsFileSchema = z.strictObject({
  version: z.literal(1),
  alerts: z
    .strictObject({
      rules: ruleList.optional(),
      deployments: z.record(hostId, ruleList).optional(),
    })
    .optional(),
  restart: restartSettingsPatch.optional(),
  recording: z
    .strictObject({ enabled: z.boolean().optional(), maxTotalBytes: retentionBytes.optional() })
    .optional(),
  ui: z
    .strictObject({ theme: z.enum(THEME_CHOICES).optional(), chartRange: z.enum(CHART_RANGES).optional() })
    .optional(),
  discovery: z
    .strictObject({
      choices: z.record(hostId, z.partialRecord(z.enum(ROLES), unitName)).optional(),
    })
    .optional(),
});

export type SettingsFile = z.infer<typeof settingsFileSchema>;

/** Only the version, read first: a newer file is refused before its contents are judged by this version's rules. */
export const settingsVersionSchema = z.looseObject({ version: z.number().int().min(0) });

export const settingsSchemas = {
  getSettings: empty,
  setUiSettings: z.strictObject({
    theme: z.enum(THEME_CHOICES).optional(),
    chartRange: z.enum(CHART_RANGES).optional(),
  }),
  setDeploymentAlertRules: z.strictObject({ deploymentId: hostId, rules: ruleList.nullable() }),
  setDiscoveryChoice: z.strictObject({ hostId, role, unit: unitName.nullable() }),
  exportSettings: empty,
  importSettings: z.strictObject({
    text: z.string().min(1).max(SETTINGS_MAX_BYTES),
    dryRun: z.boolean().optional(),
  }),
  reloadSettings: empty,
} satisfies { [K in keyof SettingsRequests]: z.ZodType<Args<K>> };
