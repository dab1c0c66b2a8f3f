/** Route rules of spec part 1 §2.1–2.2 that need no browser. */

/** Paths only a signed-out user sees (spec part 1 §2.1). */
const SIGNED_OUT_ONLY = [
  /^\/login\/?$/,
  /^\/registration(\/|$)/,
  /^\/self-registration(\/|$)/,
  /^\/password\//,
];

export function isSignedOutOnly(pathname: string): boolean {
  return SIGNED_OUT_ONLY.some((re) => re.test(pathname));
}

/** The ?redirect= target when it is a path of this console, else /home. */
export function safeRedirect(raw: string | null | undefined): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return '/home';
  const path = raw.split(/[?#]/)[0] ?? '';
  if (path === '/' || isSignedOutOnly(path) || path === '/choose-project') return '/home';
  return raw;
}

export function loginPath(redirect: string): string {
  return `/login?redirect=${encodeURIComponent(redirect)}`;
}
