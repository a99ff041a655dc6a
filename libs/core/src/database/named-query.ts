import type { Pool, PoolClient } from 'pg';
import type { DataSource, EntityManager } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';

/**
 * Runs a hot query as a named prepared statement: PostgreSQL parses and plans it once per connection instead of on
 * every call (for the contact list, planning took longer than running). TypeORM's query() cannot name a statement, so
 * this goes to pg's pool, one connection per query, or, inside a transaction (an EntityManager with its own query
 * runner), to that transaction's connection. The text must never vary under one name (pg refuses that).
 */
export async function namedQuery<T = Record<string, unknown>>(
  db: DataSource | EntityManager,
  name: string,
  text: string,
  values: unknown[],
): Promise<T[]> {
  if ('queryRunner' in db && db.queryRunner) {
    const client = (await db.queryRunner.connect()) as PoolClient;
    return (await client.query({ name, text, values })).rows as T[];
  }
  const source = 'connection' in db ? db.connection : db;
  const pool = (source.driver as PostgresDriver).master as Pool;
  return (await pool.query({ name, text, values })).rows as T[];
}

/** A statement built by a library's SQL builder: `name` set when its text never varies (see namedQuery). */
export interface QueryPlan {
  sql: string;
  params: unknown[];
  name?: string;
}

/** Runs a builder's statement: as a named prepared statement when it has a name, else as an ordinary query. */
export function queryPlan<T = Record<string, unknown>>(db: DataSource | EntityManager, plan: QueryPlan): Promise<T[]> {
  return plan.name ? namedQuery<T>(db, plan.name, plan.sql, plan.params) : db.query(plan.sql, plan.params);
}
