/**
 * The console's one API client: the public REST endpoints, with the session cookie (same origin) and the CSRF
 * header on every unsafe request. Errors carry the server's message (shown as is: it names the field at fault).
 */
export interface Me {
  userId: number;
  email: string;
  role: 'admin' | 'marketer' | 'agent';
  accountId: number;
  grants: string[];
  csrfToken: string;
  messagingPhoneIds: string[];
  sandbox: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly body: any,
  ) {
    super(message);
  }
}

let csrfToken = '';
let onSignedOut: () => void = () => undefined;

export function setSession(me: Me | null) {
  csrfToken = me?.csrfToken ?? '';
}
export function whenSignedOut(handler: () => void) {
  onSignedOut = handler;
}
/** The session ended (a 401 to a request not made through api(): the inbox's own client): back to sign-in. */
export const sessionEnded = () => onSignedOut();

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET') headers['x-switchboard-csrf'] = csrfToken || '1';
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'same-origin',
  });
  const text = await response.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!response.ok) {
    if (response.status === 401 && path !== '/console/session') onSignedOut();
    const message =
      (parsed && typeof parsed === 'object' && (parsed as any).message) || `${response.status} ${response.statusText}`;
    throw new ApiError(response.status, Array.isArray(message) ? message.join('; ') : String(message), parsed);
  }
  return parsed as T;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

export const signIn = (email: string, password: string) =>
  api<{ data: Me }>('POST', '/console/session', { email, password }).then((r) => r.data);
export const signOut = () => api('DELETE', '/console/session');
export const fetchMe = () => api<{ data: Me }>('GET', '/console/me').then((r) => r.data);

export interface WorkflowSummary {
  id: number;
  name: string;
  isActive: boolean;
  version: number;
  triggerType: string;
  webhookUrl: string;
  hasDraft: boolean;
  runsWaiting: number;
  runsFailed24h: number;
  updatedAt: string;
}

export interface Layout {
  nodes: Record<string, { x: number; y: number }>;
  trigger?: { x: number; y: number };
}

export interface Definition {
  trigger: any;
  startNodeId: string;
  nodes: any[];
}

export interface WorkflowDetail extends WorkflowSummary, Definition {
  identifier: string;
  layout: Layout | null;
}

export interface Draft {
  workflowId: number;
  revision: number;
  baseVersion: number;
  name: string;
  definition: Definition;
  layout: Layout | null;
  errors: Array<{ nodeId?: string; field: string; message: string }>;
}

export interface RunSummary {
  runId: string;
  status: string;
  workflowVersion: number;
  currentNodeId: string | null;
  contactPhone: string | null;
  error: string | null;
  createdAt: string;
  finishedAt: string | null;
}

export const workflowsApi = {
  list: (page = 1, search = '') =>
    api<{ data: WorkflowSummary[]; pagination: { page: number; total: number; totalPages: number } }>(
      'GET',
      `/v1/workflows?page=${page}&pageSize=20${search ? `&search=${encodeURIComponent(search)}` : ''}`,
    ),
  create: (name: string) =>
    api<{ data: WorkflowSummary }>('POST', '/v1/workflows', {
      mode: 'create',
      name,
      asDraft: true,
      trigger: { type: 'webhook' },
      startNodeId: '',
      nodes: [],
      layout: { nodes: {}, trigger: { x: 0, y: 0 } },
    }).then((r) => r.data),
  archive: (id: number) => api('DELETE', `/v1/workflows/${id}`),
  get: (id: number) => api<{ data: WorkflowDetail }>('GET', `/v1/workflows/${id}`).then((r) => r.data),
  draft: (id: number) =>
    api<{ data: Draft }>('GET', `/v1/workflows/${id}/draft`).then(
      (r) => r.data,
      (e) => {
        if (e instanceof ApiError && e.status === 404) return null;
        throw e;
      },
    ),
  saveDraft: (id: number, body: { revision: number; name: string; definition: Definition; layout: Layout }) =>
    api<{ data: Draft }>('PUT', `/v1/workflows/${id}/draft`, body).then((r) => r.data),
  discardDraft: (id: number) => api('DELETE', `/v1/workflows/${id}/draft`),
  publish: (id: number, revision: number, replaces?: number) =>
    api<{ data: { id: number; version: number } }>('POST', `/v1/workflows/${id}/publish`, { revision, replaces }).then(
      (r) => r.data,
    ),
  versions: (id: number) =>
    api<{ data: Array<{ version: number; current: boolean; nodeCount: number; createdAt: string }> }>(
      'GET',
      `/v1/workflows/${id}/versions`,
    ).then((r) => r.data),
  version: (id: number, v: number) =>
    api<{ data: { version: number; definition: Definition; layout: Layout | null } }>(
      'GET',
      `/v1/workflows/${id}/versions/${v}`,
    ).then((r) => r.data),
  restore: (id: number, v: number) =>
    api<{ data: Draft }>('POST', `/v1/workflows/${id}/versions/${v}/restore`).then((r) => r.data),
  runs: (id: number, status = '') =>
    api<{ data: RunSummary[] }>('GET', `/v1/workflows/${id}/runs?pageSize=50${status ? `&status=${status}` : ''}`).then(
      (r) => r.data,
    ),
  run: (runId: string) => api<{ data: any }>('GET', `/v1/workflow-runs/${runId}`).then((r) => r.data),
  testRun: (id: number, payload: unknown) =>
    api<{ data: { runId: string } }>('POST', `/v1/workflows/${id}/test-runs`, { payload }).then((r) => r.data),
};

export interface TemplateInfo {
  template_name: string;
  language: string;
  status: string;
  variables: string[];
}
/**
 * Every item of a list the console offers whole (the pickers: groups, approved templates), read 100 a page: the
 * first page alone left out the 101st group and older templates. At most 5,000.
 */
async function everyPage<T>(path: string, key: string): Promise<T[]> {
  const items: T[] = [];
  for (let page = 1; page <= 50; page++) {
    const r = await api<{ data: { total: number } & Record<string, unknown> }>(
      'GET',
      `${path}${path.includes('?') ? '&' : '?'}page=${page}&pageSize=100`,
    );
    const batch = r.data[key] as T[];
    items.push(...batch);
    if (batch.length < 100 || items.length >= r.data.total) break;
  }
  return items;
}

export const templatesApi = {
  /** The APPROVED templates; with a number, only those it can send (its WhatsApp Business Account's). */
  approved: (messagingPhoneId?: string) =>
    everyPage<TemplateInfo>(
      `/v2/templates?status=APPROVED${messagingPhoneId ? `&messagingPhoneId=${encodeURIComponent(messagingPhoneId)}` : ''}`,
      'templates',
    ),
};

// ------------------------------------------------------------------ templates page

export interface TemplateSummary {
  template_name: string;
  category: string;
  language: string;
  status: string;
  variables: string[];
}
export interface TemplateDetail extends TemplateSummary {
  rejected_reason: string | null;
  platform_status?: string;
  messagingPhoneId: string | null;
  categoryChangeAllowed: boolean;
  components: unknown[];
  header_type: string;
  created_at: string;
  updated_at: string;
}
export interface TemplateStatusEvent {
  template_name: string;
  language: string;
  status: string;
  previous_status: string;
  rejected_reason: string | null;
  platform_status: string | null;
}
export const templatesPageApi = {
  list: (page: number, search: string, status: string) =>
    api<{ data: { templates: TemplateSummary[]; page: number; pageSize: number; total: number } }>(
      'GET',
      `/v2/templates?page=${page}&pageSize=20${search ? `&search=${encodeURIComponent(search)}` : ''}${
        status ? `&status=${status}` : ''
      }`,
    ).then((r) => r.data),
  get: (name: string) =>
    api<{ data: TemplateDetail }>('GET', `/v2/templates/${encodeURIComponent(name)}`).then((r) => r.data),
  create: (body: unknown) =>
    api<{ success: boolean; data: TemplateDetail | string }>('POST', '/templates/create', body).then((r) => {
      if (typeof r.data === 'string') throw new ApiError(200, r.data, r);
      return r.data;
    }),
  update: (name: string, body: unknown) =>
    api<{ data: TemplateDetail }>('PUT', `/templates/update?template_name=${encodeURIComponent(name)}`, body).then(
      (r) => r.data,
    ),
  sync: () =>
    api<{
      data: {
        updated: Array<{ name: string; status: string }>;
        errors: Array<{ name: string; message: string }>;
      };
    }>('POST', '/v2/templates/sync').then((r) => r.data),
};

// ------------------------------------------------------------------ contacts page

export interface ContactItem {
  contact_id: number;
  name: string | null;
  contact_number: string | null;
  whatsapp_user_id?: string;
  email: string | null;
  isBlocked: boolean;
  platform: string;
  created_at: string;
}
export interface ContactDetailView extends ContactItem {
  group_ids: number[];
  customFields?: Record<string, unknown>;
  updated_at: string;
}
export interface GroupItem {
  group_id: number;
  name: string;
  member_count: number;
  created_at: string;
}
export interface Paged {
  page: number;
  pageSize: number;
  total: number;
}
const qs = (params: Record<string, string | number | undefined | null>) =>
  Object.entries(params)
    .filter(([, v]) => v !== undefined && v !== null && v !== '')
    .map(([k, v]) => `${k}=${encodeURIComponent(String(v))}`)
    .join('&');

export const contactsApi = {
  list: (params: { page: number; search?: string; group_id?: number | null }) =>
    api<{ data: { contacts: ContactItem[] } & Paged }>('GET', `/v2/contacts?${qs({ pageSize: 20, ...params })}`).then(
      (r) => r.data,
    ),
  get: (id: number) =>
    api<{ data: { contact: ContactDetailView } }>('GET', `/v2/contacts/${id}`).then((r) => r.data.contact),
  setBlocked: (id: number, isBlocked: boolean) =>
    api<{ data: { contact: ContactDetailView } }>('PATCH', `/v2/contacts/${id}`, { isBlocked }).then(
      (r) => r.data.contact,
    ),
  groups: () => everyPage<GroupItem>('/v2/contact-groups', 'groups'),
  createGroup: (name: string) =>
    api<{ data: { group: GroupItem } }>('POST', '/v2/contact-groups', { name }).then((r) => r.data.group),
  renameGroup: (id: number, name: string) =>
    api<{ data: { group: GroupItem } }>('PATCH', `/v2/contact-groups/${id}`, { name }).then((r) => r.data.group),
  deleteGroup: (id: number) => api('DELETE', `/v2/contact-groups/${id}`),
  members: (id: number, page: number, search = '') =>
    api<{ data: { group: GroupItem; contacts: ContactItem[] } & Paged }>(
      'GET',
      `/v2/contact-groups/${id}/members?${qs({ page, pageSize: 20, search })}`,
    ).then((r) => r.data),
  addMembers: (id: number, contact_ids: number[]) => api('POST', `/v2/contact-groups/${id}/members`, { contact_ids }),
  removeMembers: (id: number, contact_ids: number[]) =>
    api('DELETE', `/v2/contact-groups/${id}/members`, { contact_ids }),
  messages: (id: number) =>
    api<{ data: { messages: Array<Record<string, any>> } & Paged }>(
      'GET',
      `/v2/conversations/${id}/messages?pageSize=50`,
    ).then((r) => r.data),
  runs: (id: number) =>
    api<{ data: Array<Record<string, any>>; pagination: Paged }>(
      'GET',
      `/v1/workflow-runs?contact_id=${id}&pageSize=50`,
    ),
};

/** A multipart upload (contact imports): same session and CSRF header as `api`. */
export async function upload<T = any>(path: string, form: FormData): Promise<T> {
  const response = await fetch(path, {
    method: 'POST',
    headers: { accept: 'application/json', 'x-switchboard-csrf': csrfToken || '1' },
    body: form,
    credentials: 'same-origin',
  });
  const text = await response.text();
  const parsed = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const message = (parsed && typeof parsed === 'object' && (parsed as any).message) || `${response.status}`;
    throw new ApiError(response.status, String(message), parsed);
  }
  return parsed as T;
}

// ------------------------------------------------------------------ campaigns page

export interface CampaignItem {
  campaign_id: number;
  name: string;
  status: string;
  templateName: string;
  messagingPhoneId: string;
  scheduledAt: string | null;
  schedule_error?: string | null;
  paused_reason?: string | null;
  group_ids: number[];
  created_at: string;
}
/** A campaign variable: a constant, or a contact field with the text used when the contact's field is empty. */
export type CampaignVariable = string | { field: string; fallback: string };
export interface NewCampaign {
  name: string;
  messagingPhoneId: string;
  templateName: string;
  variables: Record<string, CampaignVariable>;
  group_ids: number[];
  mediaUrl?: string;
  scheduledAt?: string;
}
export interface ImportState {
  import_id: number;
  status: string;
  error: string | null;
  total_rows: number | null;
  processed_rows: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  errors_url: string;
}

export const campaignsApi = {
  /** The newest `pages` × 50 campaigns, and how many the account has. */
  list: async (pages: number) => {
    const campaigns: CampaignItem[] = [];
    let total = 0;
    for (let page = 1; page <= pages; page++) {
      const r = await api<{ data: { campaigns: CampaignItem[] } & Paged }>(
        'GET',
        `/v2/campaigns?page=${page}&pageSize=50`,
      );
      campaigns.push(...r.data.campaigns);
      total = r.data.total;
      if (campaigns.length >= total) break;
    }
    return { campaigns, total };
  },
  get: (id: number) => api<{ data: CampaignItem }>('GET', `/v2/campaigns/${id}`).then((r) => r.data),
  create: (body: NewCampaign) => api<{ data: CampaignItem }>('POST', '/v2/campaigns', body).then((r) => r.data),
  act: (id: number, action: string) => api<{ data: CampaignItem }>('POST', `/v2/campaigns/${id}/${action}`),
  audienceCount: (groupIds: number[]) =>
    api<{ data: { contacts: number; blocked: number } }>(
      'GET',
      `/v2/campaigns/audience-count?group_ids=${groupIds.join(',')}`,
    ).then((r) => r.data),
  startImport: (form: FormData) => upload<{ data: ImportState }>('/v2/contacts/imports', form).then((r) => r.data),
  importState: (id: number) => api<{ data: ImportState }>('GET', `/v2/contacts/imports/${id}`).then((r) => r.data),
};
