import { useEffect } from 'react';
import type { TemplateStatusEvent } from '../../api';

export function StatusBadge({ status, reason }: { status: string; reason?: string | null }) {
  return (
    <span className={`badge badge-${status.toLowerCase()}`} data-testid="status-badge" title={reason ?? undefined}>
      {status}
      {reason ? <small> · {reason}</small> : null}
    </span>
  );
}

/**
 * Template status changes as they happen (Server-Sent Events, `GET /v2/template-events`: the review webhook, a sync,
 * a status check). The browser's EventSource reconnects by itself and resumes with Last-Event-ID.
 */
export function useTemplateEvents(onEvent: (event: TemplateStatusEvent) => void, onOpen?: () => void) {
  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const source = new EventSource('/v2/template-events');
    const handle = (e: MessageEvent) => {
      try {
        onEvent(JSON.parse(e.data));
      } catch {
        /* a heartbeat or a malformed event: nothing to show */
      }
    };
    source.addEventListener('template.status', handle as EventListener);
    // (re)connected: what changed before the stream was there is read again (the caller reloads)
    if (onOpen) source.addEventListener('open', onOpen);
    return () => source.close();
  }, [onEvent, onOpen]);
}
