import { useEffect, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { getCommand, sipNumberResource, type SipStatus } from '@lintel/commands';
import { runCommand } from '../../api/client';
import { useCan } from '../../access/use-can';
import { Notice } from '../../ui/field';
import { FamilyListPage } from '../../families/family-screens';

/**
 * Telephony down says so on the telephony screens (issue 22): the SIP service's reason, for those who may
 * read its status; nothing when it runs or when the status is not theirs to read.
 */
export function SipStatusNotice() {
  const { t } = useTranslation();
  const can = useCan();
  const mayRead = can(getCommand('sip.status').gates).can;
  const [status, setStatus] = useState<SipStatus | null>(null);
  useEffect(() => {
    if (!mayRead) return;
    let live = true;
    runCommand('sip.status', {}).then(
      (s) => live && setStatus(s),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [mayRead]);
  if (!status || status.state === 'up') return null;
  return (
    <Notice kind="info" testId="sip-status">
      {t(`sip.reasons.${status.reason ?? 'stopped'}`)}
    </Notice>
  );
}

/** /virtual-numbers: the generated list, with the SIP service's state above it when it is down. */
export function VirtualNumbersPage() {
  return (
    <div className="flex h-full min-h-0 flex-col gap-3">
      <SipStatusNotice />
      <div className="min-h-0 flex-1">
        <FamilyListPage resource={sipNumberResource} />
      </div>
    </div>
  );
}
