import { useCallback, useEffect, useState } from 'react';
import { ApiError, campaignsApi, type CampaignItem, type Me } from '../../api';
import { navigate } from '../../router';
import { CampaignWizard } from './CampaignWizard';
import { ImportPanel } from './ImportPanel';
import { RateChart, WINDOW_MS, type RatePoint } from './RateChart';

/** What each state allows (the server's state machine, docs/campaigns.md). */
const ACTIONS: Record<string, string[]> = {
  draft: ['start', 'cancel'],
  scheduled: ['start', 'unschedule', 'cancel'],
  running: ['pause', 'cancel'],
  paused: ['resume', 'cancel'],
  // API triggers keep sending through a completed campaign until it is cancelled
  completed: ['cancel'],
};

const ACTION_TITLES: Record<string, string> = {
  completed: 'Cancel: API triggers stop sending through this campaign',
};

interface Snapshot {
  campaign_id: number;
  status: string;
  scheduled_at: string | null;
  funnel: Record<string, number>;
  progress: { audience: number; skipped_blocked: number; failed: number; cancelled: number };
  failed: Array<{ code: number | null; title: string | null; meaning: string | null; count: number }>;
  messages_per_second: number | null;
  rate_limit: number;
  eta_seconds: number | null;
  at: string;
}

/** /campaigns (list), /campaigns/{id} (list + live view), /campaigns/new (wizard), /campaigns/import. */
export function CampaignsPage({ path, me }: { path: string; me: Me }) {
  if (path === '/campaigns/new') return <CampaignWizard me={me} />;
  if (path === '/campaigns/import')
    return (
      <div className="page">
        <div className="page-head">
          <h1>Import contacts</h1>
          <button onClick={() => navigate('/campaigns')}>Back to campaigns</button>
        </div>
        <ImportPanel />
      </div>
    );
  const live = /^\/campaigns\/(\d+)$/.exec(path);
  return <CampaignsList selected={live ? Number(live[1]) : null} />;
}

function CampaignsList({ selected }: { selected: number | null }) {
  const [campaigns, setCampaigns] = useState<CampaignItem[]>([]);
  const [total, setTotal] = useState(0);
  const [pages, setPages] = useState(1); // 50 a page, newest first; "Older campaigns" reads one more
  const [error, setError] = useState<string | null>(null);
  const load = useCallback(
    () =>
      campaignsApi.list(pages).then(
        (r) => (setCampaigns(r.campaigns), setTotal(r.total)),
        (e) => setError((e as Error).message),
      ),
    [pages],
  );
  useEffect(() => {
    void load();
  }, [load]);
  async function act(id: number, action: string) {
    setError(null);
    try {
      await campaignsApi.act(id, action);
      await load();
    } catch (e) {
      setError((e as Error).message);
    }
  }
  const current = campaigns.find((c) => c.campaign_id === selected);
  return (
    <div className="page">
      <div className="page-head">
        <h1>Campaigns</h1>
        <button data-testid="import-contacts" onClick={() => navigate('/campaigns/import')}>
          Import contacts
        </button>
        <button className="primary" data-testid="new-campaign" onClick={() => navigate('/campaigns/new')}>
          New campaign
        </button>
      </div>
      {error && <p className="error">{error}</p>}
      <div className={selected !== null ? 'campaign-columns' : ''}>
        <table className="table" data-testid="campaigns">
          <thead>
            <tr>
              <th>Name</th>
              <th>Template</th>
              <th>Status</th>
            </tr>
          </thead>
          <tbody>
            {campaigns.map((c) => (
              <tr key={c.campaign_id} data-campaign={c.name} className={c.campaign_id === selected ? 'current' : ''}>
                <td>
                  <a
                    href={`/app/campaigns/${c.campaign_id}`}
                    onClick={(e) => (e.preventDefault(), navigate(`/campaigns/${c.campaign_id}`))}
                  >
                    {c.name}
                  </a>
                </td>
                <td>{c.templateName}</td>
                <td>
                  <span className={`badge badge-${c.status}`}>{c.status}</span>
                  {c.scheduledAt && c.status === 'scheduled' ? ` ${new Date(c.scheduledAt).toLocaleString()}` : ''}
                  {c.schedule_error && <small className="error"> {c.schedule_error}</small>}
                  {c.paused_reason && c.status === 'paused' && <small className="error"> {c.paused_reason}</small>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {campaigns.length < total && (
          <button className="link" data-testid="older-campaigns" onClick={() => setPages((n) => n + 1)}>
            Older campaigns ({total - campaigns.length} more)
          </button>
        )}
        {selected !== null && (
          <LiveView
            key={selected}
            id={selected}
            name={current?.name ?? `Campaign ${selected}`}
            onAction={(a) => act(selected, a)}
            onStatus={load}
          />
        )}
      </div>
    </div>
  );
}

/**
 * The live view of one campaign: Server-Sent Events from GET /v2/campaigns/{id}/live (no polling) — the funnel, the
 * failures by platform error code, messages per second against the number's rate, the time to completion.
 */
function LiveView({
  id,
  name,
  onAction,
  onStatus,
}: {
  id: number;
  name: string;
  onAction: (action: string) => void;
  onStatus: () => void;
}) {
  const [snap, setSnap] = useState<Snapshot | null>(null);
  const [points, setPoints] = useState<RatePoint[]>([]);
  const [connected, setConnected] = useState(false);
  const [missing, setMissing] = useState<string | null>(null);
  useEffect(() => {
    const source = new EventSource(`/v2/campaigns/${id}/live`);
    let seen = false;
    source.onopen = () => setConnected(true);
    source.onerror = () => {
      setConnected(false);
      // never connected: an unknown campaign (or another account's) says so instead of "Connecting…" for good
      if (!seen)
        campaignsApi.get(id).catch((e) => {
          if (e instanceof ApiError && e.status === 404) {
            source.close();
            setMissing(e.message);
          }
        });
    };
    source.addEventListener('progress', (e) => {
      const s = JSON.parse((e as MessageEvent).data) as Snapshot;
      seen = true;
      setSnap(s);
      if (s.messages_per_second !== null) {
        const at = Date.parse(s.at);
        setPoints((ps) => [...ps.filter((p) => p.at > at - WINDOW_MS), { at, perSecond: s.messages_per_second! }]);
      }
    });
    return () => source.close();
  }, [id]);
  // the list shows the status too: refresh it when the live status moves (e.g. a scheduled start)
  const status = snap?.status;
  useEffect(() => {
    if (status) onStatus();
  }, [status, onStatus]);

  if (missing)
    return (
      <section className="panel live-view" data-testid="live-missing">
        Campaign {id}: {missing}
      </section>
    );
  if (!snap) return <section className="panel live-view">Connecting…</section>;
  const f = snap.funnel;
  const total = Math.max(1, snap.progress.audience - snap.progress.skipped_blocked);
  return (
    <section
      className="panel live-view"
      data-testid="live-view"
      data-status={snap.status}
      data-live={connected ? 'on' : 'off'}
    >
      <div className="live-head">
        <h2>{name}</h2>
        <span className={`badge badge-${snap.status}`} data-testid="live-status">
          {snap.status}
        </span>
        {(ACTIONS[snap.status] ?? []).map((a) => (
          <button key={a} data-testid={`action-${a}`} title={ACTION_TITLES[snap.status]} onClick={() => onAction(a)}>
            {a}
          </button>
        ))}
      </div>
      {snap.status === 'scheduled' && snap.scheduled_at && (
        <p data-testid="starts-at">Starts {new Date(snap.scheduled_at).toLocaleString()}</p>
      )}
      <div className="live-columns">
        <div>
          <div className="funnel">
            {(['queued', 'sent', 'delivered', 'read', 'replied'] as const).map((k) => (
              <div key={k} className="funnel-step" data-testid={`funnel-${k}`} data-value={f[k]}>
                <div className="funnel-bar" style={{ width: `${Math.min(100, (f[k] / total) * 100)}%` }} />
                <span className="funnel-label">{k}</span>
                <strong>{f[k].toLocaleString()}</strong>
              </div>
            ))}
            <div className="funnel-step failed" data-testid="funnel-failed" data-value={snap.progress.failed}>
              <span className="funnel-label">failed</span>
              <strong>{snap.progress.failed.toLocaleString()}</strong>
            </div>
          </div>
          {snap.failed.map((x) => (
            <p key={String(x.code)} className="hint" data-testid="failure">
              {x.count} × {x.code ?? 'no code'}: {x.meaning ?? x.title}
            </p>
          ))}
        </div>
        <div>
          <RateChart points={points} rate={snap.rate_limit} />
          <p data-testid="rate">
            <strong>{snap.messages_per_second ?? 0}</strong> msg/s of {snap.rate_limit} · audience{' '}
            {snap.progress.audience.toLocaleString()}
            {snap.progress.skipped_blocked ? ` (${snap.progress.skipped_blocked} blocked, skipped)` : ''} ·{' '}
            {snap.eta_seconds !== null
              ? `done in about ${snap.eta_seconds} s`
              : snap.status === 'completed'
                ? 'done'
                : 'ETA —'}
          </p>
        </div>
      </div>
    </section>
  );
}
