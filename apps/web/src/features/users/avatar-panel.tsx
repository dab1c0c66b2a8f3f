import { useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getCommand, type User } from '@lintel/commands';
import { describeError } from '../../api/errors';
import { pushAlert } from '../../alerts/alerts';
import { useCan } from '../../access/use-can';
import { execute } from '../../commands/execute';
import { Button, FileButton } from '../../ui/button';
import { Icon } from '../../ui/icon';
import { initials } from '../../layout/user-menu';

/** The largest centred square of an image, in its own pixels: the crop the server cuts the avatar to. */
async function centreSquare(file: Blob): Promise<{ x: number; y: number; size: number }> {
  const bitmap = await createImageBitmap(file);
  const size = Math.min(bitmap.width, bitmap.height);
  const square = {
    x: Math.floor((bitmap.width - size) / 2),
    y: Math.floor((bitmap.height - size) / 2),
    size,
  };
  bitmap.close();
  return square;
}

/** A user's photo: shown, replaced by an uploaded image (cropped to its centre square), or removed. */
export function AvatarPanel({
  user,
  onChange,
}: {
  user: User;
  onChange: (avatarUrl: string | null) => void;
}) {
  const { t } = useTranslation();
  const can = useCan();
  const [busy, setBusy] = useState(false);
  const mayEdit = can(getCommand('user.avatar_upload').gates).can;

  async function upload(file: File) {
    setBusy(true);
    try {
      const crop = await centreSquare(file);
      const r = await execute('user.avatar_upload', { id: user.id, image: file, ...crop }, 'ui');
      onChange(r.avatar_url);
      pushAlert('success', t('users.avatar_saved'));
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(false);
    }
  }

  async function remove() {
    setBusy(true);
    try {
      await execute('user.avatar_delete', { id: user.id }, 'ui');
      onChange(null);
    } catch (err) {
      pushAlert('error', describeError(err).message);
    } finally {
      setBusy(false);
    }
  }

  return (
    <section
      className="flex items-center gap-3 rounded-lg border border-slate-200 bg-white p-3"
      aria-label={t('users.avatar')}
    >
      {user.avatar_url ? (
        <img
          src={user.avatar_url}
          alt={t('users.avatar_of', { name: user.name })}
          className="size-14 rounded-full object-cover"
          data-testid="avatar"
        />
      ) : (
        <span
          aria-hidden="true"
          className="flex size-14 items-center justify-center rounded-full bg-slate-200 text-lg font-semibold text-slate-600"
        >
          {initials(user.name)}
        </span>
      )}
      {mayEdit && (
        <div className="flex flex-col items-start gap-1">
          <FileButton
            accept="image/*"
            fileTestId="avatar-file"
            size="sm"
            busy={busy}
            icon={<Icon name="user" className="size-3.5" />}
            onFile={(file) => void upload(file)}
          >
            {t('users.avatar_upload')}
          </FileButton>
          {user.avatar_url && (
            <Button size="sm" variant="ghost" disabled={busy} onClick={() => void remove()}>
              {t('users.avatar_delete')}
            </Button>
          )}
        </div>
      )}
    </section>
  );
}
