import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/**
 * Which template names a workflow uses that the account does not have. The templates module provides the
 * real implementation under TEMPLATE_CATALOG (e.g. "exists and is APPROVED"); until then the default below
 * looks at a `templates(account_id, name)` table when one exists and accepts every name when it does not.
 */
export interface TemplateCatalog {
  missingTemplates(accountId: string, names: string[]): Promise<string[]>;
}

export const TEMPLATE_CATALOG = Symbol('TEMPLATE_CATALOG');

@Injectable()
export class TableTemplateCatalog implements TemplateCatalog {
  constructor(private readonly dataSource: DataSource) {}

  async missingTemplates(accountId: string, names: string[]): Promise<string[]> {
    if (names.length === 0) return [];
    const [{ columns }] = await this.dataSource.query(
      `SELECT array_agg(column_name::text) AS columns FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = 'templates'`,
    );
    if (!columns || !columns.includes('account_id') || !columns.includes('name')) return [];
    const rows: { name: string }[] = await this.dataSource.query(`SELECT DISTINCT name FROM templates WHERE account_id = $1 AND name = ANY($2::text[])`, [
      accountId,
      names,
    ]);
    const found = new Set(rows.map((r) => r.name));
    return names.filter((n) => !found.has(n));
  }
}
