/** What scripts can rely on; listed in `lintel --help`. */
export const ExitCode = {
  ok: 0,
  error: 1,
  usage: 2,
  /** not signed in, or the session has ended */
  signedOut: 3,
  /** 403: the role lacks the permission, or the licence does not cover it */
  refused: 4,
  /** 404 */
  notFound: 5,
  /** Ctrl-C or end of input at a prompt (128 + SIGINT, as shells report it) */
  cancelled: 130,
} as const;

export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];
