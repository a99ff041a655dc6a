import { useCallback, useEffect, useState } from 'react';
import { workflowsApi, type WorkflowSummary } from '../api';
import { useLatestRead } from '../latest-read';
import { navigate } from '../router';

export function WorkflowsList() {
  const [rows, setRows] = useState<WorkflowSummary[] | null>(null);
  const [page, setPage] = useState(1);
  const [totalPages, setTotalPages] = useState(1);
  const [search, setSearch] = useState('');
  const [error, setError] = useState('');

  const latest = useLatestRead();
  const load = useCallback(() => {
    latest(workflowsApi.list(page, search)).then(
      (r) => {
        setRows(r.data);
        setTotalPages(Math.max(1, r.pagination.totalPages));
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [page, search, latest]);
  useEffect(load, [load]);

  const [newName, setNewName] = useState('');
  const [creating, setCreating] = useState(false);
  async function create() {
    const name = newName.trim();
    if (!name) return setError('Give the new workflow a name');
    if (creating) return; // a double click makes one workflow
    setCreating(true);
    try {
      const wf = await workflowsApi.create(name);
      navigate(`/workflows/${wf.id}`);
    } catch (e) {
      setError((e as Error).message);
      setCreating(false);
    }
  }

  return (
    <div className="page">
      <div className="page-head">
        <h1>Workflows</h1>
        <input placeholder="Search by name" value={search} onChange={(e) => (setPage(1), setSearch(e.target.value))} />
        <form className="inline" onSubmit={(e) => (e.preventDefault(), void create())}>
          <input
            name="new-workflow-name"
            placeholder="New workflow name"
            value={newName}
            onChange={(e) => setNewName(e.target.value)}
          />
          <button type="submit" className="primary" data-testid="new-workflow" disabled={creating}>
            New workflow
          </button>
        </form>
      </div>
      {error && <p className="error">{error}</p>}
      {rows === null ? (
        <p>Loading…</p>
      ) : rows.length === 0 ? (
        <p>No workflows yet.</p>
      ) : (
        <table className="table" data-testid="workflows-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Active</th>
              <th>Version</th>
              <th>Waiting</th>
              <th>Failed (24 h)</th>
              <th>Updated</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {rows.map((w) => (
              <tr key={w.id}>
                <td>
                  <a
                    href={`/app/workflows/${w.id}`}
                    onClick={(e) => (e.preventDefault(), navigate(`/workflows/${w.id}`))}
                  >
                    {w.name}
                  </a>
                  {w.hasDraft && <span className="pill">draft</span>}
                </td>
                <td>{w.isActive ? 'yes' : 'no'}</td>
                <td>{w.version > 0 ? `v${w.version}` : 'not published'}</td>
                <td>{w.runsWaiting}</td>
                <td className={w.runsFailed24h ? 'bad' : ''}>{w.runsFailed24h}</td>
                <td>{new Date(w.updatedAt).toLocaleString()}</td>
                <td>
                  <button
                    className="link"
                    onClick={async () => {
                      if (!window.confirm(`Archive "${w.name}"? Its webhook stops; its runs stay readable.`)) return;
                      await workflowsApi.archive(w.id).catch((e) => setError(e.message));
                      load();
                    }}
                  >
                    Archive
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {totalPages > 1 && (
        <div className="pager">
          <button disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {totalPages}
          </span>
          <button disabled={page >= totalPages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </div>
      )}
    </div>
  );
}
