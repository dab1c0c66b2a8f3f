import { useEffect, useRef } from 'react';
import { useTranslation } from 'react-i18next';
import type { CommandId } from '@lintel/commands';
import { pushAlert } from '../alerts/alerts';
import { useCan } from '../access/use-can';
import { useShortcut } from '../keys/shortcuts';
import { Button } from '../ui/button';
import { Dialog, type DialogWidth } from '../ui/dialog';
import { FormError } from '../ui/field';
import { commandTitle } from '../commands/titles';
import { deleteRows } from '../commands/delete-rows';
import { validateArgs } from '../api/errors';
import { approveLabelKey, isFamilyDelete } from './approve-label';
import { nounOf } from './fields';
import { confirmDiscard } from './leave-guard';
import { CommandForm, type FieldOverride } from './command-form';
import { useCommandForm, type CommandFormOptions } from './use-command-form';

export interface CommandDialogProps {
  commandId: string;
  options?: CommandFormOptions;
  onClose: () => void;
  onDone?: (result: unknown) => void;
  width?: DialogWidth;
  title?: string;
  overrides?: Record<string, FieldOverride>;
  /** not editable: no Approve */
  readOnly?: boolean;
}

/**
 * A command's generated form in a dialog (spec part 1 §2.4): Cancel and Approve, Approve only when the user
 * may run the command and the form is not read-only. A failed check or a refused call keeps it open with the
 * catalogue message and the fields marked; success closes it.
 */
export function CommandDialog({
  commandId,
  options,
  onClose,
  onDone,
  width,
  title,
  overrides,
  readOnly = false,
}: CommandDialogProps) {
  const { t } = useTranslation();
  const can = useCan();
  const form = useCommandForm(commandId as CommandId, options);
  const allowed = can(form.command.gates).can && !readOnly;
  const heading = title ?? commandTitle(commandId);
  const ref = useRef<HTMLFormElement>(null);
  // closing with changes typed in (Escape, Cancel, the cross) asks first
  const close = () => {
    if (!form.dirty || !allowed) return onClose();
    void confirmDiscard().then((leave) => leave && onClose());
  };

  // after a failure, the cursor goes to the first field to fix
  useEffect(() => {
    if (form.refusals)
      ref.current
        ?.querySelector<HTMLElement>('[aria-invalid="true"] input, [aria-invalid="true"]:not(fieldset)')
        ?.focus();
  }, [form.refusals]);

  async function approve() {
    if (!allowed) return;
    if (isFamilyDelete(commandId)) return approveDelete();
    const result = await form.submit();
    if (result === null) return;
    pushAlert('success', t('forms.done', { title: heading }));
    onClose();
    onDone?.(result);
  }

  // a delete from the palette asks like a table's, naming the rows, then waits with Undo before it is sent
  async function approveDelete() {
    const args = form.args();
    const invalid = validateArgs(commandId as CommandId, args as never);
    if (invalid) {
      form.setFailure(invalid);
      return;
    }
    const { items, id, ...rest } = args as { items?: number[]; id?: number };
    const ids = items ?? (typeof id === 'number' ? [id] : []);
    onClose();
    // deleteRows says what went and what did not
    await deleteRows(nounOf(commandId), ids, rest);
  }

  // this dialog's approve: only for keys pressed inside it (not in the palette or a dialog over it)
  useShortcut(
    'mod+enter',
    (e) => {
      if (ref.current?.contains(e.target as Node)) void approve();
    },
    { labelKey: 'keys.approve', inInputs: true, inDialogs: true, enabled: allowed },
    [approve],
  );

  return (
    <Dialog
      title={heading}
      onClose={close}
      width={width}
      tall={form.fields.length > 3}
      testId="command-dialog"
      wrap={(inner) => (
        <form
          ref={ref}
          noValidate
          className="flex min-h-0 flex-1 flex-col"
          onSubmit={(e) => {
            e.preventDefault();
            void approve();
          }}
        >
          {inner}
        </form>
      )}
      footer={
        <>
          <span className="mr-auto hidden text-[11px] text-slate-500 sm:inline">
            {allowed && t('forms.approve_hint')}
          </span>
          <Button onClick={close} data-testid="dialog-cancel">
            {t('forms.cancel')}
          </Button>
          {allowed && (
            <Button
              type="submit"
              variant={isFamilyDelete(commandId) ? 'danger' : 'primary'}
              busy={form.busy}
              data-testid="dialog-approve"
            >
              {(t as unknown as (k: string) => string)(approveLabelKey(commandId))}
            </Button>
          )}
        </>
      }
    >
      <div className="space-y-3">
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
      </div>
    </Dialog>
  );
}
