import { useCallback, useEffect, useState } from 'react';
import { contactsApi, type ContactDetailView, type GroupItem } from '../../api';
import { navigate } from '../../router';

export function OptOut({ blocked }: { blocked: boolean }) {
  return blocked ? (
    <span className="badge badge-rejected" data-testid="opt-out">
      opted out
    </span>
  ) : (
    <span className="badge badge-approved">subscribed</span>
  );
}

type Loaded<T> = { ok: true; value: T } | { ok: false; error: string } | null;

const settle = <T,>(p: Promise<T>, set: (v: Loaded<T>) => void) =>
  p.then(
    (value) => set({ ok: true, value }),
    (e) => set({ ok: false, error: (e as Error).message }),
  );

/** One contact: profile, opt-out, groups, its conversation (both directions) and the workflow runs it is in. */
export function ContactDetail({ contactId }: { contactId: number }) {
  const [contact, setContact] = useState<Loaded<ContactDetailView>>(null);
  const [groups, setGroups] = useState<GroupItem[]>([]);
  const [messages, setMessages] = useState<Loaded<Array<Record<string, any>>>>(null);
  const [runs, setRuns] = useState<Loaded<Array<Record<string, any>>>>(null);
  const [addTo, setAddTo] = useState('');
  const [error, setError] = useState('');

  const load = useCallback(() => {
    void settle(contactsApi.get(contactId), setContact);
    void contactsApi.groups().then(setGroups, () => undefined);
    void settle(
      contactsApi.messages(contactId).then((r) => r.messages),
      setMessages,
    );
    void settle(
      contactsApi.runs(contactId).then((r) => r.data),
      setRuns,
    );
  }, [contactId]);
  useEffect(load, [load]);

  if (contact === null) return <div className="page">Loading…</div>;
  if (!contact.ok)
    return (
      <div className="page">
        <p className="error">{contact.error}</p>
        <button onClick={() => navigate('/contacts')}>Back to contacts</button>
      </div>
    );
  const c = contact.value;
  const memberOf = groups.filter((g) => c.group_ids.includes(g.group_id));
  const act = async (work: () => Promise<unknown>) => {
    try {
      await work();
      setError('');
      load();
    } catch (e) {
      setError((e as Error).message);
    }
  };

  return (
    <div className="page contact-detail" data-testid="contact-detail">
      <div className="page-head">
        <h1>{c.name ?? '(no name)'}</h1>
        <OptOut blocked={c.isBlocked} />
        <div className="spacer" />
        <button onClick={() => navigate('/contacts')}>Back to contacts</button>
      </div>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      <div className="detail-grid">
        <section className="card">
          <h3>Profile</h3>
          <dl>
            <dt>Number</dt>
            <dd>{c.contact_number ? `+${c.contact_number}` : c.whatsapp_user_id}</dd>
            <dt>Email</dt>
            <dd>{c.email ?? '—'}</dd>
            <dt>Created</dt>
            <dd>{new Date(c.created_at).toLocaleString()}</dd>
            {c.customFields && Object.keys(c.customFields).length > 0 && (
              <>
                <dt>Custom fields</dt>
                <dd>
                  {Object.entries(c.customFields)
                    .map(([k, v]) => `${k}: ${String(v)}`)
                    .join(', ')}
                </dd>
              </>
            )}
          </dl>
          <button
            data-testid="toggle-opt-out"
            onClick={() => void act(() => contactsApi.setBlocked(c.contact_id, !c.isBlocked))}
          >
            {c.isBlocked ? 'Resubscribe (clear the opt-out)' : 'Record an opt-out'}
          </button>
          <h3>Groups</h3>
          <ul className="plain" data-testid="contact-groups">
            {memberOf.length === 0 && <li className="hint">In no group.</li>}
            {memberOf.map((g) => (
              <li key={g.group_id}>
                {g.name}{' '}
                <button
                  className="link"
                  onClick={() => void act(() => contactsApi.removeMembers(g.group_id, [c.contact_id]))}
                >
                  remove
                </button>
              </li>
            ))}
          </ul>
          <form
            className="inline"
            onSubmit={(e) => {
              e.preventDefault();
              if (addTo) void act(() => contactsApi.addMembers(Number(addTo), [c.contact_id]));
            }}
          >
            <select name="add-to-group" value={addTo} onChange={(e) => setAddTo(e.target.value)}>
              <option value="">Add to a group…</option>
              {groups
                .filter((g) => !c.group_ids.includes(g.group_id))
                .map((g) => (
                  <option key={g.group_id} value={g.group_id}>
                    {g.name}
                  </option>
                ))}
            </select>
            <button type="submit">Add</button>
          </form>
        </section>

        <section className="card conversation" data-testid="conversation">
          <h3>Conversation</h3>
          {messages === null ? (
            <p>Loading…</p>
          ) : !messages.ok ? (
            <p className="hint">{messages.error}</p>
          ) : messages.value.length === 0 ? (
            <p className="hint">No messages yet.</p>
          ) : (
            <div className="thread">
              {[...messages.value].reverse().map((m) => (
                <div key={m.id} className={`msg ${m.direction}`}>
                  <div>{m.text ?? (m.template_name ? `Template ${m.template_name}` : `(${m.type})`)}</div>
                  <small>
                    {new Date(m.created_at).toLocaleString()} · {m.status}
                    {m.error ? ` · ${m.error.code} ${m.error.title ?? ''}` : ''}
                  </small>
                </div>
              ))}
            </div>
          )}
        </section>

        <section className="card" data-testid="contact-runs">
          <h3>Workflow runs</h3>
          {runs === null ? (
            <p>Loading…</p>
          ) : !runs.ok ? (
            <p className="hint">{runs.error}</p>
          ) : runs.value.length === 0 ? (
            <p className="hint">In no workflow run.</p>
          ) : (
            <table className="table small">
              <thead>
                <tr>
                  <th>Workflow</th>
                  <th>Status</th>
                  <th>Step</th>
                  <th>Started</th>
                </tr>
              </thead>
              <tbody>
                {runs.value.map((r) => (
                  <tr key={r.runId}>
                    <td>
                      <a
                        href={`/app/workflows/${r.workflowId}`}
                        onClick={(e) => (e.preventDefault(), navigate(`/workflows/${r.workflowId}`))}
                      >
                        {r.workflowName}
                      </a>{' '}
                      <small>v{r.workflowVersion}</small>
                    </td>
                    <td className={r.status === 'failed' ? 'bad' : ''} title={r.error ?? undefined}>
                      {r.status}
                    </td>
                    <td>{r.currentNodeId ?? '—'}</td>
                    <td>{new Date(r.createdAt).toLocaleString()}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </section>
      </div>
    </div>
  );
}
