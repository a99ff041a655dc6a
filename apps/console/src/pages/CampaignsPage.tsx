import { useEffect, useState } from 'react';
import { api, upload } from '../api';

interface Campaign {
  campaign_id: number;
  name: string;
  status: string;
  templateName: string;
  scheduledAt: string | null;
  progress?: { audience: number; sent: number; failed: number };
}

interface ImportState {
  import_id: number;
  status: string;
  error: string | null;
  total_rows: number | null;
  processed_rows: number;
  created: number;
  skipped: number;
  failed: number;
}

/** Contact import: a CSV/XLSX file with its column mapping, then a progress bar and the error report. */
function ImportPanel() {
  const [file, setFile] = useState<File | null>(null);
  const [number, setNumber] = useState('phone');
  const [name, setName] = useState('name');
  const [groupId, setGroupId] = useState('');
  const [state, setState] = useState<ImportState | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!state || state.status === 'completed' || state.status === 'failed') return;
    const timer = setTimeout(async () => {
      const r = await api<{ data: ImportState }>('GET', `/v2/contacts/imports/${state.import_id}`);
      setState(r.data);
    }, 500);
    return () => clearTimeout(timer);
  }, [state]);

  async function start() {
    if (!file) return;
    setError(null);
    const form = new FormData();
    form.append('mapping', JSON.stringify({ number, name: name || undefined }));
    if (groupId) form.append('group_ids', groupId);
    form.append('file', file);
    try {
      setState((await upload<{ data: ImportState }>('/v2/contacts/imports', form)).data);
    } catch (e) {
      setError((e as Error).message);
    }
  }

  const pct = state?.total_rows ? Math.round((state.processed_rows / state.total_rows) * 100) : 0;
  return (
    <section className="panel" data-testid="import-panel">
      <h2>Import contacts</h2>
      <input type="file" accept=".csv,.xlsx" aria-label="File" onChange={(e) => setFile(e.target.files?.[0] ?? null)} />
      <label>
        Number column <input value={number} onChange={(e) => setNumber(e.target.value)} />
      </label>
      <label>
        Name column <input value={name} onChange={(e) => setName(e.target.value)} />
      </label>
      <label>
        Group id <input value={groupId} onChange={(e) => setGroupId(e.target.value)} />
      </label>
      <button disabled={!file} onClick={start}>
        Import
      </button>
      {error && <p className="error">{error}</p>}
      {state && (
        <div data-testid="import-progress">
          <progress max={100} value={pct} /> {state.status} — {state.processed_rows}/{state.total_rows ?? '?'} rows,{' '}
          {state.created} created, {state.skipped} skipped, {state.failed} rejected
          {state.error && <p className="error">{state.error}</p>}
          {state.failed > 0 && (
            <a href={`/v2/contacts/imports/${state.import_id}/errors`} download>
              Download the error report
            </a>
          )}
        </div>
      )}
    </section>
  );
}

/** The live view of one campaign: Server-Sent Events from GET /v2/campaigns/{id}/live. */
function LiveView({ id }: { id: number }) {
  const [snap, setSnap] = useState<any>(null);
  useEffect(() => {
    const source = new EventSource(`/v2/campaigns/${id}/live`);
    source.addEventListener('progress', (e) => setSnap(JSON.parse((e as MessageEvent).data)));
    return () => source.close();
  }, [id]);
  if (!snap) return <p>Connecting…</p>;
  return (
    <div data-testid="live-view">
      <p>
        {snap.status} · {snap.messages_per_second ?? 0} msg/s of {snap.rate_limit} · ETA {snap.eta_seconds ?? '—'} s
      </p>
      <ul>
        {Object.entries(snap.funnel as Record<string, number>).map(([k, v]) => (
          <li key={k} data-testid={`funnel-${k}`}>
            {k}: {v}
          </li>
        ))}
      </ul>
      {snap.failed.map((f: any) => (
        <p key={String(f.code)}>
          failed {f.count} × {f.code}: {f.meaning ?? f.title}
        </p>
      ))}
    </div>
  );
}

/** Campaigns: list with status and progress, actions, the live view; and the contact import. */
export function CampaignsPage() {
  const [campaigns, setCampaigns] = useState<Campaign[]>([]);
  const [selected, setSelected] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    api<{ data: { campaigns: Campaign[] } }>('GET', '/v2/campaigns?page=1&pageSize=50').then(
      (r) => setCampaigns(r.data.campaigns),
      (e) => setError((e as Error).message),
    );
  useEffect(() => {
    void load();
  }, []);
  async function act(id: number, action: string) {
    try {
      await api('POST', `/v2/campaigns/${id}/${action}`);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  }
  return (
    <div className="page">
      <h1>Campaigns</h1>
      {error && <p className="error">{error}</p>}
      <table data-testid="campaigns">
        <thead>
          <tr>
            <th>Name</th>
            <th>Template</th>
            <th>Status</th>
            <th>Actions</th>
          </tr>
        </thead>
        <tbody>
          {campaigns.map((c) => (
            <tr key={c.campaign_id}>
              <td>
                <button className="link" onClick={() => setSelected(c.campaign_id)}>
                  {c.name}
                </button>
              </td>
              <td>{c.templateName}</td>
              <td>
                {c.status}
                {c.scheduledAt && c.status === 'scheduled' ? ` (${new Date(c.scheduledAt).toLocaleString()})` : ''}
              </td>
              <td>
                {['start', 'pause', 'resume', 'cancel'].map((a) => (
                  <button key={a} onClick={() => act(c.campaign_id, a)}>
                    {a}
                  </button>
                ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {selected !== null && <LiveView id={selected} />}
      <ImportPanel />
    </div>
  );
}
