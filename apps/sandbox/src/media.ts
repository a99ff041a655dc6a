/**
 * Media and business profiles, as the Cloud API serves them:
 * - `POST /{v}/{phone_number_id}/media` (multipart: `messaging_product`, `type`, `file`) → `{id}`;
 * - `GET /{v}/{media_id}` → `{messaging_product, url, mime_type, sha256, file_size, id}` (the url needs the bearer token,
 *   like Meta's lookaside URLs), `DELETE /{v}/{media_id}` → `{success: true}`;
 * - `GET {url}` → the bytes;
 * - `GET /{v}/{phone_number_id}/whatsapp_business_profile` → `{data: [{...profile, messaging_product}]}`,
 *   `POST` (JSON `{messaging_product, about?, address?, description?, email?, websites?, vertical?, profile_picture_handle?}`)
 *   → `{success: true}`.
 */
import { createHash } from 'node:crypto';
import { invalidParam, cloudError } from './errors';
import { isObj, Json } from './json';
import { MultipartPart } from './multipart';
import type { SandboxState } from './state';

export interface StoredMedia {
  id: string;
  phoneNumberId: string;
  mimeType: string;
  sha256: string;
  bytes: Buffer;
  fileName?: string;
}

/** Meta's media limits by MIME family (bytes). */
const MAX_BYTES: Record<string, number> = { audio: 16e6, video: 16e6, image: 5e6, application: 100e6, text: 100e6 };
const MAX_MEDIA = 1000;

export const MEDIA_DOWNLOAD_PATH = '/whatsapp_business/attachments/';

const PROFILE_FIELDS = [
  'about',
  'address',
  'description',
  'email',
  'profile_picture_url',
  'websites',
  'vertical',
] as const;
const VERTICALS = [
  'UNDEFINED',
  'OTHER',
  'AUTO',
  'BEAUTY',
  'APPAREL',
  'EDU',
  'ENTERTAIN',
  'EVENT_PLAN',
  'FINANCE',
  'GROCERY',
  'GOVT',
  'HOTEL',
  'HEALTH',
  'NONPROFIT',
  'PROF_SERVICES',
  'RETAIL',
  'TRAVEL',
  'RESTAURANT',
  'NOT_A_BIZ',
];

export class MediaStore {
  private readonly media = new Map<string, StoredMedia>();
  private readonly profiles = new Map<string, Json>();

  constructor(private readonly state: SandboxState) {}

  upload(phoneNumberId: string, body: unknown): { id: string } {
    const parts: MultipartPart[] | undefined =
      isObj(body) && Array.isArray(body.__multipart) ? (body.__multipart as MultipartPart[]) : undefined;
    if (!parts) throw invalidParam('media upload must be multipart/form-data with messaging_product, type and file');
    const field = (name: string) =>
      parts.find((p) => p.name === name && p.filename === undefined)?.data.toString('utf8');
    const file = parts.find((p) => p.name === 'file');
    if (!file || file.data.length === 0) throw invalidParam('file is required');
    if ((field('messaging_product') ?? 'whatsapp') !== 'whatsapp')
      throw invalidParam('messaging_product must be "whatsapp"');
    const mimeType = (field('type') || file.contentType || '').split(';')[0].trim();
    if (!/^[a-z]+\/[\w.+-]+$/.test(mimeType)) throw invalidParam('type (the MIME type of the file) is required');
    const limit = mimeType === 'image/webp' ? 5e5 : MAX_BYTES[mimeType.split('/')[0]];
    if (!limit) throw invalidParam(`Unsupported media type: ${mimeType}`);
    if (file.data.length > limit)
      throw invalidParam(`File is too big (${file.data.length} bytes) for ${mimeType} (limit ${limit} bytes)`);
    const id = this.state.newId();
    this.media.set(id, {
      id,
      phoneNumberId,
      mimeType,
      sha256: createHash('sha256').update(file.data).digest('hex'),
      bytes: Buffer.from(file.data),
      ...(file.filename ? { fileName: file.filename } : {}),
    });
    while (this.media.size > MAX_MEDIA) this.media.delete(this.media.keys().next().value!);
    return { id };
  }

  has(id: string): boolean {
    return this.media.has(id);
  }

  /** Meta's media object; `origin` is this sandbox's own URL (the download URL is absolute). */
  view(id: string, origin: string): Json {
    const m = this.media.get(id)!;
    return {
      messaging_product: 'whatsapp',
      url: `${origin}${MEDIA_DOWNLOAD_PATH}?mid=${id}&ext=${Math.floor(Date.now() / 1000)}`,
      mime_type: m.mimeType,
      sha256: m.sha256,
      file_size: m.bytes.length,
      id,
    };
  }

  delete(id: string): Json {
    this.media.delete(id);
    return { success: true };
  }

  download(mid: unknown): StoredMedia {
    const m = typeof mid === 'string' ? this.media.get(mid) : undefined;
    if (!m) throw cloudError(100, undefined, { message: 'Media not found' });
    return m;
  }

  profile(phoneNumberId: string): Json {
    const p = this.profiles.get(phoneNumberId) ?? {};
    return {
      data: [
        {
          ...Object.fromEntries(PROFILE_FIELDS.filter((f) => p[f] !== undefined).map((f) => [f, p[f]])),
          messaging_product: 'whatsapp',
        },
      ],
    };
  }

  updateProfile(phoneNumberId: string, body: unknown): Json {
    if (!isObj(body)) throw invalidParam('Request body must be a JSON object');
    if (body.messaging_product !== 'whatsapp') throw invalidParam('messaging_product must be "whatsapp"');
    const p = { ...(this.profiles.get(phoneNumberId) ?? {}) };
    for (const f of ['about', 'address', 'description', 'email'] as const) {
      if (body[f] === undefined) continue;
      if (typeof body[f] !== 'string') throw invalidParam(`${f} must be a string`);
      if (f === 'about' && ((body[f] as string).length < 1 || (body[f] as string).length > 139))
        throw invalidParam('about must be 1 to 139 characters');
      p[f] = body[f];
    }
    if (body.websites !== undefined) {
      if (
        !Array.isArray(body.websites) ||
        body.websites.length > 2 ||
        body.websites.some((w) => typeof w !== 'string' || !/^https?:\/\//.test(w))
      ) {
        throw invalidParam('websites must be at most 2 http(s) URLs');
      }
      p.websites = body.websites;
    }
    if (body.vertical !== undefined) {
      if (!VERTICALS.includes(String(body.vertical)))
        throw invalidParam(`vertical must be one of ${VERTICALS.join(', ')}`);
      p.vertical = body.vertical;
    }
    if (typeof body.profile_picture_handle === 'string')
      p.profile_picture_url = `https://pps.whatsapp.net/v/sandbox/${body.profile_picture_handle}`;
    this.profiles.set(phoneNumberId, p);
    return { success: true };
  }

  reset(): void {
    this.media.clear();
    this.profiles.clear();
  }
}
