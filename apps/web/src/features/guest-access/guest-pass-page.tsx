import { useCallback, useEffect, useState } from 'react';
import { useParams } from 'react-router';
import { useTranslation } from 'react-i18next';
import { downloadFile, getCommand, type PublicGuestPass } from '@lintel/commands';
import { api, runCommand } from '../../api/client';
import { downloadBlob } from '../users/export-file';
import { describeError } from '../../api/errors';
import { usePageTitle } from '../../layout/page-title';
import { Button } from '../../ui/button';

/**
 * /guest-access/{keyId}, public (spec part 1 §2.1 "guest access check"): the pass its key opens — its QR
 * code's payload for the reader, its validity and passes — and a button per door that opens it. An unknown,
 * expired or used-up key shows the catalogue's message and nothing else.
 */
export function GuestPassPage() {
  const { keyId = '' } = useParams();
  const { t: typed } = useTranslation();
  const t = typed as unknown as (k: string, o?: Record<string, unknown>) => string;
  const p = (k: string, o?: Record<string, unknown>) => t(`commands:pages.guest_access.${k}`, o);
  usePageTitle(p('pass_title'));
  const [pass, setPass] = useState<PublicGuestPass | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const load = useCallback(async () => {
    try {
      setPass(await runCommand('guest_access.info', { key_id: keyId }));
      setError(null);
    } catch (e) {
      setPass(null);
      setError(describeError(e, 'guest_access.info').message);
    }
  }, [keyId]);
  useEffect(() => void load(), [load]);

  async function open(token: string) {
    setBusy(token);
    try {
      const r = await runCommand('guest_access.open', { key_id: keyId, device: token });
      setNote(p('opened', { device: r.device }));
      await load();
    } catch (e) {
      setNote(describeError(e, 'guest_access.open').message);
    } finally {
      setBusy(null);
    }
  }

  /** the pass as an Apple Wallet file: Safari on a phone offers to add it */
  async function addToWallet() {
    try {
      const file = await downloadFile({ api }, getCommand('guest_access.wallet_pass'), { key_id: keyId });
      downloadBlob(
        new Blob([file.bytes as BlobPart], { type: file.contentType }),
        file.filename ?? 'pass.pkpass',
      );
    } catch (e) {
      setNote(describeError(e, 'guest_access.wallet_pass').message);
    }
  }

  const shown = (v: string | null) => (v ? new Date(v).toLocaleString() : '—');
  return (
    <div className="flex flex-col gap-3" data-testid="guest-pass">
      <h1 className="text-lg font-semibold">{p('pass_title')}</h1>
      {error && (
        <p role="alert" className="text-rose-700">
          {error}
        </p>
      )}
      {pass && (
        <>
          <p className="font-medium">{pass.name}</p>
          <p className="text-xs text-slate-600">{p('qr_hint')}</p>
          <img
            src={pass.qr_image}
            alt={p('qr_alt')}
            width={256}
            height={256}
            className="self-start bg-white"
            data-testid="guest-qr-image"
          />
          <p className="font-mono text-sm break-all" data-testid="guest-qr">
            {pass.qr}
          </p>
          {pass.wallet_enabled && (
            <Button type="button" onClick={() => void addToWallet()} data-testid="guest-wallet">
              {p('add_to_wallet')}
            </Button>
          )}
          <p className="text-sm">
            {p('validity', { from: shown(pass.valid_from_u), to: shown(pass.valid_to_u) })}
          </p>
          <p className="text-sm">
            {pass.pass_limit === null
              ? p('passes_used', { count: pass.passes_count })
              : p('passes_left', { left: pass.pass_limit - pass.passes_count, max: pass.pass_limit })}
          </p>
          {pass.state === 'not_yet_valid' && <p className="text-amber-700">{p('not_yet')}</p>}
          <div className="flex flex-col gap-2">
            {pass.devices.map((d) => (
              <Button
                key={d.token}
                type="button"
                variant="primary"
                busy={busy === d.token}
                onClick={() => void open(d.token)}
              >
                {p('open', { device: d.name })}
              </Button>
            ))}
          </div>
        </>
      )}
      {note && (
        <p role="status" className="text-sm">
          {note}
        </p>
      )}
    </div>
  );
}
