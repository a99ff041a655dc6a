/** BullMQ queue names, one per kind of background work. */
export const QUEUES = {
  platformWebhooks: 'platform-webhooks',
  /** API sends (interactive: the HTTP request waits for the platform's answer) */
  sends: 'sends',
  /** campaign and automation sends; share the per-number pacer with `sends`, which goes first */
  bulkSends: 'bulk-sends',
  callbacks: 'callbacks',
  campaigns: 'campaigns',
  /** bulk contact imports (CSV / XLSX), one job per import */
  contactImports: 'contact-imports',
  automations: 'automations',
  /** periodic sweeps as BullMQ job schedulers: one run per period across all worker processes */
  sweeps: 'sweeps',
} as const;
