import { Outlet, createBrowserRouter } from 'react-router';
import { onSignedOut } from './api/client';
import { AlertsArea } from './alerts/alerts-area';
import { AppLayout } from './layout/app-layout';
import { AuthLayout } from './layout/auth-layout';
import { RequireSession, RootRedirect, SignedOutOnly } from './session/guards';
import {
  isSignedOutOnly,
  isSigningOut,
  loginPath,
  profileAtom,
  signedOutReasonAtom,
} from './session/session';
import { appStore } from './store';
import { LoginPage } from './features/session/login-page';
import { ChooseProjectPage } from './features/session/choose-project-page';
import { RegistrationPage } from './features/registration/registration-page';
import { RegistrationConfirmPage } from './features/registration/registration-confirm-page';
import { SelfRegistrationPage } from './features/self-registration/self-registration-page';
import { PasswordRecoveryPage } from './features/password/password-recovery-page';
import { PasswordResetPage } from './features/password/password-reset-page';
import { HomePage } from './features/home/home-page';
import { UsersPage } from './features/users/users-page';
import { UserAddPage } from './features/users/user-add-page';
import { UserEditPage } from './features/users/user-edit-page';
import { RolesPage } from './features/roles/roles-page';
import { RoleAddPage, RoleEditPage } from './features/roles/role-pages';
import { GroupsPage } from './features/groups/groups-page';
import { GroupAddPage, GroupEditPage } from './features/groups/group-pages';
import { GenerateDialogHost } from './features/groups/generate-dialog';
import { ProfilePage } from './features/profile/profile-page';
import { DeviceTasksPage } from './features/device-tasks/device-tasks-page';
import { DeviceSearchPage } from './features/device-search/device-search-page';
import { DeviceEventsPage } from './features/device-events/device-events-page';
import { CallHistoryPage } from './features/call-history/call-history-page';
import { AcsEventsPage } from './features/acs-events/acs-events-page';
import { AuditEventsPage } from './features/audit-events/audit-events-page';
import { LicencesPage } from './features/licences/licences-page';
import { BackupsPage } from './features/backups/backups-page';
import { SystemInfoPage } from './features/system-info/system-info-page';
import { LogsPage } from './features/logs/logs-page';
import { GeneralSettingsPage } from './features/general-settings/general-settings-page';
import { LicenceReportsPage } from './features/reports/licence-reports-page';
import { AccessMatrixPage } from './features/access-matrix/access-matrix-page';
import { GuestAccessPage } from './features/guest-access/guest-access-page';
import { GuestPassPage } from './features/guest-access/guest-pass-page';
import { NotificationsPage } from './features/notifications/notifications-page';
import { NotificationSettingsPage } from './features/notifications/notification-settings-page';
import { RemoteControlPage } from './features/remote-control/remote-control-page';
import { DeviceEditPage } from './features/devices/device-edit-page';
import { PageGate } from './access/page-gate';
import { Pages } from './nav/pages';
import { VirtualNumbersPage } from './features/sip/sip-status-notice';
import { screenOf } from './families/family-screens';
import type { ReactNode } from 'react';
import { NotFoundPage } from './features/not-found/not-found-page';

function Root() {
  return (
    <>
      <Outlet />
      <AlertsArea />
    </>
  );
}

/**
 * The screens that do more than a family's generated pages (and the pages of no family), by page id; each
 * is guarded by the page's gates.
 */
const screens: Record<string, ReactNode> = {
  home: <HomePage />,
  users: <UsersPage />,
  'users.add': <UserAddPage />,
  'users.edit': <UserEditPage />,
  roles: <RolesPage />,
  'roles.add': <RoleAddPage />,
  'roles.edit': <RoleEditPage />,
  groups: <GroupsPage />,
  'groups.add': <GroupAddPage />,
  'groups.edit': <GroupEditPage />,
  'audit-events': <AuditEventsPage />,
  licenses: <LicencesPage />,
  backups: <BackupsPage />,
  'system-info': <SystemInfoPage />,
  logs: <LogsPage />,
  'general-settings': <GeneralSettingsPage />,
  'devices.events': <DeviceEventsPage />,
  'access-control.events': <AcsEventsPage />,
  'devices.tasks': <DeviceTasksPage />,
  'devices.edit': <DeviceEditPage />,
  'devices.search': <DeviceSearchPage />,
  'reports-licenses': <LicenceReportsPage />,
  'access-matrix': <AccessMatrixPage />,
  'guest-access': <GuestAccessPage />,
  profile: <ProfilePage />,
  notifications: <NotificationsPage />,
  'virtual-numbers': <VirtualNumbersPage />,
  'call-history': <CallHistoryPage />,
  'notifications.settings': <NotificationSettingsPage />,
};

function SignedIn() {
  return (
    <>
      <AppLayout />
      <GenerateDialogHost />
    </>
  );
}

/** Routes of spec part 1 §2.1 that exist so far, with the guards of §2.2. */
export const router = createBrowserRouter([
  {
    element: <Root />,
    children: [
      { index: true, element: <RootRedirect /> },
      {
        element: <SignedOutOnly />,
        children: [
          {
            element: <AuthLayout />,
            children: [
              { path: 'login', element: <LoginPage /> },
              { path: 'registration/confirm/:token', element: <RegistrationConfirmPage /> },
              { path: 'registration/:token?', element: <RegistrationPage /> },
              { path: 'self-registration/:token?', element: <SelfRegistrationPage /> },
              { path: 'password/recovery', element: <PasswordRecoveryPage /> },
              { path: 'password/reset/:token', element: <PasswordResetPage /> },
            ],
          },
        ],
      },
      {
        element: <AuthLayout />,
        children: [
          { path: 'choose-project', element: <ChooseProjectPage /> },
          // public: the guest's pass by its key, signed in or not (spec part 1 §2.1)
          { path: 'guest-access/:keyId', element: <GuestPassPage /> },
        ],
      },
      {
        element: <RequireSession />,
        children: [
          {
            element: <SignedIn />,
            children: Pages.map((p) => ({
              path: p.path.slice(1),
              element: <PageGate page={p.id}>{screenOf(p, screens)}</PageGate>,
            })),
          },
          // remote control: a tab of its own, outside the main layout (spec part 1 §2.1); its session is the gate
          { path: 'devices/remote-control', element: <RemoteControlPage /> },
        ],
      },
      {
        element: <AuthLayout />,
        children: [{ path: '*', element: <NotFoundPage /> }],
      },
    ],
  },
]);

// The session is gone (refresh failed): back to login, then back here (spec part 2 §4).
onSignedOut(() => {
  appStore.set(profileAtom, null);
  if (isSigningOut()) return;
  const { pathname, search } = router.state.location;
  if (isSignedOutOnly(pathname)) return;
  appStore.set(signedOutReasonAtom, 'expired');
  void router.navigate(loginPath(pathname + search), { replace: true });
});
