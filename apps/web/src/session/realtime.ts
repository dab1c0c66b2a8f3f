import { useEffect, useRef } from 'react';
import { useAtomValue, useSetAtom } from 'jotai';
import { RealtimeClient, RealtimeTopics, WsReply, type WsServerMessage } from '@lintel/core';
import { api, runCommand } from '../api/client';
import { profileAtom, useSession } from './session';

/** The console's one websocket (spec part 1 §4 "Websocket"), on the session of the API client. */
export const realtime = new RealtimeClient({ api });

/**
 * While signed in: the websocket is connected, and the profile is read again when the user's role changes
 * (spec part 1 §4 "Real-time": RoleChangedEvent of the current role on private-app-changes; ours: the
 * user given another role, ProfileChangedEvent on private-users.{id}), or when the server says more was
 * missed than it keeps (`resync`). The menu, the palette and every gate read the profile, so they follow.
 */
export function useLiveProfile(): void {
  const session = useSession();
  const profile = useAtomValue(profileAtom);
  const setProfile = useSetAtom(profileAtom);
  const key = session ? `${session.project.id}:${session.login ?? ''}` : '';
  const userId = profile?.id;
  // read when an event comes, so a new role does not subscribe again
  const roleId = useRef<number | undefined>(undefined);
  roleId.current = profile?.role.id;

  useEffect(() => {
    if (!key || userId === undefined) return;
    let live = true;
    let loading = false;
    let again = false;
    const reload = async () => {
      if (loading) {
        again = true;
        return;
      }
      loading = true;
      try {
        do {
          again = false;
          const fresh = await runCommand('profile.get', {});
          if (live) setProfile(fresh);
        } while (again && live);
      } catch (err) {
        // a session that ended signs out by itself; anything else waits for the next event
        console.warn('lintel: the profile could not be read again', err);
      } finally {
        loading = false;
      }
    };
    const onAppChange = (m: WsServerMessage) => {
      if (
        m.data.type === WsReply.resync ||
        (m.data.type === 'RoleChangedEvent' && m.data.roleId === roleId.current)
      )
        void reload();
    };
    const onOwn = (m: WsServerMessage) => {
      if (m.data.type === WsReply.resync || m.data.type === 'ProfileChangedEvent') void reload();
    };
    const offs = [
      realtime.subscribe(RealtimeTopics.appChanges, onAppChange),
      realtime.subscribe(RealtimeTopics.user(userId), onOwn),
    ];
    realtime.connect();
    return () => {
      live = false;
      for (const off of offs) off();
    };
  }, [key, userId, setProfile]);

  // signed out, or another project chosen: this connection is over
  useEffect(() => {
    if (!key) return;
    return () => realtime.disconnect();
  }, [key]);
}
