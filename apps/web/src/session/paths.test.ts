import { describe, expect, it } from 'vitest';
import { isSignedOutOnly, loginPath, safeRedirect } from './paths';

describe('route rules', () => {
  it('knows the signed-out-only pages of spec part 1 §2.1', () => {
    for (const p of [
      '/login',
      '/registration',
      '/registration/abc',
      '/registration/confirm/abc',
      '/self-registration',
      '/self-registration/tok',
      '/password/recovery',
      '/password/reset/tok',
    ])
      expect(isSignedOutOnly(p), p).toBe(true);
    for (const p of ['/', '/home', '/choose-project', '/users', '/login-history', '/registrations'])
      expect(isSignedOutOnly(p), p).toBe(false);
  });

  it('encodes the wanted path in the login link', () => {
    expect(loginPath('/home')).toBe('/login?redirect=%2Fhome');
    expect(loginPath('/users?page=2')).toBe('/login?redirect=%2Fusers%3Fpage%3D2');
  });

  it('follows only redirects inside the console', () => {
    expect(safeRedirect(null)).toBe('/home');
    expect(safeRedirect('/users?page=2')).toBe('/users?page=2');
    expect(safeRedirect('https://evil.example')).toBe('/home');
    expect(safeRedirect('//evil.example')).toBe('/home');
    expect(safeRedirect('/\\evil.example')).toBe('/home');
    expect(safeRedirect('/login')).toBe('/home');
    expect(safeRedirect('/')).toBe('/home');
    expect(safeRedirect('/choose-project')).toBe('/home');
  });
});
