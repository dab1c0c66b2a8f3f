/**
 * The error catalogue of spec part 2 §8. A reply error is `{message, error_code, data}`; `message` is the
 * catalogue key (already lowercase and without quotes, so the client's lookup `errors.http.{message}` finds
 * it unchanged) and `data` holds the parameters of its text.
 */
export const ErrorCatalogue = {
  // Sessions
  incorrect_login_password: 401,
  verification_link_outdated: 400,
  invalid_credentials: 400,
  invalid_token: 401,
  invalid_confirmation_code: 400,
  invite_user_not_found: 404,
  user_registered_already: 409,
  email_required_for_registration: 422,
  email_already_used: 409,
  login_already_used: 409,
  too_many_attempts: 429,
  too_many_requests: 429,
  // General
  cant_perform_action: 400,
  wrong_parameters: 400,
  check_fields_data: 422,
  item_not_found: 404,
  internal_error: 500,
  /** the database is unreachable or saturated; the reply carries Retry-After (not in the spec: see decisions) */
  service_unavailable: 503,
  invalid_data_sent: 400,
  method_prohibited: 403,
  value_not_unique: 409,
  invalid_file: 400,
  wrong_file_body: 400,
  invalid_backup_image: 400,
  payload_too_large: 413,
  unknown_project: 404,
  invalid_related_entity: 422,
  // Licences and limits
  limit_exceeded: 422,
  feature_not_licensed: 403,
  license_expired: 403,
  children_license_sum_exceeded: 422,
  /** a group's new maximum below what its subtree already uses (spec: used counts greater than the group's) */
  license_used_exceeds_limit: 422,
  /** a group's licence period beyond that of the group above it (spec: child group licence period conflict) */
  license_period_child_conflict: 422,
  /** a group below holding a licence period beyond the group's own (spec: parent group licence period conflict) */
  license_period_parent_conflict: 422,
  // licence errors (spec part 2 §8; issue 15): adding a licence file or fetching one from the cloud
  license_sign_wrong: 422,
  license_cannot_be_applied: 422,
  license_server_not_responding: 502,
  license_not_found_for_project: 422,
  license_hijack: 409,
  license_cloud_not_configured: 409,
  domain_exists: 409,
  // SIP and devices (spec part 2 §8)
  serial_number_in_use: 409,
  /** the device's protocol is none: it cannot be initialised, have its queue restarted or be synchronised */
  device_protocol_none: 409,
  /** remote actions need the device online */
  device_offline: 409,
  /** remote control needs a device on mqtt */
  device_protocol_not_mqtt: 409,
  /** the device (or the broker in front of it) did not answer */
  device_not_available: 503,
  /** a remote-control session that ended (not kept alive within 60 s) or is not the caller's */
  remote_session_expired: 410,
  /** network search: the start address comes after the end address */
  ip_range_invalid: 422,
  /** network search: more addresses than a search may probe (`DeviceSearchLimits.maxAddresses`) */
  ip_range_too_large: 422,
  // Calls (spec part 2 §5 "Calls" and "Keypad", §8 "Unable to call your number")
  /** calling one's own number */
  own_number_call: 422,
  /** a voice call with no number entered (nor a last number for a video call) */
  call_number_required: 422,
  /** the web dialer: no microphone (or camera) to call with, or the browser refused them (spec part 2 §8 "media") */
  no_media_devices: 424,
  /** the web dialer: the browser has no WebRTC or media devices at all */
  media_not_supported: 424,
  /** starting call interception with no group selected (spec part 2 §5 "Call interception") */
  interception_group_required: 422,
  /** the web dialer: the SIP server refused to let this number join a waiting call (403: it may not intercept) */
  call_join_forbidden: 403,
  /** the web dialer: the waiting call to join is gone (404: ended, or taken by another user) */
  call_join_gone: 404,
  // Identifiers (spec part 2 §8)
  /** "Error saving identifier {name}" */
  identifier_save_error: 422,
  /** "identifier duplicate (number and type)": another identifier has the same type and value */
  identifier_duplicate: 409,
  identifier_view_not_available: 403,
  identifier_not_found: 404,
  ukey2_cannot_be_deleted: 409,
  face_not_recognized: 422,
  /** an Apple Wallet pass asked for while the wallet settings hold no certificate */
  wallet_certificate_missing: 409,
  // Guests (spec part 2 §8): "limits max count {max_count} and max period days {max_days}"
  guest_limits_exceeded: 422,
  guest_identifier_exists: 409,
  // Guest access (the public page): invalid identifier, device problem, device not found
  invalid_identifier: 422,
  device_problem: 502,
  device_not_found: 404,
  // The access decision's refusals (packages/core/src/access/decide.ts; also the ACS log's reasons)
  identifier_revoked: 403,
  identifier_not_yet_valid: 403,
  identifier_expired: 403,
  pass_limit_reached: 403,
  access_prohibited: 403,
  holiday: 403,
  outside_schedule: 403,
  no_access_rule: 403,
  anti_passback: 403,
  /** the SIP server did not start, or does not answer (spec: "Error starting SIP service") */
  sip_service_start_failed: 503,
  /** a profile names a number another user owns or uses (spec part 2 §8: "virtual number not free") */
  virtual_number_not_free: 409,
  /** a number's change did not reach the SIP server (spec: "error sending the number to the SIP proxy") */
  sip_number_send_failed: 502,
  /** a group (or the project) has its template of this type already (spec part 2 §8 "Templates") */
  template_type_exists: 409,
  // Integrations (spec part 2 §8 "server URL exists or unavailable; wrong old password; invalid related
  // entity; integration not allowed for user or device")
  /** another integration of the project has this server URL */
  integration_url_exists: 409,
  /** the integration's server cannot be reached, or answers what is no reply of its API */
  integration_server_unavailable: 502,
  /** the integration's server refused the login and password stored for it */
  integration_wrong_password: 422,
  /** the integration is not one this user (or this device's group) may use */
  integration_not_allowed: 403,
} as const;

export type ErrorKey = keyof typeof ErrorCatalogue;

/**
 * The refusals of a value the caller gave: taken by another record (a login, a serial number, an identifier's
 * number) or naming nothing. The CLI exits with its usage code (2) for them, as for a field it could check
 * itself; the other conflicts (409: a device offline, a licence taken) are the state of the platform (1). A
 * new catalogue entry of status 409 is placed in one list or the other (`errors.test.ts`).
 */
export const REFUSED_VALUE_ERRORS: ReadonlySet<ErrorKey> = new Set<ErrorKey>([
  'value_not_unique',
  'login_already_used',
  'email_already_used',
  'user_registered_already',
  'domain_exists',
  'invalid_related_entity',
  'serial_number_in_use',
  'identifier_duplicate',
  'guest_identifier_exists',
  'virtual_number_not_free',
  'template_type_exists',
  'integration_url_exists',
]);

/** The 409s that are the platform's state, not a value the caller could change (see `REFUSED_VALUE_ERRORS`). */
export const STATE_CONFLICT_ERRORS: ReadonlySet<ErrorKey> = new Set<ErrorKey>([
  'license_hijack',
  'license_cloud_not_configured',
  'device_protocol_none',
  'device_offline',
  'device_protocol_not_mqtt',
  'ukey2_cannot_be_deleted',
  'wallet_certificate_missing',
]);

/** The 401 that tells a client to refresh its token and retry once (spec part 2 §8). */
export const UNAUTHENTICATED_MESSAGE = 'Unauthenticated';
export const NOT_AUTHORIZED_CODE = 'not_authorized';

export interface FieldError {
  /** dotted path of the field, e.g. `profile.phone` */
  field: string;
  /** the generic field rule of spec part 2 §5 (`required`, `max_length`, `email`, ...) */
  rule: string;
  /** the rule's parameters, e.g. `{length: 31}` */
  params?: Record<string, unknown>;
}

export interface ErrorBody {
  message: string;
  error_code: string;
  data: Record<string, unknown> | null;
}

export function errorBody(key: ErrorKey, data: Record<string, unknown> | null = null): ErrorBody {
  return { message: key, error_code: key, data };
}

export function unauthenticatedBody(): ErrorBody {
  return { message: UNAUTHENTICATED_MESSAGE, error_code: NOT_AUTHORIZED_CODE, data: null };
}

/** The lookup rule of spec part 2 §8: lowercase, quotes removed. */
export function errorLookupKey(message: string): string {
  return message.toLowerCase().replace(/["'`]/g, '').trim();
}

export function isUnauthenticated(status: number, body: Partial<ErrorBody> | null | undefined): boolean {
  if (status !== 401 || !body) return false;
  return (
    body.error_code === NOT_AUTHORIZED_CODE ||
    (typeof body.message === 'string' && body.message.includes(UNAUTHENTICATED_MESSAGE))
  );
}
