import { CONDITION_OPERATORS, HTTP_METHODS } from '@switchboard/engine';
import { useEffect, useState, type ReactNode } from 'react';
import type { TemplateInfo } from '../api';
import { KINDS, type Definition } from './graph';

type Node = Definition['nodes'][number];
type FieldError = { field: string; message: string };

interface FormProps {
  node: Node;
  errors: FieldError[];
  templates: TemplateInfo[] | null;
  readOnly: boolean;
  onChange: (patch: Record<string, unknown>, field: string) => void;
  onRename: (id: string) => void;
  onDelete: () => void;
}

function errorsFor(errors: FieldError[], field: string) {
  return errors.filter((e) => e.field === field || e.field.startsWith(`${field}.`) || e.field.startsWith(`${field}[`));
}

function Field({
  label,
  field,
  errors,
  children,
}: {
  label: string;
  field: string;
  errors: FieldError[];
  children: ReactNode;
}) {
  const mine = errorsFor(errors, field);
  return (
    <label className={`field${mine.length ? ' has-error' : ''}`} data-field={field}>
      <span>{label}</span>
      {children}
      {mine.map((e, i) => (
        <small key={i} className="field-error" data-testid="field-error">
          {e.field}: {e.message}
        </small>
      ))}
    </label>
  );
}

function Text({
  value,
  onChange,
  readOnly,
  placeholder,
  name,
}: {
  value: unknown;
  onChange: (v: string) => void;
  readOnly: boolean;
  placeholder?: string;
  name?: string;
}) {
  return (
    <input
      name={name}
      value={value === undefined || value === null ? '' : String(value)}
      placeholder={placeholder}
      readOnly={readOnly}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}

/**
 * The text of a field that holds a parsed value: keeps what is typed (a trailing comma, half-written JSON) instead of
 * re-formatting the value on every keystroke, and follows the value when it changes from elsewhere (undo, redo).
 */
function useTypedText<T>(value: T, format: (v: T) => string, parse: (text: string) => T) {
  const [text, setText] = useState(() => format(value));
  useEffect(() => {
    setText((typed) => (same(parseOrUndefined(parse, typed), value) ? typed : format(value)));
  }, [value]);
  return [text, setText] as const;
}

function parseOrUndefined<T>(parse: (text: string) => T, text: string): T | typeof NOT_PARSED {
  try {
    return parse(text);
  } catch {
    return NOT_PARSED;
  }
}
const NOT_PARSED = Symbol('not parsed');
const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

const formatJson = (v: unknown) => (v === undefined ? '' : JSON.stringify(v, null, 2));
const parseJson = (text: string): unknown => (text.trim() === '' ? undefined : JSON.parse(text));

function JsonText({
  value,
  onChange,
  readOnly,
  name,
}: {
  value: unknown;
  onChange: (v: unknown) => void;
  readOnly: boolean;
  name: string;
}) {
  const [text, setText] = useTypedText(value, formatJson, parseJson);
  const bad = parseOrUndefined(parseJson, text) === NOT_PARSED;
  return (
    <>
      <textarea
        name={name}
        rows={4}
        value={text}
        readOnly={readOnly}
        onChange={(e) => {
          setText(e.target.value);
          const parsed = parseOrUndefined(parseJson, e.target.value);
          if (parsed !== NOT_PARSED) onChange(parsed);
        }}
      />
      {bad && <small className="field-error">not valid JSON yet</small>}
    </>
  );
}

const NO_KEYWORDS: string[] = []; // one array: a new [] each render would re-run the text's effect each time
const formatKeywords = (v: string[] | undefined) => (v ?? []).join(', ');
const parseKeywords = (text: string) =>
  text
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);

/** Comma-separated keywords, typed as text (a space or a comma is kept while typing). */
function KeywordsText({
  value,
  onChange,
  readOnly,
  name,
  placeholder,
}: {
  value: string[] | undefined;
  onChange: (keywords: string[]) => void;
  readOnly: boolean;
  name?: string;
  placeholder?: string;
}) {
  const [text, setText] = useTypedText(value ?? NO_KEYWORDS, formatKeywords, parseKeywords);
  return (
    <input
      name={name}
      placeholder={placeholder}
      value={text}
      readOnly={readOnly}
      onChange={(e) => {
        setText(e.target.value);
        onChange(parseKeywords(e.target.value));
      }}
    />
  );
}

function unusedKey(entries: Array<[string, string]>) {
  let n = entries.length + 1;
  while (entries.some(([k]) => k === `key${n}`)) n++;
  return `key${n}`;
}

/** key → value pairs (template variables, contact fields, headers); key order is kept (it fills body variables). */
function Pairs({
  value,
  onChange,
  readOnly,
  keyLabel,
  fixedKeys,
}: {
  value: Record<string, string> | undefined;
  onChange: (v: Record<string, string>) => void;
  readOnly: boolean;
  keyLabel: string;
  fixedKeys?: string[];
}) {
  const entries = Object.entries(value ?? {});
  const set = (list: Array<[string, string]>) => onChange(Object.fromEntries(list));
  return (
    <div className="pairs">
      {entries.map(([k, v], i) => (
        <div key={i} className="pair">
          <input
            value={k}
            placeholder={keyLabel}
            readOnly={readOnly || fixedKeys?.includes(k)}
            onChange={(e) => set(entries.map((p, j) => (j === i ? [e.target.value, p[1]] : p)))}
          />
          <input
            value={v}
            placeholder="value or {{path}}"
            readOnly={readOnly}
            onChange={(e) => set(entries.map((p, j) => (j === i ? [p[0], e.target.value] : p)))}
          />
          {!readOnly && (
            <button className="link" onClick={() => set(entries.filter((_, j) => j !== i))}>
              ×
            </button>
          )}
        </div>
      ))}
      {!readOnly && (
        <button className="link" onClick={() => set([...entries, [unusedKey(entries), '']])}>
          + add
        </button>
      )}
    </div>
  );
}

export function NodeForm({ node, errors, templates, readOnly, onChange, onRename, onDelete }: FormProps) {
  const set = (field: string) => (value: unknown) =>
    onChange({ [field]: value === '' && field !== 'text' ? undefined : value }, field);
  const common = (
    <>
      <Field label="Node id" field="id" errors={errors}>
        <input
          key={node.id}
          defaultValue={node.id}
          readOnly={readOnly}
          onBlur={(e) => e.target.value !== node.id && onRename(e.target.value.trim())}
        />
      </Field>
      <Field label="Label" field="label" errors={errors}>
        <Text name="label" value={node.label} onChange={set('label')} readOnly={readOnly} />
      </Field>
    </>
  );
  let body: ReactNode = null;
  switch (node.type) {
    case 'send_template': {
      const chosen = templates?.find((t) => t.template_name === node.templateName);
      body = (
        <>
          <Field label="Template (approved)" field="templateName" errors={errors}>
            <select
              name="templateName"
              value={node.templateName ?? ''}
              disabled={readOnly}
              onChange={(e) => {
                const t = templates?.find((x) => x.template_name === e.target.value);
                const variables = Object.fromEntries(
                  (t?.variables ?? []).map((v) => [v, (node.variables ?? {})[v] ?? `{{payload.${v}}}`]),
                );
                onChange({ templateName: e.target.value, variables }, 'templateName');
              }}
            >
              <option value="">— choose —</option>
              {(templates ?? []).map((t) => (
                <option key={`${t.template_name}:${t.language}`} value={t.template_name}>
                  {t.template_name} ({t.language})
                </option>
              ))}
              {node.templateName && !chosen && (
                <option value={node.templateName}>{node.templateName} (not approved)</option>
              )}
            </select>
          </Field>
          {chosen && (
            <p className="hint" data-testid="template-variables">
              Variables: {chosen.variables.length ? chosen.variables.join(', ') : 'none'}
            </p>
          )}
          <Field label="Variables" field="variables" errors={errors}>
            <Pairs
              value={node.variables}
              onChange={set('variables')}
              readOnly={readOnly}
              keyLabel="variable"
              fixedKeys={chosen?.variables}
            />
          </Field>
          <Field label="To (default {{contact.phone}})" field="to" errors={errors}>
            <Text value={node.to} onChange={set('to')} readOnly={readOnly} placeholder="{{contact.phone}}" />
          </Field>
          <Field label="Media URL (media header templates)" field="mediaUrl" errors={errors}>
            <Text value={node.mediaUrl} onChange={set('mediaUrl')} readOnly={readOnly} />
          </Field>
        </>
      );
      break;
    }
    case 'send_session_message':
      body = (
        <>
          <Field label="Text" field="text" errors={errors}>
            <textarea
              name="text"
              rows={3}
              value={node.text ?? ''}
              readOnly={readOnly}
              onChange={(e) => onChange({ text: e.target.value }, 'text')}
            />
          </Field>
          <Field label="Quick-reply buttons (up to 3)" field="buttons" errors={errors}>
            <div className="pairs">
              {(node.buttons ?? []).map((b: any, i: number) => (
                <div key={i} className="pair">
                  <input
                    value={b.text ?? ''}
                    placeholder="label"
                    readOnly={readOnly}
                    onChange={(e) =>
                      set('buttons')(
                        node.buttons.map((x: any, j: number) => (j === i ? { ...x, text: e.target.value } : x)),
                      )
                    }
                  />
                  <input
                    value={b.payload ?? ''}
                    placeholder="payload"
                    readOnly={readOnly}
                    onChange={(e) =>
                      set('buttons')(
                        node.buttons.map((x: any, j: number) =>
                          j === i ? { ...x, payload: e.target.value || undefined } : x,
                        ),
                      )
                    }
                  />
                  {!readOnly && (
                    <button
                      className="link"
                      onClick={() => set('buttons')(node.buttons.filter((_: any, j: number) => j !== i))}
                    >
                      ×
                    </button>
                  )}
                </div>
              ))}
              {!readOnly && (node.buttons ?? []).length < 3 && (
                <button className="link" onClick={() => set('buttons')([...(node.buttons ?? []), { text: 'Yes' }])}>
                  + button
                </button>
              )}
            </div>
          </Field>
          <Field label="To (default {{contact.phone}})" field="to" errors={errors}>
            <Text value={node.to} onChange={set('to')} readOnly={readOnly} placeholder="{{contact.phone}}" />
          </Field>
        </>
      );
      break;
    case 'delay':
      body = (
        <Field label="Duration (30s, 15m, 2h, 1d)" field="duration" errors={errors}>
          <Text name="duration" value={node.duration} onChange={set('duration')} readOnly={readOnly} />
        </Field>
      );
      break;
    case 'wait_for_reply':
      body = (
        <>
          <Field label="Timeout (30s, 15m, 2h, 1d)" field="timeout" errors={errors}>
            <Text name="timeout" value={node.timeout} onChange={set('timeout')} readOnly={readOnly} />
          </Field>
          <Field label="Branches (first match wins)" field="branches" errors={errors}>
            <div className="pairs">
              {(node.branches ?? []).map((b: any, i: number) => {
                const update = (match: any) =>
                  onChange(
                    { branches: node.branches.map((x: any, j: number) => (j === i ? { ...x, match } : x)) },
                    `branches[${i}]`,
                  );
                const m = b.match ?? { type: 'any' };
                return (
                  <div key={i} className="pair" data-testid={`branch-${i}`}>
                    <select
                      value={m.type}
                      disabled={readOnly}
                      onChange={(e) =>
                        update(
                          e.target.value === 'any'
                            ? { type: 'any' }
                            : e.target.value === 'button'
                              ? { type: 'button', payload: '' }
                              : { type: 'keyword', keywords: [] },
                        )
                      }
                    >
                      <option value="any">any reply</option>
                      <option value="keyword">keywords</option>
                      <option value="button">button payload</option>
                    </select>
                    {m.type === 'keyword' && (
                      <KeywordsText
                        name={`branch-${i}-keywords`}
                        placeholder="yes, y"
                        value={m.keywords}
                        readOnly={readOnly}
                        onChange={(keywords) => update({ type: 'keyword', keywords })}
                      />
                    )}
                    {m.type === 'button' && (
                      <input
                        placeholder="payload"
                        value={m.payload ?? ''}
                        readOnly={readOnly}
                        onChange={(e) => update({ type: 'button', payload: e.target.value })}
                      />
                    )}
                    {!readOnly && (
                      <button
                        className="link"
                        onClick={() =>
                          onChange({ branches: node.branches.filter((_: any, j: number) => j !== i) }, 'branches')
                        }
                      >
                        ×
                      </button>
                    )}
                  </div>
                );
              })}
              {!readOnly && (
                <button
                  className="link"
                  onClick={() =>
                    onChange(
                      { branches: [...(node.branches ?? []), { match: { type: 'keyword', keywords: [] } }] },
                      'branches',
                    )
                  }
                >
                  + branch
                </button>
              )}
            </div>
          </Field>
        </>
      );
      break;
    case 'condition':
      body = (
        <Field label="Rules (first that holds wins; else otherwise)" field="rules" errors={errors}>
          <div className="pairs">
            {(node.rules ?? []).map((r: any, i: number) => {
              const update = (patch: any) =>
                onChange(
                  { rules: node.rules.map((x: any, j: number) => (j === i ? { ...x, ...patch } : x)) },
                  `rules[${i}]`,
                );
              return (
                <div key={i} className="rule">
                  <input
                    placeholder="{{payload.total}}"
                    value={r.left ?? ''}
                    readOnly={readOnly}
                    onChange={(e) => update({ left: e.target.value })}
                  />
                  <select value={r.operator} disabled={readOnly} onChange={(e) => update({ operator: e.target.value })}>
                    {CONDITION_OPERATORS.map((o) => (
                      <option key={o}>{o}</option>
                    ))}
                  </select>
                  {r.operator !== 'exists' && r.operator !== 'not_exists' && (
                    <input
                      placeholder="value"
                      value={Array.isArray(r.right) ? r.right.join(', ') : (r.right ?? '')}
                      readOnly={readOnly}
                      onChange={(e) =>
                        update({
                          right: r.operator === 'in' ? e.target.value.split(',').map((x) => x.trim()) : e.target.value,
                        })
                      }
                    />
                  )}
                  {!readOnly && (
                    <button
                      className="link"
                      onClick={() => onChange({ rules: node.rules.filter((_: any, j: number) => j !== i) }, 'rules')}
                    >
                      ×
                    </button>
                  )}
                </div>
              );
            })}
            {!readOnly && (
              <button
                className="link"
                onClick={() =>
                  onChange({ rules: [...(node.rules ?? []), { left: '', operator: 'equals', right: '' }] }, 'rules')
                }
              >
                + rule
              </button>
            )}
          </div>
        </Field>
      );
      break;
    case 'trigger_campaign':
      body = (
        <>
          <Field label="Campaign id" field="campaignId" errors={errors}>
            <Text value={node.campaignId} onChange={set('campaignId')} readOnly={readOnly} />
          </Field>
          <Field label="Contact phone (default {{contact.phone}})" field="contact" errors={errors}>
            <Text
              value={node.contact?.phoneNumber}
              onChange={(v) => set('contact')(v ? { ...(node.contact ?? {}), phoneNumber: v } : undefined)}
              readOnly={readOnly}
            />
          </Field>
        </>
      );
      break;
    case 'http_request':
      body = (
        <>
          <Field label="Method" field="method" errors={errors}>
            <select value={node.method} disabled={readOnly} onChange={(e) => set('method')(e.target.value)}>
              {HTTP_METHODS.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          </Field>
          <Field label="URL" field="url" errors={errors}>
            <Text value={node.url} onChange={set('url')} readOnly={readOnly} />
          </Field>
          <Field label="Headers" field="headers" errors={errors}>
            <Pairs value={node.headers} onChange={set('headers')} readOnly={readOnly} keyLabel="header" />
          </Field>
          <Field label="Body (JSON; string leaves may hold {{path}})" field="body" errors={errors}>
            <JsonText key={node.id} name="body" value={node.body} onChange={set('body')} readOnly={readOnly} />
          </Field>
          <Field label="Save result as (vars.<name>)" field="saveAs" errors={errors}>
            <Text value={node.saveAs} onChange={set('saveAs')} readOnly={readOnly} />
          </Field>
        </>
      );
      break;
    case 'update_contact':
      body = (
        <Field label="Fields (name, email, custom fields)" field="fields" errors={errors}>
          <Pairs value={node.fields} onChange={set('fields')} readOnly={readOnly} keyLabel="field" />
        </Field>
      );
      break;
  }
  const general = errors.filter(
    (e) =>
      ![
        'id',
        'label',
        'templateName',
        'variables',
        'to',
        'mediaUrl',
        'text',
        'buttons',
        'duration',
        'timeout',
        'branches',
        'rules',
        'campaignId',
        'contact',
        'method',
        'url',
        'headers',
        'body',
        'saveAs',
        'fields',
      ].some((f) => e.field === f || e.field.startsWith(`${f}.`) || e.field.startsWith(`${f}[`)),
  );
  return (
    <div className="form" data-testid="node-form">
      <h2>{KINDS[node.type]?.label ?? node.type}</h2>
      {common}
      {body}
      {general.length > 0 && (
        <ul className="errors">
          {general.map((e, i) => (
            <li key={i} data-testid="field-error">
              {e.field}: {e.message}
            </li>
          ))}
        </ul>
      )}
      {!readOnly && (
        <button className="danger" onClick={onDelete}>
          Delete node
        </button>
      )}
    </div>
  );
}

export function TriggerForm({
  trigger,
  webhookUrl,
  readOnly,
  errors,
  onChange,
}: {
  trigger: Definition['trigger'];
  webhookUrl: string;
  readOnly: boolean;
  errors: FieldError[];
  onChange: (t: Definition['trigger']) => void;
}) {
  const [copied, setCopied] = useState(false);
  return (
    <div className="form" data-testid="trigger-form">
      <h2>Trigger</h2>
      <Field label="Started by" field="trigger" errors={errors}>
        <select
          value={trigger.type}
          disabled={readOnly}
          onChange={(e) =>
            onChange(e.target.value === 'webhook' ? { type: 'webhook' } : { type: 'keyword', keywords: [] })
          }
        >
          <option value="webhook">a POST to the webhook URL</option>
          <option value="keyword">an inbound message with a keyword</option>
        </select>
      </Field>
      {trigger.type === 'webhook' ? (
        <div className="field">
          <span>Webhook URL</span>
          <div className="copy">
            <input readOnly value={webhookUrl} data-testid="webhook-url" />
            <button
              onClick={async () => {
                await navigator.clipboard?.writeText(webhookUrl).catch(() => undefined);
                setCopied(true);
                setTimeout(() => setCopied(false), 1500);
              }}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
          </div>
          <small className="hint">
            Any JSON body becomes {'{{payload.…}}'}; the contact is taken from payload.phone.
          </small>
        </div>
      ) : (
        <Field label="Keywords (comma separated)" field="trigger.keywords" errors={errors}>
          <KeywordsText
            name="trigger-keywords"
            value={trigger.keywords}
            readOnly={readOnly}
            onChange={(keywords) => onChange({ type: 'keyword', keywords })}
          />
        </Field>
      )}
    </div>
  );
}
