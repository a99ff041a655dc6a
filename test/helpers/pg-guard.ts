/**
 * e2e setup (setupFilesAfterEnv): a test fails when `pg` sees one client used by two queries at once ("Calling
 * client.query() when the client is already executing a query", an error from pg 9 on) or a query cut off by a
 * closing connection ("Connection terminated"). pg prints its deprecation once per process and only from the third
 * query in flight on, so the client's query is watched directly (from the second query on, as pg 9 will refuse it):
 * each misuse is recorded with the stack of the call that made it.
 */
import { Client } from 'pg';

type Query = (...args: unknown[]) => unknown;
interface WatchedClient {
  _activeQuery?: unknown;
  _queryQueue: unknown[];
  pipeline?: boolean;
  _ending?: boolean;
}

const problems: string[] = [];
const proto = Client.prototype as unknown as { query: Query; __guarded?: boolean };

if (!proto.__guarded) {
  const original = proto.query;
  proto.query = function guardedQuery(this: WatchedClient, ...args: unknown[]) {
    if ((this._activeQuery || this._queryQueue?.length > 0) && !this.pipeline && !this._ending) {
      problems.push(`client.query() while the client is already executing a query\n${new Error().stack}`);
    }
    const result = original.apply(this, args);
    if (result && typeof (result as Promise<unknown>).catch === 'function') {
      (result as Promise<unknown>).catch((error: Error) => {
        if (/^Connection terminated/.test(error?.message ?? ''))
          problems.push(`a query was cut off: ${error.message}\n${new Error().stack}`);
      });
    }
    return result;
  };
  proto.__guarded = true;
  // pg's own notice (a DeprecationWarning, once per process) counts too, whatever client printed it.
  process.on('warning', (warning) => {
    if (/already executing a query|pg@9/.test(warning.message)) problems.push(`pg warning: ${warning.message}`);
  });
}

/** Lines of a child process's output (API or worker run by a test) that show the same misuses. */
export function pgProblemsInOutput(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => /already executing a query|Connection terminated|Cannot use a pool after calling end/.test(line));
}

/** The misuses seen so far (tests of the guard itself read and clear them). */
export function takePgProblems(): string[] {
  return problems.splice(0);
}

afterEach(() => {
  const seen = takePgProblems();
  if (seen.length) throw new Error(`pg client misused (${seen.length}x):\n${seen.slice(0, 3).join('\n\n')}`);
});

afterAll(() => {
  const seen = takePgProblems();
  if (seen.length)
    throw new Error(`pg client misused while the suite closed (${seen.length}x):\n${seen.slice(0, 3).join('\n\n')}`);
});
