import type { LicenceList, LicenceUsage, LicenseInfo } from '@lintel/core';
import { renderRows, type Look } from '../families/render';
import { t } from '../i18n';

/** The feature areas of a licence, in the order of spec part 1 §3 License info. */
const AREAS = [
  'sip',
  'mobile_app',
  'elevator',
  'license_plate',
  'face_id',
  'amenity',
  'ukey2',
  'identifier',
] as const satisfies readonly (keyof LicenseInfo)[];
const COUNTED = ['sip', 'mobile_app', 'ukey2'] as const;

/** Whether a licence switches an area on (face id and guest identifiers have no switch of their own). */
function areaOn(features: LicenseInfo, area: (typeof AREAS)[number]): boolean {
  const section = features[area] as Record<string, unknown>;
  if ('is_enabled' in section) return section.is_enabled === true;
  return Object.entries(section).some(([k, v]) => k !== 'license_count' && v === true);
}

/**
 * The features a licence gives, with their counts: `sip=10, mobile_app, elevator` for a pipe (codes a script
 * reads), the features' names for a person.
 */
function featuresText(features: LicenseInfo, look: Look): string {
  const on = AREAS.filter((a) => areaOn(features, a));
  const counted = on.some(
    (a) => typeof (features[a] as { license_count?: unknown }).license_count === 'number',
  );
  if (look.tty && on.length === AREAS.length && !counted) return t('licences.all_features');
  return on
    .map((a) => {
      const count = (features[a] as { license_count?: number | null }).license_count;
      const name = look.tty ? t(`licences.areas.${a}`) : a;
      return typeof count === 'number' ? `${name}${look.tty ? ' ×' : '='}${count}` : name;
    })
    .join(look.tty ? ', ' : ',');
}

/**
 * `lintel licences list`: a table of the licences (their state, kind, period and days left, features), then
 * for a person what is in force (the evaluation licence named as such) and the instance id a file must name.
 */
export function licenceListText(result: unknown, look: Look): string {
  const list = result as LicenceList;
  // a pipe gets every column as codes and ISO times; a person the ones that fit 80 columns, in words
  const rows = list.items.map((l) =>
    look.tty
      ? {
          id: l.id,
          state: t(`licences.states.${l.state}`),
          kind: t(`licences.kinds.${l.kind}`),
          valid_to: l.valid_to ? l.valid_to.slice(0, 10) : t('licences.list.no_end'),
          days_left: l.days_left,
          features: featuresText(l.features, look),
        }
      : {
          id: l.id,
          state: l.state,
          kind: l.kind,
          issuer: l.issuer,
          licence_id: l.licence_id,
          valid_from: l.valid_from,
          valid_to: l.valid_to,
          days_left: l.days_left,
          features: featuresText(l.features, look),
        },
  );
  const columns = Object.keys(rows[0] ?? { id: 0 });
  const table =
    rows.length || !look.tty
      ? renderRows(rows, rows.length ? columns : ['id'], look)
      : t('licences.list.empty');
  if (!look.tty) return table;
  const days = list.in_force?.days_left ?? null;
  const summary = !list.in_force
    ? t('licences.list.none')
    : list.evaluation
      ? t('licences.list.evaluation', { days: days ?? 0 })
      : days === null
        ? t('licences.list.in_force_no_end', { id: list.in_force.id })
        : t('licences.list.in_force', { id: list.in_force.id, days });
  const lines = [table, '', summary];
  if (list.active_ids.length > 1) lines.push(t('licences.list.stacked', { ids: list.active_ids.join(', ') }));
  lines.push(t('licences.list.instance', { id: list.instance_id }));
  return lines.join('\n');
}

/**
 * `lintel licences usage`: each counted feature's use against its licences; the capacity is the count times
 * the licence file's units (one licence equals N numbers, devices or keys).
 */
export function licenceUsageText(result: unknown, look: Look): string {
  const usage = result as LicenceUsage;
  const units = usage.units_per_licence;
  const rows = COUNTED.map((area) => {
    const { used, max } = usage.features[area];
    return {
      feature: look.tty ? t(`licences.usage.${area}`) : area,
      used,
      max: max ?? (look.tty ? t('licences.usage.no_limit') : null),
      capacity: max === null ? (look.tty ? t('licences.usage.no_limit') : null) : max * units,
    };
  });
  const table = renderRows(rows, ['feature', 'used', 'max', 'capacity'], look);
  return look.tty ? `${table}\n\n${t('licences.usage.units', { units })}` : table;
}
