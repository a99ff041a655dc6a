import { useCallback, useEffect, useRef, useState } from 'react';
import { templatesPageApi, type Me, type TemplateStatusEvent, type TemplateSummary } from '../../api';
import { useLatestRead } from '../../latest-read';
import { navigate } from '../../router';
import { TemplateEditor } from './TemplateEditor';
import { StatusBadge, useTemplateEvents } from './template-status';

const STATUSES = ['PENDING', 'APPROVED', 'REJECTED', 'PAUSED', 'DISABLED'];

/** /templates (list), /templates/new, /templates/edit/{name}. */
export function TemplatesPage({ path, me }: { path: string; me: Me }) {
  const edit = /^\/templates\/edit\/(.+)$/.exec(path);
  if (path === '/templates/new') return <TemplateEditor mode="create" me={me} />;
  if (edit) return <TemplateEditor mode="edit" name={decodeURIComponent(edit[1])} me={me} />;
  return <TemplatesList />;
}

function TemplatesList() {
  const [rows, setRows] = useState<Array<TemplateSummary & { rejected_reason?: string | null }> | null>(null);
  const [page, setPage] = useState(1);
  const [total, setTotal] = useState(0);
  const [search, setSearch] = useState('');
  const [status, setStatus] = useState('');
  const [error, setError] = useState('');
  const [notice, setNotice] = useState('');
  const [syncing, setSyncing] = useState(false);

  const latest = useLatestRead();
  const load = useCallback(() => {
    latest(templatesPageApi.list(page, search, status)).then(
      (r) => {
        setRows(r.templates as any);
        setTotal(r.total);
        setError('');
      },
      (e) => setError(e.message),
    );
  }, [page, search, status, latest]);
  useEffect(load, [load]);

  const onEvent = useCallback((e: TemplateStatusEvent) => {
    setRows(
      (current) =>
        current?.map((t) =>
          t.template_name === e.template_name && t.language === e.language
            ? { ...t, status: e.status, rejected_reason: e.rejected_reason }
            : t,
        ) ?? current,
    );
  }, []);
  const [live, setLive] = useState(false);
  const loadRef = useRef(load);
  loadRef.current = load;
  const onOpen = useCallback(() => {
    setLive(true);
    loadRef.current();
  }, []);
  useTemplateEvents(onEvent, onOpen);

  async function sync() {
    setSyncing(true);
    setNotice('');
    try {
      const r = await templatesPageApi.sync();
      setNotice(
        `Synced from the platform: ${r.updated.length} changed${r.errors.length ? `, ${r.errors.length} failed (${r.errors.map((x) => `${x.name}: ${x.message}`).join('; ')})` : ''}.`,
      );
      load();
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setSyncing(false);
    }
  }

  const pages = Math.max(1, Math.ceil(total / 20));
  return (
    <div className="page">
      <div className="page-head">
        <h1>Templates</h1>
        <input
          placeholder="Search by name"
          name="template-search"
          value={search}
          onChange={(e) => (setPage(1), setSearch(e.target.value))}
        />
        <select value={status} name="status-filter" onChange={(e) => (setPage(1), setStatus(e.target.value))}>
          <option value="">All statuses</option>
          {STATUSES.map((s) => (
            <option key={s}>{s}</option>
          ))}
        </select>
        <button onClick={sync} disabled={syncing} data-testid="sync-templates">
          {syncing ? 'Syncing…' : 'Sync from the platform'}
        </button>
        <button className="primary" data-testid="new-template" onClick={() => navigate('/templates/new')}>
          New template
        </button>
      </div>
      {error && <p className="error">{error}</p>}
      {notice && (
        <p className="notice info" data-testid="sync-result">
          {notice}
        </p>
      )}
      {rows === null ? (
        <p>Loading…</p>
      ) : rows.length === 0 ? (
        <p>No templates{search || status ? ' match' : ' yet'}.</p>
      ) : (
        <table className="table" data-testid="templates-table" data-live={live ? 'on' : 'off'}>
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Category</th>
              <th>Language</th>
              <th>Variables</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={`${t.template_name}:${t.language}`} data-template={t.template_name}>
                <td>
                  <a
                    href={`/app/templates/edit/${encodeURIComponent(t.template_name)}`}
                    onClick={(e) => (
                      e.preventDefault(),
                      navigate(`/templates/edit/${encodeURIComponent(t.template_name)}`)
                    )}
                  >
                    {t.template_name}
                  </a>
                </td>
                <td>
                  <StatusBadge status={t.status} reason={t.rejected_reason} />
                </td>
                <td>{t.category}</td>
                <td>{t.language}</td>
                <td>{t.variables.join(', ') || '—'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {pages > 1 && (
        <div className="pager">
          <button disabled={page <= 1} onClick={() => setPage(page - 1)}>
            Previous
          </button>
          <span>
            Page {page} of {pages}
          </span>
          <button disabled={page >= pages} onClick={() => setPage(page + 1)}>
            Next
          </button>
        </div>
      )}
    </div>
  );
}
