import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A template a workflow names that cannot be sent: `status` null when the account has no template of that name. */
export interface UnusableTemplate {
  name: string;
  status: string | null;
}

/**
 * Which template names a workflow uses that the account cannot send: missing, or with no APPROVED language
 * (PENDING, REJECTED, PAUSED, DISABLED, ...). The templates module may provide its own under TEMPLATE_CATALOG;
 * the default below reads the `templates(account_id, name, status)` table when one exists and accepts every name
 * when it does not.
 */
export interface TemplateCatalog {
  unusableTemplates(accountId: string, names: string[]): Promise<UnusableTemplate[]>;
}

export const TEMPLATE_CATALOG = Symbol('TEMPLATE_CATALOG');

@Injectable()
export class TableTemplateCatalog implements TemplateCatalog {
  constructor(private readonly dataSource: DataSource) {}

  async unusableTemplates(accountId: string, names: string[]): Promise<UnusableTemplate[]> {
    if (names.length === 0) return [];
    const [{ columns }] = await this.dataSource.query(
      `SELECT array_agg(column_name::text) AS columns FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'templates'`,
    );
    if (!columns || !columns.includes('account_id') || !columns.includes('name')) return [];
    const hasStatus = columns.includes('status');
    // the best status of each name over its languages: APPROVED wins; else the platform's own status when kept
    const rows: { name: string; status: string | null }[] = await this.dataSource.query(
      hasStatus
        ? `SELECT name, CASE WHEN bool_or(status = 'APPROVED') THEN 'APPROVED' ELSE min(${columns.includes('platform_status') ? 'COALESCE(platform_status, status)' : 'status'}) END AS status
             FROM templates WHERE account_id = $1 AND name = ANY($2::text[]) GROUP BY name`
        : `SELECT DISTINCT name, 'APPROVED' AS status FROM templates WHERE account_id = $1 AND name = ANY($2::text[])`,
      [accountId, names],
    );
    const statusOf = new Map(rows.map((r) => [r.name, r.status]));
    return names.filter((n) => statusOf.get(n) !== 'APPROVED').map((name) => ({ name, status: statusOf.get(name) ?? null }));
  }
}
