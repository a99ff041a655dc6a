/**
 * MCP transport spec (Streamable HTTP, security warning): servers MUST validate the Origin header of every request so
 * that a web page cannot reach a server through DNS rebinding. Requests without Origin (desktop apps, server-side
 * agents, curl) are allowed; a browser Origin must be the API's own origin or one of the configured ones (`*` = any).
 */
export function originAllowed(origin: string | undefined, ownOrigin: string, allowed: readonly string[]): boolean {
  if (origin === undefined || origin === '') return true;
  if (allowed.includes('*')) return true;
  const normalized = normalizeOrigin(origin);
  if (!normalized) return false;
  return normalized === normalizeOrigin(ownOrigin) || allowed.some((a) => normalizeOrigin(a) === normalized);
}

/** `scheme://host[:port]` in lower case (default ports dropped), or null for `null` and anything that is not an http(s) origin. */
export function normalizeOrigin(value: string): string | null {
  try {
    const url = new URL(value);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
    return url.origin.toLowerCase();
  } catch {
    return null;
  }
}

/** MCP_ALLOWED_ORIGINS: comma-separated origins. */
export function parseAllowedOrigins(setting: string | undefined): string[] {
  return (setting ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
