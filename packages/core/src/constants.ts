/** Business constants and limits of spec part 2 §9 (and part 1 §9). */
export const API_BASE = '/api/v0/';

export const Timeouts = {
  default: 30_000,
  login: 3_000,
  backup: 3_600_000,
  remoteControl: 60_000,
  reports: 300_000,
  /** import calls have no timeout */
  import: 0,
} as const;

export const Realtime = {
  websocketReconnectMs: 4000,
  unreadRefreshDebounceMs: 1000,
  markReadDelayMs: 1000,
} as const;

export const Dialer = {
  retryAfterErrorMs: 5000,
  retryAfterInvalidRegistrationMs: 30_000,
  destroyedCallKeptMs: 5000,
  callTimerTickMs: 1000,
  doorTone: { tone: '#', durationMs: 160, gapMs: 1200 },
  otherToneMs: 1000,
  /** ours: the spec gives no gap after other tones; the WebRTC RTCDTMFSender default */
  otherToneGapMs: 70,
  secureSipWebsocketPort: 8443,
  iceCheckingTimeoutMs: 200,
  historyPageSize: 50,
  /** the browser's switch for sip.js's own log (localStorage: debug, log, warn or error); none when unset */
  sipLogKey: 'lintel:sip-log',
  keypad: ['1', '2', '3', '4', '5', '6', '7', '8', '9', '*', '0', '#'],
} as const;

export const Notifications = {
  pageSize: 20,
  menuLatest: 5,
  importantPopupsShown: 3,
  popupWidth: { min: 300, max: 450 },
} as const;

export const ALERT_TIMEOUT_MS = 3000;

export const Limits = {
  deviceSipPassword: { min: 6, max: 31 },
  nameLike: { min: 1, max: 31 },
  amenityPersons: { min: 1, max: 500 },
  amenitySlotDurationS: 3600,
  /** ours: the spec does not give these (docs/decisions.md) */
  password: { min: 8, max: 128 },
  login: { min: 3, max: 64 },
  email: { max: 254 },
  text: { max: 255 },
  description: { max: 2000 },
} as const;

export const Defaults = {
  talkTimeoutS: 120,
  reregisterIntervalS: 600,
  transport: 'UDP',
  autoForwardProtocol: 'UDP',
  playbackDurationS: 60,
  forwardTimeoutS: 60,
  redirectIfNoAnswerTimeoutS: 10,
  liftRelayOpenTimeS: 10,
  notifyBeforeDays: 14,
  notifyMode: 'everyday',
  scheduleWindow: { from: 32_400, to: 64_800 },
  devicePort: 80,
  deviceProtocols: ['http', 'mqtt', 'none'],
  timeZoneHours: 2,
  identifierFormat: 'dec',
  locale: 'en',
} as const;

/**
 * A stored secret is never sent back (a device's password, its broker password for the device itself, a SIP
 * password): replies carry this placeholder instead, and a write that sends it back keeps the stored value
 * (spec part 2 §5 "a dummy password placeholder marks an unchanged stored password").
 */
export const DUMMY_PASSWORD = '\u2022\u2022\u2022\u2022\u2022\u2022\u2022\u2022';

/** Devices (../shared/DEVICES.md): the heartbeat every 10 s, offline after three missed. */
export const DeviceTiming = {
  heartbeatS: 10,
  missedHeartbeats: 3,
} as const;

/**
 * Network search (issue 16 item 8; the spec gives no figures, docs/decisions.md "Network search"): at most
 * `maxAddresses` addresses a search, `concurrency` probes at once, each given `probeTimeoutMs`.
 */
export const DeviceSearchLimits = {
  maxAddresses: 1024,
  /** searches one user may have running at once; another is `limit_exceeded` (issue 20) */
  perUser: 2,
  concurrency: 32,
  probeTimeoutMs: 1500,
} as const;

export const Locales = ['en', 'ru'] as const;
export type LocaleCode = (typeof Locales)[number];

/** Stored time formats and how they are shown (spec part 2 §9). */
export const TimeFormats = {
  'DD-MM-YYYY': 'DD.MM.YYYY HH:NN:SS',
  'MM-DD-YYYY': 'MM/DD/YYYY HH:NN:SS',
  'YYYY-MM-DD': 'YYYY-MM-DD HH:NN:SS',
} as const;
export type TimeFormatCode = keyof typeof TimeFormats;

export const Layout = {
  drawerWidth: 250,
  dialogMaxWidth: 600,
  dialogSmallWidth: 300,
  dialogGroupGenerationWidth: 900,
} as const;

export const NotificationFrequencies = ['once', 'everyday', 'every_week', 'every_30_days'] as const;
export const ReportPeriods = [
  'today',
  'current_month',
  'last_month',
  'half_year',
  'last_year',
  'manual',
  'all_time',
] as const;
export const RepeatOptions = ['never', 'daily', 'weekly', 'every_2_weeks', 'monthly', 'yearly'] as const;
export const IdentifierTypes = [
  'card',
  'ukey',
  'ukey2',
  'access_code',
  'url',
  'qr',
  'license_plate',
  'face',
] as const;
export const AlarmSensors = [
  'smoke',
  'gas',
  'pir',
  'door',
  'window',
  'panic',
  'flood',
  'pull_cord',
  'bed_mat',
] as const;
export const BlockCauses = ['unknown', 'auth_failed', 'wrong_number'] as const;
export const DeviceModes = ['wall', 'unit', 'personal'] as const;
export const ElevatorModes = ['up', 'down', 'up_and_down', 'access_by_identifier'] as const;
export const Weekdays = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export const LicenseWarningStatuses = ['normal', 'no_license', 'will_expire', 'already_expired'] as const;
export const SelfRegistrationUserTypes = ['installer', 'private'] as const;
