import { createHash } from 'node:crypto';
import { MediaStore } from './media';
/** In-memory state of the sandbox: configuration, templates, flows, sent messages, windows, limits. */

export interface FailureRule {
  /** recipient (wa_id) ends with this string */
  toSuffix: string;
  /** Cloud API error code reported in the `failed` status webhook */
  code: number;
  /** optional `error_data.details` */
  details?: string;
}

export interface PhoneNumberConfig {
  wabaId?: string;
  displayPhoneNumber?: string;
  verifiedName?: string;
}

export interface SandboxConfig {
  /** where webhooks go; null disables delivery (still logged) */
  webhookUrl: string | null;
  /** HMAC key of X-Hub-Signature-256 */
  appSecret: string;
  /** emit sent/delivered/read status webhooks at all */
  statusWebhooks: boolean;
  /** delay after acceptance for each status; `read: null` = never read */
  statusDelaysMs: { sent: number; delivered: number; read: number | null };
  /** how many statuses (same phone number) one webhook may carry; Meta usually sends 1 */
  statusBatchSize: number;
  /** status ticker period */
  tickMs: number;
  /** template review: automatic after this delay (unless autoReview is false) */
  templateReviewDelayMs: number;
  autoReview: boolean;
  /** messages per second per phone number (sliding 1 s window); 0 = unlimited */
  defaultMessagesPerSecond: number;
  messagesPerSecond: Record<string, number>;
  enforceCustomerCareWindow: boolean;
  customerCareWindowMs: number;
  /** per (phone number, recipient) limit, error 131056; null = off (Meta: about 1 message per 6 s, with bursts) */
  pairRateLimit: { messages: number; windowMs: number } | null;
  /** recipients that get a `failed` status instead of delivered */
  failureRules: FailureRule[];
  /** caps of the logs readable through the control API */
  messageLogLimit: number;
  /**
   * Keep each logged message's request body (`payload`: what tests check was sent). `false` keeps only the envelope
   * (wamid, number, recipient, type, time): for long load runs, where 100,000 bodies in the heap lengthen the
   * sandbox's GC pauses, and requests read right after a pause look like a burst to the throughput limit.
   */
  messageLogPayloads: boolean;
  webhookLogLimit: number;
  /** webhook delivery */
  webhookTimeoutMs: number;
  /**
   * A failed delivery (an error, a timeout, a non-2xx answer) is tried again this many times, after
   * webhookRetryDelayMs, then twice that, and so on, as Meta retries; 0 (the default): never.
   */
  webhookRetries: number;
  webhookRetryDelayMs: number;
  webhookConcurrency: number;
  maxPendingWebhooks: number;
  /** phone_number_id -> WABA and display number */
  phoneNumbers: Record<string, PhoneNumberConfig>;
  /**
   * A customer's number (digits) -> their WhatsApp id when the two differ (Brazil's 9th digit, Mexico's `1`): sends to
   * the number answer this `wa_id` and report statuses to it, and the customer's messages come `from` it.
   */
  whatsappIds: Record<string, string>;
  /** template names whose GET (by id, or list filtered by name) answers error 2 (HTTP 503) */
  failTemplateGets: string[];
  /** access tokens answered with error 190 (subcode 463, expired) */
  invalidTokens: string[];
  /**
   * How long an accepted send waits before its HTTP answer goes out (the message is already accepted and its status
   * webhooks scheduled): lets a test kill a worker while the platform has a message whose answer it never received.
   */
  sendAnswerDelayMs: number;
  /**
   * The next this many accepted sends are answered HTTP 200 with a body cut off mid-JSON (the message is accepted and
   * its status webhooks scheduled): the sender cannot know whether the platform took it. Counts down.
   */
  garbledAnswers: number;
  /**
   * The next this many accepted sends get no answer at all: the connection is closed once the message is accepted (its
   * status webhooks scheduled), as a connection reset on the way back leaves it. Counts down.
   */
  droppedAnswers: number;
  /** The same for template creates: the next this many are created but answered with a cut-off body. Counts down. */
  garbledTemplateCreates: number;
  /** The same for template edits: the next this many are applied (and under review) but answered cut off. Counts down. */
  garbledTemplateEdits: number;
}

export function defaultConfig(): SandboxConfig {
  return {
    webhookUrl: 'http://127.0.0.1:3000/webhooks/whatsapp',
    appSecret: 'sandbox-app-secret',
    statusWebhooks: true,
    statusDelaysMs: { sent: 200, delivered: 600, read: 1500 },
    statusBatchSize: 1,
    tickMs: 25,
    templateReviewDelayMs: 2000,
    autoReview: true,
    defaultMessagesPerSecond: 80,
    messagesPerSecond: {},
    enforceCustomerCareWindow: true,
    customerCareWindowMs: 24 * 60 * 60 * 1000,
    pairRateLimit: null,
    failureRules: [{ toSuffix: '0000', code: 131026, details: 'Message Undeliverable.' }],
    messageLogLimit: 10_000,
    messageLogPayloads: true,
    webhookLogLimit: 2_000,
    webhookTimeoutMs: 5_000,
    webhookRetries: 0,
    webhookRetryDelayMs: 1_000,
    webhookConcurrency: 32,
    maxPendingWebhooks: 100_000,
    phoneNumbers: {},
    whatsappIds: {},
    failTemplateGets: [],
    invalidTokens: [],
    sendAnswerDelayMs: 0,
    garbledAnswers: 0,
    droppedAnswers: 0,
    garbledTemplateCreates: 0,
    garbledTemplateEdits: 0,
  };
}

export type TemplateStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'PAUSED' | 'DISABLED';

export interface TemplateComponent {
  type: string;
  format?: string;
  text?: string;
  example?: unknown;
  buttons?: unknown[];
  cards?: unknown[];
  [key: string]: unknown;
}

export interface Template {
  id: string;
  wabaId: string;
  name: string;
  language: string;
  category: string;
  status: TemplateStatus;
  parameter_format?: string;
  components: TemplateComponent[];
  rejected_reason: string;
  createdAt: number;
}

export type FlowStatus = 'DRAFT' | 'PUBLISHED' | 'DEPRECATED';

export interface FlowValidationError {
  error: string;
  error_type: string;
  message: string;
  line_start?: number;
  line_end?: number;
  column_start?: number;
  column_end?: number;
  pointers?: unknown[];
}

export interface Flow {
  id: string;
  wabaId: string;
  name: string;
  categories: string[];
  status: FlowStatus;
  validation_errors: FlowValidationError[];
  json: string | null;
  endpoint_uri?: string;
}

export interface SentMessage {
  wamid: string;
  phone_number_id: string;
  to: string;
  type: string;
  acceptedAt: string;
  /** the request body; absent with `messageLogPayloads: false` */
  payload?: Record<string, unknown>;
  /** the sender's X-Request-Id header, when it sent one (Switchboard sends the id of the request the send serves) */
  request_id?: string;
}

export interface WebhookLogEntry {
  id: number;
  at: string;
  url: string | null;
  field: string;
  body: unknown;
  signature: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/** A FIFO with O(1) push/shift that compacts its backing array now and then. */
export class Fifo<T> {
  private items: T[] = [];
  private head = 0;
  get length(): number {
    return this.items.length - this.head;
  }
  push(item: T): void {
    this.items.push(item);
  }
  peek(): T | undefined {
    return this.items[this.head];
  }
  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head] = undefined as T;
    this.head++;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
  clear(): void {
    this.items = [];
    this.head = 0;
  }
}

/** A capped log (ring buffer): keeps the newest `limit` entries, oldest first. O(1) add. */
export class CappedLog<T> {
  private ring: T[] = [];
  private start = 0;
  constructor(public limit: number) {}
  add(item: T): void {
    const limit = Math.max(0, this.limit);
    if (limit === 0) return;
    if (this.ring.length > limit) this.shrink(limit);
    if (this.ring.length < limit) {
      if (this.start !== 0) this.shrink(limit); // the limit grew after wrapping: straighten first
      this.ring.push(item);
    } else {
      this.ring[this.start] = item;
      this.start = (this.start + 1) % limit;
    }
  }
  toArray(): T[] {
    return [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
  }
  get size(): number {
    return this.ring.length;
  }
  clear(): void {
    this.ring = [];
    this.start = 0;
  }
  private shrink(limit: number): void {
    this.ring = this.toArray().slice(-limit);
    this.start = 0;
  }
}

/**
 * Sliding window per key (phone number, or phone number + recipient): a ring buffer of the last
 * `limit` acceptance times. A send fits when fewer than `limit` were accepted in the last
 * `windowMs`. `fits` only looks; `take` records an accepted send. O(1).
 */
export class RateLimiter {
  private rings = new Map<string, { times: number[]; next: number }>();

  fits(key: string, limit: number, now: number, windowMs = 1000): boolean {
    if (!limit || limit <= 0) return true;
    const ring = this.rings.get(key);
    if (!ring || ring.times.length !== limit) return true;
    // the slot `take` would overwrite holds the oldest of the last `limit` acceptances
    return now - ring.times[ring.next] >= windowMs;
  }

  take(key: string, limit: number, now: number): void {
    if (!limit || limit <= 0) return;
    let ring = this.rings.get(key);
    if (!ring || ring.times.length !== limit) {
      ring = { times: new Array<number>(limit).fill(-Infinity), next: 0 };
      this.rings.set(key, ring);
    }
    ring.times[ring.next] = now;
    ring.next = (ring.next + 1) % limit;
  }

  /** fits + take */
  tryTake(key: string, limit: number, now: number, windowMs = 1000): boolean {
    if (!this.fits(key, limit, now, windowMs)) return false;
    this.take(key, limit, now);
    return true;
  }

  clear(): void {
    this.rings.clear();
  }
}

export interface SandboxStats {
  accepted: number;
  rejected: Record<string, number>;
  inbound: number;
  webhooksDelivered: number;
  webhooksFailed: number;
  webhooksDropped: number;
}

export class SandboxState {
  config: SandboxConfig;
  templates = new Map<string, Template>();
  flows = new Map<string, Flow>();
  messages: CappedLog<SentMessage>;
  webhooks: CappedLog<WebhookLogEntry>;
  /** `${phone_number_id}:${wa_id}` -> time of the customer's last inbound message */
  lastInbound = new Map<string, number>();
  /** phone_number_id -> WABA learnt from a template send (when not configured) */
  learntWaba = new Map<string, string>();
  rate = new RateLimiter();
  pairRate = new RateLimiter();
  /** phone numbers seen (configured, sent from, or written to by an inbound message) */
  knownPhones = new Set<string>();
  stats: SandboxStats = emptyStats();
  /** every id the sandbox minted (templates, flows), so GET of a deleted one is not mistaken for a phone number */
  mintedIds = new Set<string>();
  /** uploaded media and business profiles */
  media = new MediaStore(this);
  private nextId = 1_000_000_000_000_000n;

  constructor(config: Partial<SandboxConfig> = {}) {
    this.config = { ...defaultConfig(), ...config };
    this.messages = new CappedLog(this.config.messageLogLimit);
    this.webhooks = new CappedLog(this.config.webhookLogLimit);
  }

  /** numeric ids like Meta's (templates and flows share one id space, as on the Graph) */
  newId(): string {
    this.nextId += 1n + BigInt(Math.floor(Math.random() * 1000));
    const id = this.nextId.toString();
    this.mintedIds.add(id);
    return id;
  }

  wabaOf(phoneNumberId: string): string {
    return (
      this.config.phoneNumbers[phoneNumberId]?.wabaId ??
      this.learntWaba.get(phoneNumberId) ??
      this.onlyKnownWaba() ??
      numericWabaId(phoneNumberId)
    );
  }

  /** The WhatsApp id of a customer's number (digits): itself unless `whatsappIds` gives another. */
  whatsappIdOf(number: string): string {
    return Object.hasOwn(this.config.whatsappIds, number) ? this.config.whatsappIds[number] : number;
  }

  displayPhoneNumber(phoneNumberId: string): string {
    const configured = this.config.phoneNumbers[phoneNumberId]?.displayPhoneNumber;
    if (configured) return configured;
    const digits = phoneNumberId.replace(/\D/g, '');
    return '1555' + digits.slice(-7).padStart(7, '0');
  }

  private onlyKnownWaba(): string | undefined {
    const wabas = new Set<string>();
    for (const t of this.templates.values()) wabas.add(t.wabaId);
    for (const f of this.flows.values()) wabas.add(f.wabaId);
    return wabas.size === 1 ? [...wabas][0] : undefined;
  }

  reset(): void {
    this.templates.clear();
    this.flows.clear();
    this.messages.clear();
    this.webhooks.clear();
    this.lastInbound.clear();
    this.learntWaba.clear();
    this.rate.clear();
    this.pairRate.clear();
    this.knownPhones.clear();
    this.mintedIds.clear();
    this.media.reset();
    this.stats = emptyStats();
  }
}

function emptyStats(): SandboxStats {
  return { accepted: 0, rejected: {}, inbound: 0, webhooksDelivered: 0, webhooksFailed: 0, webhooksDropped: 0 };
}

/** A number's WABA id when nothing names one: numeric like Meta's (15 digits), derived from the phone number id. */
export function numericWabaId(phoneNumberId: string): string {
  const digest = createHash('sha256').update(`waba:${phoneNumberId}`).digest();
  return '2' + (digest.readBigUInt64BE(0) % 10n ** 14n).toString().padStart(14, '0');
}
