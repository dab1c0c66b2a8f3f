import { useAtomValue } from 'jotai';
import { useTranslation } from 'react-i18next';
import { CommandDialog } from '../forms/command-dialog';
import { ShortcutsDialog } from '../keys/shortcuts-dialog';
import { Button } from '../ui/button';
import { Dialog } from '../ui/dialog';
import { closeDialog, dialogsAtom, type HostDialog } from './dialogs';
import { ResultView } from './result-view';
import { commandTitle } from './titles';

function ConfirmDialog({ d }: { d: Extract<HostDialog, { kind: 'confirm' }> }) {
  const { t } = useTranslation();
  const answer = (ok: boolean) => {
    closeDialog(d.key);
    d.resolve(ok);
  };
  return (
    <Dialog
      title={d.title}
      onClose={() => answer(false)}
      width="small"
      testId="confirm-dialog"
      // a delete waits for a deliberate choice: Enter on the focused button keeps the rows
      initialFocus={d.danger ? '[data-confirm-cancel]' : '[data-confirm-approve]'}
      footer={
        <>
          <Button onClick={() => answer(false)} data-confirm-cancel data-testid="confirm-cancel">
            {t('forms.cancel')}
          </Button>
          <Button
            variant={d.danger ? 'danger' : 'primary'}
            onClick={() => answer(true)}
            data-confirm-approve
            data-testid="confirm-approve"
          >
            {d.approveLabel}
          </Button>
        </>
      }
    >
      <p className="text-sm text-slate-700">{d.message}</p>
    </Dialog>
  );
}

/** Renders the dialogs opened from anywhere (palette, keys, screens), newest on top. */
export function DialogHost() {
  const { t } = useTranslation();
  const dialogs = useAtomValue(dialogsAtom);
  return (
    <>
      {dialogs.map((d) => {
        switch (d.kind) {
          case 'form':
            return (
              <CommandDialog
                key={d.key}
                commandId={d.commandId}
                options={d.options}
                width={d.width}
                onClose={() => closeDialog(d.key)}
                onDone={d.onDone}
              />
            );
          case 'result':
            return (
              <Dialog
                key={d.key}
                title={commandTitle(d.commandId)}
                onClose={() => closeDialog(d.key)}
                testId="result-dialog"
                footer={<Button onClick={() => closeDialog(d.key)}>{t('dialog.close')}</Button>}
              >
                <ResultView commandId={d.commandId} result={d.result} />
              </Dialog>
            );
          case 'confirm':
            return <ConfirmDialog key={d.key} d={d} />;
          case 'shortcuts':
            return <ShortcutsDialog key={d.key} onClose={() => closeDialog(d.key)} />;
        }
      })}
    </>
  );
}
