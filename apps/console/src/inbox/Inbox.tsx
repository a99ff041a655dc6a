import { useCallback, useEffect, useMemo, useRef, useState, type KeyboardEvent } from 'react';
import {
  InboxClient,
  InboxError,
  type InboxConversation,
  type InboxMessage,
  type InboxTemplate,
  type LiveEvent,
} from './inbox-client';
import './inbox.css';

const STATUS_RANK: Record<string, number> = { queued: 0, accepted: 1, sent: 2, delivered: 3, read: 4, failed: 5 };

/** Delivery ticks of an outbound message: ◷ queued, ✓ sent, ✓✓ delivered, blue ✓✓ read, ⚠ failed. */
function Ticks({ status }: { status: string }) {
  const map: Record<string, [string, string]> = {
    queued: ['◷', 'Queued'],
    accepted: ['✓', 'Accepted'],
    sent: ['✓', 'Sent'],
    delivered: ['✓✓', 'Delivered'],
    read: ['✓✓', 'Read'],
    failed: ['⚠', 'Failed'],
  };
  const [mark, label] = map[status] ?? ['', status];
  return (
    <span className={`ticks ticks-${status}`} title={label} aria-label={label} data-status={status}>
      {mark}
    </span>
  );
}

/** Any message kind as something a person can read: replies, forms, places, media, contact cards, reactions. */
export function describeMessage(m: InboxMessage): string {
  const c = m.content ?? {};
  switch (m.type) {
    case 'button_reply':
    case 'list_reply':
    case 'button':
      return `↩ ${c.title ?? m.text ?? ''}`.trim();
    case 'nfm_reply': {
      const fields = Object.entries((c.response ?? {}) as Record<string, unknown>)
        .filter(([k]) => k !== 'flow_token')
        .map(([k, v]) => `${k}: ${typeof v === 'object' ? JSON.stringify(v) : String(v)}`);
      return `📝 Form reply${fields.length ? ` — ${fields.join(', ')}` : ''}`;
    }
    case 'location':
      return `📍 ${[c.name, c.address].filter(Boolean).join(', ') || 'Location'} (${c.latitude}, ${c.longitude})`;
    case 'image':
    case 'video':
    case 'audio':
    case 'document':
    case 'sticker':
      return `[${m.type}${c.filename ? `: ${c.filename}` : ''}]${c.caption ? ` ${c.caption}` : ''}`;
    case 'contacts':
      return `👤 Contact card: ${(Array.isArray(c) ? c : []).map((x: any) => x?.name?.formatted_name ?? '').join(', ')}`;
    case 'reaction':
      return `Reacted ${c.emoji ?? ''}`;
    case 'template':
      return m.text ? m.text : `Template ${m.templateName}`;
    default:
      if (m.text) return m.text;
      return `[${m.type}]`;
  }
}

function countdown(expiresAt: string | null, now: number): string {
  if (!expiresAt) return '';
  const left = new Date(expiresAt).getTime() - now;
  if (left <= 0) return 'closed';
  const h = Math.floor(left / 3600_000);
  const m = Math.floor((left % 3600_000) / 60_000);
  return `${h}h ${String(m).padStart(2, '0')}m`;
}

/** 14:05 today; 27 Nov 14:05 before (a conversation of last week does not read as today's) */
const time = (iso: string) => {
  const at = new Date(iso);
  const clock = at.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  if (at.toDateString() === new Date().toDateString()) return clock;
  return `${at.toLocaleDateString([], { day: 'numeric', month: 'short' })} ${clock}`;
};

export interface InboxProps {
  client: InboxClient;
  canSend: boolean;
  canSendTemplates: boolean;
  /** Told the total unread count when it changes (the embed tells its host page). */
  onUnread?: (count: number) => void;
}

/** The inbox: conversation list and thread, live. The same component in the console and in the embedded page. */
export function Inbox({ client, canSend, canSendTemplates, onUnread }: InboxProps) {
  const [conversations, setConversations] = useState<InboxConversation[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);
  const [search, setSearch] = useState('');
  const [selected, setSelected] = useState<string | null>(null);
  const [focusIndex, setFocusIndex] = useState(0);
  const [messages, setMessages] = useState<InboxMessage[]>([]);
  const [hasMore, setHasMore] = useState(false);
  const [threadError, setThreadError] = useState<string | null>(null);
  const [connected, setConnected] = useState(false);
  const [now, setNow] = useState(Date.now());
  const selectedRef = useRef<string | null>(null);
  selectedRef.current = selected;
  const listRef = useRef<HTMLUListElement>(null);

  // reads of the list overlap (live events, a reset, typing a search): only the latest one's answer is shown
  const listReads = useRef(0);
  const loadList = useCallback(async () => {
    const read = ++listReads.current;
    try {
      const res = await client.conversations(search);
      if (read !== listReads.current) return;
      setConversations(res.data.conversations);
      setListError(null);
      onUnread?.(res.data.unreadTotal);
    } catch (error) {
      if (read === listReads.current) setListError((error as Error).message);
    }
  }, [client, search, onUnread]);

  useEffect(() => {
    void loadList();
  }, [loadList]);

  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), 30_000);
    return () => clearInterval(timer);
  }, []);

  // the open conversation read on its own: it stays open when the list no longer shows it (a search typed, 30 newer
  // conversations); the list's entry, kept fresh by live events, is shown while there is one
  const [opened, setOpened] = useState<InboxConversation | null>(null);
  const openConversation = useCallback(
    async (contactId: string) => {
      setSelected(contactId);
      setThreadError(null);
      setMessages([]);
      loadingOlder.current = false; // a read of another conversation's older page no longer blocks this one's
      try {
        const [res, conversation] = await Promise.all([client.thread(contactId), client.conversation(contactId)]);
        if (selectedRef.current !== contactId) return;
        setOpened(conversation.data);
        // messages pushed live while the thread was read are kept (they may be newer than what was read)
        setMessages((live) => [
          ...res.data.messages,
          ...live.filter((m) => !res.data.messages.some((r) => r.id === m.id)),
        ]);
        setHasMore(res.data.hasMore);
        await client.markRead(contactId);
        setConversations(
          (list) => list?.map((c) => (c.contactId === contactId ? { ...c, unreadCount: 0 } : c)) ?? list,
        );
      } catch (error) {
        setThreadError((error as Error).message);
      }
    },
    [client],
  );

  const loadingOlder = useRef(false);
  /** The page before the oldest shown, for the conversation still open when it comes (one read at a time). */
  const loadOlder = async () => {
    const contactId = selected;
    if (!contactId || !messages.length || loadingOlder.current) return;
    loadingOlder.current = true;
    try {
      const res = await client.thread(contactId, messages[0].id);
      if (selectedRef.current !== contactId) return;
      setMessages((current) => [...res.data.messages.filter((m) => !current.some((c) => c.id === m.id)), ...current]);
      setHasMore(res.data.hasMore);
    } finally {
      loadingOlder.current = false;
    }
  };

  // live: new messages, ticks, conversations moving to the top
  const reloadSoon = useRef<ReturnType<typeof setTimeout> | null>(null);
  // the stream stays open while the list's search or the host's callbacks change: it calls their latest versions
  const reload = useRef({ loadList, openConversation });
  reload.current = { loadList, openConversation };
  useEffect(() => {
    const onEvent = (event: LiveEvent) => {
      const open = selectedRef.current;
      if (event.event === 'reset') {
        // events were missed (not kept while no inbox was open, or trimmed): read everything again
        void reload.current.loadList();
        if (open) void reload.current.openConversation(open);
        return;
      }
      if (event.event === 'message.created' && event.data.contactId === open) {
        const message = event.data.message as InboxMessage;
        setMessages((current) => (current.some((m) => m.id === message.id) ? current : [...current, message]));
        if (message.direction === 'inbound' && open) void client.markRead(open).catch(() => undefined);
      }
      if (event.event === 'message.status' && event.data.contactId === open) {
        setMessages((current) =>
          current.map((m) =>
            m.id === event.data.messageId && (STATUS_RANK[event.data.status] ?? 0) > (STATUS_RANK[m.status] ?? 0)
              ? { ...m, status: event.data.status }
              : m,
          ),
        );
      }
      if (event.event === 'message.created' || event.event === 'conversation.updated') {
        // the open conversation's own copy (its window, its name) follows too, for when the list leaves it out
        if (event.data.contactId === open && open)
          void client
            .conversation(open)
            .then((r) => selectedRef.current === open && setOpened(r.data))
            .catch(() => undefined);
        if (reloadSoon.current) clearTimeout(reloadSoon.current);
        reloadSoon.current = setTimeout(() => void reload.current.loadList(), 100);
      }
    };
    return client.live(onEvent, setConnected);
  }, [client]);

  const current =
    conversations?.find((c) => c.contactId === selected) ?? (opened?.contactId === selected ? opened : null);

  const onListKey = (e: KeyboardEvent) => {
    if (!conversations?.length) return;
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      const next = Math.max(0, Math.min(conversations.length - 1, focusIndex + (e.key === 'ArrowDown' ? 1 : -1)));
      setFocusIndex(next);
      (listRef.current?.children[next] as HTMLElement | undefined)?.focus();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      void openConversation(conversations[focusIndex].contactId);
    }
  };

  return (
    <div className="inbox" data-testid="inbox">
      <aside className="inbox-list">
        <div className="inbox-search">
          <input
            type="search"
            placeholder="Search name or number"
            aria-label="Search conversations"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
          />
          <span className={`live-dot ${connected ? 'on' : ''}`} title={connected ? 'Live' : 'Reconnecting…'} />
        </div>
        {listError && (
          <div className="inbox-error" role="alert">
            {listError}
          </div>
        )}
        {conversations === null && !listError && <div className="inbox-empty">Loading…</div>}
        {conversations?.length === 0 && (
          <div className="inbox-empty" data-testid="no-conversations">
            No conversations yet. Messages customers send appear here.
          </div>
        )}
        <ul className="conversations" role="listbox" aria-label="Conversations" ref={listRef} onKeyDown={onListKey}>
          {conversations?.map((c, i) => (
            <li
              key={c.contactId}
              role="option"
              tabIndex={i === focusIndex ? 0 : -1}
              aria-selected={c.contactId === selected}
              className={`conversation ${c.contactId === selected ? 'selected' : ''}`}
              data-testid="conversation"
              data-contact-id={c.contactId}
              onClick={() => (setFocusIndex(i), void openConversation(c.contactId))}
            >
              <div className="conversation-top">
                <strong className="conversation-name">{c.name || `+${c.contactNumber}`}</strong>
                <time>{time(c.lastActivityAt)}</time>
              </div>
              <div className="conversation-bottom">
                <span className="conversation-preview">{c.lastMessage ? describeMessage(c.lastMessage) : ''}</span>
                {c.unreadCount > 0 && (
                  <span className="badge" data-testid="unread-badge" aria-label={`${c.unreadCount} unread`}>
                    {c.unreadCount}
                  </span>
                )}
              </div>
            </li>
          ))}
        </ul>
      </aside>
      <section className="inbox-thread">
        {!current && !selected && <div className="inbox-empty">Choose a conversation (↑ ↓ and Enter work too).</div>}
        {selected && (
          <Thread
            key={selected}
            client={client}
            conversation={current}
            messages={messages}
            hasMore={hasMore}
            error={threadError}
            now={now}
            canSend={canSend}
            canSendTemplates={canSendTemplates}
            onOlder={loadOlder}
            onSent={(m) => setMessages((list) => (list.some((x) => x.id === m.id) ? list : [...list, m]))}
            onBack={() => (listRef.current?.children[focusIndex] as HTMLElement | undefined)?.focus()}
          />
        )}
      </section>
    </div>
  );
}

function Thread(props: {
  client: InboxClient;
  conversation: InboxConversation | null;
  messages: InboxMessage[];
  hasMore: boolean;
  error: string | null;
  now: number;
  canSend: boolean;
  canSendTemplates: boolean;
  onOlder: () => Promise<void>;
  onSent: (m: InboxMessage) => void;
  onBack: () => void;
}) {
  const { client, conversation: c, messages, now } = props;
  const bottom = useRef<HTMLDivElement>(null);
  const newest = messages[messages.length - 1]?.id;
  useEffect(() => {
    // a block: Chromium's scrollIntoView returns a promise, which React would take for a cleanup function
    void bottom.current?.scrollIntoView({ block: 'end' });
  }, [newest]); // a new message, not an older page read above
  const [olderError, setOlderError] = useState<string | null>(null);
  const older = () => {
    setOlderError(null);
    props.onOlder().catch((e) => setOlderError((e as Error).message));
  };
  if (props.error)
    return (
      <div className="inbox-error" role="alert">
        {props.error}
      </div>
    );
  if (!c) return <div className="inbox-empty">Loading…</div>;
  const open = c.window.open && (!c.window.expiresAt || new Date(c.window.expiresAt).getTime() > now);
  return (
    <div className="thread" onKeyDown={(e) => e.key === 'Escape' && props.onBack()}>
      <header className="thread-header">
        <strong>{c.name || `+${c.contactNumber}`}</strong>
        <span className="muted">+{c.contactNumber}</span>
      </header>
      <div className="messages" data-testid="messages">
        {props.hasMore && (
          <button className="link older" onClick={older}>
            Older messages{olderError ? ` (not loaded: ${olderError}; try again)` : ''}
          </button>
        )}
        {messages.length === 0 && <div className="inbox-empty">No messages yet.</div>}
        {messages.map((m) => (
          <div key={m.id} className={`message ${m.direction}`} data-testid="message" data-message-id={m.id}>
            <div className="bubble">
              {m.type === 'template' && <div className="message-kind">Template {m.templateName}</div>}
              <div className="message-text">{describeMessage(m)}</div>
              {Array.isArray(m.content?.buttons) && (
                <div className="quick-replies">
                  {m.content.buttons.map((b: string) => (
                    <span key={b}>{b}</span>
                  ))}
                </div>
              )}
              <div className="message-meta">
                {time(m.createdAt)} {m.direction === 'outbound' && <Ticks status={m.status} />}
                {m.error?.title && <span className="message-failed"> {m.error.title}</span>}
              </div>
            </div>
          </div>
        ))}
        <div ref={bottom} />
      </div>
      {open ? (
        <Composer
          client={client}
          contactId={c.contactId}
          enabled={props.canSend}
          expiresIn={countdown(c.window.expiresAt, now)}
          onSent={props.onSent}
        />
      ) : (
        <TemplatePicker
          client={client}
          contactId={c.contactId}
          enabled={props.canSendTemplates}
          onSent={props.onSent}
        />
      )}
    </div>
  );
}

function Composer(props: {
  client: InboxClient;
  contactId: string;
  enabled: boolean;
  expiresIn: string;
  onSent: (m: InboxMessage) => void;
}) {
  const [text, setText] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const send = async () => {
    if (!text.trim() || busy) return;
    setBusy(true);
    setError(null);
    try {
      const res = await props.client.sendText(props.contactId, text.trim());
      if (!res.success) setError(res.message);
      else setText('');
    } catch (e) {
      setError(e instanceof InboxError ? e.message : String(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="composer">
      <div className="window-note" data-testid="window-countdown">
        24-hour window: closes in {props.expiresIn}
      </div>
      {error && (
        <div className="inbox-error" role="alert">
          {error}
        </div>
      )}
      <div className="composer-row">
        <textarea
          aria-label="Message"
          placeholder={
            props.enabled ? 'Type a reply (Enter sends, Shift+Enter for a new line)' : 'This inbox is read-only'
          }
          disabled={!props.enabled || busy}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter' && !e.shiftKey) {
              e.preventDefault();
              void send();
            }
          }}
        />
        <button className="primary" disabled={!props.enabled || busy || !text.trim()} onClick={send}>
          Send
        </button>
      </div>
    </div>
  );
}

function TemplatePicker(props: {
  client: InboxClient;
  contactId: string;
  enabled: boolean;
  onSent: (m: InboxMessage) => void;
}) {
  const [templates, setTemplates] = useState<InboxTemplate[] | null>(null);
  const [name, setName] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => {
    props.client
      .templates()
      .then((r) => setTemplates(r.data.templates))
      .catch((e) => setNote((e as Error).message));
  }, [props.client]);
  const template = templates?.find((t) => t.name === name) ?? null;
  // what the agent fills in: the body variables, then the links' dynamic parts
  const fields = template ? [...template.variables, ...template.links.map((l) => l.variable)] : [];
  const preview = useMemo(
    () => template?.preview.replace(/\{\{\s*([a-z0-9_]+)\s*\}\}/gi, (all, v) => values[v] || all) ?? '',
    [template, values],
  );
  const send = async () => {
    if (!template) return;
    setBusy(true);
    setNote(null);
    try {
      // only this template's fields (values typed for another template chosen before are not its)
      const res = await props.client.sendTemplate(
        props.contactId,
        template.name,
        Object.fromEntries(fields.map((f) => [f, values[f] ?? ''])),
      );
      setNote(res.success ? 'Template sent' : res.message);
    } catch (e) {
      setNote((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="composer closed">
      <div className="window-note" data-testid="window-closed">
        The 24-hour window is closed: the customer has to write first, or you can send an approved template.
      </div>
      <textarea aria-label="Message" disabled placeholder="Window closed" />
      {props.enabled ? (
        <div className="template-picker">
          <select aria-label="Template" value={name} onChange={(e) => (setName(e.target.value), setValues({}))}>
            <option value="">
              {templates === null
                ? 'Loading templates…'
                : templates.length
                  ? 'Choose a template'
                  : 'No approved templates'}
            </option>
            {templates?.map((t) => (
              <option key={`${t.name}:${t.language}`} value={t.name}>
                {t.name} ({t.language})
              </option>
            ))}
          </select>
          {template?.variables.map((v) => (
            <input
              key={v}
              aria-label={`Variable ${v}`}
              placeholder={v}
              value={values[v] ?? ''}
              onChange={(e) => setValues({ ...values, [v]: e.target.value })}
            />
          ))}
          {template?.links.map((l) => (
            <input
              key={l.variable}
              aria-label={`Link of the button ${l.button}`}
              placeholder={`${l.button}: ${l.url.replace('{{1}}', '…')}`}
              value={values[l.variable] ?? ''}
              onChange={(e) => setValues({ ...values, [l.variable]: e.target.value })}
            />
          ))}
          {template && (
            <div className="template-preview" data-testid="template-preview">
              {preview}
            </div>
          )}
          <button className="primary" disabled={!template || busy || fields.some((v) => !values[v])} onClick={send}>
            Send template
          </button>
        </div>
      ) : (
        <div className="muted">This inbox may not send templates.</div>
      )}
      {note && (
        <div className="window-note" role="status">
          {note}
        </div>
      )}
    </div>
  );
}
