import { Navigate, Outlet, useLocation, useSearchParams } from 'react-router';
import { loginPath, safeRedirect, useSession, wasSignedOutDeliberately } from './session';

/** Signed-in pages: a signed-out user goes to /login?redirect=<wanted path> (spec part 1 §2.2). */
export function RequireSession() {
  const session = useSession();
  const location = useLocation();
  if (!session) {
    return (
      <Navigate
        to={wasSignedOutDeliberately() ? '/login' : loginPath(location.pathname + location.search)}
        replace
      />
    );
  }
  return <Outlet />;
}

/**
 * Signed-out-only pages: a signed-in user goes to /home, or to the ?redirect= target, which is how a
 * successful login lands where the user wanted to go.
 */
export function SignedOutOnly() {
  const session = useSession();
  const [params] = useSearchParams();
  if (session) return <Navigate to={safeRedirect(params.get('redirect'))} replace />;
  return <Outlet />;
}

/** The root path: /home when signed in, /login otherwise. */
export function RootRedirect() {
  const session = useSession();
  return <Navigate to={session ? '/home' : '/login'} replace />;
}
