/**
 * The vendor's Ed25519 public keys the server ships with (base64 of the SPKI DER form, as `lintel licences
 * keygen` prints them). Only public keys live here: the private half never enters the repository. An
 * installation may trust more keys through LINTEL_LICENCE_PUBLIC_KEYS (comma-separated, same form).
 */
export const VENDOR_PUBLIC_KEYS: readonly string[] = [
  // development key pair of 2026-11 (issue 15); its private half is held outside the repository
  'MCowBQYDK2VwAyEA9JDFxVkOcSLLFKq1AH2pZSQfmo2JkQPmmDOqENfmRBs=',
];
