/**
 * The postMessage protocol between the embedded inbox and the page that frames it (docs/inbox.md). Messages to the
 * parent carry no secret (so they go to any origin: the frame is only shown inside allowedOrigins anyway); the token
 * the parent sends back is accepted only from `window.parent`.
 */
export const EMBED_EVENTS = {
  /** inbox → host: the session started, the inbox is shown */
  ready: 'switchboard:inbox:ready',
  /** inbox → host: please mint and send a fresh embed token (before the session lapses, or none was given) */
  tokenRequest: 'switchboard:inbox:token-request',
  /** host → inbox: `{type, embedToken}` */
  token: 'switchboard:inbox:token',
  /** inbox → host: `{type, count}` total unread messages in scope */
  unread: 'switchboard:inbox:unread',
  /** inbox → host: `{type, message}` the inbox could not start */
  error: 'switchboard:inbox:error',
} as const;

export function tellParent(message: Record<string, unknown>): void {
  if (window.parent !== window) window.parent.postMessage(message, '*');
}

/**
 * The embed token from `?token=` or `#token=`, removed from the address bar at once (history, screenshots, copies):
 * only the token id (`e`, not a secret) stays, so a reload still gets the page's frame-ancestors.
 */
export function takeTokenFromAddressBar(): string | null {
  const url = new URL(window.location.href);
  const fromQuery = url.searchParams.get('token');
  const fromFragment = new URLSearchParams(url.hash.replace(/^#/, '')).get('token');
  url.searchParams.delete('token');
  url.hash = '';
  window.history.replaceState(null, '', url.pathname + url.search);
  return fromQuery || fromFragment;
}
