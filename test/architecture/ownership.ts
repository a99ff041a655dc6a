import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';

/**
 * Who owns which table (docs/architecture.md "Table ownership" is the prose of this map). Only files under the
 * owner's folder may name the table in SQL (or map it with @Entity); everyone else calls the owner's exported service.
 * Migrations (libs/core/src/database/migrations) describe the schema and are exempt; tests read what was stored.
 */
export const TABLE_OWNERS: Record<string, string> = {
  accounts: 'libs/accounts',
  phone_numbers: 'libs/accounts',
  account_events: 'libs/accounts',
  secrets_key_check: 'libs/accounts',
  api_clients: 'libs/auth',
  contacts: 'libs/contacts',
  contact_groups: 'libs/contacts',
  contact_group_members: 'libs/contacts',
  contact_counts: 'libs/contacts',
  contact_imports: 'libs/contacts',
  contact_import_chunks: 'libs/contacts',
  contact_import_errors: 'libs/contacts',
  templates: 'libs/templates',
  messages: 'libs/messaging',
  platform_webhook_events: 'libs/messaging',
  customer_windows: 'libs/messaging',
  conversations: 'libs/messaging',
  conversation_number_reads: 'libs/messaging',
  flows: 'libs/flows',
  flow_sends: 'libs/flows',
  flow_responses: 'libs/flows',
  campaigns: 'libs/campaigns',
  campaign_triggers: 'libs/campaigns',
  campaign_recipients: 'libs/campaigns',
  campaign_audience: 'libs/campaigns',
  campaign_counts: 'libs/campaigns',
  workflows: 'libs/automations',
  workflow_versions: 'libs/automations',
  workflow_runs: 'libs/automations',
  users: 'libs/users',
  console_sessions: 'libs/users',
  workflow_drafts: 'libs/automations',
  webhook_endpoints: 'libs/webhooks',
  webhook_events: 'libs/webhooks',
  webhook_deliveries: 'libs/webhooks',
  webhook_delivery_attempts: 'libs/webhooks',
};

/** The domain libraries (everything under libs/ but core and engine). */
export const DOMAIN_LIBS = [
  'accounts',
  'auth',
  'automations',
  'campaigns',
  'contacts',
  'flows',
  'messaging',
  'templates',
  'whatsapp',
];

const ROOT = join(__dirname, '..', '..');
const SCANNED = ['apps', 'libs', 'scripts', 'workflows'];
const EXEMPT = [/\.spec\.ts$/, /^libs\/core\/src\/database\/migrations\//];

/** Source files of the app (tests and migrations left out), relative to the repository root with `/`. */
export function sourceFiles(dirs = SCANNED): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|tsx|mts)$/.test(entry.name)) out.push(relative(ROOT, path).split(sep).join('/'));
    }
  };
  for (const dir of dirs) walk(join(ROOT, dir));
  return out.filter((f) => !EXEMPT.some((re) => re.test(f)));
}
