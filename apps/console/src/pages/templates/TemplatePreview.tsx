import { Fragment, type ReactNode } from 'react';
import { previewOf } from '@switchboard/template-rules';

/** WhatsApp's inline formatting: *bold*, _italic_, ~strikethrough~, ```monospace```. */
function formatted(text: string, keyPrefix: string): ReactNode[] {
  const out: ReactNode[] = [];
  const pattern = /```([^`]+)```|\*([^*\n]+)\*|_([^_\n]+)_|~([^~\n]+)~/g;
  let at = 0;
  let k = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index! > at) out.push(text.slice(at, m.index));
    const key = `${keyPrefix}-${k++}`;
    if (m[1] !== undefined) out.push(<code key={key}>{m[1]}</code>);
    else if (m[2] !== undefined) out.push(<strong key={key}>{m[2]}</strong>);
    else if (m[3] !== undefined) out.push(<em key={key}>{m[3]}</em>);
    else out.push(<s key={key}>{m[4]}</s>);
    at = m.index! + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

const ICON = { quick_reply: '↩', url: '↗', phone: '✆' } as const;

/**
 * The message as the customer sees it in WhatsApp: a chat bubble with the header (text, or the media sample), the
 * body with each variable filled in with its example value (highlighted), the footer, the time, and the buttons
 * under the bubble. The same reading of the components as the server's (`previewOf` from the shared rules).
 */
export function TemplatePreview({
  components,
  samples,
}: {
  components: unknown[];
  /** values to show instead of the variables' examples (the campaign wizard's mapping) */
  samples?: Record<string, string>;
}) {
  const p = previewOf(components, samples);
  const time = new Date().toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return (
    <div className="wa-chat" data-testid="preview">
      <div className="wa-bubble">
        {p.header?.kind === 'text' && p.header.text && (
          <div className="wa-header" data-testid="preview-header">
            {p.header.text}
          </div>
        )}
        {p.header && p.header.kind !== 'text' && (
          <div className={`wa-media wa-media-${p.header.kind}`} data-testid="preview-header">
            {p.header.kind === 'image' && p.header.link ? (
              <img src={p.header.link} alt="header sample" />
            ) : (
              <span>
                {p.header.kind === 'video' ? '▶ video' : p.header.kind === 'document' ? '📄 document' : '🖼 image'}
              </span>
            )}
          </div>
        )}
        <div className="wa-body" data-testid="preview-body">
          {p.body.length === 0 ? (
            <span className="hint">The body text appears here.</span>
          ) : (
            p.body.map((part, i) =>
              part.variable ? (
                <span key={i} className="wa-var" title={`{{${part.variable}}}`}>
                  {formatted(part.text, `v${i}`)}
                </span>
              ) : (
                <Fragment key={i}>{formatted(part.text, `t${i}`)}</Fragment>
              ),
            )
          )}
        </div>
        {p.footer && (
          <div className="wa-footer" data-testid="preview-footer">
            {p.footer}
          </div>
        )}
        <div className="wa-time">{time}</div>
      </div>
      {p.buttons.map((b, i) => (
        <div key={i} className="wa-button" data-testid="preview-button" title={b.target}>
          <span aria-hidden>{ICON[b.kind]}</span> {b.text || <span className="hint">button</span>}
        </div>
      ))}
    </div>
  );
}
