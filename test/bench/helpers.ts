/** Small helpers shared by several benchmark scenarios. */
import { Agent, request } from 'undici';

/** The q-quantile of ascending numbers, rounded to whole milliseconds (undefined for none). */
export const percentile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]?.toFixed(0);

/** The middle of some numbers (the mean of the two middle ones for an even count). */
export const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return (sorted[Math.floor((sorted.length - 1) / 2)] + sorted[Math.ceil((sorted.length - 1) / 2)]) / 2;
};

/** A customer's text message as the platform posts it to /webhooks/whatsapp (sign it with computeSignature). */
export function inboundWebhook(
  phoneNumberId: string,
  from: string,
  id = `wamid.bench-${from}`,
  { text = 'yes', name = 'Bench' }: { text?: string; name?: string } = {},
): string {
  return JSON.stringify({
    object: 'whatsapp_business_account',
    entry: [
      {
        id: 'bench-waba',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: '15550000000', phone_number_id: phoneNumberId },
              contacts: [{ profile: { name }, wa_id: from }],
              messages: [
                {
                  from,
                  id,
                  timestamp: String(Math.floor(Date.now() / 1000)),
                  type: 'text',
                  text: { body: text },
                },
              ],
            },
          },
        ],
      },
    ],
  });
}

/**
 * The load's own HTTP client: undici's `request()` on kept-alive connections. The load runs on the 2 cores the measured
 * processes share, and the global `fetch` cost this process ~1.2 ms of CPU per request (0.3–0.45 of a core at ~330
 * webhook posts per second): CPU taken from the API and the worker, which a real sender on another machine does not take.
 */
const loadClient = new Agent({ keepAliveTimeout: 30_000 });

/** POST a JSON text as a load request; answers the status and the Retry-After header (null when absent). */
export async function postLoad(
  url: string,
  json: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; retryAfter: string | null }> {
  const res = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: json,
    dispatcher: loadClient,
  });
  await res.body.dump();
  const retryAfter = res.headers['retry-after'];
  return { status: res.statusCode, retryAfter: typeof retryAfter === 'string' ? retryAfter : null };
}

/** POST JSON (or nothing); answers the status and the parsed body. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/**
 * A MARKETING template with one body variable, created through the API, approved by the sandbox's reviewer and seen
 * as APPROVED by the API (through the platform's webhook). Answers its name.
 */
export async function createApprovedTemplate(
  api: string,
  sandboxUrl: string,
  authz: Record<string, string>,
  messagingPhoneId: string,
): Promise<string> {
  const name = `bench_${Date.now().toString(36)}`;
  const created = await postJson(
    `${api}/templates/create`,
    {
      template_name: name,
      category: 'MARKETING',
      language: 'en_US',
      messagingPhoneId,
      components: [
        {
          type: 'body',
          parameters: [
            { type: 'text', text: 'Hi {{first}}, the sale starts today.' },
            { type: 'variable', variable: { text: 'first', value: 'Ann' } },
          ],
        },
      ],
    },
    authz,
  );
  if (created.status !== 200 || typeof created.body.data !== 'object')
    throw new Error(`template create failed: ${JSON.stringify(created.body)}`);
  await postJson(`${sandboxUrl}/_sandbox/templates/review`, { name, status: 'APPROVED' });
  for (let i = 0; ; i++) {
    const s = (await (await fetch(`${api}/templates/status?template_name=${name}`, { headers: authz })).json()) as any;
    if (s?.data?.status === 'APPROVED') return name;
    if (i > 100) throw new Error('template not approved');
    await new Promise((r) => setTimeout(r, 200));
  }
}
