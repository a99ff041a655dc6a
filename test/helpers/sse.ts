/** One Server-Sent Event as a browser's EventSource would see it. */
export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface SseConnection {
  status: number;
  headers: Headers;
  events: SseEvent[];
  /** Comment lines received (heartbeats). */
  comments: string[];
  /** The last `id:` received, with or without an event: what a browser would send as Last-Event-ID. */
  lastEventId(): string | undefined;
  /**
   * Resolves once the stream has told its position (`id:`): a fresh stream of LiveEvents writes it after it listens,
   * so what is published from then on reaches it. (A resumed stream writes no position, only the events it missed.)
   */
  subscribed(timeoutMs?: number): Promise<string>;
  /** Resolves with the first event (in arrival order, already received ones included) that satisfies `until`. */
  waitFor(until: (event: SseEvent) => boolean, timeoutMs?: number): Promise<SseEvent>;
  waitForCount(count: number, timeoutMs?: number): Promise<SseEvent[]>;
  /** Resolves when the stream ends (the server ended it, or close()). */
  ended: Promise<void>;
  close(): void;
}

/** Opens a Server-Sent Events stream with fetch (so headers such as Authorization and Last-Event-ID can be sent). */
export async function openSse(url: string, headers: Record<string, string> = {}): Promise<SseConnection> {
  const controller = new AbortController();
  const response = await fetch(url, {
    headers: { accept: 'text/event-stream', ...headers },
    signal: controller.signal,
  });
  const events: SseEvent[] = [];
  const comments: string[] = [];
  let lastId: string | undefined;
  const waiters = new Set<() => void>();
  const notify = () => waiters.forEach((w) => w());
  let ended: Promise<void> = Promise.resolve();
  if (response.ok && response.body) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    ended = (async () => {
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true });
          let end: number;
          while ((end = buffer.indexOf('\n\n')) >= 0) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            const parsed: SseEvent = { event: 'message', data: undefined };
            const data: string[] = [];
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) comments.push(line.slice(1).trim());
              else if (line.startsWith('id: ')) parsed.id = lastId = line.slice(4);
              else if (line.startsWith('event: ')) parsed.event = line.slice(7);
              else if (line.startsWith('data: ')) data.push(line.slice(6));
            }
            if (data.length) {
              const text = data.join('\n');
              try {
                parsed.data = JSON.parse(text);
              } catch {
                parsed.data = text;
              }
              events.push(parsed);
            }
            notify();
          }
        }
      } catch {
        // aborted
      }
    })();
  }
  const waitUntil = <T>(check: () => T | undefined, timeoutMs: number, what: string) =>
    new Promise<T>((resolve, reject) => {
      const attempt = () => {
        const found = check();
        if (found === undefined) return false;
        waiters.delete(listener);
        clearTimeout(timer);
        resolve(found);
        return true;
      };
      const listener = () => void attempt();
      const timer = setTimeout(() => {
        waiters.delete(listener);
        reject(new Error(`SSE: ${what} not received within ${timeoutMs} ms; got ${JSON.stringify(events)}`));
      }, timeoutMs);
      waiters.add(listener);
      attempt();
    });
  return {
    status: response.status,
    headers: response.headers,
    events,
    comments,
    lastEventId: () => lastId,
    ended,
    subscribed: (timeoutMs = 5000) => waitUntil(() => lastId, timeoutMs, 'the stream position (id:)'),
    waitFor: (until, timeoutMs = 5000) => waitUntil(() => events.find(until), timeoutMs, 'the expected event'),
    waitForCount: (count, timeoutMs = 5000) =>
      waitUntil(() => (events.length >= count ? events.slice(0, count) : undefined), timeoutMs, `${count} events`),
    close: () => controller.abort(),
  };
}
