import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { downloadFile, getCommand } from '@lintel/commands';
import { api } from '../../api/client';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { execute } from '../../commands/execute';
import { Button, FileButton } from '../../ui/button';
import { Dialog } from '../../ui/dialog';

type Tr = (key: string, params?: Record<string, unknown>) => string;

const isNotFound = (e: unknown) => (e as { status?: unknown } | null)?.status === 404;

/**
 * A face identifier's photo (spec part 1 §3 Identifier "photo"): shown as the server stores it
 * (`identifier.photo`) and replaced by an uploaded image (`identifier.photo_upload`, checked like an avatar;
 * the server keeps the largest square at its centre). The devices holding the identifier receive it.
 */
export function FacePhotoDialog({ id, onClose }: { id: number; onClose: () => void }) {
  const { t } = useTranslation();
  const tr = t as unknown as Tr;
  const can = useCan();
  const [url, setUrl] = useState<string | null>(null);
  const [missing, setMissing] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [version, setVersion] = useState(0);
  const mayUpload = can(getCommand('identifier.photo_upload').gates).can;

  useEffect(() => {
    let live = true;
    let made: string | null = null;
    downloadFile({ api }, getCommand('identifier.photo'), { id })
      .then((f) => {
        made = URL.createObjectURL(new Blob([f.bytes as BlobPart], { type: f.contentType }));
        if (live) {
          setUrl(made);
          setMissing(false);
        }
      })
      .catch((e: unknown) => {
        if (!live) return;
        if (isNotFound(e)) setMissing(true);
        else setError(describeError(e, 'identifier.photo').message);
      });
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [id, version]);

  async function upload(file: File) {
    setBusy(true);
    setError(null);
    try {
      await execute('identifier.photo_upload', { id, image: file }, 'ui');
      pushAlert('success', tr('web:identifiers.face_photo.saved'));
      setVersion((v) => v + 1);
    } catch (e) {
      setError(describeError(e, 'identifier.photo_upload').message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <Dialog
      title={tr('web:identifiers.face_photo.title')}
      onClose={onClose}
      width="small"
      testId="face-photo"
      footer={
        mayUpload ? (
          <FileButton
            accept="image/jpeg,image/png"
            fileTestId="face-photo-file"
            busy={busy}
            onFile={(file) => void upload(file)}
          >
            {tr('web:identifiers.face_photo.upload')}
          </FileButton>
        ) : undefined
      }
    >
      {error && (
        <p role="alert" className="text-rose-700">
          {error}
        </p>
      )}
      {missing && <p className="text-slate-600">{tr('web:identifiers.face_photo.none')}</p>}
      {url && !missing && (
        <img
          src={url}
          alt={tr('web:identifiers.face_photo.alt')}
          width={256}
          height={256}
          className="mx-auto rounded object-cover"
          data-testid="face-photo-image"
        />
      )}
    </Dialog>
  );
}

/** The edit page's button that opens a face identifier's photo. */
export function FacePhotoButton({ id }: { id: number }) {
  const { t } = useTranslation();
  const [open, setOpen] = useState(false);
  return (
    <>
      <Button type="button" onClick={() => setOpen(true)} data-testid="face-photo-open">
        {(t as unknown as Tr)('web:identifiers.face_photo.open')}
      </Button>
      {open && <FacePhotoDialog id={id} onClose={() => setOpen(false)} />}
    </>
  );
}
