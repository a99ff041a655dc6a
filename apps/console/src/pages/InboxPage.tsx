import { useMemo } from 'react';
import { sessionEnded, type Me } from '../api';
import { Inbox } from '../inbox/Inbox';
import { InboxClient } from '../inbox/inbox-client';

/** /app/inbox: the same inbox as the embedded page, for agents (the console session cookie; the whole account). */
export function InboxPage({ me }: { me: Me }) {
  const client = useMemo(
    () =>
      new InboxClient({
        prefix: '/v1/inbox',
        headers: () => ({}),
        unsafeHeaders: () => ({ 'x-switchboard-csrf': me.csrfToken }),
        onUnauthorized: sessionEnded,
      }),
    [me.csrfToken],
  );
  const canSend = me.grants.includes('/send-message');
  return (
    <div className="inbox-page">
      <Inbox client={client} canSend={canSend} canSendTemplates={canSend} />
    </div>
  );
}
