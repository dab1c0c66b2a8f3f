import { useId, useMemo } from 'react';
import { useTranslation } from 'react-i18next';
import { LICENCE_NOTIFY_BEFORE_DAYS, LicenceNotifyModes } from '@lintel/core';
import { useHasAny } from '../../access/use-can';
import { fieldLabel, valueLabel, type FieldContext, type FieldOverride } from '../../forms/command-form';
import type { FormValues } from '../../forms/shape';
import { focusRing } from '../../ui/button';
import { inputClass, TextField } from '../../ui/field';

/** Who sees a group's licence part, and who may change it (spec part 2 §6, Licences). */
const VIEW = ['licenses.view_self', 'licenses.view_descendant', 'licenses.view_all'];
const EDIT = ['licenses.edit_count_self', 'licenses.edit_count_descendant', 'licenses.edit_count_all'];

/**
 * The group's notifications before its licences end (spec part 2 §5): a switch; off is sent as `never` with 0
 * days, on starts at the spec's default (every day, 14 days before).
 */
function NotificationsField({ ctx, commandId }: { ctx: FieldContext; commandId: string }) {
  const { t } = useTranslation();
  const id = useId();
  const v = (ctx.value ?? {}) as FormValues;
  const period = typeof v.period === 'string' ? v.period : 'never';
  const days = typeof v.notify_before === 'string' ? v.notify_before : '';
  const active = period !== 'never' && period !== '';
  const fields = ctx.field.fields ?? [];
  const periodField = fields.find((f) => f.key === 'period');
  const daysField = fields.find((f) => f.key === 'notify_before');
  return (
    <fieldset
      className="grid grid-cols-1 gap-x-4 gap-y-2 rounded-md border border-slate-200 px-3 pt-1 pb-3 sm:grid-cols-2"
      data-testid={`fieldset-${ctx.path}`}
    >
      <legend className="px-1 text-xs font-semibold text-slate-700">{ctx.label}</legend>
      <label className="flex min-h-8 cursor-pointer items-center gap-2 text-sm text-slate-800 sm:col-span-2">
        <input
          type="checkbox"
          checked={active}
          disabled={ctx.disabled}
          onChange={(e) =>
            ctx.set(
              e.target.checked
                ? { period: 'everyday', notify_before: String(LICENCE_NOTIFY_BEFORE_DAYS) }
                : { period: 'never', notify_before: '0' },
            )
          }
          data-testid={`field-${ctx.path}.active`}
          className={`size-4 accent-blue-700 ${focusRing}`}
        />
        {t('groups.licence_notify')}
      </label>
      {active && periodField && daysField && (
        <>
          <div>
            <label htmlFor={id} className="mb-1 block text-xs font-medium text-slate-700">
              {fieldLabel(commandId, { key: 'period' }, `${ctx.path}.period`)}
            </label>
            <select
              id={id}
              name={`${ctx.path}.period`}
              value={period}
              disabled={ctx.disabled}
              onChange={(e) => ctx.set({ ...v, period: e.target.value })}
              data-testid={`field-${ctx.path}.period`}
              className={`${inputClass} border-slate-300`}
            >
              {LicenceNotifyModes.map((mode) => (
                <option key={mode} value={mode}>
                  {valueLabel(periodField, mode)}
                </option>
              ))}
            </select>
          </div>
          <TextField
            name={`${ctx.path}.notify_before`}
            label={fieldLabel(commandId, daysField, `${ctx.path}.notify_before`)}
            value={days}
            onValue={(d) => ctx.set({ ...v, notify_before: d })}
            readOnly={ctx.disabled}
            inputMode="numeric"
            autoComplete="off"
          />
        </>
      )}
      {ctx.error && <p className="text-xs text-red-700">{ctx.error}</p>}
    </fieldset>
  );
}

/**
 * The licence part of the group form: hidden from those who may neither view nor change groups' licences,
 * read-only for those who may only view them; the notifications as a switch.
 */
export function useLicenceOverrides(commandId: string): Record<string, FieldOverride> {
  const hasAny = useHasAny();
  const canView = hasAny(VIEW) || hasAny(EDIT);
  const canEdit = hasAny(EDIT);
  return useMemo(
    () => ({
      license_settings: { hidden: !canView, readOnly: !canEdit },
      license_limits: { hidden: !canView, readOnly: !canEdit },
      'license_settings.notifications': {
        render: (ctx) => <NotificationsField ctx={ctx} commandId={commandId} />,
      },
    }),
    [canView, canEdit, commandId],
  );
}
