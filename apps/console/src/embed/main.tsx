import { StrictMode, useEffect, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Inbox } from '../inbox/Inbox';
import { InboxClient } from '../inbox/inbox-client';
import { EMBED_EVENTS, takeTokenFromAddressBar, tellParent } from './protocol';

interface Session {
  token: string;
  expiresAt: number;
  permissions: string[];
}

/** Exchanges an embed token for a session (kept in memory only: no cookie, nothing stored). */
async function exchange(embedToken: string): Promise<Session> {
  const response = await fetch('/v1/embed/session', {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ embedToken }),
  });
  const body = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(body.message ?? `The inbox could not start (${response.status})`);
  return { token: body.sessionToken, expiresAt: Date.now() + body.expiresIn * 1000, permissions: body.permissions };
}

/** Asks the host page for a fresh embed token (EMBED_EVENTS.tokenRequest), resolves with it (EMBED_EVENTS.token). */
function askParentForToken(timeoutMs = 10_000): Promise<string> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => (window.removeEventListener('message', listener), reject(new Error('timeout'))),
      timeoutMs,
    );
    const listener = (event: MessageEvent) => {
      if (event.source !== window.parent || event.data?.type !== EMBED_EVENTS.token) return;
      if (typeof event.data.embedToken !== 'string') return;
      clearTimeout(timer);
      window.removeEventListener('message', listener);
      resolve(event.data.embedToken);
    };
    window.addEventListener('message', listener);
    tellParent({ type: EMBED_EVENTS.tokenRequest });
  });
}

/** Once per page load (not per effect run: React's StrictMode runs effects twice, and a token is single use). */
const initialToken = takeTokenFromAddressBar();
let starting: Promise<Session> | null = null;
const startSession = () => (starting ??= initialToken ? exchange(initialToken) : askParentForToken().then(exchange));

function EmbeddedInbox() {
  const [session, setSession] = useState<Session | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    startSession()
      .then((s) => {
        setSession(s);
        tellParent({ type: EMBED_EVENTS.ready });
      })
      .catch((e) => {
        setError(e instanceof Error && e.message !== 'timeout' ? e.message : 'No embed token was given to the inbox.');
        tellParent({ type: EMBED_EVENTS.error, message: String((e as Error).message) });
      });
  }, []);

  // a minute before the session lapses: ask the host page for a fresh embed token and exchange it
  useEffect(() => {
    if (!session) return;
    const timer = setTimeout(
      () => {
        askParentForToken()
          .then(exchange)
          .then(setSession)
          .catch(() => setError('The inbox session has ended. Reload the page to continue.'));
      },
      Math.max(5_000, session.expiresAt - Date.now() - 60_000),
    );
    return () => clearTimeout(timer);
  }, [session]);

  const tokenRef = useMemo(() => ({ current: '' }), []);
  tokenRef.current = session?.token ?? '';
  const client = useMemo(
    () =>
      new InboxClient({
        prefix: '/v1/embed/inbox',
        headers: () => ({ authorization: `Bearer ${tokenRef.current}` }),
      }),
    [tokenRef],
  );

  if (error)
    return (
      <div className="embed-error" role="alert" data-testid="embed-error">
        <strong>The inbox cannot be shown</strong>
        <span>{error}</span>
      </div>
    );
  if (!session) return <div className="embed-error">Opening the inbox…</div>;
  return (
    <Inbox
      client={client}
      canSend={session.permissions.includes('send')}
      canSendTemplates={session.permissions.includes('send_template')}
      onUnread={(count) => tellParent({ type: EMBED_EVENTS.unread, count })}
    />
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <EmbeddedInbox />
  </StrictMode>,
);
