/**
 * The inbox's API client, for both doors: the embedded page (`/v1/embed/inbox`, the session token in memory, sent as
 * Authorization) and the console (`/v1/inbox`, the session cookie and CSRF header). Live events are read with fetch
 * (EventSource cannot send Authorization), resuming with Last-Event-ID after a drop.
 */
export interface InboxMessage {
  id: string;
  direction: 'inbound' | 'outbound';
  type: string;
  text: string | null;
  templateName: string | null;
  content: any;
  status: string;
  error: { code: number | null; title: string | null } | null;
  createdAt: string;
}

export interface InboxConversation {
  contactId: string;
  name: string | null;
  contactNumber: string;
  messagingPhoneId: string | null;
  lastMessage: InboxMessage | null;
  lastActivityAt: string;
  unreadCount: number;
  window: { open: boolean; expiresAt: string | null };
}

export interface InboxTemplate {
  name: string;
  language: string;
  category: string;
  variables: string[];
  /** URL buttons with a dynamic part: `url` ends in {{1}}, filled in as variables[variable] */
  links: Array<{ variable: string; button: string; url: string }>;
  preview: string;
}

export interface LiveEvent {
  id: string;
  event: string;
  data: any;
}

export class InboxError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

export interface InboxClientOptions {
  /** `/v1/embed/inbox` or `/v1/inbox` */
  prefix: string;
  /** Extra headers of every request (Authorization for the embedded session). */
  headers: () => Record<string, string>;
  /** For unsafe requests (the console's CSRF header). */
  unsafeHeaders?: () => Record<string, string>;
  onUnauthorized?: () => void;
}

export class InboxClient {
  constructor(private readonly options: InboxClientOptions) {}

  async request<T = any>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json', ...this.options.headers() };
    if (method !== 'GET') Object.assign(headers, this.options.unsafeHeaders?.() ?? {});
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${this.options.prefix}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
    const text = await response.text();
    let parsed: any;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      if (response.status === 401) this.options.onUnauthorized?.();
      throw new InboxError(response.status, parsed?.message ?? `${response.status} ${response.statusText}`);
    }
    return parsed as T;
  }

  conversations(search = '') {
    const q = search ? `?search=${encodeURIComponent(search)}` : '';
    return this.request<{ data: { conversations: InboxConversation[]; unreadTotal: number } }>(
      'GET',
      `/conversations${q}`,
    );
  }
  conversation(contactId: string) {
    return this.request<{ data: InboxConversation }>('GET', `/conversations/${contactId}`);
  }
  thread(contactId: string, before?: string) {
    const q = before ? `?before=${before}` : '';
    return this.request<{ data: { messages: InboxMessage[]; hasMore: boolean } }>(
      'GET',
      `/conversations/${contactId}/messages${q}`,
    );
  }
  sendText(contactId: string, text: string) {
    return this.request('POST', `/conversations/${contactId}/messages`, { text });
  }
  sendTemplate(contactId: string, templateName: string, variables: Record<string, string>) {
    return this.request('POST', `/conversations/${contactId}/templates`, { templateName, variables });
  }
  templates() {
    return this.request<{ data: { templates: InboxTemplate[] } }>('GET', '/templates');
  }
  markRead(contactId: string) {
    return this.request('POST', `/conversations/${contactId}/read`);
  }

  /** Streams live events until `stop()`; reconnects after a drop with the last id seen. */
  live(onEvent: (event: LiveEvent) => void, onState: (connected: boolean) => void = () => undefined) {
    let stopped = false;
    let lastId: string | null = null;
    let controller: AbortController | null = null;
    const run = async () => {
      while (!stopped) {
        controller = new AbortController();
        try {
          const headers: Record<string, string> = { accept: 'text/event-stream', ...this.options.headers() };
          if (lastId) headers['last-event-id'] = lastId;
          const response = await fetch(`${this.options.prefix}/events`, {
            headers,
            signal: controller.signal,
            credentials: 'same-origin',
          });
          if (response.status === 401) {
            this.options.onUnauthorized?.();
            stopped = true; // an ended session does not come back: no retry every second
          }
          if (response.status === 403) stopped = true; // a session without `read` never streams: no retry either
          if (!response.ok || !response.body) throw new Error(`events: ${response.status}`);
          onState(true);
          // The first stream starts where its topic stands now (its first line gives the id to resume from): what changed
          // between the page's first reads and now is read again, as after a `reset`.
          if (!lastId) onEvent({ id: '', event: 'reset', data: { reason: 'stream_started' } });
          const reader = response.body.getReader();
          const decoder = new TextDecoder();
          let buffer = '';
          for (;;) {
            const { value, done } = await reader.read();
            if (done) break;
            buffer += decoder.decode(value, { stream: true });
            let end: number;
            while ((end = buffer.indexOf('\n\n')) >= 0) {
              const block = buffer.slice(0, end);
              buffer = buffer.slice(end + 2);
              const event: Partial<LiveEvent> = {};
              for (const line of block.split('\n')) {
                if (line.startsWith('id: ')) event.id = line.slice(4);
                else if (line.startsWith('event: ')) event.event = line.slice(7);
                else if (line.startsWith('data: ')) event.data = JSON.parse(line.slice(6));
              }
              if (event.id) lastId = event.id;
              if (event.event) onEvent(event as LiveEvent);
            }
          }
        } catch {
          // dropped or refused: try again shortly
        }
        onState(false);
        if (!stopped) await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    };
    void run();
    return () => {
      stopped = true;
      controller?.abort();
    };
  }
}
