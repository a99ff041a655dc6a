import { useEffect, useState } from 'react';
import { campaignsApi, contactsApi, type GroupItem, type ImportState } from '../../api';
import { customKey, guessColumn, previewCsv, type CsvPreview } from './csv-preview';

const PREVIEW_BYTES = 64 * 1024;
const DONE = ['completed', 'failed'];

/**
 * Contact import (POST /v2/contacts/imports): pick a CSV or XLSX file; a CSV's first rows are shown with the column
 * mapping (number, name, email, other columns as custom fields) before anything is uploaded; then a progress bar
 * (GET /v2/contacts/imports/{id}) and, when rows were rejected, the error report to download.
 */
export function ImportPanel() {
  const [file, setFile] = useState<File | null>(null);
  const [preview, setPreview] = useState<CsvPreview | null>(null);
  const [mapping, setMapping] = useState({ number: '', name: '', email: '' });
  const [custom, setCustom] = useState<string[]>([]);
  const [groups, setGroups] = useState<GroupItem[]>([]);
  const [groupId, setGroupId] = useState('');
  const [newGroup, setNewGroup] = useState('');
  const [existing, setExisting] = useState<'skip' | 'update'>('skip');
  const [state, setState] = useState<ImportState | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    contactsApi.groups().then(setGroups, (e) => setError((e as Error).message));
  }, []);

  // progress: poll the import until it is completed or failed (then the groups' member counts moved); a failed poll
  // (a network blip, a 429) is tried again, less often each time: the import goes on on the server meanwhile
  const [pollFailures, setPollFailures] = useState(0);
  useEffect(() => {
    if (state && DONE.includes(state.status)) contactsApi.groups().then(setGroups, () => undefined);
    if (!state || DONE.includes(state.status)) return;
    const timer = setTimeout(
      () => {
        campaignsApi.importState(state.import_id).then(
          (next) => {
            setError(null);
            setPollFailures(0);
            setState(next);
          },
          (e) => {
            setError(`${(e as Error).message} (progress not read; trying again)`);
            setPollFailures((n) => n + 1);
          },
        );
      },
      Math.min(5000, 400 * 2 ** pollFailures),
    );
    return () => clearTimeout(timer);
  }, [state, pollFailures]);
  const [starting, setStarting] = useState(false);

  async function choose(f: File | null) {
    setFile(f);
    setState(null);
    setError(null);
    setPreview(null);
    setCustom([]);
    if (!f || /\.xlsx$/i.test(f.name)) {
      setMapping({ number: '', name: '', email: '' });
      return;
    }
    const text = await f.slice(0, PREVIEW_BYTES).text();
    const p = previewCsv(text, 5, f.size <= PREVIEW_BYTES);
    setPreview(p);
    setMapping({
      number: guessColumn(p.header, 'number'),
      name: guessColumn(p.header, 'name'),
      email: guessColumn(p.header, 'email'),
    });
  }

  async function start() {
    if (!file || starting) return; // a double click starts one import
    setError(null);
    setStarting(true);
    try {
      let target = groupId;
      if (groupId === 'new') {
        const g = await contactsApi.createGroup(newGroup.trim());
        setGroups((gs) => [...gs, g]);
        setGroupId(String(g.group_id));
        target = String(g.group_id);
      }
      const form = new FormData();
      form.append(
        'mapping',
        JSON.stringify({
          number: mapping.number,
          name: mapping.name || undefined,
          email: mapping.email || undefined,
          custom: custom.length ? Object.fromEntries(custom.map((c) => [customKey(c), c])) : undefined,
        }),
      );
      if (target) form.append('group_ids', `[${target}]`);
      form.append('existing', existing);
      form.append('file', file);
      setState(await campaignsApi.startImport(form));
    } catch (e) {
      setError((e as Error).message);
    } finally {
      setStarting(false);
    }
  }

  const mapped = new Set(Object.values(mapping).filter(Boolean));
  const roleOf = (column: string) =>
    column === mapping.number
      ? 'number'
      : column === mapping.name
        ? 'name'
        : column === mapping.email
          ? 'email'
          : custom.includes(column)
            ? `custom.${customKey(column)}`
            : 'not imported';
  const columnPicker = (kind: 'number' | 'name' | 'email', label: string) => (
    <label className="field">
      <span>{label}</span>
      {preview ? (
        <select
          name={`map-${kind}`}
          value={mapping[kind]}
          onChange={(e) => setMapping({ ...mapping, [kind]: e.target.value })}
        >
          <option value="">{kind === 'number' ? 'Choose a column' : '(none)'}</option>
          {preview.header.map((h) => (
            <option key={h}>{h}</option>
          ))}
        </select>
      ) : (
        <input
          name={`map-${kind}`}
          placeholder="column name"
          value={mapping[kind]}
          onChange={(e) => setMapping({ ...mapping, [kind]: e.target.value })}
        />
      )}
    </label>
  );
  const busy = state !== null && !DONE.includes(state.status);
  const pct = state?.total_rows ? Math.round((state.processed_rows / state.total_rows) * 100) : 0;
  const ready = file && mapping.number && (groupId !== 'new' || newGroup.trim()) && !busy && !starting;

  return (
    <section className="panel import-panel" data-testid="import-panel">
      <label className="field">
        <span>CSV or XLSX file (up to 50 MB)</span>
        <input
          type="file"
          accept=".csv,.xlsx,text/csv"
          aria-label="File"
          onChange={(e) => void choose(e.target.files?.[0] ?? null)}
        />
      </label>
      {file && !preview && <p className="hint">No preview for XLSX files: name the columns of the first sheet.</p>}
      {preview && (
        <div data-testid="import-preview">
          <p className="hint">
            {file!.name}: the first {preview.rows.length} row(s), separated by{' '}
            {preview.delimiter === '\t' ? 'tabs' : `"${preview.delimiter}"`}. Tick other columns to keep them as custom
            fields.
          </p>
          <div className="scroll-x">
            <table className="table small">
              <thead>
                <tr>
                  {preview.header.map((h) => (
                    <th key={h}>
                      {h}
                      <br />
                      {mapped.has(h) ? (
                        <small className="pill" data-testid={`role-${h}`}>
                          {roleOf(h)}
                        </small>
                      ) : (
                        <label className="custom-toggle">
                          <input
                            type="checkbox"
                            name={`custom-${h}`}
                            checked={custom.includes(h)}
                            onChange={(e) =>
                              setCustom(e.target.checked ? [...custom, h] : custom.filter((c) => c !== h))
                            }
                          />{' '}
                          <small data-testid={`role-${h}`}>{roleOf(h)}</small>
                        </label>
                      )}
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {preview.rows.map((r, i) => (
                  <tr key={i}>
                    {preview.header.map((h, j) => (
                      <td key={h} className={mapped.has(h) || custom.includes(h) ? '' : 'muted'}>
                        {r[j]}
                      </td>
                    ))}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        </div>
      )}
      <div className="import-options">
        {columnPicker('number', 'Number column')}
        {columnPicker('name', 'Name column')}
        {columnPicker('email', 'Email column')}
        <label className="field">
          <span>Add to group</span>
          <select name="import-group" value={groupId} onChange={(e) => setGroupId(e.target.value)}>
            <option value="">(no group)</option>
            {groups.map((g) => (
              <option key={g.group_id} value={g.group_id}>
                {g.name} ({g.member_count})
              </option>
            ))}
            <option value="new">New group…</option>
          </select>
        </label>
        {groupId === 'new' && (
          <label className="field">
            <span>New group name</span>
            <input name="import-new-group" value={newGroup} onChange={(e) => setNewGroup(e.target.value)} />
          </label>
        )}
        <label className="field">
          <span>Numbers already in contacts</span>
          <select name="import-existing" value={existing} onChange={(e) => setExisting(e.target.value as any)}>
            <option value="skip">skip (keep their fields)</option>
            <option value="update">update name, email, custom fields</option>
          </select>
        </label>
      </div>
      <button className="primary" disabled={!ready} onClick={start} data-testid="start-import">
        Import
      </button>
      {error && <p className="error">{error}</p>}
      {state && (
        <div data-testid="import-progress" data-status={state.status} className="import-progress">
          <progress max={100} value={state.status === 'completed' ? 100 : pct} />
          <p data-testid="import-counts">
            {state.status} — {state.processed_rows} of {state.total_rows ?? '?'} rows: {state.created} imported,{' '}
            {state.updated} updated, {state.skipped} skipped, {state.failed} rejected
          </p>
          {state.error && <p className="error">{state.error}</p>}
          {state.failed > 0 && DONE.includes(state.status) && (
            <a href={state.errors_url} download data-testid="error-report">
              Download the error report ({state.failed} rows)
            </a>
          )}
        </div>
      )}
    </section>
  );
}
