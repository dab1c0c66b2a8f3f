import { useEffect, useRef, type ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import type { CommandId } from '@lintel/commands';
import { pushAlert } from '../alerts/alerts';
import { useCan } from '../access/use-can';
import { useShortcut } from '../keys/shortcuts';
import { Button } from '../ui/button';
import { FormError } from '../ui/field';
import { CommandForm, type FieldOverride } from './command-form';
import { useCommandForm, type CommandFormOptions } from './use-command-form';
import { approveLabelKey } from './approve-label';
import { useLeaveGuard } from './leave-guard';

export interface FormPageProps {
  commandId: string;
  options?: CommandFormOptions;
  overrides?: Record<string, FieldOverride>;
  /** after a successful approve (e.g. go back to the list) */
  onDone: (result: unknown) => void;
  onCancel: () => void;
  /** not editable: fields read-only, no Approve */
  readOnly?: boolean;
  /** buttons beside Approve (send registration link, change password, delete) */
  actions?: ReactNode;
  /** a column beside the form (status, dates) */
  aside?: ReactNode;
  /** the success message; default "<command title>: done" */
  doneMessage?: string;
}

/**
 * An add or edit screen as a full page (spec part 1 §2.4): the command's generated form, Cancel and Approve
 * (Approve only with the permission and when not read-only), the catalogue message and marked fields on a
 * failure, Ctrl/Cmd+Enter to approve.
 */
export function FormPage({
  commandId,
  options,
  overrides,
  onDone,
  onCancel,
  readOnly = false,
  actions,
  aside,
  doneMessage,
}: FormPageProps) {
  const { t } = useTranslation();
  const can = useCan();
  const form = useCommandForm(commandId as CommandId, options);
  const allowed = can(form.command.gates).can && !readOnly;
  const ref = useRef<HTMLFormElement>(null);
  const guard = useLeaveGuard(allowed && form.dirty, form.values);

  async function approve() {
    // what was just saved is not sent again: the page stays drawn (and its keys live) a while after its save
    // navigated away, and a second Ctrl+Enter in that while made the record twice (keyboard-journeys, loaded)
    if (!allowed || guard.holdsSaved()) return;
    const sent = form.values;
    const result = await form.submit();
    if (result === null) return;
    guard.saved(sent);
    pushAlert('success', doneMessage ?? t('forms.saved'));
    onDone(result);
  }

  useShortcut(
    'mod+enter',
    () => void approve(),
    { labelKey: 'keys.approve', inInputs: true, enabled: allowed },
    [approve],
  );

  // a field marked autoFocus takes the cursor once, when the form is drawn (in dialogs the dialog does this)
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || readOnly) return;
    const first = ref.current?.querySelector<HTMLElement>('[data-autofocus]');
    if (!first) return;
    first.focus();
    focused.current = true;
  });

  // after a failure, the cursor goes to the first field to fix
  useEffect(() => {
    if (form.refusals)
      ref.current
        ?.querySelector<HTMLElement>('[aria-invalid="true"] input, [aria-invalid="true"]:not(fieldset)')
        ?.focus();
  }, [form.refusals]);

  return (
    <form
      ref={ref}
      noValidate
      data-testid="form-page"
      onSubmit={(e) => {
        e.preventDefault();
        void approve();
      }}
      className="max-w-6xl"
    >
      <div className={`grid items-start gap-4 ${aside ? 'lg:grid-cols-[minmax(0,1fr)_18rem]' : ''}`}>
        <section className="space-y-3 rounded-lg border border-slate-200 bg-white p-4">
          <FormError message={form.failure?.message} />
          <CommandForm
            commandId={commandId}
            fields={form.fields}
            values={form.values}
            onChange={form.set}
            errors={form.failure?.fields ?? {}}
            readOnly={!allowed}
            overrides={overrides}
            known={form.known}
          />
        </section>
        {/* beside the form, not a landmark of its own (the sidebar is the page's one complementary region) */}
        {aside && <div className="space-y-3">{aside}</div>}
      </div>
      <div className="sticky bottom-0 z-10 mt-3 flex flex-wrap items-center gap-2 border-t border-slate-200 bg-slate-50/95 py-2.5 backdrop-blur">
        {allowed && (
          <Button type="submit" variant="primary" busy={form.busy} data-testid="form-approve">
            {(t as unknown as (k: string) => string)(approveLabelKey(commandId))}
          </Button>
        )}
        <Button onClick={onCancel} data-testid="form-cancel">
          {allowed ? t('forms.cancel') : t('forms.back')}
        </Button>
        {allowed && <span className="text-[11px] text-slate-500">{t('forms.approve_hint')}</span>}
        {readOnly && <span className="text-xs text-slate-500">{t('forms.read_only')}</span>}
        {actions && <div className="ml-auto flex flex-wrap items-center gap-2">{actions}</div>}
      </div>
    </form>
  );
}
