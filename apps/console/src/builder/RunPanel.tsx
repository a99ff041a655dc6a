import { useCallback, useEffect, useState } from 'react';
import { api, workflowsApi, type Me, type RunSummary } from '../api';
import type { Definition } from './graph';
import { durations, type RunData, type RunEntry } from './run-view';

const STATUSES = ['', 'pending', 'running', 'waiting', 'completed', 'failed'];
const SAMPLE = JSON.stringify({ phone: '+15550001234', name: 'Ann', order: { id: '1234' } }, null, 2);

function time(iso?: string | null) {
  return iso ? new Date(iso).toLocaleTimeString() : '—';
}
function ms(d: number) {
  return Number.isFinite(d) ? (d < 1000 ? `${d} ms` : `${(d / 1000).toFixed(1)} s`) : '';
}

/** What a step did, in a line: the template and message id of a send, the reply, the HTTP status. */
function effectLine(entry: RunEntry): string {
  const d = entry.detail;
  if (!d) return '';
  if (d.reply) return `reply: “${d.reply.text ?? d.reply.buttonText ?? d.reply.buttonPayload ?? ''}”`;
  const parts: string[] = [];
  if (d.input?.templateName) parts.push(`template ${d.input.templateName} → ${d.input.to}`);
  if (d.input?.text) parts.push(`“${String(d.input.text).slice(0, 60)}” → ${d.input.to}`);
  if (d.input?.url) parts.push(`${d.input.method} ${d.input.url}`);
  if (d.output?.messageId) parts.push(`message ${d.output.messageId}${d.output.status ? ` (${d.output.status})` : ''}`);
  if (d.output?.status && typeof d.output.status === 'number') parts.push(`HTTP ${d.output.status}`);
  if (d.error) parts.push(`error: ${typeof d.error === 'string' ? d.error : d.error.message}`);
  return parts.join(' · ');
}

export function RunPanel(props: {
  workflowId: number;
  me: Me;
  run: RunData | null;
  definition: Definition;
  onOpen: (runId: string) => void;
  draftUnpublished: boolean;
}) {
  const { workflowId, me, run, onOpen } = props;
  const [runs, setRuns] = useState<RunSummary[] | null>(null);
  const [status, setStatus] = useState('');
  const [payload, setPayload] = useState(SAMPLE);
  const [reply, setReply] = useState('yes');
  const [message, setMessage] = useState('');

  const refresh = useCallback(
    () => workflowsApi.runs(workflowId, status).then(setRuns, (e) => setMessage(e.message)),
    [workflowId, status],
  );
  useEffect(() => {
    void refresh();
  }, [refresh, run?.status]);

  async function testRun() {
    setMessage('');
    let parsed: unknown;
    try {
      parsed = JSON.parse(payload);
    } catch {
      return setMessage('The payload is not valid JSON');
    }
    try {
      const { runId } = await workflowsApi.testRun(workflowId, parsed);
      onOpen(runId);
      void refresh();
    } catch (e) {
      setMessage((e as Error).message);
    }
  }

  async function sendReply() {
    if (!run) return;
    setMessage('');
    try {
      await api('POST', `/v1/workflow-runs/${run.runId}/sandbox-reply`, { text: reply });
      setMessage('Reply sent as the customer.');
    } catch (e) {
      setMessage((e as Error).message);
    }
  }

  const spans = run ? durations(run) : [];
  return (
    <div className="runs">
      <details open={!run}>
        <summary>Test run</summary>
        <p className="hint">
          Starts the live version{props.draftUnpublished ? ' (your draft is not published yet)' : ''} with this payload,
          as if posted to the webhook.
        </p>
        <textarea name="test-payload" rows={6} value={payload} onChange={(e) => setPayload(e.target.value)} />
        <button className="primary" onClick={testRun} data-testid="start-test-run">
          Start test run
        </button>
      </details>
      {message && (
        <p className="hint" data-testid="run-message">
          {message}
        </p>
      )}
      {run && (
        <div className="run-detail" data-testid="run-detail">
          <h3>
            Run{' '}
            <span className={`run-badge ${run.status}`} data-testid="run-status">
              {run.status}
            </span>
          </h3>
          <p>
            <small>
              contact {run.contact?.phone ?? '—'} · started {time(run.createdAt)} · finished {time(run.finishedAt)}
            </small>
          </p>
          {run.waitingFor && (
            <p className="waiting" data-testid="run-waiting">
              Waiting at <strong>{run.waitingFor.nodeId}</strong> for{' '}
              {run.waitingFor.kind === 'reply'
                ? 'a reply'
                : run.waitingFor.kind === 'timer'
                  ? 'the timer'
                  : run.waitingFor.effect}
              {run.waitingFor.until && ` until ${new Date(run.waitingFor.until).toLocaleString()}`}
            </p>
          )}
          {run.waitingFor?.kind === 'reply' && me.sandbox && (
            <div className="reply">
              <input name="sandbox-reply" value={reply} onChange={(e) => setReply(e.target.value)} />
              <button onClick={sendReply} data-testid="send-reply">
                Reply as the customer (sandbox)
              </button>
            </div>
          )}
          {run.error && <p className="error">Error: {run.error.message}</p>}
          <ol className="steps">
            {run.history.map((h, i) => (
              <li key={h.seq} data-testid="run-step">
                <strong>{h.nodeId}</strong>{' '}
                <span className={`outcome ${h.outcome === 'failed' ? 'bad' : ''}`}>{h.outcome}</span>
                <br />
                <small>
                  {time(h.at)} {ms(spans[i])}
                </small>
                {effectLine(h) && (
                  <>
                    <br />
                    <small className="effect">{effectLine(h)}</small>
                  </>
                )}
              </li>
            ))}
          </ol>
        </div>
      )}
      <div className="runs-head">
        <h3>Runs</h3>
        <select value={status} onChange={(e) => setStatus(e.target.value)} aria-label="Filter by status">
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s || 'all'}
            </option>
          ))}
        </select>
        <button className="link" onClick={() => void refresh()}>
          refresh
        </button>
      </div>
      <table className="table small" data-testid="runs-table">
        <thead>
          <tr>
            <th>Status</th>
            <th>Contact</th>
            <th>Started</th>
            <th>Step</th>
          </tr>
        </thead>
        <tbody>
          {(runs ?? []).map((r) => (
            <tr key={r.runId} className={run?.runId === r.runId ? 'current' : ''} onClick={() => onOpen(r.runId)}>
              <td>
                <span className={`run-badge ${r.status}`}>{r.status}</span>
              </td>
              <td>{r.contactPhone ?? '—'}</td>
              <td>{time(r.createdAt)}</td>
              <td>{r.currentNodeId ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
