import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import { TEMPLATE_CATEGORIES } from '@switchboard/template-rules';
import { ApiError, templatesPageApi, type Me, type TemplateDetail, type TemplateStatusEvent } from '../../api';
import { navigate } from '../../router';
import {
  emptyForm,
  formErrors,
  fromComponents,
  keyed,
  requestBody,
  toComponents,
  variablesOf,
  type ButtonKind,
  type HeaderKind,
  type TemplateForm,
} from './template-form';
import { TemplatePreview } from './TemplatePreview';
import { StatusBadge, useTemplateEvents } from './template-status';

function Field({ label, error, children, name }: { label: string; error?: string; children: ReactNode; name: string }) {
  return (
    <label className={`field${error ? ' has-error' : ''}`}>
      <span>{label}</span>
      {children}
      {error && (
        <span className="field-error" role="alert" data-field={name}>
          {error}
        </span>
      )}
    </label>
  );
}

/**
 * Create or edit a template: every component the API takes (header text or media sample, body with named variables
 * and their examples, footer, quick reply / URL / phone buttons). The server's rules run on every keystroke (shown on
 * a field once it was touched, or all of them after a submit); the preview follows the form.
 */
export function TemplateEditor({ mode, name, me }: { mode: 'create' | 'edit'; name?: string; me: Me }) {
  const [form, setForm] = useState<TemplateForm>(() => emptyForm(me.messagingPhoneIds[0] ?? ''));
  const [stored, setStored] = useState<TemplateDetail | null>(null);
  const [touched, setTouched] = useState<Set<string>>(new Set());
  const [submitted, setSubmitted] = useState(false);
  const [serverErrors, setServerErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState('');
  const [saving, setSaving] = useState(false);

  useEffect(() => {
    if (mode !== 'edit' || !name) return;
    templatesPageApi.get(name).then(
      (t) => {
        setStored(t);
        setForm((f) =>
          fromComponents(
            {
              ...f,
              template_name: t.template_name,
              language: t.language,
              category: t.category,
              messagingPhoneId: t.messagingPhoneId ?? '',
            },
            t.components,
          ),
        );
      },
      (e) => setMessage(e.message),
    );
  }, [mode, name]);

  const onEvent = useCallback(
    (e: TemplateStatusEvent) =>
      setStored((t) =>
        t && t.template_name === e.template_name && t.language === e.language
          ? { ...t, status: e.status, rejected_reason: e.rejected_reason }
          : t,
      ),
    [],
  );
  useTemplateEvents(onEvent);

  const ruleErrors = useMemo(() => formErrors(form, mode), [form, mode]);
  const shown = (field: string) =>
    serverErrors[field] ?? (submitted || touched.has(field) ? ruleErrors[field] : undefined);
  const { components } = useMemo(() => toComponents(form), [form]);
  const variables = variablesOf(form);

  const change = (field: string, next: Partial<TemplateForm>) => {
    setForm((f) => ({ ...f, ...next }));
    setTouched((t) => new Set(t).add(field));
    setServerErrors((s) => {
      const { [field]: _, ...rest } = s;
      return rest;
    });
  };
  const setButton = (i: number, next: Partial<TemplateForm['buttons'][number]>) =>
    change(`button.${i}`, { buttons: form.buttons.map((b, k) => (k === i ? { ...b, ...next } : b)) });

  async function submit() {
    setSubmitted(true);
    setMessage('');
    if (Object.keys(ruleErrors).length) {
      setMessage('Fix the fields marked in red.');
      return;
    }
    setSaving(true);
    try {
      if (mode === 'create') await templatesPageApi.create(requestBody(form, 'create'));
      else await templatesPageApi.update(name!, requestBody(form, 'edit'));
      navigate('/templates');
    } catch (e) {
      const err = e as ApiError;
      if (Array.isArray(err.body?.errors)) setServerErrors(keyed(err.body.errors, form));
      setMessage(err.message);
    } finally {
      setSaving(false);
    }
  }

  return (
    <div className="page template-editor">
      <div className="page-head">
        <h1>{mode === 'create' ? 'New template' : `Edit ${name}`}</h1>
        {stored && <StatusBadge status={stored.status} reason={stored.rejected_reason} />}
        <div className="spacer" />
        <button onClick={() => navigate('/templates')}>Back to the list</button>
      </div>
      {mode === 'edit' && <p className="hint">An edit goes back to review: the status returns to PENDING.</p>}
      <div className="editor-columns">
        <form
          className="template-form"
          noValidate
          onSubmit={(e) => {
            e.preventDefault();
            void submit();
          }}
        >
          <fieldset>
            <legend>Template</legend>
            <Field label="Name" name="template_name" error={shown('template_name')}>
              <input
                name="template_name"
                value={form.template_name}
                disabled={mode === 'edit'}
                placeholder="order_update"
                onChange={(e) => change('template_name', { template_name: e.target.value })}
              />
            </Field>
            <div className="row">
              <Field label="Category" name="category" error={shown('category')}>
                <select
                  name="category"
                  value={form.category}
                  onChange={(e) => change('category', { category: e.target.value })}
                >
                  {TEMPLATE_CATEGORIES.map((c) => (
                    <option key={c}>{c}</option>
                  ))}
                </select>
              </Field>
              <Field label="Language" name="language" error={shown('language')}>
                <input
                  name="language"
                  value={form.language}
                  disabled={mode === 'edit'}
                  onChange={(e) => change('language', { language: e.target.value })}
                />
              </Field>
              <Field label="Number" name="messagingPhoneId" error={shown('messagingPhoneId')}>
                <select
                  name="messagingPhoneId"
                  value={form.messagingPhoneId}
                  disabled={mode === 'edit'}
                  onChange={(e) => change('messagingPhoneId', { messagingPhoneId: e.target.value })}
                >
                  {(mode === 'edit' ? [form.messagingPhoneId] : me.messagingPhoneIds).map((id) => (
                    <option key={id}>{id}</option>
                  ))}
                </select>
              </Field>
            </div>
          </fieldset>

          <fieldset>
            <legend>Header (optional)</legend>
            <Field label="Type" name="header-kind">
              <select
                name="header-kind"
                value={form.header.kind}
                onChange={(e) => change('header', { header: { ...form.header, kind: e.target.value as HeaderKind } })}
              >
                <option value="none">None</option>
                <option value="text">Text</option>
                <option value="image">Image</option>
                <option value="video">Video</option>
                <option value="document">Document</option>
              </select>
            </Field>
            {form.header.kind === 'text' && (
              <Field label="Header text (at most 60 characters, no variables)" name="header" error={shown('header')}>
                <input
                  name="header-text"
                  value={form.header.text}
                  onChange={(e) => change('header', { header: { ...form.header, text: e.target.value } })}
                />
              </Field>
            )}
            {form.header.kind !== 'none' && form.header.kind !== 'text' && (
              <Field label={`Sample ${form.header.kind} (http(s) URL)`} name="header" error={shown('header')}>
                <input
                  name="header-link"
                  value={form.header.link}
                  placeholder="https://example.com/sample.jpg"
                  onChange={(e) => change('header', { header: { ...form.header, link: e.target.value } })}
                />
              </Field>
            )}
          </fieldset>

          <fieldset>
            <legend>Body</legend>
            <Field
              label="Text: {{name}} inserts a variable (lowercase letters, digits, underscores); *bold* _italic_ ~strike~"
              name="body"
              error={shown('body')}
            >
              <textarea
                name="body"
                rows={5}
                value={form.body}
                onChange={(e) => change('body', { body: e.target.value })}
              />
            </Field>
            {variables.length > 0 && (
              <div className="variables" data-testid="variables">
                {variables.map((v) => (
                  <Field key={v} label={`Example for {{${v}}}`} name={`example.${v}`} error={shown(`example.${v}`)}>
                    <input
                      name={`example-${v}`}
                      value={form.examples[v] ?? ''}
                      onChange={(e) => change(`example.${v}`, { examples: { ...form.examples, [v]: e.target.value } })}
                    />
                  </Field>
                ))}
              </div>
            )}
          </fieldset>

          <fieldset>
            <legend>Footer (optional)</legend>
            <Field label="Footer text (at most 60 characters)" name="footer" error={shown('footer')}>
              <input name="footer" value={form.footer} onChange={(e) => change('footer', { footer: e.target.value })} />
            </Field>
          </fieldset>

          <fieldset>
            <legend>Buttons (optional)</legend>
            {shown('buttons') && (
              <p className="field-error" role="alert" data-field="buttons">
                {shown('buttons')}
              </p>
            )}
            {form.buttons.map((b, i) => (
              <div className="button-row" key={i} data-testid={`button-${i}`}>
                <select
                  name={`button-${i}-kind`}
                  value={b.kind}
                  onChange={(e) => setButton(i, { kind: e.target.value as ButtonKind })}
                >
                  <option value="quick_reply">Quick reply</option>
                  <option value="url">Visit website</option>
                  <option value="phone">Call phone number</option>
                </select>
                <Field label="Label" name={`button.${i}`} error={shown(`button.${i}`)}>
                  <input
                    name={`button-${i}-text`}
                    value={b.text}
                    onChange={(e) => setButton(i, { text: e.target.value })}
                  />
                </Field>
                {b.kind !== 'quick_reply' && (
                  <Field
                    label={b.kind === 'url' ? 'URL (may end with {{1}})' : 'Phone with country code'}
                    name={`button.${i}.target`}
                  >
                    <input
                      name={`button-${i}-target`}
                      value={b.target}
                      onChange={(e) => setButton(i, { target: e.target.value })}
                    />
                  </Field>
                )}
                <button
                  type="button"
                  className="link"
                  onClick={() => change('buttons', { buttons: form.buttons.filter((_, k) => k !== i) })}
                >
                  Remove
                </button>
              </div>
            ))}
            <div className="row">
              {(['quick_reply', 'url', 'phone'] as const).map((kind) => (
                <button
                  key={kind}
                  type="button"
                  data-testid={`add-${kind}`}
                  onClick={() => change('buttons', { buttons: [...form.buttons, { kind, text: '', target: '' }] })}
                >
                  + {kind === 'quick_reply' ? 'Quick reply' : kind === 'url' ? 'URL button' : 'Phone button'}
                </button>
              ))}
            </div>
          </fieldset>

          {message && (
            <p className="error" data-testid="form-message">
              {message}
            </p>
          )}
          <button type="submit" className="primary" disabled={saving} data-testid="submit-template">
            {saving ? 'Submitting…' : mode === 'create' ? 'Submit for review' : 'Save and resubmit'}
          </button>
        </form>
        <aside className="preview-column">
          <h3>Preview</h3>
          <TemplatePreview components={components} />
          <p className="hint">Variables show their example values.</p>
        </aside>
      </div>
    </div>
  );
}
