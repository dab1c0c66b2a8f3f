import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { downloadFile, getCommand, type CommandId } from '@lintel/commands';
import { api, runCommand } from '../../api/client';
import { describeError } from '../../api/errors';
import { useCan } from '../../access/use-can';
import { Button } from '../../ui/button';
import { Dialog } from '../../ui/dialog';
import { downloadBlob } from '../users/export-file';

type Tr = (key: string, params?: Record<string, unknown>) => string;

const blobOf = (f: { bytes: Uint8Array; contentType: string }) =>
  new Blob([f.bytes as BlobPart], { type: f.contentType });

/**
 * The QR preview (spec part 1 §2.4 "QR preview (identifier_id, pkPassEnabled)"): a QR identifier's code as
 * the server draws it (`identifier.qr`), saved as PNG or SVG, and its Apple Wallet pass
 * (`identifier.wallet_pass`) when the project's wallet settings can sign one — or, for a user who may not
 * read those settings, offered and let the server say why not.
 */
export function QrPreviewDialog({ id, onClose }: { id: number; onClose: () => void }) {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  const can = useCan();
  const [url, setUrl] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pkPassEnabled, setPkPassEnabled] = useState(false);

  useEffect(() => {
    let live = true;
    let made: string | null = null;
    downloadFile({ api }, getCommand('identifier.qr'), { id, format: 'svg' })
      .then((f) => {
        made = URL.createObjectURL(blobOf(f));
        if (live) setUrl(made);
      })
      .catch((e: unknown) => live && setError(describeError(e, 'identifier.qr').message));
    if (can(getCommand('settings.wallet_get').gates).can)
      runCommand('settings.wallet_get', {})
        .then((r) => live && setPkPassEnabled(r.enabled))
        .catch(() => undefined);
    else setPkPassEnabled(true);
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
    // once per identifier
  }, [id]);

  async function save(command: CommandId & ('identifier.qr' | 'identifier.wallet_pass'), args: object) {
    try {
      const f = await downloadFile({ api }, getCommand(command), { id, ...args });
      downloadBlob(blobOf(f), f.filename ?? `identifier-${id}`);
    } catch (e) {
      setError(describeError(e, command).message);
    }
  }

  return (
    <Dialog
      title={tr('web:identifiers.qr_preview.title')}
      onClose={onClose}
      width="small"
      testId="qr-preview"
      footer={
        <>
          <Button type="button" onClick={() => void save('identifier.qr', { format: 'png' })}>
            {tr('web:identifiers.qr_preview.png')}
          </Button>
          <Button type="button" onClick={() => void save('identifier.qr', { format: 'svg' })}>
            {tr('web:identifiers.qr_preview.svg')}
          </Button>
          {pkPassEnabled && (
            <Button
              type="button"
              onClick={() => void save('identifier.wallet_pass', {})}
              data-testid="qr-preview-wallet"
            >
              {tr('web:identifiers.qr_preview.wallet')}
            </Button>
          )}
        </>
      }
    >
      {error && (
        <p role="alert" className="text-rose-700">
          {error}
        </p>
      )}
      {url && (
        <img
          src={url}
          alt={tr('web:identifiers.qr_preview.alt')}
          width={256}
          height={256}
          className="mx-auto bg-white"
          data-testid="qr-preview-image"
        />
      )}
    </Dialog>
  );
}

/** The edit page's button that opens the QR preview of a QR identifier. */
export function QrPreviewButton({ id }: { id: number }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button type="button" onClick={() => setOpen(true)} data-testid="qr-preview-open">
        {(t as unknown as Tr)('web:identifiers.qr_preview.open')}
      </Button>
      {open && <QrPreviewDialog id={id} onClose={() => setOpen(false)} />}
    </>
  );
}
