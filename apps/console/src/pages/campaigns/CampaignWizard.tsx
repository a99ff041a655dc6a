import { useEffect, useState } from 'react';
import {
  campaignsApi,
  contactsApi,
  templatesApi,
  templatesPageApi,
  type CampaignVariable,
  type GroupItem,
  type Me,
  type TemplateDetail,
  type TemplateInfo,
} from '../../api';
import { navigate } from '../../router';
import { TemplatePreview } from '../templates/TemplatePreview';

const STEPS = ['Number', 'Template', 'Variables', 'Audience', 'Schedule', 'Review'] as const;
const CUSTOM_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

/** How one template variable is filled: a constant, or a contact field with its fallback. */
interface Mapping {
  source: 'constant' | 'field';
  value: string;
  field: 'name' | 'email' | 'custom';
  customKey: string;
  fallback: string;
}
const emptyMapping = (variable: string): Mapping => ({
  source: variable === 'name' || variable === 'email' ? 'field' : 'constant',
  value: '',
  field: variable === 'email' ? 'email' : 'name',
  customKey: '',
  fallback: '',
});

/** The campaign's `variables`: body variables are filled in key order (keys custom_*), see docs/messaging.md. */
export function campaignVariables(
  names: string[],
  mappings: Record<string, Mapping>,
): Record<string, CampaignVariable> {
  const out: Record<string, CampaignVariable> = {};
  for (const name of names) {
    const m = mappings[name] ?? emptyMapping(name);
    out[`custom_${name}`] =
      m.source === 'constant'
        ? m.value
        : { field: m.field === 'custom' ? `custom.${m.customKey}` : m.field, fallback: m.fallback };
  }
  return out;
}

const localInput = (d: Date) => {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}`;
};

/**
 * New campaign, step by step: number → APPROVED template (with its WhatsApp preview) → variable mapping (a constant,
 * or a contact field with a fallback) → audience (groups, with the count of contacts that will receive it) → send
 * now or at a time → review and create (POST /v2/campaigns, then /start when sent now).
 */
export function CampaignWizard({ me }: { me: Me }) {
  const [step, setStep] = useState(0);
  const [tried, setTried] = useState(false);
  const [name, setName] = useState('');
  const [number, setNumber] = useState(me.messagingPhoneIds[0] ?? '');
  const [templates, setTemplates] = useState<TemplateInfo[] | null>(null);
  const [templateName, setTemplateName] = useState('');
  const [template, setTemplate] = useState<TemplateDetail | null>(null);
  const [mappings, setMappings] = useState<Record<string, Mapping>>({});
  const [mediaUrl, setMediaUrl] = useState('');
  const [groups, setGroups] = useState<GroupItem[] | null>(null);
  const [groupIds, setGroupIds] = useState<number[]>([]);
  const [audience, setAudience] = useState<{ contacts: number; blocked: number } | null>(null);
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [at, setAt] = useState(() => localInput(new Date(Date.now() + 3600_000)));
  const [error, setError] = useState<string | null>(null);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<number | null>(null);
  // what was created is what the form said then: an edit since makes the next try create what it says now
  useEffect(() => setCreated(null), [name, number, templateName, mappings, mediaUrl, groupIds, when, at]);

  useEffect(() => {
    contactsApi.groups().then(setGroups, (e) => setError((e as Error).message));
  }, []);
  // the templates the chosen number can send (a number of another WhatsApp Business Account has others)
  useEffect(() => {
    setTemplates(null);
    if (!number) return setTemplates([]);
    let current = true;
    templatesApi.approved(number).then(
      (list) => {
        if (!current) return;
        setTemplates(list);
        setTemplateName((chosen) => (list.some((t) => t.template_name === chosen) ? chosen : ''));
      },
      (e) => current && setError((e as Error).message),
    );
    return () => {
      current = false;
    };
  }, [number]);
  useEffect(() => {
    setTemplate(null);
    if (!templateName) return;
    templatesPageApi.get(templateName).then(
      (t) => {
        setTemplate(t);
        setMappings(Object.fromEntries(t.variables.map((v) => [v, emptyMapping(v)])));
      },
      (e) => setError((e as Error).message),
    );
  }, [templateName]);
  useEffect(() => {
    setAudience(null);
    if (!groupIds.length) return;
    let current = true;
    campaignsApi.audienceCount(groupIds).then(
      (c) => current && setAudience(c),
      (e) => setError((e as Error).message),
    );
    return () => {
      current = false;
    };
  }, [groupIds]);

  const mediaHeader = template && ['image', 'video', 'document'].includes(template.header_type);
  const scheduledAt = when === 'later' && at ? new Date(at) : null;

  /** What keeps the person on a step, by field (shown once they tried to go on). */
  function problems(s: number): Record<string, string> {
    const p: Record<string, string> = {};
    if (s === 0) {
      if (!name.trim()) p.name = 'Give the campaign a name';
      if (!number) p.number = 'Choose the number to send from';
    } else if (s === 1) {
      if (!template) p.template = 'Choose an approved template';
    } else if (s === 2) {
      for (const v of template?.variables ?? []) {
        const m = mappings[v];
        if (!m) continue;
        if (m.source === 'constant' && !m.value.trim()) p[`var-${v}`] = `Type the text for {{${v}}}`;
        if (m.source === 'field' && m.field === 'custom' && !CUSTOM_KEY.test(m.customKey))
          p[`var-${v}`] = 'Name the custom field (letters, digits, _)';
        else if (m.source === 'field' && !m.fallback.trim())
          p[`var-${v}`] =
            `Type the fallback used when a contact has no ${m.field === 'custom' ? m.customKey : m.field}`;
      }
      if (mediaHeader && !/^https?:\/\//.test(mediaUrl)) p.mediaUrl = `The ${template!.header_type} header needs a URL`;
    } else if (s === 3) {
      if (!groupIds.length) p.groups = 'Choose at least one group';
    } else if (s === 4) {
      if (when === 'later' && (!scheduledAt || Number.isNaN(scheduledAt.getTime()))) p.at = 'Choose the date and time';
      else if (scheduledAt && scheduledAt.getTime() <= Date.now()) p.at = 'The time has passed: choose a later one';
    }
    return p;
  }
  const shown = tried ? problems(step) : {};
  const fieldError = (key: string) =>
    shown[key] ? (
      <p className="field-error" data-field={key}>
        {shown[key]}
      </p>
    ) : null;

  function next() {
    if (Object.keys(problems(step)).length) return setTried(true);
    setTried(false);
    setStep(step + 1);
  }

  async function create() {
    for (let s = 0; s < 5; s++) if (Object.keys(problems(s)).length) return (setStep(s), setTried(true));
    setCreating(true);
    setError(null);
    // created already, its start refused (a 429, a group deleted meanwhile): trying again only starts it
    let id = created;
    try {
      if (id === null) {
        id = (
          await campaignsApi.create({
            name: name.trim(),
            messagingPhoneId: number,
            templateName,
            variables: campaignVariables(template!.variables, mappings),
            group_ids: groupIds,
            ...(mediaHeader ? { mediaUrl } : {}),
            ...(scheduledAt ? { scheduledAt: scheduledAt.toISOString() } : {}),
          })
        ).campaign_id;
        setCreated(id);
      }
      if (!scheduledAt) await campaignsApi.act(id, 'start');
      navigate(`/campaigns/${id}`);
    } catch (e) {
      const message = (e as Error).message;
      setError(id === null ? message : `Campaign ${id} was created as a draft but did not start: ${message}`);
      setCreating(false);
    }
  }

  const setMapping = (v: string, patch: Partial<Mapping>) =>
    setMappings({ ...mappings, [v]: { ...mappings[v], ...patch } });
  const samples = Object.fromEntries(
    Object.entries(mappings).map(([v, m]) => [
      v,
      m.source === 'constant' ? m.value || `{{${v}}}` : `‹${m.field === 'custom' ? m.customKey || 'custom' : m.field}›`,
    ]),
  );
  const groupNames = (groups ?? []).filter((g) => groupIds.includes(g.group_id)).map((g) => g.name);

  return (
    <div className="page">
      <div className="page-head">
        <h1>New campaign</h1>
        <button onClick={() => navigate('/campaigns')}>Cancel</button>
      </div>
      <ol className="wizard-steps" data-testid="wizard-steps">
        {STEPS.map((s, i) => (
          <li key={s} className={i === step ? 'current' : i < step ? 'done' : ''}>
            {i < step ? (
              <button className="link" onClick={() => (setTried(false), setStep(i))}>
                {i + 1}. {s}
              </button>
            ) : (
              `${i + 1}. ${s}`
            )}
          </li>
        ))}
      </ol>
      <div className="editor-columns">
        <div className="template-form wizard" data-testid={`wizard-step-${STEPS[step].toLowerCase()}`}>
          {step === 0 && (
            <fieldset>
              <legend>Number</legend>
              <label className="field">
                <span>Campaign name</span>
                <input name="campaign-name" value={name} onChange={(e) => setName(e.target.value)} />
                {fieldError('name')}
              </label>
              <label className="field">
                <span>Send from</span>
                <select name="number" value={number} onChange={(e) => setNumber(e.target.value)}>
                  <option value="">Choose a number</option>
                  {me.messagingPhoneIds.map((n) => (
                    <option key={n}>{n}</option>
                  ))}
                </select>
                {fieldError('number')}
              </label>
            </fieldset>
          )}
          {step === 1 && (
            <fieldset>
              <legend>Template</legend>
              <label className="field">
                <span>Approved template</span>
                <select name="template" value={templateName} onChange={(e) => setTemplateName(e.target.value)}>
                  <option value="">{templates === null ? 'Loading…' : 'Choose a template'}</option>
                  {(templates ?? []).map((t) => (
                    <option key={`${t.template_name}:${t.language}`} value={t.template_name}>
                      {t.template_name} ({t.language})
                    </option>
                  ))}
                </select>
                {fieldError('template')}
              </label>
              {templates?.length === 0 && <p className="hint">No APPROVED template yet: create one on Templates.</p>}
              {template && (
                <p className="hint">
                  {template.category} · {template.language} ·{' '}
                  {template.variables.length ? `variables: ${template.variables.join(', ')}` : 'no variables'}
                </p>
              )}
            </fieldset>
          )}
          {step === 2 && template && (
            <fieldset>
              <legend>Variables</legend>
              {template.variables.length === 0 && <p className="hint">This template has no variables.</p>}
              {template.variables.map((v) => {
                const m = mappings[v];
                return (
                  <div key={v} className="variable-map" data-variable={v}>
                    <strong>{`{{${v}}}`}</strong>
                    <div className="row">
                      <select
                        name={`source-${v}`}
                        value={m.source}
                        onChange={(e) => setMapping(v, { source: e.target.value as Mapping['source'] })}
                      >
                        <option value="field">from the contact</option>
                        <option value="constant">the same text for everyone</option>
                      </select>
                      {m.source === 'constant' ? (
                        <input
                          name={`value-${v}`}
                          placeholder="text"
                          value={m.value}
                          onChange={(e) => setMapping(v, { value: e.target.value })}
                        />
                      ) : (
                        <>
                          <select
                            name={`field-${v}`}
                            value={m.field}
                            onChange={(e) => setMapping(v, { field: e.target.value as Mapping['field'] })}
                          >
                            <option value="name">name</option>
                            <option value="email">email</option>
                            <option value="custom">custom field…</option>
                          </select>
                          {m.field === 'custom' && (
                            <input
                              name={`custom-${v}`}
                              placeholder="custom field"
                              value={m.customKey}
                              onChange={(e) => setMapping(v, { customKey: e.target.value })}
                            />
                          )}
                          <input
                            name={`fallback-${v}`}
                            placeholder="fallback when empty"
                            value={m.fallback}
                            onChange={(e) => setMapping(v, { fallback: e.target.value })}
                          />
                        </>
                      )}
                    </div>
                    {fieldError(`var-${v}`)}
                  </div>
                );
              })}
              {mediaHeader && (
                <label className="field">
                  <span>{template.header_type} URL for the header</span>
                  <input name="media-url" value={mediaUrl} onChange={(e) => setMediaUrl(e.target.value)} />
                  {fieldError('mediaUrl')}
                </label>
              )}
            </fieldset>
          )}
          {step === 3 && (
            <fieldset>
              <legend>Audience</legend>
              {groups?.length === 0 && <p className="hint">No groups yet: import contacts into a group first.</p>}
              {(groups ?? []).map((g) => (
                <label key={g.group_id} className="check" data-group={g.name}>
                  <input
                    type="checkbox"
                    name={`group-${g.group_id}`}
                    checked={groupIds.includes(g.group_id)}
                    onChange={(e) =>
                      setGroupIds(
                        e.target.checked ? [...groupIds, g.group_id] : groupIds.filter((id) => id !== g.group_id),
                      )
                    }
                  />{' '}
                  {g.name} <small className="hint">({g.member_count} members)</small>
                </label>
              ))}
              {fieldError('groups')}
              {audience && (
                <p data-testid="audience-count">
                  <strong>{audience.contacts.toLocaleString()}</strong> contacts will receive it
                  {audience.blocked ? ` (${audience.blocked} blocked, left out)` : ''}.
                </p>
              )}
            </fieldset>
          )}
          {step === 4 && (
            <fieldset>
              <legend>Schedule</legend>
              <label className="check">
                <input type="radio" name="when" checked={when === 'now'} onChange={() => setWhen('now')} /> Send now
              </label>
              <label className="check">
                <input
                  type="radio"
                  name="when"
                  value="later"
                  checked={when === 'later'}
                  onChange={() => setWhen('later')}
                />{' '}
                Schedule for
              </label>
              {when === 'later' && (
                <label className="field">
                  <span>Date and time ({Intl.DateTimeFormat().resolvedOptions().timeZone})</span>
                  <input
                    type="datetime-local"
                    step={1}
                    name="scheduled-at"
                    value={at}
                    onChange={(e) => setAt(e.target.value)}
                  />
                  {fieldError('at')}
                </label>
              )}
            </fieldset>
          )}
          {step === 5 && template && (
            <fieldset>
              <legend>Review</legend>
              <dl className="review" data-testid="review">
                <dt>Name</dt>
                <dd>{name}</dd>
                <dt>From</dt>
                <dd>{number}</dd>
                <dt>Template</dt>
                <dd>
                  {template.template_name} ({template.language})
                </dd>
                {template.variables.map((v) => (
                  <div key={v}>
                    <dt>{`{{${v}}}`}</dt>
                    <dd>
                      {mappings[v].source === 'constant'
                        ? `“${mappings[v].value}”`
                        : `the contact's ${mappings[v].field === 'custom' ? mappings[v].customKey : mappings[v].field}, else “${mappings[v].fallback}”`}
                    </dd>
                  </div>
                ))}
                <dt>Audience</dt>
                <dd>
                  {groupNames.join(', ')}
                  {audience ? ` — ${audience.contacts.toLocaleString()} contacts` : ''}
                </dd>
                <dt>When</dt>
                <dd>{scheduledAt ? scheduledAt.toLocaleString() : 'now'}</dd>
              </dl>
            </fieldset>
          )}
          {error && <p className="error">{error}</p>}
          <div className="row wizard-nav">
            {step > 0 && <button onClick={() => (setTried(false), setStep(step - 1))}>Back</button>}
            {step < STEPS.length - 1 ? (
              <button className="primary" data-testid="wizard-next" onClick={next}>
                Next
              </button>
            ) : (
              <button className="primary" data-testid="create-campaign" disabled={creating} onClick={create}>
                {scheduledAt ? 'Create and schedule' : 'Create and send now'}
              </button>
            )}
          </div>
        </div>
        <div className="preview-column">
          {template ? (
            <TemplatePreview components={template.components} samples={step >= 2 ? samples : undefined} />
          ) : (
            <p className="hint">The template's preview appears here.</p>
          )}
        </div>
      </div>
    </div>
  );
}
