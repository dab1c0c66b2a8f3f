import { useState } from 'react';
import { atom, useAtom } from 'jotai';
import { useTranslation } from 'react-i18next';
import { describeError, validateArgs } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { execute } from '../../commands/execute';
import { registerStarter } from '../../commands/start';
import { CommandForm, type FieldOverride } from '../../forms/command-form';
import { useCommandForm } from '../../forms/use-command-form';
import { appStore } from '../../store';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { FormError } from '../../ui/field';
import { Icon } from '../../ui/icon';

interface Preview {
  parent: { id: number; name: string };
  items: { name: string; logic_address: string | null; number: number; exists: boolean }[];
}

/** `id` of the generation is the group the new ones go under. */
const overrides: Record<string, FieldOverride> = { id: { labelKey: 'commands:fields.group.parent_id' } };

const generateAtom = atom<{ parent: number | null; key: number } | null>(null);
let key = 0;

/** Opens the bulk generation dialog, under `parent` when known. */
export function openGenerateDialog(parent: number | null): void {
  appStore.set(generateAtom, { parent, key: ++key });
}

// the palette's "Generate groups" and "Preview generated groups" open this dialog too
registerStarter('group.generate', () => openGenerateDialog(null));
registerStarter('group.save_generated', () => openGenerateDialog(null));

function GenerateDialog({ parent, onClose }: { parent: number | null; onClose: () => void }) {
  const { t } = useTranslation();
  const form = useCommandForm('group.generate', { preset: parent ? { id: parent } : {} });
  const [preview, setPreview] = useState<Preview | null>(null);
  const [saving, setSaving] = useState(false);

  async function runPreview() {
    const r = (await form.submit()) as Preview | null;
    if (r) setPreview(r);
  }

  async function save() {
    const args = form.args();
    const invalid = validateArgs('group.save_generated', args as never);
    if (invalid) return form.setFailure(invalid);
    setSaving(true);
    try {
      const r = await execute('group.save_generated', args, 'ui');
      pushAlert('success', t('groups.generated', { count: r.data.length }));
      onClose();
    } catch (err) {
      form.setFailure(describeError(err));
    } finally {
      setSaving(false);
    }
  }

  const fresh = preview?.items.filter((i) => !i.exists).length ?? 0;

  return (
    <Dialog
      title={t('groups.generate_title')}
      onClose={onClose}
      width="wide"
      tall
      testId="generate-dialog"
      wrap={(inner) => (
        <form
          noValidate
          className="flex min-h-0 flex-1 flex-col"
          onSubmit={(e) => {
            e.preventDefault();
            void runPreview();
          }}
        >
          {inner}
        </form>
      )}
      footer={
        <>
          <Button onClick={onClose}>{t('forms.cancel')}</Button>
          <Button
            type="submit"
            busy={form.busy}
            icon={<Icon name="refresh" />}
            data-testid="generate-preview"
          >
            {t('groups.preview')}
          </Button>
          <Button
            variant="primary"
            busy={saving}
            disabled={!preview || fresh === 0}
            onClick={() => void save()}
            data-testid="generate-save"
          >
            {t('groups.save_generated', { count: fresh })}
          </Button>
        </>
      }
    >
      <div className="grid gap-4 md:grid-cols-[minmax(0,1fr)_minmax(0,1fr)]">
        <div className="space-y-3">
          <FormError message={form.failure?.message} />
          <CommandForm
            commandId="group.generate"
            fields={form.fields}
            values={form.values}
            onChange={(p, v) => (form.set(p, v), setPreview(null))}
            errors={form.failure?.fields ?? {}}
            known={form.known}
            overrides={overrides}
          />
        </div>
        <section aria-label={t('groups.preview')} className="min-w-0">
          <h3 className="mb-1 text-xs font-semibold text-slate-700">{t('groups.preview')}</h3>
          {!preview ? (
            <p className="rounded-md border border-dashed border-slate-300 p-3 text-xs text-slate-500">
              {t('groups.preview_hint')}
            </p>
          ) : (
            <div
              className="max-h-[50vh] overflow-auto rounded-md border border-slate-200"
              data-testid="generate-table"
            >
              <p className="border-b border-slate-200 bg-slate-50 px-2 py-1 text-xs text-slate-600">
                {t('groups.preview_summary', {
                  parent: preview.parent.name,
                  fresh,
                  taken: preview.items.length - fresh,
                })}
              </p>
              <table className="w-full text-left text-xs">
                <thead className="sticky top-0 bg-white text-slate-600">
                  <tr>
                    <th scope="col" className="px-2 py-1 font-semibold">
                      {t('groups.number')}
                    </th>
                    <th scope="col" className="px-2 py-1 font-semibold">
                      {t('groups.name')}
                    </th>
                    <th scope="col" className="px-2 py-1 font-semibold">
                      {t('groups.logic_address')}
                    </th>
                    <th scope="col" className="px-2 py-1 font-semibold">
                      {t('groups.state')}
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {preview.items.map((i) => (
                    <tr
                      key={`${i.number}-${i.name}`}
                      className={`border-t border-slate-100 ${i.exists ? 'text-slate-400' : ''}`}
                    >
                      <td className="px-2 py-0.5 tabular-nums">{i.number}</td>
                      <td className="px-2 py-0.5">{i.name}</td>
                      <td className="px-2 py-0.5 font-mono">{i.logic_address ?? '—'}</td>
                      <td className="px-2 py-0.5">{i.exists ? t('groups.exists') : t('groups.new')}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
        </section>
      </div>
    </Dialog>
  );
}

/** Mounted once in the groups screens' host: the generation dialog when it is open. */
export function GenerateDialogHost() {
  const [state, setState] = useAtom(generateAtom);
  if (!state) return null;
  return <GenerateDialog key={state.key} parent={state.parent} onClose={() => setState(null)} />;
}
