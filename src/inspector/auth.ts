import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/**
 * Access to the inspector, as Jupyter does it: a random token in the URL it prints; the first page
 * load with it sets a cookie (HttpOnly, SameSite=Strict) so that assets, API calls and the event
 * stream carry it without the token in every URL. A request with neither is refused.
 */

/** 32 random bytes, URL-safe. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** Cookies are shared by every port of a host: the name carries the port, so two inspectors keep theirs. */
export function cookieName(port: number): string {
  return `durable_agent_inspector_${port}`;
}

export type Access = 'granted' | 'missing' | 'wrong';

/** The token a request carries (query `token`, else the cookie), checked in constant time. */
export function checkAccess(req: IncomingMessage, url: URL, token: string, port: number): Access {
  const given = url.searchParams.get('token') ?? cookieValue(req.headers.cookie, cookieName(port));
  if (given === undefined || given === null || given === '') return 'missing';
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b) ? 'granted' : 'wrong';
}

export function sessionCookie(token: string, port: number): string {
  return `${cookieName(port)}=${token}; HttpOnly; SameSite=Strict; Path=/`;
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
